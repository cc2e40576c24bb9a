-- 013: search terms kept in the row.
--
-- A record's terms (a few KB for a 4 KB summary) went out of line into the TOAST table, and a
-- search read every one of them back, one index lookup each: at the 256-record cap that was
-- most of a query_memories call. Rows up to a page's size now stay whole (compressed in place
-- when they must shrink); rows written before keep their storage until they are rewritten.
ALTER TABLE memory_records SET (toast_tuple_target = 8160);
ALTER TABLE memory_records ALTER COLUMN search SET STORAGE MAIN;
ALTER TABLE messages ALTER COLUMN search SET STORAGE MAIN;
