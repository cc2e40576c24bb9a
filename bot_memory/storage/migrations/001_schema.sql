-- bot-memory schema: the whole spec's shape, even where the first releases use only part of it.
-- Memory state lives in workspaces.state (JSONB, changed only under its row lock). Conversation
-- data, jobs, usage and budgets live in ordinary tables.

CREATE TABLE workspaces (
    id          text PRIMARY KEY,
    state       jsonb NOT NULL DEFAULT '{}'::jsonb,
    version     bigint NOT NULL DEFAULT 0,
    spent_usd   numeric(14, 6) NOT NULL DEFAULT 0,   -- charges against the workspace budget
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Derived from workspaces.state in the same transaction: recall reads one small row per request
-- instead of de-TOASTing the whole record.
CREATE TABLE recall_index (
    workspace_id  text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key     text NOT NULL,
    state_version bigint NOT NULL,
    row           jsonb NOT NULL,
    PRIMARY KEY (workspace_id, scope_key)
);

-- Directed messages only (ordinary group traffic is never stored) and the bot's answers.
CREATE TABLE messages (
    id                  bigserial PRIMARY KEY,
    workspace_id        text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key           text NOT NULL,
    chat_id             bigint NOT NULL,
    thread_id           bigint NOT NULL DEFAULT 0,
    telegram_message_id bigint,
    speaker_id          bigint NOT NULL,
    role                text NOT NULL CHECK (role IN ('user', 'assistant')),
    text                text NOT NULL,
    content_hash        text NOT NULL,
    language            text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    edited_at           timestamptz,
    deleted_at          timestamptz,
    retain_until        timestamptz            -- original retention; memory never extends it
);
CREATE INDEX messages_scope_idx ON messages (workspace_id, scope_key, id);
CREATE UNIQUE INDEX messages_telegram_idx
    ON messages (workspace_id, chat_id, telegram_message_id) WHERE telegram_message_id IS NOT NULL;

-- Interactive requests: one directed user message and the answer to it.
CREATE TABLE requests (
    id                  bigserial PRIMARY KEY,
    workspace_id        text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key           text NOT NULL,
    scope               jsonb NOT NULL,
    kind                text NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'memory_control')),
    user_message_id     bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    answer_message_id   bigint REFERENCES messages (id) ON DELETE SET NULL,
    status              text NOT NULL CHECK (status IN
                            ('queued', 'running', 'awaiting_approval', 'succeeded', 'failed')),
    provider            text,                  -- pinned when the request runs
    model               text,
    budget_usd          numeric(12, 6) NOT NULL,
    charged_usd         numeric(12, 6) NOT NULL DEFAULT 0,   -- grows with memory_* charges
    recall_memory_ids   text[] NOT NULL DEFAULT '{}',        -- the frozen index it was given
    citation_source_ids text[] NOT NULL DEFAULT '{}',        -- authorized citation set
    retain_until        timestamptz,           -- earliest boundary of the sources it used
    error               text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    finished_at         timestamptz
);
CREATE INDEX requests_scope_idx ON requests (workspace_id, scope_key, id);
CREATE INDEX requests_open_idx ON requests (workspace_id, status)
    WHERE status IN ('queued', 'running', 'awaiting_approval');

-- Every model call and tool call, attached to the request it serves.
CREATE TABLE usage_ledger (
    id                bigserial PRIMARY KEY,
    workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    request_id        bigint REFERENCES requests (id) ON DELETE SET NULL,
    job_id            bigint,
    kind              text NOT NULL,  -- answer | memory_extract | memory_consolidate | tool:<name>
    provider          text,
    model             text,
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    cost_usd          numeric(12, 6) NOT NULL DEFAULT 0,
    outcome           text NOT NULL CHECK (outcome IN ('ok', 'error', 'unknown')),
    detail            text,
    idempotency_key   text UNIQUE,    -- a replayed call is recorded once
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_request_idx ON usage_ledger (request_id);

-- Background memory jobs: one row per (scope, input snapshot).
CREATE TABLE memory_jobs (
    id                bigserial PRIMARY KEY,
    workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key         text NOT NULL,
    phase             text NOT NULL CHECK (phase IN
                          ('extract', 'consolidate', 'done', 'failed', 'stopped')),
    input_hash        text NOT NULL,
    snapshot          jsonb NOT NULL,         -- source IDs + hashes, never contents
    origin_request_id bigint REFERENCES requests (id) ON DELETE SET NULL,
    provider          text NOT NULL,
    model             text NOT NULL,
    ownership_token   uuid,
    lease_until       timestamptz,
    claims            integer NOT NULL DEFAULT 0,
    next_attempt_at   timestamptz NOT NULL DEFAULT now(),
    checkpoint        jsonb NOT NULL DEFAULT '{}'::jsonb,  -- validated model outputs by phase
    last_error        text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, scope_key, input_hash)
);
CREATE INDEX memory_jobs_due_idx ON memory_jobs (next_attempt_at, id)
    WHERE phase IN ('extract', 'consolidate');
