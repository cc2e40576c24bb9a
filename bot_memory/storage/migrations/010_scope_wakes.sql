-- 010: a counter of the wake-ups scheduled for a scope (each finished request adds one), so the
-- planner, which decides without blocking ingress, never overwrites a wake-up scheduled while
-- it was deciding (equal timestamps included).
ALTER TABLE memory_scopes ADD COLUMN wakes bigint NOT NULL DEFAULT 0;
