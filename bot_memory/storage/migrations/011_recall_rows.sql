-- 011: recall rows carry each record's source IDs (the host's read-grant hook is told them at
-- recall, as the tools tell it). Recall rows are derived: dropped here, rebuilt at start.
UPDATE memory_scopes SET recall = NULL WHERE recall IS NOT NULL;

-- An index's text may repeat any record it was built from, not only the ones it names: those
-- candidates are kept with it, and the index goes when one of them does. Indexes built before
-- this knew only the IDs they name.
ALTER TABLE memory_scopes ADD COLUMN index_candidates text[] NOT NULL DEFAULT '{}';
UPDATE memory_scopes SET index_candidates = index_ids;
