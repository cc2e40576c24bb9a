-- 006: what operators look up.
-- Each worker's last tick (bot-memory status), and lookups by a memory's or a job's ID alone
-- (bot-memory forget / retry, which are given nothing else).
CREATE TABLE worker_ticks (
    worker_id    text PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    last_tick_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX memory_records_id_idx ON memory_records (id);
CREATE INDEX memory_jobs_id_idx ON memory_jobs (id);
