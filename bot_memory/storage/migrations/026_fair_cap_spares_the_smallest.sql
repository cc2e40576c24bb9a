-- The cap's fair share with nobody over it: bm_record_store evicted the workspace's plain least
-- recently used record then, so two users each at their share evicted a third user's only
-- memory. It now evicts the least recently used of the scopes holding the most: a scope's last
-- memories never go while another scope holds more than it.

-- Store a record and evict past the workspace's cap (`c`: workspace, record (the application's
-- MemoryRecord as JSON, sources included), fingerprint, search (its terms as tsvector text),
-- limits.max_records and limits.max_share (default 1: plain LRU)). The new record is never
-- evicted, and a record whose ID exists is left as it is (a note is one per message). Past the
-- cap the records go from whoever holds the most, one at a time: from the scope holding the
-- most if it holds more than its share of the cap (bm_fair_share), else from the whole
-- workspace; within that, the least recently used note of the speaker with the most notes there
-- if they are over the same share, else the least recently used record there; with nobody over
-- their share it is the least recently used of the scopes holding the most, so a scope's last
-- memories never go while another holds more. Rows: the added record with its retention
-- boundary (no later than the earliest of its sources'), then the evicted.
CREATE OR REPLACE FUNCTION bm_record_store(c jsonb)
RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    ws text := c->>'workspace';
    rec jsonb := c->'record';
    max_records integer := (c->'limits'->>'max_records')::integer;
    r memory_records%ROWTYPE := jsonb_populate_record(NULL::memory_records, c->'record');
    bound timestamptz;
    share integer := bm_fair_share(
        (c->'limits'->>'max_records')::integer,
        coalesce((c->'limits'->>'max_share')::real, 1.0));
    total integer;
    top integer;
    big_key text;
    big_speaker bigint;
    held integer;
    victim text;
BEGIN
    INSERT INTO memory_records AS m (workspace_id, id, scope_key, origin, title, summary,
        speaker_ids, thread_ids, cited, derived_from, created_at, last_used_at,
        available_until, fingerprint, search)
    VALUES (ws, r.id, r.scope_key, r.origin, r.title, r.summary, r.speaker_ids, r.thread_ids,
        r.cited, r.derived_from, r.created_at, r.last_used_at,
        least(r.available_until, (SELECT min(g.retain_until) FROM messages g
            WHERE g.workspace_id = ws AND g.id = ANY(ARRAY(SELECT (x->>'message_id')::bigint
            FROM jsonb_array_elements(rec->'sources') x)))),
        c->>'fingerprint', (c->>'search')::tsvector)
    ON CONFLICT (workspace_id, id) DO NOTHING
    RETURNING m.available_until INTO bound;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO record_sources (workspace_id, record_id, message_id, hash, speaker_id,
        thread_id, role, inherited)
    SELECT ws, r.id, s.message_id, s.hash, s.speaker_id, s.thread_id, s.role, s.inherited
    FROM jsonb_to_recordset(rec->'sources') AS s(message_id bigint, hash text,
        speaker_id bigint, thread_id bigint, role text, inherited boolean);
    RETURN QUERY SELECT r.id, r.scope_key, true, bound;
    SELECT count(*) INTO total FROM memory_records o WHERE o.workspace_id = ws;
    WHILE total > max_records LOOP
        victim := NULL;
        -- Where from: the scope holding the most if it is over its share, else the workspace.
        SELECT o.scope_key, count(*) INTO big_key, held FROM memory_records o
            WHERE o.workspace_id = ws GROUP BY o.scope_key
            ORDER BY count(*) DESC, o.scope_key LIMIT 1;
        top := held;
        IF held <= share THEN
            big_key := NULL;
        END IF;
        -- Within it, the speaker with the most notes if they are over the share.
        SELECT p.speaker, count(*) INTO big_speaker, held
            FROM memory_records o, unnest(o.speaker_ids) AS p(speaker)
            WHERE o.workspace_id = ws AND o.origin = 'note'
              AND (big_key IS NULL OR o.scope_key = big_key)
            GROUP BY p.speaker ORDER BY count(*) DESC, p.speaker LIMIT 1;
        IF held > share THEN
            SELECT o.id INTO victim FROM memory_records o
                WHERE o.workspace_id = ws AND o.origin = 'note'
                  AND (big_key IS NULL OR o.scope_key = big_key)
                  AND big_speaker = ANY(o.speaker_ids) AND o.id <> r.id
                ORDER BY o.last_used_at, o.created_at, o.id LIMIT 1;
        END IF;
        IF victim IS NULL THEN  -- the least recently used there, of the scopes holding the most
            SELECT o.id INTO victim FROM memory_records o
                WHERE o.workspace_id = ws AND o.id <> r.id
                  AND (o.scope_key = big_key OR big_key IS NULL AND o.scope_key IN (
                      SELECT t.scope_key FROM memory_records t WHERE t.workspace_id = ws
                      GROUP BY t.scope_key HAVING count(*) = top))
                ORDER BY o.workspace_id, o.last_used_at, o.created_at, o.id LIMIT 1;
        END IF;
        EXIT WHEN victim IS NULL;
        RETURN QUERY
            DELETE FROM memory_records d WHERE d.workspace_id = ws AND d.id = victim
            RETURNING d.id, d.scope_key, false, NULL::timestamptz;
        total := total - 1;
    END LOOP;
END $$;
