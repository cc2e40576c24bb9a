-- 012: who calls which model. Memory jobs run under the model their bot answered with, and a
-- worker never re-plans another process's work under its own: each bot records the model its
-- process started with, each worker what it calls, so `bot-memory status` can say which jobs
-- wait for a model no live worker has, and what each worker lacks.
CREATE TABLE bot_models (
    bot_id     bigint PRIMARY KEY,
    provider   text NOT NULL,
    model      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE worker_ticks ADD COLUMN provider text, ADD COLUMN model text;
