-- 003: forgetting holds for answers still being written.
-- A forget landed while this request was still being answered: its answer is treated as
-- forgotten too (never extracted, never shown to the model again), without storing what was
-- forgotten.
ALTER TABLE requests ADD COLUMN answer_forgotten boolean NOT NULL DEFAULT false;
