-- 007: erasure holds for answers still being written.
-- A source the request was given (a recalled record's, or a cited excerpt) was erased (expired,
-- removed, swept) while this request was still being answered: its answer is kept as a
-- content-free row (ID and hash), like the source it may repeat.
ALTER TABLE requests ADD COLUMN answer_erased boolean NOT NULL DEFAULT false;
