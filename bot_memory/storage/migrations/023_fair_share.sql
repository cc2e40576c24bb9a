-- The cap's fair share written once (bm_fair_share), for bm_add_record_v2 and for
-- `bot-memory status`, which names the scopes and speakers at their share. bm_add_record_v2's
-- meaning is unchanged: it only calls it.

-- The cap's fair share, in records: what one scope, or one speaker's notes, may hold of a
-- workspace's `max_records` before the cap evicts from them first (at least one record).
CREATE FUNCTION bm_fair_share(max_records integer, max_share real) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT greatest(1, floor(max_records * max_share))::integer
$$;

-- bm_add_record, the cap shared fairly (migration 021): past the workspace's cap the records go
-- from whoever holds the most, one at a time: from the scope holding the most if it holds more
-- than `max_share` of the cap (at least one record), else from the whole workspace; within
-- that, the least recently used note of the speaker with the most notes there if they are
-- over the same share, else the least recently used record there. The new record is never
-- evicted, so one scope, or one speaker's notes, over their share cannot evict another's
-- memories; with nobody over their share it is the workspace's plain LRU.
CREATE OR REPLACE FUNCTION bm_add_record_v2(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer,
    max_share real
) RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    r memory_records%ROWTYPE := jsonb_populate_record(NULL::memory_records, rec);
    bound timestamptz;
    share integer := bm_fair_share(max_records, max_share);
    total integer;
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
        rec_fingerprint, rec_search)
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
        IF victim IS NULL THEN  -- the least recently used there
            SELECT o.id INTO victim FROM memory_records o
                WHERE o.workspace_id = ws AND (big_key IS NULL OR o.scope_key = big_key)
                  AND o.id <> r.id
                ORDER BY o.workspace_id, o.last_used_at, o.created_at, o.id LIMIT 1;
        END IF;
        EXIT WHEN victim IS NULL;
        RETURN QUERY
            DELETE FROM memory_records d WHERE d.workspace_id = ws AND d.id = victim
            RETURNING d.id, d.scope_key, false, NULL::timestamptz;
        total := total - 1;
    END LOOP;
END $$;
