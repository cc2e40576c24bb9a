-- 020: corrections replace (issue 26, item 3). A record a later extraction names in its
-- answer's `replaces` is marked replaced (by which record, and when): it stays, shown as
-- replaced, until pruned or forgotten, but is no longer in recall rows (directory or index),
-- searched, matched or consolidated. An index built from a record that is now replaced is
-- dropped, as one built from a record that is gone. bm_commit_extraction_v2 is the commit with
-- the replacements; bm_records_json reads the two columns when they are set.

ALTER TABLE memory_records ADD COLUMN replaced_by text, ADD COLUMN replaced_at timestamptz;

-- A scope's state with its recall row derived from its records (the rule, here only: tests check
-- it against rows written out by hand): the newest valid records are the directory, the valid
-- records its index names are the index's entries (bm_recall_entry); a replaced record is in
-- neither. An index that names a record that is gone or replaced, or was built from one (its text
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
           AND m.replaced_by IS NULL
         ORDER BY m.created_at DESC, m.id DESC LIMIT directory_max)
        UNION ALL
        (SELECT m.id, m.available_until, m.created_at, false, i.n
         FROM unnest(s.index_ids) WITH ORDINALITY AS i(id, n)
         CROSS JOIN LATERAL (SELECT r.id, r.available_until, r.created_at FROM memory_records r
                             WHERE r.workspace_id = ws AND r.id = i.id AND r.valid
                               AND r.replaced_by IS NULL) m)
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
        WHERE c.workspace_id = ws AND c.id = ANY(s.index_candidates) AND c.valid
          AND c.replaced_by IS NULL;
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


-- Records as the application reads them (workspace.record_from_row), by ID: their own sources
-- first, then those inherited, each in message order (as workspace.RECORD_SOURCES reads them);
-- what replaced them only when something did (a record read by an older process has the keys
-- it knows).
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
    ) || jsonb_strip_nulls(jsonb_build_object('replaced_by', r.replaced_by,
        'replaced_at', r.replaced_at)) ORDER BY r.id), '[]'::jsonb)
    FROM memory_records r WHERE r.workspace_id = ws AND r.id = ANY(ids)
$$;


-- bm_commit_extraction, and the records its answer corrects or makes obsolete (`replaces`,
-- records of its scope the model was given) marked replaced by the new record at `at`, in the
-- same statement: a record still valid and not replaced already (one forgotten or evicted
-- meanwhile has nothing left to replace), then the scope's recall row derived again without
-- them. An empty answer replaces nothing.
CREATE OR REPLACE FUNCTION bm_commit_extraction_v2(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], replaces text[], rec_fingerprint text, rec_search tsvector,
    at timestamptz, max_records integer, directory_max integer, summary_chars integer,
    OUT outcome text, OUT detail text
)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT c.outcome, c.detail INTO outcome, detail
      FROM bm_commit_extraction(ws, skey, job_id, token, sources, through_request, rec,
          carried, rec_fingerprint, rec_search, at, max_records, directory_max,
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
