-- Commits take one document: each commit the application calls is a function of one jsonb
-- argument whose keys a later version can add to (an older caller leaves them out), with its
-- body written once. The functions 0.2.0 calls that the current code no longer does stay, each
-- a wrapper over the function that now holds its body (superseded.sql lists them; the next
-- release's first migration drops them). What was added since 0.2.0 and is superseded here was
-- never released and goes now.

-- --- small steps ------------------------------------------------------------------------------

-- A document's list of texts (record IDs, scope keys) or of message IDs as an array.
CREATE FUNCTION bm_texts(j jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(ARRAY(SELECT jsonb_array_elements_text(j)), '{}')
$$;

CREATE FUNCTION bm_ids(j jsonb) RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(j) x), '{}')
$$;

-- A scope's row, made the first time something is stored for it (`scope`: the application's
-- Scope as JSON, its key as scope_key).
CREATE FUNCTION bm_ensure_scope(ws text, scope jsonb) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id, topic_id)
    VALUES (ws, scope->>'scope_key', scope->>'kind', (scope->>'bot_id')::bigint,
        (scope->>'chat_id')::bigint, (scope->>'user_id')::bigint, (scope->>'topic_id')::bigint)
    ON CONFLICT (workspace_id, scope_key) DO NOTHING
$$;

-- --- storing a record -------------------------------------------------------------------------

-- Store a record and evict past the workspace's cap (`c`: workspace, record (the application's
-- MemoryRecord as JSON, sources included), fingerprint, search (its terms as tsvector text),
-- limits.max_records and limits.max_share (default 1: plain LRU)). The new record is never
-- evicted, and a record whose ID exists is left as it is (a note is one per message). Past the
-- cap the records go from whoever holds the most, one at a time: from the scope holding the
-- most if it holds more than its share of the cap (bm_fair_share), else from the whole
-- workspace; within that, the least recently used note of the speaker with the most notes there
-- if they are over the same share, else the least recently used record there; with nobody over
-- their share it is the workspace's plain LRU. Rows: the added record with its retention
-- boundary (no later than the earliest of its sources'), then the evicted.
CREATE FUNCTION bm_record_store(c jsonb)
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

-- bm_record_store's outcome as bm_save_scopes and bm_prepend take it: the added record's scope
-- and ID (NULL when it existed already), the records evicted and their scopes.
CREATE FUNCTION bm_record_added(c jsonb) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'scope_key', max(a.scope_key) FILTER (WHERE a.added),
        'id', max(a.id) FILTER (WHERE a.added),
        'evicted', coalesce(jsonb_agg(a.id) FILTER (WHERE NOT a.added), '[]'::jsonb),
        'evicted_scopes', coalesce(jsonb_agg(DISTINCT a.scope_key) FILTER (WHERE NOT a.added),
                                   '[]'::jsonb))
    FROM bm_record_store(c) a
$$;

-- --- the write-back of a workspace transaction ------------------------------------------------

-- What a transaction changed, written back (WorkspaceTx.flush; `c`: workspace, states (the
-- changed scopes' rows as JSON), touched (scopes whose records changed), limits.directory_max,
-- limits.summary_chars): bm_save_scopes.
CREATE FUNCTION bm_write_back(c jsonb) RETURNS void
LANGUAGE sql AS $$
    SELECT bm_save_scopes(c->>'workspace', coalesce(c->'states', '[]'::jsonb),
        bm_texts(c->'touched'), '{}', NULL, (c->'limits'->>'directory_max')::integer,
        (c->'limits'->>'summary_chars')::integer)
$$;

-- --- a note ---------------------------------------------------------------------------------

-- Remember a note (control._remember) in one statement (`c`: workspace, scope (with its
-- scope_key), record, fingerprint, search, limits, at, check_sources (default true)): unless
-- the bot left the chat ('unavailable') or memory is off here ('memory_off'), and, when checked,
-- only while its source is the message's text, retained at `at` (else 'source_changed': a
-- note is the message as it is at commit and never brings back what retention or a sweep
-- removed), store the note (its scope's row too, the first time), evict past the cap, and
-- write back what changed. 'gone': no workspace.
CREATE FUNCTION bm_note_commit(c jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->'scope'->>'scope_key';
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
    IF coalesce((c->>'check_sources')::boolean, true) AND bm_source_problem_v2(
            ws, skey, c->'record'->'sources', (c->>'at')::timestamptz) IS NOT NULL THEN
        RETURN 'source_changed';
    END IF;
    IF s.scope_key IS NULL THEN
        PERFORM bm_ensure_scope(ws, c->'scope');
    END IF;
    added := bm_record_added(c);
    PERFORM bm_save_scopes(ws, '[]'::jsonb,
        skey || bm_texts(added->'evicted_scopes'), '{}', added,
        (c->'limits'->>'directory_max')::integer, (c->'limits'->>'summary_chars')::integer);
    RETURN 'remembered';
END $$;

-- --- forgetting -------------------------------------------------------------------------------

-- A forget, decided (control._carry_out; `c`: workspace, scope_key, removed (record IDs),
-- doomed (message IDs), rearm_at, states, touched, limits): the removed records go, the doomed
-- messages become tombstones (records still built on them become unavailable), jobs holding
-- them stop, references to them are scrubbed, the scope is looked at again at `rearm_at` (when
-- given), and the transaction's scopes are written back.
CREATE FUNCTION bm_forget_commit(c jsonb) RETURNS void
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

-- Forget records chosen by ID in one statement when nothing is left for the application to
-- decide (control.forget_record; `c`: workspace, scope_key, ids, request_id, asker, rearm_at,
-- limits): the actor may forget anything in the scope (the application's rule), the bot is in
-- the chat, and no answer given with what is forgotten and no message not yet extracted has to
-- be read for what it says. Then everything the records reach goes, as bm_forget_commit does.
-- 'nothing': none of them is there to forget; raises BM001 (nothing changed) when the
-- application decides (bm_forget_reach); 'gone': no workspace.
CREATE FUNCTION bm_forget_at_once_commit(c jsonb, OUT outcome text, OUT removed text[])
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->>'scope_key';
    asker bigint := (c->>'asker')::bigint;
    s memory_scopes%ROWTYPE;
    chosen text[];
    doomed bigint[];
BEGIN
    removed := '{}';
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        outcome := 'gone'; RETURN;
    END IF;
    SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
    IF s.suspended THEN
        outcome := 'undecided'; RETURN;
    END IF;
    chosen := ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
        AND r.id = ANY(bm_texts(c->'ids')) AND r.valid AND r.scope_key = skey);
    IF cardinality(chosen) = 0 THEN
        outcome := 'nothing'; RETURN;
    END IF;
    doomed := ARRAY(SELECT DISTINCT d.message_id FROM record_sources d
        WHERE d.workspace_id = ws AND d.record_id = ANY(chosen));
    removed := ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
        WHERE d.workspace_id = ws AND d.message_id = ANY(doomed) ORDER BY d.record_id);
    doomed := ARRAY(SELECT DISTINCT z.message_id FROM record_sources z
        WHERE z.workspace_id = ws AND z.record_id = ANY(removed));
    IF cardinality(removed) = 0 OR EXISTS (SELECT 1 FROM messages g
            WHERE g.workspace_id = ws AND g.text IS NOT NULL AND g.id = ANY(ARRAY(
                SELECT a FROM unnest(bm_derived_closure(ws, doomed)) a
                WHERE a <> ALL(doomed)))) THEN
        removed := '{}';
        outcome := 'undecided'; RETURN;
    END IF;
    -- As bm_forget_reach: the answers in flight are flagged, then what is not extracted yet is
    -- read; if there is any, the application reads it (the flags go with this statement).
    UPDATE requests r SET answer_forgotten = true
    WHERE r.workspace_id = ws AND r.scope_key = skey AND (r.id = (c->>'request_id')::bigint
        OR (r.status IN ('queued', 'running', 'awaiting_approval') AND (asker IS NULL
            OR EXISTS (SELECT 1 FROM messages u WHERE u.workspace_id = ws
                       AND u.id = r.user_message_id AND u.speaker_id = asker))));
    IF EXISTS (SELECT 1 FROM requests r JOIN messages m ON m.workspace_id = r.workspace_id
                   AND m.id IN (r.user_message_id, r.answer_message_id)
               WHERE r.workspace_id = ws AND r.scope_key = skey
                 AND r.id > coalesce(s.extracted_through, 0) AND r.kind = 'chat'
                 AND m.text IS NOT NULL
                 AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = ws
                                 AND t.scope_key = skey AND t.message_id = m.id)
                 AND (asker IS NULL OR EXISTS (SELECT 1 FROM messages u
                      WHERE u.workspace_id = ws AND u.id = r.user_message_id
                      AND u.speaker_id = asker))) THEN
        RAISE EXCEPTION 'the application decides this forget' USING ERRCODE = 'BM001';
    END IF;
    PERFORM bm_forget_commit(jsonb_build_object('workspace', ws, 'scope_key', skey,
        'removed', to_jsonb(removed), 'doomed', to_jsonb(doomed), 'rearm_at', c->'rearm_at',
        'limits', c->'limits'));
    outcome := 'forgotten';
END $$;

-- --- an extraction ----------------------------------------------------------------------------

-- The job ended as done while its ownership is checked (one write of its row; a commit that
-- stops it instead writes the stop over that, as bm_stop_job leaves a job): false when the job
-- is not this token's, or its lease ran out.
CREATE FUNCTION bm_finish_owned_job(ws text, job bigint, token uuid) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_jobs SET phase = 'done', lease_until = NULL, ownership_token = NULL,
        checkpoint = '{}'::jsonb, finished_at = now(), updated_at = now()
    WHERE workspace_id = ws AND id = job AND ownership_token = token AND lease_until > now();
    RETURN FOUND;
END $$;

-- A record that carried facts from others (`kept`) depends on their sources too: its own
-- sources first, the carried records' after them as inherited, and it is derived from them.
CREATE FUNCTION bm_inherit_sources(ws text, rec jsonb, kept text[]) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN cardinality(kept) = 0 THEN rec ELSE rec || jsonb_build_object(
        'derived_from', to_jsonb(kept),
        'sources', (rec->'sources') || coalesce((
            SELECT jsonb_agg(jsonb_build_object('message_id', i.message_id, 'hash', i.hash,
                'speaker_id', i.speaker_id, 'thread_id', i.thread_id, 'role', i.role,
                'inherited', true) ORDER BY i.message_id)
            FROM (SELECT DISTINCT ON (d.message_id) d.* FROM record_sources d
                  WHERE d.workspace_id = ws AND d.record_id = ANY(kept)
                    AND d.message_id NOT IN (SELECT (x->>'message_id')::bigint
                        FROM jsonb_array_elements(rec->'sources') x)
                  ORDER BY d.message_id, d.record_id) i), '[]'::jsonb)) END
$$;

-- Records of a scope a new one replaces, marked replaced by it at `at`: each still valid and
-- not replaced already (one forgotten or evicted meanwhile has nothing left to replace), and
-- only while the new record is there. Whether any was marked.
CREATE FUNCTION bm_mark_replaced(
    ws text, skey text, new_id text, replaces text[], at timestamptz
) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_records r SET replaced_by = new_id, replaced_at = at
    WHERE r.workspace_id = ws AND r.scope_key = skey AND r.id = ANY(replaces)
      AND r.id <> new_id AND r.valid AND r.replaced_by IS NULL
      AND EXISTS (SELECT 1 FROM memory_records n WHERE n.workspace_id = ws AND n.id = new_id);
    RETURN FOUND;
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
CREATE FUNCTION bm_extraction_commit(c jsonb, OUT outcome text, OUT detail text)
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

-- --- what 0.2.0 calls, over the bodies above (superseded.sql; dropped by the next release) -----

CREATE OR REPLACE FUNCTION bm_add_record(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer
) RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE sql AS $$
    SELECT * FROM bm_record_store(jsonb_build_object('workspace', ws, 'record', rec,
        'fingerprint', rec_fingerprint, 'search', rec_search::text,
        'limits', jsonb_build_object('max_records', max_records)))
$$;

CREATE OR REPLACE FUNCTION bm_remember(
    ws text, scope jsonb, rec jsonb, rec_fingerprint text, rec_search tsvector,
    max_records integer, directory_max integer, summary_chars integer
) RETURNS text
LANGUAGE sql AS $$
    SELECT bm_note_commit(jsonb_build_object('workspace', ws, 'scope', scope, 'record', rec,
        'fingerprint', rec_fingerprint, 'search', rec_search::text, 'check_sources', false,
        'limits', jsonb_build_object('max_records', max_records, 'directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_forget(
    ws text, skey text, removed text[], doomed bigint[], rearm_at timestamptz,
    states jsonb, touched text[], directory_max integer, summary_chars integer
) RETURNS void
LANGUAGE sql AS $$
    SELECT bm_forget_commit(jsonb_build_object('workspace', ws, 'scope_key', skey,
        'removed', to_jsonb(removed), 'doomed', to_jsonb(doomed), 'rearm_at', rearm_at,
        'states', states, 'touched', to_jsonb(touched),
        'limits', jsonb_build_object('directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_forget_at_once(
    ws text, skey text, ids text[], request_id bigint, asker bigint, rearm_at timestamptz,
    directory_max integer, summary_chars integer, OUT outcome text, OUT removed text[]
)
LANGUAGE sql AS $$
    SELECT * FROM bm_forget_at_once_commit(jsonb_build_object('workspace', ws,
        'scope_key', skey, 'ids', to_jsonb(ids), 'request_id', request_id, 'asker', asker,
        'rearm_at', rearm_at, 'limits', jsonb_build_object('directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_commit_extraction(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], rec_fingerprint text, rec_search tsvector, at timestamptz,
    max_records integer, directory_max integer, summary_chars integer,
    OUT outcome text, OUT detail text
)
LANGUAGE sql AS $$
    SELECT * FROM bm_extraction_commit(jsonb_build_object('workspace', ws, 'scope_key', skey,
        'job', jsonb_build_object('id', job_id, 'token', token, 'sources', sources,
            'through_request', through_request),
        'record', rec, 'fingerprint', rec_fingerprint, 'search', rec_search::text,
        'carried', to_jsonb(carried), 'at', at,
        'limits', jsonb_build_object('max_records', max_records, 'directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_source_problem(ws text, skey text, sources jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT bm_source_problem_v2(ws, skey, sources, NULL)
$$;

CREATE OR REPLACE FUNCTION bm_input_problem(
    ws text, skey text, sources jsonb, OUT kind text, OUT problem text
)
LANGUAGE sql STABLE AS $$
    SELECT * FROM bm_input_problem_v2(ws, skey, sources, NULL)
$$;

-- --- superseded here, never released ----------------------------------------------------------

DROP FUNCTION bm_commit_extraction_v3(text, text, bigint, uuid, jsonb, bigint, jsonb, text[],
    text[], text, tsvector, timestamptz, integer, real, integer, integer);
DROP FUNCTION bm_commit_extraction_v2(text, text, bigint, uuid, jsonb, bigint, jsonb, text[],
    text[], text, tsvector, timestamptz, integer, integer, integer);
DROP FUNCTION bm_commit_extraction_fair(text, text, bigint, uuid, jsonb, bigint, jsonb, text[],
    text, tsvector, timestamptz, integer, real, integer, integer);
DROP FUNCTION bm_remember_v3(text, jsonb, jsonb, text, tsvector, integer, real, integer,
    integer, timestamptz);
DROP FUNCTION bm_remember_v2(text, jsonb, jsonb, text, tsvector, integer, integer, integer,
    timestamptz);
DROP FUNCTION bm_added_v2(text, jsonb, text, tsvector, integer, real);
DROP FUNCTION bm_added(text, jsonb, text, tsvector, integer);
DROP FUNCTION bm_add_record_v2(text, jsonb, text, tsvector, integer, real);
