-- 015: the workspace transaction in a few statements. What a commit does under the workspace
-- lock (lock, change, derived recall rows, version) runs on the server, each step a function
-- here, so a commit is one to three statements instead of one round trip per step. The
-- application still decides what it decides (who may, what a forget reaches, what a record
-- says); these functions carry the decisions out in the same order, under the same lock.
--
-- Every function that changes memory takes the workspace row FOR NO KEY UPDATE first (ingress
-- inserts, whose foreign-key checks take FOR KEY SHARE, are never blocked by it). PL/pgSQL
-- runs each statement on a fresh snapshot, so what is read after the lock includes whatever the
-- previous holder committed (a single statement that locks and joins would not see it).

-- --- recall rows ---------------------------------------------------------------------------

-- A recall row is rewritten by every commit and read whole by every request: kept out of line
-- but not compressed (compressing it cost a commit more than storing it whole does).
ALTER TABLE memory_scopes ALTER COLUMN recall SET STORAGE EXTERNAL;

-- Timestamps in recall rows as the application writes them: UTC, ISO 8601.
CREATE FUNCTION bm_iso(t timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- A scope's state with its recall row derived from its records (state.build_recall_row): the
-- newest valid records are the directory, the valid records its index names are the index's
-- entries (each with the first characters of its summary, and its sources' IDs for the host's
-- read-grant hook). An index that names a record that is gone, or was built from one (its text
-- may repeat any of them), is dropped with its text; with no records left there is nothing to
-- consolidate. Reads only: the caller writes the row.
--
-- An entry the row's previous recall already holds is kept as it is: what an entry shows of a
-- record never changes once it is stored, except its retention boundary, which is compared.
CREATE FUNCTION bm_derive(ws text, s memory_scopes, directory_max integer, summary_chars integer)
RETURNS memory_scopes
LANGUAGE plpgsql STABLE AS $$
DECLARE
    before jsonb;
    known jsonb;  -- the previous row's entries by record ID
    directory jsonb;
    indexed jsonb;
    n_newest integer;
    n_indexed integer;
    n_left integer := 0;
BEGIN
    before := s.recall || '{}'::jsonb;  -- read once (a row's field is read anew each time)
    SELECT jsonb_object_agg(k->>'id', k) INTO known
    FROM jsonb_array_elements(coalesce(before->'directory', '[]'::jsonb)
                              || coalesce(before->'index_entries', '[]'::jsonb)) k;
    WITH picked AS (
        (SELECT m.id, m.available_until, m.created_at, true AS newest, 0::bigint AS n
         FROM memory_records m
         WHERE m.workspace_id = ws AND m.scope_key = s.scope_key AND m.valid
         ORDER BY m.created_at DESC, m.id DESC LIMIT directory_max)
        UNION ALL
        (SELECT m.id, m.available_until, m.created_at, false, i.n
         FROM unnest(s.index_ids) WITH ORDINALITY AS i(id, n)
         CROSS JOIN LATERAL (SELECT r.id, r.available_until, r.created_at FROM memory_records r
                             WHERE r.workspace_id = ws AND r.id = i.id AND r.valid) m)
    ), entries AS (
        SELECT p.newest, p.n, p.created_at, p.id, CASE
            WHEN known->p.id->>'until' IS NOT DISTINCT FROM bm_iso(p.available_until)
                AND known ? p.id THEN known->p.id
            ELSE (SELECT jsonb_build_object(
                'id', r.id, 'title', r.title, 'summary', left(r.summary, summary_chars),
                'speaker_ids', to_jsonb(r.speaker_ids), 'thread_ids', to_jsonb(r.thread_ids),
                'until', bm_iso(r.available_until), 'created_at', bm_iso(r.created_at),
                'source_ids', coalesce((SELECT jsonb_agg('m' || x.message_id
                                                  ORDER BY x.message_id)
                    FROM record_sources x WHERE x.workspace_id = ws AND x.record_id = r.id),
                    '[]'::jsonb))
             FROM memory_records r WHERE r.workspace_id = ws AND r.id = p.id) END AS entry
        FROM picked p
    )
    SELECT coalesce(jsonb_agg(e.entry ORDER BY e.created_at DESC, e.id DESC)
                        FILTER (WHERE e.newest), '[]'::jsonb),
           count(*) FILTER (WHERE e.newest),
           coalesce(jsonb_agg(e.entry ORDER BY e.n) FILTER (WHERE NOT e.newest), '[]'::jsonb),
           count(*) FILTER (WHERE NOT e.newest)
      INTO directory, n_newest, indexed, n_indexed
      FROM entries e;
    IF n_newest + n_indexed > 0 AND cardinality(s.index_candidates) > 0 THEN
        SELECT count(*) INTO n_left FROM memory_records c
        WHERE c.workspace_id = ws AND c.id = ANY(s.index_candidates) AND c.valid;
    END IF;
    IF n_indexed <> cardinality(s.index_ids)
       OR n_left <> (SELECT count(DISTINCT c) FROM unnest(s.index_candidates) c) THEN
        s.index_text := '';
        s.index_ids := '{}';
        s.index_candidates := '{}';
        s.index_built_at := NULL;
        s.index_pending := n_newest > 0;
        indexed := '[]'::jsonb;
    ELSIF n_newest = 0 THEN
        s.index_pending := false;  -- nothing left to consolidate
    END IF;
    s.recall := jsonb_build_object(
        'enabled', s.enabled, 'suspended', s.suspended,
        'pending', s.index_pending OR s.index_text = '', 'index_text', s.index_text,
        'memory_ids', to_jsonb(s.index_ids), 'index_entries', indexed,
        'directory', directory);
    RETURN s;
END $$;

-- The recall row of a scope whose only change is one record added, from the row it had: the
-- new record leads the directory, the index and its entries are as they were (`added`: the
-- record's scope and ID, and the records evicted with it). NULL when that is not certain (no
-- row before, an evicted record was shown or its index was built from it, the new one is not
-- the newest): then bm_derive.
CREATE FUNCTION bm_prepend(
    ws text, s memory_scopes, added jsonb, directory_max integer, summary_chars integer
) RETURNS memory_scopes
LANGUAGE plpgsql STABLE AS $$
DECLARE
    before jsonb := s.recall || '{}'::jsonb;  -- read once (a row's field is read anew each time)
    evicted text[] := ARRAY(SELECT jsonb_array_elements_text(added->'evicted'));
    entry jsonb;
    created timestamptz;
BEGIN
    IF before IS NULL OR s.index_candidates && evicted OR EXISTS (
        SELECT 1 FROM jsonb_array_elements(before->'directory' || before->'index_entries') e
        WHERE e->>'id' = ANY(evicted)) THEN
        RETURN NULL;
    END IF;
    SELECT jsonb_build_object(
            'id', r.id, 'title', r.title, 'summary', left(r.summary, summary_chars),
            'speaker_ids', to_jsonb(r.speaker_ids), 'thread_ids', to_jsonb(r.thread_ids),
            'until', bm_iso(r.available_until), 'created_at', bm_iso(r.created_at),
            'source_ids', coalesce((SELECT jsonb_agg('m' || x.message_id ORDER BY x.message_id)
                FROM record_sources x WHERE x.workspace_id = ws AND x.record_id = r.id),
                '[]'::jsonb)),
           r.created_at
      INTO entry, created
      FROM memory_records r
      WHERE r.workspace_id = ws AND r.id = added->>'id' AND r.scope_key = s.scope_key
        AND r.valid;
    IF entry IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements(before->'directory') e
            WHERE e->>'created_at' IS NULL
               OR ((e->>'created_at')::timestamptz, e->>'id') >= (created, added->>'id')) THEN
        RETURN NULL;  -- the order is not obvious: derive it
    END IF;
    s.recall := before || jsonb_build_object(
        'enabled', s.enabled, 'suspended', s.suspended,
        'pending', s.index_pending OR s.index_text = '',
        'directory', (SELECT jsonb_agg(d.e ORDER BY d.n)
                      FROM jsonb_array_elements(jsonb_build_array(entry) || (before->'directory'))
                           WITH ORDINALITY AS d(e, n)
                      WHERE d.n <= directory_max));
    RETURN s;
END $$;

-- --- the lock and the write-back of a transaction ----------------------------------------------

-- Lock the workspace row, then read the scope a transaction will work on (if any). No row when
-- the workspace does not exist (and may not be created here: only ingress creates them).
CREATE FUNCTION bm_lock(ws text, skey text, create_missing boolean)
RETURNS TABLE (
    version bigint, scope_key text, kind text, bot_id bigint, chat_id bigint, user_id bigint,
    topic_id bigint, enabled boolean, suspended boolean, off_since bigint, off_ranges jsonb,
    extracted_through bigint, index_text text, index_ids text[], index_built_at timestamptz,
    index_pending boolean, index_candidates text[]
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    found_version bigint;
BEGIN
    SELECT w.version INTO found_version FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND AND create_missing THEN
        INSERT INTO workspaces (id) VALUES (ws) ON CONFLICT (id) DO NOTHING;
        SELECT w.version INTO found_version FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    END IF;
    IF found_version IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT found_version, s.scope_key, s.kind, s.bot_id, s.chat_id, s.user_id, s.topic_id,
               s.enabled, s.suspended, s.off_since, s.off_ranges, s.extracted_through,
               s.index_text, s.index_ids, s.index_built_at, s.index_pending, s.index_candidates
        FROM (SELECT 1) one
        LEFT JOIN memory_scopes s ON s.workspace_id = ws AND s.scope_key = skey;
END $$;

-- Write back what a transaction changed, in key order (the order every writer of several scope
-- rows keeps): the scopes whose states the application decided (`states`, as JSON), the scopes
-- whose records changed (`touched`: their indexes are stale; a scope with no row is left alone)
-- and the scopes whose rows the caller wrote itself (`written`), each with its recall row
-- derived anew (from the one it had, when its only change is the record `added`: see
-- bm_prepend); then bump the workspace's version. A pending index makes the scope due at
-- once, whatever clock the planner runs on.
CREATE FUNCTION bm_save_scopes(
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
                    THEN 'epoch'::timestamptz ELSE due_at END
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
            index_ids, index_built_at, index_pending, index_candidates, recall, due_at)
        VALUES (ws, skey, s.kind, s.bot_id, s.chat_id, s.user_id, s.topic_id, s.enabled,
            s.suspended, s.off_since, s.off_ranges, s.extracted_through, s.index_text,
            s.index_ids, s.index_built_at, s.index_pending, s.index_candidates, s.recall,
            CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
                THEN 'epoch'::timestamptz END)
        ON CONFLICT (workspace_id, scope_key) DO UPDATE SET
            due_at = CASE WHEN EXCLUDED.index_pending AND EXCLUDED.enabled
                AND NOT EXCLUDED.suspended THEN 'epoch'::timestamptz
                ELSE memory_scopes.due_at END,
            enabled = EXCLUDED.enabled, suspended = EXCLUDED.suspended,
            off_since = EXCLUDED.off_since, off_ranges = EXCLUDED.off_ranges,
            extracted_through = EXCLUDED.extracted_through, index_text = EXCLUDED.index_text,
            index_ids = EXCLUDED.index_ids, index_built_at = EXCLUDED.index_built_at,
            index_pending = EXCLUDED.index_pending, recall = EXCLUDED.recall,
            index_candidates = EXCLUDED.index_candidates;
    END LOOP;
    UPDATE workspaces SET version = version + 1, updated_at = now() WHERE id = ws;
END $$;

-- --- records -------------------------------------------------------------------------------

-- Store a record (the application's MemoryRecord as JSON, sources included) and evict the
-- least recently used records past the workspace's cap; the new record is never evicted. A
-- record whose ID exists is left as it is (a note is one per message). Rows: the added record
-- with its retention boundary (no later than the earliest of its sources'), then the evicted.
CREATE FUNCTION bm_add_record(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer
) RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    r memory_records%ROWTYPE := jsonb_populate_record(NULL::memory_records, rec);
    bound timestamptz;
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
    RETURN QUERY
        WITH over AS MATERIALIZED (
            SELECT o.id FROM memory_records o WHERE o.workspace_id = ws AND o.id <> r.id
            ORDER BY o.last_used_at DESC, o.created_at DESC, o.id DESC OFFSET max_records - 1
        )
        DELETE FROM memory_records d USING over
        WHERE d.workspace_id = ws AND d.id = over.id
        RETURNING d.id, d.scope_key, false, NULL::timestamptz;
END $$;

-- bm_add_record, its outcome as bm_save_scopes takes it: the added record's scope and ID (NULL
-- when it existed already), the records evicted and their scopes.
CREATE FUNCTION bm_added(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer
) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'scope_key', max(a.scope_key) FILTER (WHERE a.added),
        'id', max(a.id) FILTER (WHERE a.added),
        'evicted', coalesce(jsonb_agg(a.id) FILTER (WHERE NOT a.added), '[]'::jsonb),
        'evicted_scopes', coalesce(jsonb_agg(DISTINCT a.scope_key) FILTER (WHERE NOT a.added),
                                   '[]'::jsonb))
    FROM bm_add_record(ws, rec, rec_fingerprint, rec_search, max_records) a
$$;

-- Messages and every answer derived from them, and from those, to a fixed point.
CREATE FUNCTION bm_derived_closure(ws text, ids bigint[]) RETURNS bigint[]
LANGUAGE sql AS $$
    WITH RECURSIVE reached(id) AS (
        SELECT DISTINCT unnest(ids)
        UNION
        SELECT d.message_id FROM reached r CROSS JOIN LATERAL (SELECT m.message_id
            FROM message_deps m WHERE m.workspace_id = ws AND m.source_message_id = r.id) d
    )
    SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM reached
$$;

-- Tombstones are content-free: only the IDs of what was forgotten, so extraction cannot restore
-- it. A record still built on any of them becomes unavailable (it says what was forgotten).
-- Returns how many tombstones are new and the scopes whose records became unavailable.
CREATE FUNCTION bm_tombstone(ws text, skey text, ids bigint[], OUT added integer, OUT scopes text[])
LANGUAGE plpgsql AS $$
BEGIN
    added := 0;
    scopes := '{}';
    IF coalesce(cardinality(ids), 0) = 0 THEN
        RETURN;
    END IF;
    WITH invalid AS (
        UPDATE memory_records r SET valid = false, invalid_reason = 'a source was forgotten'
        WHERE r.workspace_id = ws AND r.valid AND r.id = ANY(ARRAY(SELECT d.record_id
            FROM record_sources d WHERE d.workspace_id = ws AND d.message_id = ANY(ids)))
        RETURNING r.scope_key
    )
    SELECT coalesce(array_agg(DISTINCT scope_key ORDER BY scope_key), '{}') INTO scopes
    FROM invalid;
    INSERT INTO tombstones (workspace_id, scope_key, message_id)
    SELECT ws, skey, m FROM unnest(ids) m ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
END $$;

-- --- jobs and references --------------------------------------------------------------------

-- Stop a scope's active jobs that hold these sources (all of them when NULL), and every
-- consolidation of the scope, clearing their checkpoints; returns how many.
CREATE FUNCTION bm_stop_jobs_touching(ws text, skey text, ids bigint[], reason text)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    stopped integer;
BEGIN
    UPDATE memory_jobs SET phase = 'stopped', stop_kind = 'changed', last_error = left(reason, 1000),
        lease_until = NULL, ownership_token = NULL, checkpoint = '{}'::jsonb,
        finished_at = now(), updated_at = now()
    WHERE workspace_id = ws AND scope_key = skey AND phase IN ('extract', 'consolidate')
      AND (ids IS NULL OR phase = 'consolidate' OR EXISTS (
          SELECT 1 FROM jsonb_array_elements(snapshot->'sources') s
          WHERE (s->>'message_id')::bigint = ANY(ids)));
    GET DIAGNOSTICS stopped = ROW_COUNT;
    RETURN stopped;
END $$;

-- End an owned job without retry (jobs.stop); its checkpoint goes with it.
CREATE FUNCTION bm_stop_job(
    ws text, job_id bigint, token uuid, reason text, kind text, refund boolean
) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_jobs SET phase = 'stopped', stop_kind = kind, last_error = left(reason, 1000),
        lease_until = NULL, ownership_token = NULL, checkpoint = '{}'::jsonb,
        claims = CASE WHEN refund THEN greatest(claims - 1, 0) ELSE claims END,
        finished_at = now(), updated_at = now()
    WHERE workspace_id = ws AND id = job_id AND ownership_token = token
$$;

-- Move an owned job on (jobs.advance); ending releases the lease and drops the checkpoint.
CREATE FUNCTION bm_job_phase(ws text, job_id bigint, new_phase text) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_jobs SET phase = new_phase, updated_at = now(),
        lease_until = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN NULL
            ELSE lease_until END,
        ownership_token = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN NULL
            ELSE ownership_token END,
        checkpoint = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN '{}'::jsonb
            ELSE checkpoint END,
        finished_at = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN now() END
    WHERE workspace_id = ws AND id = job_id
$$;

-- Look at a scope again at `at` (or sooner if already due), without touching its activity.
CREATE FUNCTION bm_rearm(ws text, skey text, rearm_at timestamptz) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_scopes SET due_at = least(coalesce(due_at, rearm_at), rearm_at)
    WHERE workspace_id = ws AND scope_key = skey
$$;

-- IDs of forgotten or erased messages leave derived data too: citation sets of past requests,
-- and snapshots of finished jobs.
CREATE FUNCTION bm_scrub(ws text, ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    names text[] := ARRAY(SELECT 'm' || i FROM unnest(ids) i ORDER BY i);
BEGIN
    UPDATE requests SET citation_source_ids = ARRAY(SELECT c FROM unnest(citation_source_ids) c
        WHERE c <> ALL(names))
    WHERE workspace_id = ws AND citation_source_ids && names;
    DELETE FROM memory_jobs j WHERE j.workspace_id = ws AND j.phase IN ('done', 'failed', 'stopped')
        AND EXISTS (SELECT 1 FROM jsonb_array_elements(j.snapshot->'sources') s
                    WHERE (s->>'message_id')::bigint = ANY(ids));
END $$;

-- Scopes with nothing stored (no records, tombstones, retained messages or open requests) and
-- default switches are dropped, so a workspace's scope rows stay bounded; returns their keys.
CREATE FUNCTION bm_drop_empty_scopes(ws text, keys text[]) RETURNS text[]
LANGUAGE sql AS $$
    WITH dropped AS (
        DELETE FROM memory_scopes s WHERE s.workspace_id = ws AND s.scope_key = ANY(keys)
          AND s.enabled AND NOT s.suspended AND s.off_since IS NULL
          AND NOT EXISTS (SELECT 1 FROM memory_records r WHERE r.workspace_id = ws
                          AND r.scope_key = s.scope_key)
          AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = ws
                          AND t.scope_key = s.scope_key)
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = ws
                          AND m.scope_key = s.scope_key AND m.text IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.workspace_id = ws
                          AND q.scope_key = s.scope_key
                          AND q.status IN ('queued', 'running', 'awaiting_approval'))
        RETURNING s.scope_key
    )
    SELECT coalesce(array_agg(scope_key ORDER BY scope_key), '{}') FROM dropped
$$;

-- What a job may still work on (pipeline/inputs.py): NULL when memory is on in the scope, the
-- bot is there, and every snapshot source is retained, unedited and not forgotten; otherwise
-- the stop kind and why, for the first source (in snapshot order) that changed.
CREATE FUNCTION bm_input_problem(ws text, skey text, sources jsonb, OUT kind text, OUT problem text)
LANGUAGE plpgsql AS $$
DECLARE
    s memory_scopes%ROWTYPE;
BEGIN
    SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
    IF NOT FOUND THEN
        kind := 'gone'; problem := 'the scope is gone'; RETURN;
    ELSIF NOT s.enabled THEN
        kind := 'off'; problem := 'memory was turned off in this scope'; RETURN;
    ELSIF s.suspended THEN
        kind := 'off'; problem := 'the bot is no longer in this chat'; RETURN;
    END IF;
    SELECT 'changed', 'source m' || e.message_id || CASE
            WHEN m.id IS NULL OR m.text IS NULL THEN ' was removed or expired'
            WHEN t.message_id IS NOT NULL THEN ' was forgotten'
            ELSE ' was edited' END
      INTO kind, problem
      FROM (SELECT (x.src->>'message_id')::bigint AS message_id, x.src->>'hash' AS hash, x.n
            FROM jsonb_array_elements(sources) WITH ORDINALITY AS x(src, n)) e
      LEFT JOIN LATERAL (SELECT g.id, g.text, g.content_hash FROM messages g
                         WHERE g.workspace_id = ws AND g.id = e.message_id) m ON true
      LEFT JOIN LATERAL (SELECT f.message_id FROM tombstones f WHERE f.workspace_id = ws
                         AND f.scope_key = skey AND f.message_id = e.message_id) t ON true
      WHERE m.id IS NULL OR m.text IS NULL OR t.message_id IS NOT NULL
         OR m.content_hash <> e.hash
      ORDER BY e.n LIMIT 1;
END $$;

-- --- the commits ------------------------------------------------------------------------------

-- Records as the application reads them (workspace.record_from_row), by ID.
CREATE FUNCTION bm_records_json(ws text, ids text[]) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
        'id', r.id, 'scope_key', r.scope_key, 'origin', r.origin, 'title', r.title,
        'summary', r.summary, 'speaker_ids', to_jsonb(r.speaker_ids),
        'thread_ids', to_jsonb(r.thread_ids), 'cited', to_jsonb(r.cited),
        'derived_from', to_jsonb(r.derived_from), 'created_at', r.created_at,
        'last_used_at', r.last_used_at, 'valid', r.valid, 'invalid_reason', r.invalid_reason,
        'available_until', r.available_until,
        'sources', coalesce((SELECT jsonb_agg(jsonb_build_object('message_id', s.message_id,
            'hash', s.hash, 'speaker_id', s.speaker_id, 'thread_id', s.thread_id,
            'role', s.role, 'inherited', s.inherited) ORDER BY s.message_id)
            FROM record_sources s WHERE s.workspace_id = ws AND s.record_id = r.id), '[]'::jsonb)
    ) ORDER BY r.id), '[]'::jsonb)
    FROM memory_records r WHERE r.workspace_id = ws AND r.id = ANY(ids)
$$;

-- What forgetting these records would reach, read under the lock (taken here first) for the
-- application to decide on (control._forget): the scope's state, the chosen records (valid, in
-- the scope), every record sharing a source with them, the answers derived from those sources
-- (with their texts: an answer that repeats what is forgotten goes too) and the records built
-- on those answers. With `flag`, the scope's requests still being answered (the forget's own,
-- and of `asker` only when given) are flagged first, their answers not in yet, and then the
-- messages not yet extracted are read (after the flag: an answer committed meanwhile is either
-- flagged or found). A forget that changes nothing after all rolls back. NULL: no workspace.
CREATE FUNCTION bm_forget_reach(
    ws text, skey text, ids text[], flag boolean, request_id bigint, asker bigint
) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    s memory_scopes%ROWTYPE;
    stored boolean;
    chosen text[];
    deps text[];
    dep_messages bigint[];
    given jsonb := '[]'::jsonb;
    given_ids bigint[] := '{}';
    answer_deps text[] := '{}';
    unextracted jsonb := '[]'::jsonb;
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
    stored := FOUND;
    SELECT c.ids, d.ids, m.ids INTO chosen, deps, dep_messages
      FROM (SELECT ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
                AND r.id = ANY(ids) AND r.valid AND r.scope_key = skey ORDER BY r.id) AS ids) c
      CROSS JOIN LATERAL (SELECT ARRAY(SELECT DISTINCT x.record_id FROM record_sources x
                WHERE x.workspace_id = ws AND x.message_id = ANY(ARRAY(SELECT y.message_id
                    FROM record_sources y WHERE y.workspace_id = ws
                    AND y.record_id = ANY(c.ids)))) AS ids) d
      CROSS JOIN LATERAL (SELECT ARRAY(SELECT DISTINCT z.message_id FROM record_sources z
                WHERE z.workspace_id = ws AND z.record_id = ANY(d.ids)) AS ids) m;
    IF cardinality(dep_messages) > 0 THEN
        SELECT coalesce(jsonb_agg(jsonb_build_object('id', g.id, 'text', g.text) ORDER BY g.id),
                        '[]'::jsonb),
               coalesce(array_agg(g.id), '{}')
          INTO given, given_ids
          FROM messages g
          WHERE g.workspace_id = ws AND g.text IS NOT NULL AND g.id = ANY(ARRAY(
              SELECT a FROM unnest(bm_derived_closure(ws, dep_messages)) a
              WHERE a <> ALL(dep_messages)));
        IF cardinality(given_ids) > 0 THEN
            answer_deps := ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
                WHERE d.workspace_id = ws AND d.message_id = ANY(given_ids));
        END IF;
    END IF;
    IF flag THEN
        UPDATE requests r SET answer_forgotten = true
        WHERE r.workspace_id = ws AND r.scope_key = skey AND (r.id = request_id
            OR (r.status IN ('queued', 'running', 'awaiting_approval') AND (asker IS NULL
                OR EXISTS (SELECT 1 FROM messages u WHERE u.workspace_id = ws
                           AND u.id = r.user_message_id AND u.speaker_id = asker))));
        SELECT coalesce(jsonb_agg(jsonb_build_object('id', m.id, 'text', m.text) ORDER BY m.id),
                        '[]'::jsonb)
          INTO unextracted
          FROM requests r JOIN messages m ON m.workspace_id = r.workspace_id
              AND m.id IN (r.user_message_id, r.answer_message_id)
          WHERE r.workspace_id = ws AND r.scope_key = skey
            AND r.id > coalesce(s.extracted_through, 0) AND r.kind = 'chat'
            AND m.text IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = ws
                            AND t.scope_key = skey AND t.message_id = m.id)
            AND (asker IS NULL OR EXISTS (SELECT 1 FROM messages u WHERE u.workspace_id = ws
                 AND u.id = r.user_message_id AND u.speaker_id = asker));
    END IF;
    RETURN jsonb_build_object(
        'scope', CASE WHEN stored THEN to_jsonb(s) - 'recall' END,
        'chosen', to_jsonb(chosen), 'dependents', to_jsonb(deps),
        'answer_dependents', to_jsonb(answer_deps),
        'records', bm_records_json(ws, chosen || deps || answer_deps),
        'answers', given, 'unextracted', unextracted);
END $$;

-- Carry out a forget the application decided on (control._forget): the reached records go, the
-- forgotten messages become tombstones (a record still built on any of them becomes
-- unavailable), jobs holding them stop, references to them are scrubbed, the scope is looked
-- at again (`rearm_at`); then the transaction's scopes are written back (bm_save_scopes).
CREATE FUNCTION bm_forget(
    ws text, skey text, removed text[], doomed bigint[], rearm_at timestamptz,
    states jsonb, touched text[], directory_max integer, summary_chars integer
) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    changed text[];
BEGIN
    WITH gone AS (
        DELETE FROM memory_records r WHERE r.workspace_id = ws AND r.id = ANY(removed)
        RETURNING r.scope_key
    )
    SELECT coalesce(array_agg(DISTINCT scope_key), '{}') INTO changed FROM gone;
    SELECT changed || t.scopes INTO changed FROM bm_tombstone(ws, skey, doomed) t;
    PERFORM bm_stop_jobs_touching(ws, skey, doomed, 'a source was forgotten');
    PERFORM bm_scrub(ws, doomed);
    IF rearm_at IS NOT NULL THEN
        PERFORM bm_rearm(ws, skey, rearm_at);
    END IF;
    PERFORM bm_save_scopes(ws, states, touched || changed, '{}', NULL, directory_max,
        summary_chars);
END $$;

-- Forget records chosen by ID in one statement when nothing is left for the application to
-- decide (control.forget_record): the actor may forget anything in the scope (`may_all`, the
-- application's rule), the bot is in the chat, and no answer given with what is forgotten and
-- no message not yet extracted has to be read for what it says. Then everything the records
-- reach goes, as bm_forget does. 'nothing': none of them is there to forget; 'undecided':
-- nothing changed, the application decides (bm_forget_reach); 'gone': no workspace.
CREATE FUNCTION bm_forget_at_once(
    ws text, skey text, ids text[], request_id bigint, asker bigint, rearm_at timestamptz,
    directory_max integer, summary_chars integer, OUT outcome text, OUT removed text[]
)
LANGUAGE plpgsql AS $$
DECLARE
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
        AND r.id = ANY(ids) AND r.valid AND r.scope_key = skey);
    IF cardinality(chosen) = 0 THEN
        outcome := 'nothing'; RETURN;
    END IF;
    doomed := ARRAY(SELECT DISTINCT c.message_id FROM record_sources c
        WHERE c.workspace_id = ws AND c.record_id = ANY(chosen));
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
    WHERE r.workspace_id = ws AND r.scope_key = skey AND (r.id = request_id
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
    PERFORM bm_forget(ws, skey, removed, doomed, rearm_at, '[]'::jsonb, '{}', directory_max,
        summary_chars);
    outcome := 'forgotten';
END $$;

-- Remember a note (control._remember) in one statement: unless the bot left the chat
-- ('unavailable') or memory is off here ('memory_off'), store the note (its scope's row too,
-- the first time), evict past the cap, and write back what changed. 'gone': no workspace.
CREATE FUNCTION bm_remember(
    ws text, scope jsonb, rec jsonb, rec_fingerprint text, rec_search tsvector,
    max_records integer, directory_max integer, summary_chars integer
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
    ELSIF NOT FOUND THEN
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

-- Erase messages and everything derived from them (retention.erase), in one statement:
-- answers derived from them to a fixed point, records depending on any of them, job
-- checkpoints holding them, tombstones of the erased originals, references, and scopes left
-- empty; then the scopes that lost records are written back. `gone`: no workspace.
CREATE FUNCTION bm_erase(
    ws text, ids bigint[], reason text, directory_max integer, summary_chars integer,
    OUT gone boolean, OUT originals integer, OUT answers integer, OUT records integer,
    OUT checkpoints integer, OUT dropped_tombstones integer, OUT scopes text[]
)
LANGUAGE plpgsql AS $$
DECLARE
    doomed bigint[];
    removed text[];
    lost text[];
    dropped text[];
    skey text;
BEGIN
    originals := 0; answers := 0; records := 0; checkpoints := 0; dropped_tombstones := 0;
    scopes := '{}';
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    gone := NOT FOUND;
    IF gone OR coalesce(cardinality(ids), 0) = 0 THEN
        RETURN;
    END IF;
    -- Requests still being answered that were given any of this may repeat it: flag them
    -- first (their answers are then stored content-free), and only then look again for
    -- answers, so one committed meanwhile is found rather than missed by both.
    doomed := bm_derived_closure(ws, ids);
    UPDATE requests SET answer_erased = true, answer_forgotten = true
    WHERE workspace_id = ws AND status IN ('queued', 'running', 'awaiting_approval')
      AND (recall_memory_ids && ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
               WHERE d.workspace_id = ws AND d.message_id = ANY(doomed))
           OR citation_source_ids && ARRAY(SELECT 'm' || m FROM unnest(doomed) m));
    doomed := bm_derived_closure(ws, ids);
    removed := ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
        WHERE d.workspace_id = ws AND d.message_id = ANY(doomed));
    WITH erased AS (
        UPDATE messages SET text = NULL, search = NULL, erased_at = now(), erase_reason = reason
        WHERE workspace_id = ws AND id = ANY(doomed) AND text IS NOT NULL
        RETURNING id, scope_key
    )
    SELECT count(*) FILTER (WHERE id = ANY(ids)), count(*) FILTER (WHERE NOT id = ANY(ids)),
           coalesce(array_agg(DISTINCT scope_key), '{}')
      INTO originals, answers, scopes
      FROM erased;
    DELETE FROM message_deps WHERE workspace_id = ws
        AND (message_id = ANY(doomed) OR source_message_id = ANY(doomed));
    records := cardinality(removed);
    WITH deleted AS (
        DELETE FROM memory_records r WHERE r.workspace_id = ws AND r.id = ANY(removed)
        RETURNING r.scope_key
    )
    SELECT coalesce(array_agg(DISTINCT scope_key), '{}') INTO lost FROM deleted;
    DELETE FROM tombstones WHERE workspace_id = ws AND message_id = ANY(doomed);
    GET DIAGNOSTICS dropped_tombstones = ROW_COUNT;
    scopes := ARRAY(SELECT DISTINCT k FROM unnest(scopes || lost) k ORDER BY k);
    FOR skey IN SELECT s.scope_key FROM memory_scopes s
                WHERE s.workspace_id = ws AND s.scope_key = ANY(scopes) ORDER BY s.scope_key
    LOOP
        checkpoints := checkpoints + bm_stop_jobs_touching(ws, skey, doomed, reason);
    END LOOP;
    PERFORM bm_scrub(ws, doomed);
    dropped := bm_drop_empty_scopes(ws, scopes);
    IF cardinality(scopes) > 0 THEN
        PERFORM bm_save_scopes(ws, '[]'::jsonb,
            ARRAY(SELECT k FROM unnest(lost) k WHERE NOT k = ANY(dropped)), '{}', NULL,
            directory_max, summary_chars);
    END IF;
END $$;

-- Commit an extraction job's answer (pipeline/extraction._commit) in one statement, if the job
-- is still this worker's ('lost' otherwise) and its input still holds (else the job stops:
-- 'stopped' and why): the record, depending on its batch and inheriting the sources of the
-- records it carried facts from, the scope's watermark, the job done, the scope looked at again
-- for later batches, and the write-back. `rec` is NULL for an empty answer. 'gone': no
-- workspace.
CREATE FUNCTION bm_commit_extraction(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], rec_fingerprint text, rec_search tsvector, at timestamptz,
    max_records integer, directory_max integer, summary_chars integer,
    OUT outcome text, OUT detail text
)
LANGUAGE plpgsql AS $$
DECLARE
    stop_kind text;
    kept text[] := '{}';
    added jsonb;
    touched text[] := '{}';
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        outcome := 'gone'; RETURN;
    END IF;
    PERFORM 1 FROM memory_jobs j WHERE j.workspace_id = ws AND j.id = job_id
        AND j.ownership_token = token AND j.lease_until > now() FOR UPDATE;
    IF NOT FOUND THEN
        outcome := 'lost'; RETURN;
    END IF;
    SELECT p.kind, p.problem INTO stop_kind, detail FROM bm_input_problem(ws, skey, sources) p;
    IF detail IS NULL AND rec IS NOT NULL AND cardinality(carried) > 0 THEN
        kept := ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
            AND r.id = ANY(carried) AND r.valid ORDER BY r.id);
        IF cardinality(kept) <> (SELECT count(DISTINCT c) FROM unnest(carried) c) THEN
            stop_kind := 'changed'; detail := 'a memory it carried facts from is gone';
        END IF;
    END IF;
    IF detail IS NOT NULL THEN
        PERFORM bm_stop_job(ws, job_id, token, detail || ' during extraction', stop_kind, false);
        outcome := 'stopped'; RETURN;
    END IF;
    -- The watermark moves on (off ranges wholly behind it are no longer needed), and the scope
    -- is looked at again for later batches, if any.
    UPDATE memory_scopes SET
        extracted_through = greatest(extracted_through, through_request),
        off_ranges = CASE WHEN off_ranges = '[]'::jsonb THEN off_ranges ELSE
            (SELECT coalesce(jsonb_agg(o.r ORDER BY o.n), '[]'::jsonb)
             FROM jsonb_array_elements(off_ranges) WITH ORDINALITY AS o(r, n)
             WHERE (o.r->>1)::bigint > greatest(extracted_through, through_request)) END,
        due_at = least(coalesce(due_at, at), at)
    WHERE workspace_id = ws AND scope_key = skey;
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
        added := bm_added(ws, rec, rec_fingerprint, rec_search, max_records);
        touched := skey || ARRAY(SELECT jsonb_array_elements_text(added->'evicted_scopes'));
    END IF;
    PERFORM bm_job_phase(ws, job_id, 'done');
    PERFORM bm_save_scopes(ws, '[]'::jsonb, touched, ARRAY[skey], added, directory_max,
        summary_chars);
    outcome := 'done';
END $$;
