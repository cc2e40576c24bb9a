-- An answer depends on the records it was given (answer_records), each such record's sources
-- kept once (given_sources), instead of one message_deps row per answer and source: a long
-- conversation's rows grew with its square. message_deps keeps the chat excerpts an answer was
-- shown, and the rows written before this migration, which the closure still follows.

-- An answer depends on the sources of every record it was given, through the records: one row
-- per answer, and each record's sources once in given_sources, however many answers it was
-- given to (flattened per answer, a long conversation's rows grew with its square). Found by
-- record (the index compresses an ID many answers share); written once, so the index is
-- written at once rather than through a pending list a later insert pays to flush.
CREATE TABLE answer_records (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    message_id   bigint NOT NULL,
    record_ids   text[] NOT NULL,
    PRIMARY KEY (workspace_id, message_id)
);
CREATE INDEX answer_records_record_idx ON answer_records USING gin (record_ids)
    WITH (fastupdate = off);

-- The sources of each record an answer was given, as record_sources had them then: kept after
-- the record is gone (replaced, evicted), for as long as an answer depends on it.
CREATE TABLE given_sources (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    record_id    text NOT NULL,
    message_id   bigint NOT NULL,
    PRIMARY KEY (workspace_id, record_id, message_id)
);
CREATE INDEX given_sources_message_idx ON given_sources (workspace_id, message_id);

-- Messages and every answer derived from them, and from those, to a fixed point.
CREATE OR REPLACE FUNCTION bm_derived_closure(ws text, ids bigint[]) RETURNS bigint[]
LANGUAGE sql AS $$
    WITH RECURSIVE reached(id) AS (
        SELECT DISTINCT unnest(ids)
        UNION
        SELECT d.message_id FROM reached r CROSS JOIN LATERAL (
            SELECT m.message_id FROM message_deps m
            WHERE m.workspace_id = ws AND m.source_message_id = r.id
            UNION ALL
            SELECT a.message_id FROM answer_records a
            WHERE a.workspace_id = ws AND a.record_ids && ARRAY(SELECT g.record_id
                FROM given_sources g WHERE g.workspace_id = ws AND g.message_id = r.id)) d
    )
    SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM reached
$$;

-- Erase messages and everything derived from them (retention.erase), in one statement:
-- answers derived from them to a fixed point, records depending on any of them, job
-- checkpoints holding them, tombstones of the erased originals, references, and scopes left
-- empty; then the scopes that lost records are written back. `gone`: no workspace.
CREATE OR REPLACE FUNCTION bm_erase(
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
    -- Every answer given a record built on any of these is among them (the closure).
    DELETE FROM given_sources WHERE workspace_id = ws AND record_id IN (SELECT g.record_id
        FROM given_sources g WHERE g.workspace_id = ws AND g.message_id = ANY(doomed));
    DELETE FROM answer_records WHERE workspace_id = ws AND message_id = ANY(doomed);
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
