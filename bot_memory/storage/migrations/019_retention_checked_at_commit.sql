-- 019 (issue 27). Retention is checked wherever source text is read for a model, up to the
-- commit. The expiry pass erases only what is due at a tick's start; a source whose boundary
-- passes later in the tick is now a problem before each call (bm_input_problem_v2, as of the
-- time of the check) and at commit (bm_commit_extraction, as of its `at`).

-- bm_source_problem as of `at`: a source whose retention boundary has passed by then is a
-- problem too (the expiry pass erases only what was due at a tick's start; a boundary passing
-- later in the tick is caught here, before each call and at commit).
CREATE OR REPLACE FUNCTION bm_source_problem_v2(ws text, skey text, sources jsonb, at timestamptz)
RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT 'source m' || e.message_id || CASE
            WHEN m.id IS NULL OR m.text IS NULL THEN ' was removed or expired'
            WHEN m.retain_until <= at THEN ' passed its retention boundary'
            WHEN t.message_id IS NOT NULL THEN ' was forgotten'
            ELSE ' was edited' END
    FROM (SELECT (x.src->>'message_id')::bigint AS message_id, x.src->>'hash' AS hash, x.n
          FROM jsonb_array_elements(sources) WITH ORDINALITY AS x(src, n)) e
    LEFT JOIN LATERAL (SELECT g.id, g.text, g.content_hash, g.retain_until FROM messages g
                       WHERE g.workspace_id = ws AND g.id = e.message_id) m ON true
    LEFT JOIN LATERAL (SELECT f.message_id FROM tombstones f WHERE f.workspace_id = ws
                       AND f.scope_key = skey AND f.message_id = e.message_id) t ON true
    WHERE m.id IS NULL OR m.text IS NULL OR m.retain_until <= at OR t.message_id IS NOT NULL
       OR m.content_hash <> e.hash
    ORDER BY e.n LIMIT 1
$$;

-- bm_input_problem as of `at` (pipeline/inputs.py): a source past its retention boundary by
-- then is a problem (bm_source_problem_v2).
CREATE OR REPLACE FUNCTION bm_input_problem_v2(
    ws text, skey text, sources jsonb, at timestamptz, OUT kind text, OUT problem text
)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN s.scope_key IS NULL THEN 'gone' WHEN NOT s.enabled OR s.suspended THEN 'off'
                WHEN c.problem IS NOT NULL THEN 'changed' END,
           CASE WHEN s.scope_key IS NULL THEN 'the scope is gone'
                WHEN NOT s.enabled THEN 'memory was turned off in this scope'
                WHEN s.suspended THEN 'the bot is no longer in this chat'
                ELSE c.problem END
    FROM (SELECT 1) one
    LEFT JOIN memory_scopes s ON s.workspace_id = ws AND s.scope_key = skey
    LEFT JOIN LATERAL (SELECT bm_source_problem_v2(ws, skey, sources, at) AS problem
                       WHERE s.enabled AND NOT s.suspended) c ON true
$$;

-- Commit an extraction job's answer (pipeline/extraction._commit) in one statement, if the job
-- is still this worker's ('lost' otherwise), no attempt of it was cut off ('cut_off': they
-- become unknown and the job stops for an operator, as the worker's check before a model call
-- does) and its input still holds (else the job stops: 'stopped' and why): the record,
-- depending on its batch and inheriting the sources of the records it carried facts from, the
-- scope's watermark, the job done, the scope looked at again for later batches, and the
-- write-back (as bm_save_scopes does it). `rec` is NULL for an empty answer. 'gone': no
-- workspace. `at` is the commit's time: a source whose retention boundary has passed by then
-- stops the job.
CREATE OR REPLACE FUNCTION bm_commit_extraction(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], rec_fingerprint text, rec_search tsvector, at timestamptz,
    max_records integer, directory_max integer, summary_chars integer,
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
               AND l.job_id = bm_commit_extraction.job_id
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
        SELECT jsonb_build_object(  -- as bm_added
            'scope_key', max(a.scope_key) FILTER (WHERE a.added),
            'id', max(a.id) FILTER (WHERE a.added),
            'evicted', coalesce(jsonb_agg(a.id) FILTER (WHERE NOT a.added), '[]'::jsonb),
            'evicted_scopes', coalesce(jsonb_agg(DISTINCT a.scope_key)
                                           FILTER (WHERE NOT a.added), '[]'::jsonb))
          INTO added
          FROM bm_add_record(ws, rec, rec_fingerprint, rec_search, max_records) a;
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

-- A note is the message as it is when it is remembered: bm_remember_v2 refuses one whose source
-- was edited since it was received, erased, removed, forgotten or is past its boundary.

-- bm_remember, the note checked against its source under the lock (control._remember): a
-- source edited since it was received, erased, removed, forgotten or past its retention
-- boundary at `at` is refused ('source_changed'), so a note is always the message as it is at
-- commit and never brings back what retention or a sweep removed.
CREATE OR REPLACE FUNCTION bm_remember_v2(
    ws text, scope jsonb, rec jsonb, rec_fingerprint text, rec_search tsvector,
    max_records integer, directory_max integer, summary_chars integer, at timestamptz
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
    added := bm_added(ws, rec, rec_fingerprint, rec_search, max_records);
    PERFORM bm_save_scopes(ws, '[]'::jsonb,
        skey || ARRAY(SELECT jsonb_array_elements_text(added->'evicted_scopes')), '{}',
        added, directory_max, summary_chars);
    RETURN 'remembered';
END $$;
