-- 005: requests closed by the adapter itself.
-- A command that is not addressed to memory is recorded and answered, but its exchange is not a
-- conversation source: its own kind, which extraction never plans.
ALTER TABLE requests DROP CONSTRAINT requests_kind_check;
ALTER TABLE requests ADD CONSTRAINT requests_kind_check
    CHECK (kind IN ('chat', 'memory_control', 'command'));
