-- 017: an extraction job run from its checkpointed answer is one statement. The commit checks
-- the ledger itself (attempts of the job still pending were cut off by a process that died:
-- their outcome is unknown, and the job stops for an operator), its scope's row is read once
-- and written once (it was read three times and written twice), and its job's row written
-- once. A record added at the cap finds what to evict by the LRU index, and a recall row
-- gaining one record takes the previous row apart once.

-- The sources part of what a job may still work on: NULL when every snapshot source is
-- retained, unedited and not forgotten; otherwise why, for the first (in snapshot order) that
-- changed.
CREATE FUNCTION bm_source_problem(ws text, skey text, sources jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT 'source m' || e.message_id || CASE
            WHEN m.id IS NULL OR m.text IS NULL THEN ' was removed or expired'
            WHEN t.message_id IS NOT NULL THEN ' was forgotten'
            ELSE ' was edited' END
    FROM (SELECT (x.src->>'message_id')::bigint AS message_id, x.src->>'hash' AS hash, x.n
          FROM jsonb_array_elements(sources) WITH ORDINALITY AS x(src, n)) e
    LEFT JOIN LATERAL (SELECT g.id, g.text, g.content_hash FROM messages g
                       WHERE g.workspace_id = ws AND g.id = e.message_id) m ON true
    LEFT JOIN LATERAL (SELECT f.message_id FROM tombstones f WHERE f.workspace_id = ws
                       AND f.scope_key = skey AND f.message_id = e.message_id) t ON true
    WHERE m.id IS NULL OR m.text IS NULL OR t.message_id IS NOT NULL
       OR m.content_hash <> e.hash
    ORDER BY e.n LIMIT 1
$$;

-- What a job may still work on (pipeline/inputs.py): NULL when memory is on in the scope, the
-- bot is there, and every snapshot source is retained, unedited and not forgotten; otherwise
-- the stop kind and why.
CREATE OR REPLACE FUNCTION bm_input_problem(ws text, skey text, sources jsonb, OUT kind text, OUT problem text)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN s.scope_key IS NULL THEN 'gone' WHEN NOT s.enabled OR s.suspended THEN 'off'
                WHEN c.problem IS NOT NULL THEN 'changed' END,
           CASE WHEN s.scope_key IS NULL THEN 'the scope is gone'
                WHEN NOT s.enabled THEN 'memory was turned off in this scope'
                WHEN s.suspended THEN 'the bot is no longer in this chat'
                ELSE c.problem END
    FROM (SELECT 1) one
    LEFT JOIN memory_scopes s ON s.workspace_id = ws AND s.scope_key = skey
    LEFT JOIN LATERAL (SELECT bm_source_problem(ws, skey, sources) AS problem
                       WHERE s.enabled AND NOT s.suspended) c ON true
$$;

-- Attempts of a job still pending (ledger.close_abandoned_attempts, the same rows and the same
-- settlement): the process making them died mid-call, so the provider may have processed and
-- billed them. They become unknown, charged their reservation; returns how many.
CREATE FUNCTION bm_close_abandoned(ws text, job bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    cut record;
    closed integer := 0;
BEGIN
    FOR cut IN
        UPDATE usage_ledger SET outcome = 'unknown', cost_usd = reserved_usd, reserved_usd = 0,
            detail = 'the process making this call ended before its answer was recorded',
            closed_at = now()
        WHERE workspace_id = ws AND job_id = job AND outcome = 'pending'
        RETURNING request_id, cost_usd
    LOOP
        closed := closed + 1;
        IF cut.request_id IS NOT NULL THEN
            UPDATE requests SET reserved_usd = greatest(reserved_usd - cut.cost_usd, 0),
                charged_usd = charged_usd + cut.cost_usd
            WHERE workspace_id = ws AND id = cut.request_id;
        END IF;
        UPDATE workspaces SET reserved_usd = greatest(reserved_usd - cut.cost_usd, 0),
            spent_usd = spent_usd + cut.cost_usd
        WHERE id = ws;
    END LOOP;
    RETURN closed;
END $$;

-- A job bm_commit_extraction ended as done, stopped instead: what bm_stop_job writes (the
-- lease, token and checkpoint are gone already).
CREATE FUNCTION bm_stopped(ws text, job_id bigint, reason text, kind text) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_jobs SET phase = 'stopped', stop_kind = kind, last_error = left(reason, 1000)
    WHERE workspace_id = ws AND id = job_id
$$;

-- Commit an extraction job's answer (pipeline/extraction._commit) in one statement, if the job
-- is still this worker's ('lost' otherwise), no attempt of it was cut off ('cut_off': they
-- become unknown and the job stops for an operator, as the worker's check before a model call
-- does) and its input still holds (else the job stops: 'stopped' and why): the record,
-- depending on its batch and inheriting the sources of the records it carried facts from, the
-- scope's watermark, the job done, the scope looked at again for later batches, and the
-- write-back (as bm_save_scopes does it). `rec` is NULL for an empty answer. 'gone': no
-- workspace.
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
        detail := bm_source_problem(ws, skey, sources);
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

-- Store a record and evict the least recently used records past the workspace's cap, as in
-- 015. The records past the cap are found by walking the LRU index (the planner preferred
-- reading every record's row and sorting them, about three times as long at 256 records of
-- 3 KB: this function plans without sorts, and nothing in it needs one), then deleted by ID.
CREATE OR REPLACE FUNCTION bm_add_record(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer
) RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE plpgsql SET enable_sort = off AS $$
#variable_conflict use_column
DECLARE
    r memory_records%ROWTYPE := jsonb_populate_record(NULL::memory_records, rec);
    bound timestamptz;
    over text[];
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
    over := ARRAY(SELECT o.id FROM memory_records o WHERE o.workspace_id = ws AND o.id <> r.id
        ORDER BY o.last_used_at DESC, o.created_at DESC, o.id DESC OFFSET max_records - 1);
    IF cardinality(over) > 0 THEN
        RETURN QUERY
            DELETE FROM memory_records d WHERE d.workspace_id = ws AND d.id = ANY(over)
            RETURNING d.id, d.scope_key, false, NULL::timestamptz;
    END IF;
END $$;

-- The recall row of a scope whose only change is one record added (016's rule, the same row):
-- each part of the previous row is taken out once (one statement read the row anew for every
-- use of it), the checks stop at the first that fails, and a full directory drops its last
-- entry instead of being taken apart and built again.
CREATE OR REPLACE FUNCTION bm_prepend(
    ws text, s memory_scopes, added jsonb, directory_max integer, summary_chars integer
) RETURNS memory_scopes
LANGUAGE plpgsql STABLE AS $$
DECLARE
    before jsonb := s.recall;
    directory jsonb := before->'directory';
    evicted text[] := ARRAY(SELECT jsonb_array_elements_text(added->'evicted'));
    entry jsonb;
    created timestamptz;
    n integer;
BEGIN
    IF before IS NULL OR s.index_candidates && evicted THEN
        RETURN NULL;
    END IF;
    IF cardinality(evicted) > 0 AND EXISTS (
            SELECT 1 FROM jsonb_array_elements(directory || (before->'index_entries')) e
            WHERE e->>'id' = ANY(evicted)) THEN
        RETURN NULL;
    END IF;
    SELECT r.created_at, jsonb_build_object(
            'id', r.id, 'title', r.title, 'summary', left(r.summary, summary_chars),
            'speaker_ids', to_jsonb(r.speaker_ids), 'thread_ids', to_jsonb(r.thread_ids),
            'until', bm_iso(r.available_until), 'created_at', bm_iso(r.created_at),
            'source_ids', coalesce((SELECT jsonb_agg('m' || x.message_id ORDER BY x.message_id)
                FROM record_sources x WHERE x.workspace_id = ws AND x.record_id = r.id),
                '[]'::jsonb))
      INTO created, entry
      FROM memory_records r
      WHERE r.workspace_id = ws AND r.id = added->>'id' AND r.scope_key = s.scope_key
        AND r.valid;
    -- The order is obvious only when the new record is the newest.
    IF entry IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements(directory) e
            WHERE e->>'created_at' IS NULL
               OR ((e->>'created_at')::timestamptz, e->>'id') >= (created, added->>'id')) THEN
        RETURN NULL;
    END IF;
    n := jsonb_array_length(directory);
    s.recall := before || jsonb_build_object(
        'enabled', s.enabled, 'suspended', s.suspended,
        'pending', s.index_pending OR s.index_text = '',
        'directory', CASE
            WHEN n < directory_max THEN jsonb_build_array(entry) || directory
            WHEN n = directory_max AND n > 0 THEN jsonb_build_array(entry) || (directory - (-1))
            ELSE (SELECT jsonb_agg(d.e ORDER BY d.n)
                  FROM jsonb_array_elements(jsonb_build_array(entry) || directory)
                       WITH ORDINALITY AS d(e, n)
                  WHERE d.n <= directory_max) END);
    RETURN s;
END $$;
