-- 008: every unique key of a workspace's tables begins with the workspace, so the schema can be
-- distributed by workspace. Request IDs come from one sequence; lookups by ID alone (a request
-- closed after its group moved) only need a plain index.
DROP INDEX requests_id_idx;
CREATE INDEX requests_id_idx ON requests (id);
