-- Every finished request pushes its scope's wake-up back (due_at): indexed, each push wrote a
-- new row version and index entries, and a busy scope's row left dead versions by the
-- thousand. The due-scope index holds the wake-up's minute instead, so a push within the same
-- minute is a heap-only update the page reclaims itself, and rows leave room for that.

-- Whole minutes from 1970 to t ('epoch', due first, is minute 0): the due-scope index's key.
-- The epoch does not depend on the time zone, so this is immutable.
CREATE OR REPLACE FUNCTION bm_due_minute(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT floor(extract(epoch FROM t) / 60)::bigint
$$;

ALTER TABLE memory_scopes
    ADD COLUMN due_minute bigint GENERATED ALWAYS AS (bm_due_minute(due_at)) STORED;
DROP INDEX memory_scopes_due_idx;
CREATE INDEX memory_scopes_due_idx ON memory_scopes (due_minute) WHERE due_minute IS NOT NULL;
ALTER TABLE memory_scopes SET (fillfactor = 50);
