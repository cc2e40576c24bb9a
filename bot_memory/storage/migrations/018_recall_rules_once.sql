-- 018: each rule of a recall row written once. A recall entry (what recall shows of a record)
-- and a row's switches (`pending` among them) were each built twice, by bm_derive and by
-- bm_prepend: both now call bm_recall_entry and bm_recall_switches (the rows are the same).
-- Records read by bm_records_json list their own sources first, then the inherited, as the
-- application's reads of a record do (they were in message order here).

-- A recall entry: what recall shows of a record (records.RecallEntry): its title, the first
-- `summary_chars` characters of its summary, who said it and where, its retention boundary and
-- its sources' IDs (for the host's read-grant hook).
CREATE OR REPLACE FUNCTION bm_recall_entry(ws text, r memory_records, summary_chars integer)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', r.id, 'title', r.title, 'summary', left(r.summary, summary_chars),
        'speaker_ids', to_jsonb(r.speaker_ids), 'thread_ids', to_jsonb(r.thread_ids),
        'until', bm_iso(r.available_until), 'created_at', bm_iso(r.created_at),
        'source_ids', coalesce((SELECT jsonb_agg('m' || x.message_id ORDER BY x.message_id)
            FROM record_sources x WHERE x.workspace_id = ws AND x.record_id = r.id),
            '[]'::jsonb))
$$;

-- A recall row's switches (records.RecallRow): the scope's, and `pending` while its index is
-- stale or there is none (recall shows the directory then).
CREATE OR REPLACE FUNCTION bm_recall_switches(s memory_scopes) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('enabled', s.enabled, 'suspended', s.suspended,
                              'pending', s.index_pending OR s.index_text = '')
$$;

-- A scope's state with its recall row derived from its records (the rule, here only: tests check
-- it against rows written out by hand): the newest valid records are the directory, the valid
-- records its index names are the index's entries (bm_recall_entry). An index that names a record that is gone, or was built from one (its text
-- may repeat any of them), is dropped with its text; with no records left there is nothing to
-- consolidate. Reads only: the caller writes the row.
--
-- An entry the row's previous recall already holds is kept as it is: what an entry shows of a
-- record never changes once it is stored, except its retention boundary, which is compared.
CREATE OR REPLACE FUNCTION bm_derive(ws text, s memory_scopes, directory_max integer, summary_chars integer)
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
            ELSE (SELECT bm_recall_entry(ws, r, summary_chars)
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
    s.recall := bm_recall_switches(s) || jsonb_build_object(
        'index_text', s.index_text, 'memory_ids', to_jsonb(s.index_ids),
        'index_entries', indexed, 'directory', directory);
    RETURN s;
END $$;

-- The recall row of a scope whose only change is one record added, from the row it had: the
-- new record leads the directory, the index and its entries are as they were (`added`: the
-- record's scope and ID, and the records evicted with it). NULL when that is not certain (no
-- row before, an evicted record was shown or its index was built from it, the new one is not
-- the newest): then bm_derive. Each part of the previous row is taken out once, the checks stop
-- at the first that fails, and a full directory drops its last entry instead of being taken
-- apart and built again.
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
    SELECT r.created_at, bm_recall_entry(ws, r, summary_chars)
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
    s.recall := before || bm_recall_switches(s) || jsonb_build_object(
        'directory', CASE
            WHEN n < directory_max THEN jsonb_build_array(entry) || directory
            WHEN n = directory_max AND n > 0 THEN jsonb_build_array(entry) || (directory - (-1))
            ELSE (SELECT jsonb_agg(d.e ORDER BY d.n)
                  FROM jsonb_array_elements(jsonb_build_array(entry) || directory)
                       WITH ORDINALITY AS d(e, n)
                  WHERE d.n <= directory_max) END);
    RETURN s;
END $$;

-- Records as the application reads them (workspace.record_from_row), by ID: their own sources
-- first, then those inherited, each in message order (as workspace.RECORD_SOURCES reads them).
CREATE OR REPLACE FUNCTION bm_records_json(ws text, ids text[]) RETURNS jsonb
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
            'role', s.role, 'inherited', s.inherited) ORDER BY s.inherited, s.message_id)
            FROM record_sources s WHERE s.workspace_id = ws AND s.record_id = r.id), '[]'::jsonb)
    ) ORDER BY r.id), '[]'::jsonb)
    FROM memory_records r WHERE r.workspace_id = ws AND r.id = ANY(ids)
$$;
