-- The pipeline lag is the age of the oldest due work: a scope due first carries the sentinel
-- 'epoch' as its due_at, which is no time, so memory_scopes keeps since when it has been due
-- (due_since, set where the sentinel is, in the same statements: no row written more often).
-- A scope due first before this migration is due from now on.

ALTER TABLE memory_scopes ADD COLUMN due_since timestamptz;

UPDATE memory_scopes SET due_since = now() WHERE due_at = 'epoch'::timestamptz;

-- A scope made due first (due_at = 'epoch', which the planner takes before any time): since
-- when it has been due, for the pipeline lag. One already due first keeps its start, one due
-- at a time past keeps that time (it was due then), any other is due from now.
CREATE OR REPLACE FUNCTION bm_due_since(due_at timestamptz, due_since timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN due_at = 'epoch'::timestamptz THEN coalesce(due_since, now())
        WHEN due_at <= now() THEN due_at ELSE now() END
$$;

-- Write back what a transaction changed, in key order (the order every writer of several scope
-- rows keeps): the scopes whose states the application decided (`states`, as JSON), the scopes
-- whose records changed (`touched`: their indexes are stale; a scope with no row is left alone)
-- and the scopes whose rows the caller wrote itself (`written`), each with its recall row
-- derived anew (from the one it had, when its only change is the record `added`: see
-- bm_prepend); then bump the workspace's version. A pending index makes the scope due at
-- once, whatever clock the planner runs on.
CREATE OR REPLACE FUNCTION bm_save_scopes(
    ws text, states jsonb, touched text[], written text[], added jsonb, directory_max integer,
    summary_chars integer
) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    skey text;
    state jsonb;
    s memory_scopes%ROWTYPE;
    shortcut memory_scopes%ROWTYPE;
BEGIN
    FOR skey IN
        SELECT k FROM (SELECT x->>'scope_key' FROM jsonb_array_elements(states) x
                       UNION SELECT unnest(touched) UNION SELECT unnest(written)) AS keys(k)
        WHERE k IS NOT NULL ORDER BY k
    LOOP
        SELECT x INTO state FROM jsonb_array_elements(states) x WHERE x->>'scope_key' = skey;
        IF state IS NULL THEN  -- its row is as it should be, but for the recall row
            SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
            CONTINUE WHEN NOT FOUND;
            s.index_pending := s.index_pending OR coalesce(skey = ANY(touched), false);
            shortcut := NULL;
            IF added->>'scope_key' = skey THEN
                shortcut := bm_prepend(ws, s, added, directory_max, summary_chars);
            END IF;
            IF shortcut.scope_key IS NOT NULL THEN
                s := shortcut;
            ELSE
                s := bm_derive(ws, s, directory_max, summary_chars);
            END IF;
            UPDATE memory_scopes SET
                index_text = s.index_text, index_ids = s.index_ids,
                index_candidates = s.index_candidates, index_built_at = s.index_built_at,
                index_pending = s.index_pending, recall = s.recall,
                due_at = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
                    THEN 'epoch'::timestamptz ELSE due_at END,
                due_since = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
                    THEN bm_due_since(due_at, due_since) ELSE due_since END
            WHERE workspace_id = ws AND scope_key = skey;
            CONTINUE;
        END IF;
        s := jsonb_populate_record(NULL::memory_scopes, state);
        s.workspace_id := ws;
        s.recall := (SELECT m.recall FROM memory_scopes m
                     WHERE m.workspace_id = ws AND m.scope_key = skey);
        s.index_pending := s.index_pending OR coalesce(skey = ANY(touched), false);
        s := bm_derive(ws, s, directory_max, summary_chars);
        INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id,
            topic_id, enabled, suspended, off_since, off_ranges, extracted_through, index_text,
            index_ids, index_built_at, index_pending, index_candidates, recall, due_at,
            due_since)
        VALUES (ws, skey, s.kind, s.bot_id, s.chat_id, s.user_id, s.topic_id, s.enabled,
            s.suspended, s.off_since, s.off_ranges, s.extracted_through, s.index_text,
            s.index_ids, s.index_built_at, s.index_pending, s.index_candidates, s.recall,
            CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
                THEN 'epoch'::timestamptz END,
            CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended THEN now() END)
        ON CONFLICT (workspace_id, scope_key) DO UPDATE SET
            due_at = CASE WHEN EXCLUDED.index_pending AND EXCLUDED.enabled
                AND NOT EXCLUDED.suspended THEN 'epoch'::timestamptz
                ELSE memory_scopes.due_at END,
            due_since = CASE WHEN EXCLUDED.index_pending AND EXCLUDED.enabled
                AND NOT EXCLUDED.suspended
                THEN bm_due_since(memory_scopes.due_at, memory_scopes.due_since)
                ELSE memory_scopes.due_since END,
            enabled = EXCLUDED.enabled, suspended = EXCLUDED.suspended,
            off_since = EXCLUDED.off_since, off_ranges = EXCLUDED.off_ranges,
            extracted_through = EXCLUDED.extracted_through, index_text = EXCLUDED.index_text,
            index_ids = EXCLUDED.index_ids, index_built_at = EXCLUDED.index_built_at,
            index_pending = EXCLUDED.index_pending, recall = EXCLUDED.recall,
            index_candidates = EXCLUDED.index_candidates;
    END LOOP;
    UPDATE workspaces SET version = version + 1, updated_at = now() WHERE id = ws;
END $$;

-- Commit an extraction job's answer (pipeline/extraction._commit) in one statement (`c`:
-- workspace, scope_key, job {id, token, sources (snapshot order: message_id, hash),
-- through_request}, record (NULL for an empty answer), fingerprint, search, carried (the
-- records it carried facts from), replaces (the records its answer corrects or makes
-- obsolete), at (the commit's time), limits), if the job is still this worker's ('lost'
-- otherwise), no attempt of it was cut off ('cut_off': they become unknown and the job stops
-- for an operator, as the worker's check before a model call does) and its input still holds
-- at `at` (else the job stops: 'stopped' and why): the record, depending on its batch and
-- inheriting the sources of the records it carried facts from, the records it replaces marked,
-- the scope's watermark, the job done, the scope looked at again for later batches, and the
-- write-back. 'gone': no workspace.
CREATE OR REPLACE FUNCTION bm_extraction_commit(c jsonb, OUT outcome text, OUT detail text)
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->>'scope_key';
    job bigint := (c->'job'->>'id')::bigint;
    at timestamptz := (c->>'at')::timestamptz;
    rec jsonb := CASE WHEN jsonb_typeof(c->'record') = 'object' THEN c->'record' END;
    carried text[] := bm_texts(c->'carried');
    directory_max integer := (c->'limits'->>'directory_max')::integer;
    summary_chars integer := (c->'limits'->>'summary_chars')::integer;
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
    IF NOT bm_finish_owned_job(ws, job, (c->'job'->>'token')::uuid) THEN
        outcome := 'lost'; RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM usage_ledger l WHERE l.workspace_id = ws AND l.job_id = job
               AND l.outcome = 'pending') THEN
        PERFORM bm_close_abandoned(ws, job);
        detail := 'unknown provider outcome: the call was cut off';
        PERFORM bm_stopped(ws, job, detail, 'unknown');
        outcome := 'cut_off'; RETURN;
    END IF;
    -- The scope, read once (as bm_input_problem_v2 checks it, then as bm_save_scopes writes it).
    SELECT * INTO s FROM memory_scopes m WHERE m.workspace_id = ws AND m.scope_key = skey;
    IF NOT FOUND THEN
        stop_kind := 'gone'; detail := 'the scope is gone';
    ELSIF NOT s.enabled THEN
        stop_kind := 'off'; detail := 'memory was turned off in this scope';
    ELSIF s.suspended THEN
        stop_kind := 'off'; detail := 'the bot is no longer in this chat';
    ELSE
        detail := bm_source_problem_v2(ws, skey, c->'job'->'sources', at);  -- retained at `at`
    END IF;
    IF detail IS NULL AND rec IS NOT NULL AND cardinality(carried) > 0 THEN
        kept := ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
            AND r.id = ANY(carried) AND r.valid ORDER BY r.id);
        IF cardinality(kept) <> (SELECT count(DISTINCT k) FROM unnest(carried) k) THEN
            detail := 'a memory it carried facts from is gone';
        END IF;
    END IF;
    -- What it replaces must still be there as it was given: a record forgotten, made
    -- unavailable or replaced meanwhile is not corrected by an answer written without knowing.
    IF detail IS NULL AND rec IS NOT NULL AND cardinality(bm_texts(c->'replaces')) > 0
            AND (SELECT count(*) FROM memory_records r WHERE r.workspace_id = ws
                 AND r.scope_key = skey AND r.id = ANY(bm_texts(c->'replaces')) AND r.valid
                 AND r.replaced_by IS NULL)
                <> (SELECT count(DISTINCT k) FROM unnest(bm_texts(c->'replaces')) k) THEN
        detail := 'a memory it replaces is gone or changed';
    END IF;
    IF detail IS NOT NULL THEN
        PERFORM bm_stopped(ws, job, detail || ' during extraction', stop_kind);
        outcome := 'stopped'; RETURN;
    END IF;
    -- The watermark moves on (off ranges wholly behind it are no longer needed).
    s.extracted_through := greatest(s.extracted_through, (c->'job'->>'through_request')::bigint);
    IF s.off_ranges <> '[]'::jsonb THEN
        s.off_ranges := (SELECT coalesce(jsonb_agg(o.r ORDER BY o.n), '[]'::jsonb)
                         FROM jsonb_array_elements(s.off_ranges) WITH ORDINALITY AS o(r, n)
                         WHERE (o.r->>1)::bigint > s.extracted_through);
    END IF;
    IF rec IS NOT NULL THEN
        added := bm_record_added(c || jsonb_build_object('record',
            bm_inherit_sources(ws, rec, kept)));
        s.index_pending := true;  -- its records changed: the index is stale
        others := ARRAY(SELECT k FROM jsonb_array_elements_text(added->'evicted_scopes') k
                        WHERE k <> skey ORDER BY k);
        -- What it replaces leaves the directory: the row is derived again, not prepended to.
        IF NOT bm_mark_replaced(ws, skey, rec->>'id', bm_texts(c->'replaces'), at)
                AND added->>'scope_key' = skey THEN
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
            THEN 'epoch'::timestamptz ELSE least(coalesce(due_at, at), at) END,
        due_since = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
            THEN bm_due_since(due_at, due_since) ELSE due_since END
    WHERE workspace_id = ws AND scope_key = skey;
    IF cardinality(others) > 0 THEN  -- records of other scopes were evicted
        PERFORM bm_save_scopes(ws, '[]'::jsonb, others, '{}', NULL, directory_max,
            summary_chars);  -- bumps the version
    ELSE
        UPDATE workspaces SET version = version + 1, updated_at = now() WHERE id = ws;
    END IF;
    outcome := 'done';
END $$;
