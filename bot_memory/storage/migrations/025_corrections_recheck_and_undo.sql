-- Corrections that keep what they do not correct: an extraction's commit rechecks the records
-- its answer replaces under the workspace lock as it does those it carried facts from (one
-- forgotten, made unavailable or replaced meanwhile stops the job, which is planned again with
-- what holds now), and forgetting a correcting record makes what it replaced current again.

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

CREATE OR REPLACE FUNCTION bm_forget_commit(c jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->>'scope_key';
    doomed bigint[] := bm_ids(c->'doomed');
    changed text[];
BEGIN
    WITH gone AS (
        DELETE FROM memory_records r WHERE r.workspace_id = ws
            AND r.id = ANY(bm_texts(c->'removed'))
        RETURNING r.scope_key
    )
    SELECT coalesce(array_agg(DISTINCT scope_key), '{}') INTO changed FROM gone;
    -- A correction forgotten: what it replaced and the forget did not reach holds again (its
    -- scope is the forgotten record's, written back below).
    UPDATE memory_records r SET replaced_by = NULL, replaced_at = NULL
    WHERE r.workspace_id = ws AND r.replaced_by = ANY(bm_texts(c->'removed'));
    SELECT changed || t.scopes INTO changed FROM bm_tombstone(ws, skey, doomed) t;
    PERFORM bm_stop_jobs_touching(ws, skey, doomed, 'a source was forgotten');
    PERFORM bm_scrub(ws, doomed);
    IF c->>'rearm_at' IS NOT NULL THEN
        PERFORM bm_rearm(ws, skey, (c->>'rearm_at')::timestamptz);
    END IF;
    PERFORM bm_save_scopes(ws, coalesce(c->'states', '[]'::jsonb),
        bm_texts(c->'touched') || changed, '{}', NULL,
        (c->'limits'->>'directory_max')::integer, (c->'limits'->>'summary_chars')::integer);
END $$;
