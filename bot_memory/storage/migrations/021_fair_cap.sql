-- The workspace's cap shared fairly: past workspace_max_records the records go from whoever
-- holds the most (a scope, or one speaker's notes, over BOT_MEMORY_SCOPE_MAX_SHARE of the cap),
-- least recently used within it, instead of the least recently used of the whole workspace.
-- New names, as their meaning changed: bm_add_record_v2, bm_added_v2, bm_remember_v3,
-- bm_commit_extraction_fair and bm_commit_extraction_v3 (the old ones stay for processes not yet upgraded).

-- bm_add_record, the cap shared fairly (migration 021): past the workspace's cap the records go
-- from whoever holds the most, one at a time: from the scope holding the most if it holds more
-- than `max_share` of the cap (at least one record), else from the whole workspace; within
-- that, the least recently used note of the speaker with the most notes there if they are
-- over the same share, else the least recently used record there. The new record is never
-- evicted, so one scope, or one speaker's notes, over their share cannot evict another's
-- memories; with nobody over their share it is the workspace's plain LRU.
CREATE FUNCTION bm_add_record_v2(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer,
    max_share real
) RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    r memory_records%ROWTYPE := jsonb_populate_record(NULL::memory_records, rec);
    bound timestamptz;
    share integer := greatest(1, floor(max_records * max_share))::integer;
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

-- bm_added with the cap shared fairly (bm_add_record_v2).
CREATE FUNCTION bm_added_v2(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer,
    max_share real
) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'scope_key', max(a.scope_key) FILTER (WHERE a.added),
        'id', max(a.id) FILTER (WHERE a.added),
        'evicted', coalesce(jsonb_agg(a.id) FILTER (WHERE NOT a.added), '[]'::jsonb),
        'evicted_scopes', coalesce(jsonb_agg(DISTINCT a.scope_key) FILTER (WHERE NOT a.added),
                                   '[]'::jsonb))
    FROM bm_add_record_v2(ws, rec, rec_fingerprint, rec_search, max_records, max_share) a
$$;

-- bm_remember_v2 with the cap shared fairly (bm_added_v2, migration 021).
CREATE FUNCTION bm_remember_v3(
    ws text, scope jsonb, rec jsonb, rec_fingerprint text, rec_search tsvector,
    max_records integer, max_share real, directory_max integer, summary_chars integer, at timestamptz
) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    skey text := scope->>'scope_key';
    s memory_scopes%ROWTYPE;
    added jsonb;
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN 'gone';
    END IF;
    SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
    IF FOUND AND s.suspended THEN
        RETURN 'unavailable';
    ELSIF FOUND AND NOT s.enabled THEN
        RETURN 'memory_off';
    END IF;
    IF bm_source_problem_v2(ws, skey, rec->'sources', at) IS NOT NULL THEN
        RETURN 'source_changed';
    END IF;
    IF s.scope_key IS NULL THEN
        INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id,
            topic_id)
        VALUES (ws, skey, scope->>'kind', (scope->>'bot_id')::bigint,
            (scope->>'chat_id')::bigint, (scope->>'user_id')::bigint,
            (scope->>'topic_id')::bigint);
    END IF;
    added := bm_added_v2(ws, rec, rec_fingerprint, rec_search, max_records, max_share);
    PERFORM bm_save_scopes(ws, '[]'::jsonb,
        skey || ARRAY(SELECT jsonb_array_elements_text(added->'evicted_scopes')), '{}',
        added, directory_max, summary_chars);
    RETURN 'remembered';
END $$;

-- bm_commit_extraction with the cap shared fairly (bm_add_record_v2, migration 021); what
-- bm_commit_extraction_v3 commits before it marks what the answer replaces.
CREATE FUNCTION bm_commit_extraction_fair(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], rec_fingerprint text, rec_search tsvector, at timestamptz,
    max_records integer, max_share real, directory_max integer, summary_chars integer,
    OUT outcome text, OUT detail text
)
LANGUAGE plpgsql AS $$
DECLARE
    s memory_scopes%ROWTYPE;
    shortcut memory_scopes%ROWTYPE;
    stop_kind text := 'changed';
    kept text[] := '{}';
    added jsonb;
    others text[] := '{}';
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        outcome := 'gone'; RETURN;
    END IF;
    -- The job is ended as done while its ownership is checked (one write of its row); a commit
    -- that stops it instead writes the stop over that (as bm_stop_job leaves a job).
    UPDATE memory_jobs SET phase = 'done', lease_until = NULL, ownership_token = NULL,
        checkpoint = '{}'::jsonb, finished_at = now(), updated_at = now()
    WHERE workspace_id = ws AND id = job_id AND ownership_token = token AND lease_until > now();
    IF NOT FOUND THEN
        outcome := 'lost'; RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM usage_ledger l WHERE l.workspace_id = ws
               AND l.job_id = bm_commit_extraction_fair.job_id
               AND l.outcome = 'pending') THEN
        PERFORM bm_close_abandoned(ws, job_id);
        detail := 'unknown provider outcome: the call was cut off';
        PERFORM bm_stopped(ws, job_id, detail, 'unknown');
        outcome := 'cut_off'; RETURN;
    END IF;
    -- The scope, read once (as bm_input_problem checks it, then as bm_save_scopes writes it).
    SELECT * INTO s FROM memory_scopes m WHERE m.workspace_id = ws AND m.scope_key = skey;
    IF NOT FOUND THEN
        stop_kind := 'gone'; detail := 'the scope is gone';
    ELSIF NOT s.enabled THEN
        stop_kind := 'off'; detail := 'memory was turned off in this scope';
    ELSIF s.suspended THEN
        stop_kind := 'off'; detail := 'the bot is no longer in this chat';
    ELSE
        detail := bm_source_problem_v2(ws, skey, sources, at);  -- retained at `at`
    END IF;
    IF detail IS NULL AND rec IS NOT NULL AND cardinality(carried) > 0 THEN
        kept := ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
            AND r.id = ANY(carried) AND r.valid ORDER BY r.id);
        IF cardinality(kept) <> (SELECT count(DISTINCT c) FROM unnest(carried) c) THEN
            detail := 'a memory it carried facts from is gone';
        END IF;
    END IF;
    IF detail IS NOT NULL THEN
        PERFORM bm_stopped(ws, job_id, detail || ' during extraction', stop_kind);
        outcome := 'stopped'; RETURN;
    END IF;
    -- The watermark moves on (off ranges wholly behind it are no longer needed).
    s.extracted_through := greatest(s.extracted_through, through_request);
    IF s.off_ranges <> '[]'::jsonb THEN
        s.off_ranges := (SELECT coalesce(jsonb_agg(o.r ORDER BY o.n), '[]'::jsonb)
                         FROM jsonb_array_elements(s.off_ranges) WITH ORDINALITY AS o(r, n)
                         WHERE (o.r->>1)::bigint > s.extracted_through);
    END IF;
    IF rec IS NOT NULL THEN
        -- Its own sources first; a carried record's sources come along as inherited.
        IF cardinality(kept) > 0 THEN rec := rec || jsonb_build_object(
            'derived_from', to_jsonb(kept),
            'sources', (rec->'sources') || coalesce((
                SELECT jsonb_agg(jsonb_build_object('message_id', i.message_id, 'hash', i.hash,
                    'speaker_id', i.speaker_id, 'thread_id', i.thread_id, 'role', i.role,
                    'inherited', true) ORDER BY i.message_id)
                FROM (SELECT DISTINCT ON (d.message_id) d.* FROM record_sources d
                      WHERE d.workspace_id = ws AND d.record_id = ANY(kept)
                        AND d.message_id NOT IN (SELECT (x->>'message_id')::bigint
                            FROM jsonb_array_elements(rec->'sources') x)
                      ORDER BY d.message_id, d.record_id) i), '[]'::jsonb));
        END IF;
        SELECT jsonb_build_object(  -- as bm_added_v2
            'scope_key', max(a.scope_key) FILTER (WHERE a.added),
            'id', max(a.id) FILTER (WHERE a.added),
            'evicted', coalesce(jsonb_agg(a.id) FILTER (WHERE NOT a.added), '[]'::jsonb),
            'evicted_scopes', coalesce(jsonb_agg(DISTINCT a.scope_key)
                                           FILTER (WHERE NOT a.added), '[]'::jsonb))
          INTO added
          FROM bm_add_record_v2(ws, rec, rec_fingerprint, rec_search, max_records, max_share) a;
        s.index_pending := true;  -- its records changed: the index is stale
        others := ARRAY(SELECT k FROM jsonb_array_elements_text(added->'evicted_scopes') k
                        WHERE k <> skey ORDER BY k);
        IF added->>'scope_key' = skey THEN
            shortcut := bm_prepend(ws, s, added, directory_max, summary_chars);
        END IF;
    END IF;
    IF shortcut.scope_key IS NOT NULL THEN
        s := shortcut;
    ELSE
        s := bm_derive(ws, s, directory_max, summary_chars);
    END IF;
    -- due_at from the row as it is now: ingress schedules wake-ups without the workspace lock.
    UPDATE memory_scopes SET
        extracted_through = s.extracted_through, off_ranges = s.off_ranges,
        index_text = s.index_text, index_ids = s.index_ids,
        index_candidates = s.index_candidates, index_built_at = s.index_built_at,
        index_pending = s.index_pending, recall = s.recall,
        due_at = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
            THEN 'epoch'::timestamptz ELSE least(coalesce(due_at, at), at) END
    WHERE workspace_id = ws AND scope_key = skey;
    IF cardinality(others) > 0 THEN  -- records of other scopes were evicted
        PERFORM bm_save_scopes(ws, '[]'::jsonb, others, '{}', NULL, directory_max,
            summary_chars);  -- bumps the version
    ELSE
        UPDATE workspaces SET version = version + 1, updated_at = now() WHERE id = ws;
    END IF;
    outcome := 'done';
END $$;

-- bm_commit_extraction_v2 with the cap shared fairly (migration 021): the commit is
-- bm_commit_extraction_fair's, then the records the answer replaces are marked as v2 marks them.
CREATE FUNCTION bm_commit_extraction_v3(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], replaces text[], rec_fingerprint text, rec_search tsvector,
    at timestamptz, max_records integer, max_share real, directory_max integer,
    summary_chars integer, OUT outcome text, OUT detail text
)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT c.outcome, c.detail INTO outcome, detail
      FROM bm_commit_extraction_fair(ws, skey, job_id, token, sources, through_request, rec,
          carried, rec_fingerprint, rec_search, at, max_records, max_share, directory_max,
          summary_chars) c;
    IF outcome <> 'done' OR rec IS NULL OR coalesce(cardinality(replaces), 0) = 0 THEN
        RETURN;
    END IF;
    UPDATE memory_records r SET replaced_by = rec->>'id', replaced_at = at
    WHERE r.workspace_id = ws AND r.scope_key = skey AND r.id = ANY(replaces)
      AND r.id <> rec->>'id' AND r.valid AND r.replaced_by IS NULL
      AND EXISTS (SELECT 1 FROM memory_records n WHERE n.workspace_id = ws
                  AND n.id = rec->>'id');
    IF FOUND THEN
        PERFORM bm_save_scopes(ws, '[]'::jsonb, ARRAY[skey], '{}', NULL, directory_max,
            summary_chars);
    END IF;
END $$;

-- The older entry points keep their meaning (one share: the whole cap, plain LRU) by calling
-- the new ones, so each commit's body is written once.
CREATE OR REPLACE FUNCTION bm_commit_extraction(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], rec_fingerprint text, rec_search tsvector, at timestamptz,
    max_records integer, directory_max integer, summary_chars integer,
    OUT outcome text, OUT detail text
)
LANGUAGE plpgsql AS $$
BEGIN
    -- bm_commit_extraction_fair with no share smaller than the whole cap: nobody is over it,
    -- so eviction is the plain LRU this function always had (migration 021).
    SELECT c.outcome, c.detail INTO outcome, detail
      FROM bm_commit_extraction_fair(ws, skey, job_id, token, sources, through_request, rec,
          carried, rec_fingerprint, rec_search, at, max_records, 1.0, directory_max,
          summary_chars) c;
END $$;

CREATE OR REPLACE FUNCTION bm_remember_v2(
    ws text, scope jsonb, rec jsonb, rec_fingerprint text, rec_search tsvector,
    max_records integer, directory_max integer, summary_chars integer, at timestamptz
) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    -- bm_remember_v3 with no share smaller than the whole cap: plain LRU (migration 021).
    RETURN bm_remember_v3(ws, scope, rec, rec_fingerprint, rec_search, max_records, 1.0,
        directory_max, summary_chars, at);
END $$;
