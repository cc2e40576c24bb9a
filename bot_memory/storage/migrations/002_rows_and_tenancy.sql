-- 002: memory as rows under the workspace lock, per-chat tenancy, retention columns.
--
-- 001 kept every record of a workspace in one JSONB document (workspaces.state), so every
-- change rewrote the whole document. From here on the workspace row is the lock and the
-- budget; scopes, records, their source dependencies and tombstones are rows keyed by the
-- workspace, changed only while that workspace row is locked (FOR NO KEY UPDATE). Every
-- table's key begins with workspace_id, except `chats` (a small directory from a Telegram chat
-- to its workspace) and the usage ledger's own ID.
--
-- Existing data is moved, not dropped: scopes, records and tombstones out of the JSONB
-- document, recall rows are rebuilt by the application at start (they are derived), and
-- workspaces that held a whole bot are marked `legacy` so a per-chat deployment can split them.

-- --- workspaces -------------------------------------------------------------------------------

ALTER TABLE workspaces ADD COLUMN legacy boolean NOT NULL DEFAULT false;
ALTER TABLE workspaces ADD COLUMN reserved_usd numeric(14, 6) NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN last_served_at timestamptz;
UPDATE workspaces SET legacy = true
    WHERE state <> '{}'::jsonb OR EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = workspaces.id);

-- --- chats: what memory knows of a Telegram chat ---------------------------------------------

CREATE TABLE chats (
    bot_id              bigint NOT NULL,
    chat_id             bigint NOT NULL,
    workspace_id        text NOT NULL,
    chat_type           text NOT NULL,
    bot_active          boolean NOT NULL DEFAULT true,   -- false after the bot left / was kicked
    auto_delete_seconds integer,                         -- message_auto_delete_time, if any
    auto_delete_known   boolean NOT NULL DEFAULT false,  -- asked getChat or saw a timer change
    migrated_to         bigint,                          -- group -> supergroup
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bot_id, chat_id)
);

-- --- scopes ----------------------------------------------------------------------------------

CREATE TABLE memory_scopes (
    workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key         text NOT NULL,
    kind              text NOT NULL CHECK (kind IN ('private', 'shared')),
    bot_id            bigint NOT NULL,
    chat_id           bigint NOT NULL,
    user_id           bigint,
    topic_id          bigint NOT NULL DEFAULT 0,
    enabled           boolean NOT NULL DEFAULT true,
    suspended         boolean NOT NULL DEFAULT false,    -- the bot is not in the chat
    off_since         bigint,
    off_ranges        jsonb NOT NULL DEFAULT '[]'::jsonb,
    extracted_through bigint NOT NULL DEFAULT 0,
    index_text        text NOT NULL DEFAULT '',
    index_ids         text[] NOT NULL DEFAULT '{}',
    index_built_at    timestamptz,
    index_pending     boolean NOT NULL DEFAULT false,
    recall            jsonb,                             -- derived; rewritten with every change
    last_activity     timestamptz,                       -- newest finished request
    due_at            timestamptz,                       -- when the worker should look again
    PRIMARY KEY (workspace_id, scope_key)
);
CREATE INDEX memory_scopes_due_idx ON memory_scopes (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX memory_scopes_chat_idx ON memory_scopes (bot_id, chat_id);

INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id, topic_id,
    enabled, off_since, off_ranges, extracted_through, index_text, index_ids, index_built_at,
    index_pending, due_at)
SELECT w.id, s.key,
       CASE split_part(s.key, '/', 3) WHEN 'p' THEN 'private' ELSE 'shared' END,
       split_part(s.key, '/', 2)::bigint,
       split_part(s.key, '/', 4)::bigint,
       CASE split_part(s.key, '/', 3) WHEN 'p' THEN split_part(s.key, '/', 5)::bigint END,
       CASE split_part(s.key, '/', 3) WHEN 'g' THEN split_part(s.key, '/', 5)::bigint ELSE 0 END,
       coalesce((s.value->>'enabled')::boolean, true),
       (s.value->>'off_since')::bigint,
       coalesce(s.value->'off_ranges', '[]'::jsonb),
       coalesce((s.value->>'extracted_through')::bigint, 0),
       coalesce(s.value->'index'->>'text', ''),
       coalesce(ARRAY(SELECT jsonb_array_elements_text(s.value->'index'->'memory_ids')), '{}'),
       (s.value->'index'->>'built_at')::timestamptz,
       coalesce((s.value->'index'->>'pending')::boolean, false),
       now()
FROM workspaces w, jsonb_each(w.state->'scopes') AS s(key, value)
WHERE w.state ? 'scopes';

-- --- records and what they depend on -------------------------------------------------------

CREATE TABLE memory_records (
    workspace_id    text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    id              text NOT NULL,
    scope_key       text NOT NULL,
    origin          text NOT NULL CHECK (origin IN ('extracted', 'note')),
    title           text NOT NULL,
    summary         text NOT NULL,
    speaker_ids     bigint[] NOT NULL DEFAULT '{}',
    thread_ids      bigint[] NOT NULL DEFAULT '{}',
    cited           text[] NOT NULL DEFAULT '{}',
    derived_from    text[] NOT NULL DEFAULT '{}',        -- records this one was built with
    created_at      timestamptz NOT NULL,
    last_used_at    timestamptz NOT NULL,
    valid           boolean NOT NULL DEFAULT true,
    invalid_reason  text,
    available_until timestamptz,                         -- earliest retention of its sources
    fingerprint     text NOT NULL DEFAULT '',            -- hash of title and summary
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX memory_records_scope_idx
    ON memory_records (workspace_id, scope_key, created_at DESC, id DESC) WHERE valid;
CREATE INDEX memory_records_used_idx ON memory_records (last_used_at);
CREATE INDEX memory_records_lru_idx
    ON memory_records (workspace_id, last_used_at DESC, created_at DESC, id DESC);
CREATE INDEX memory_records_invalid_idx ON memory_records (workspace_id) WHERE NOT valid;
CREATE INDEX memory_records_until_idx ON memory_records (available_until)
    WHERE available_until IS NOT NULL;

-- Every dependency of a record: the messages it was extracted from (and, inherited, the sources
-- of records it was built with). Invalidation and forgetting follow these rows.
CREATE TABLE record_sources (
    workspace_id text NOT NULL,
    record_id    text NOT NULL,
    message_id   bigint NOT NULL,
    hash         text NOT NULL,
    speaker_id   bigint NOT NULL,
    thread_id    bigint NOT NULL DEFAULT 0,
    role         text NOT NULL DEFAULT 'user',
    inherited    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (workspace_id, record_id, message_id),
    FOREIGN KEY (workspace_id, record_id) REFERENCES memory_records (workspace_id, id)
        ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX record_sources_message_idx ON record_sources (workspace_id, message_id);

INSERT INTO memory_records (workspace_id, id, scope_key, origin, title, summary, speaker_ids,
    thread_ids, cited, created_at, last_used_at, valid, invalid_reason)
SELECT w.id, r.key, r.value->>'scope_key', r.value->>'origin', r.value->>'title',
       r.value->>'summary',
       ARRAY(SELECT jsonb_array_elements_text(r.value->'speaker_ids'))::bigint[],
       ARRAY(SELECT jsonb_array_elements_text(r.value->'thread_ids'))::bigint[],
       ARRAY(SELECT jsonb_array_elements_text(coalesce(r.value->'cited', '[]'::jsonb))),
       (r.value->>'created_at')::timestamptz, (r.value->>'last_used_at')::timestamptz,
       coalesce((r.value->>'valid')::boolean, true), r.value->>'invalid_reason'
FROM workspaces w, jsonb_each(w.state->'records') AS r(key, value)
WHERE w.state ? 'records';

UPDATE memory_records SET fingerprint =
    left(encode(sha256(convert_to(title || chr(31) || summary, 'UTF8')), 'hex'), 32);

INSERT INTO record_sources (workspace_id, record_id, message_id, hash, speaker_id, thread_id,
    role)
SELECT w.id, r.key, substr(s->>'id', 2)::bigint, s->>'hash', (s->>'speaker_id')::bigint,
       coalesce((s->>'thread_id')::bigint, 0), coalesce(s->>'role', 'user')
FROM workspaces w, jsonb_each(w.state->'records') AS r(key, value),
     jsonb_array_elements(r.value->'sources') AS s
WHERE w.state ? 'records'
ON CONFLICT DO NOTHING;

-- Content-free: a forgotten source's ID, kept while the original message is retained.
CREATE TABLE tombstones (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key    text NOT NULL,
    message_id   bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, scope_key, message_id)
);
CREATE INDEX tombstones_message_idx ON tombstones (workspace_id, message_id);

INSERT INTO tombstones (workspace_id, scope_key, message_id)
SELECT w.id, s.key, substr(t, 2)::bigint
FROM workspaces w, jsonb_each(w.state->'scopes') AS s(key, value),
     jsonb_array_elements_text(coalesce(s.value->'tombstones', '[]'::jsonb)) AS t
WHERE w.state ? 'scopes'
ON CONFLICT DO NOTHING;

DROP TABLE recall_index;
ALTER TABLE workspaces DROP COLUMN state;

-- --- messages: bot identity in the Telegram key, retention, erasure ----------------------

ALTER TABLE messages ADD COLUMN bot_id bigint;
UPDATE messages SET bot_id = split_part(scope_key, '/', 2)::bigint;
ALTER TABLE messages ALTER COLUMN bot_id SET NOT NULL;
ALTER TABLE messages ALTER COLUMN text DROP NOT NULL;              -- NULL once erased
ALTER TABLE messages ADD COLUMN erased_at timestamptz;
ALTER TABLE messages ADD COLUMN erase_reason text;
ALTER TABLE messages ADD COLUMN sent_at timestamptz;               -- Telegram's message date
UPDATE messages SET sent_at = created_at;
ALTER TABLE messages ALTER COLUMN sent_at SET NOT NULL;
ALTER TABLE messages ALTER COLUMN sent_at SET DEFAULT now();
ALTER TABLE messages DROP COLUMN deleted_at;
DROP INDEX messages_telegram_idx;
CREATE UNIQUE INDEX messages_telegram_idx ON messages (workspace_id, bot_id, chat_id,
    telegram_message_id) WHERE telegram_message_id IS NOT NULL;
CREATE INDEX messages_chat_idx ON messages (bot_id, chat_id, telegram_message_id)
    WHERE telegram_message_id IS NOT NULL;
CREATE INDEX messages_expiry_idx ON messages (retain_until) WHERE erased_at IS NULL
    AND retain_until IS NOT NULL;
CREATE INDEX messages_speaker_idx ON messages (workspace_id, speaker_id);

-- An answer depends on the sources of every record it was given (flattened): its retention is
-- theirs, and a sweep of any of them reaches it.
CREATE TABLE message_deps (
    workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    message_id        bigint NOT NULL,
    source_message_id bigint NOT NULL,
    PRIMARY KEY (workspace_id, message_id, source_message_id)
);
CREATE INDEX message_deps_source_idx ON message_deps (workspace_id, source_message_id);

-- --- requests ----------------------------------------------------------------------------------

ALTER TABLE requests DROP CONSTRAINT requests_status_check;
ALTER TABLE requests ADD CONSTRAINT requests_status_check CHECK (status IN
    ('queued', 'running', 'awaiting_approval', 'succeeded', 'failed', 'unanswered'));
ALTER TABLE requests ADD COLUMN reserved_usd numeric(12, 6) NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN keep_open boolean NOT NULL DEFAULT false;
ALTER TABLE requests ADD COLUMN speaker_id bigint;
UPDATE requests r SET speaker_id = m.speaker_id FROM messages m WHERE m.id = r.user_message_id;
DROP INDEX requests_open_idx;
CREATE INDEX requests_open_idx ON requests (workspace_id, scope_key)
    WHERE status IN ('queued', 'running', 'awaiting_approval');
CREATE INDEX requests_abandon_idx ON requests (updated_at)
    WHERE status IN ('queued', 'running', 'awaiting_approval');

-- Tool calls, so a replayed call returns its first result (IDs and outcomes, never content).
CREATE TABLE tool_calls (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    request_id   bigint NOT NULL,
    call_id      text NOT NULL,
    name         text NOT NULL,
    result       jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, request_id, call_id)
);

-- --- keys that begin with the workspace -------------------------------------------------------

ALTER TABLE requests DROP CONSTRAINT requests_user_message_id_fkey;
ALTER TABLE requests DROP CONSTRAINT requests_answer_message_id_fkey;
ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_request_id_fkey;
ALTER TABLE memory_jobs DROP CONSTRAINT memory_jobs_origin_request_id_fkey;
ALTER TABLE messages DROP CONSTRAINT messages_pkey, ADD PRIMARY KEY (workspace_id, id);
ALTER TABLE requests DROP CONSTRAINT requests_pkey, ADD PRIMARY KEY (workspace_id, id);
ALTER TABLE memory_jobs DROP CONSTRAINT memory_jobs_pkey, ADD PRIMARY KEY (workspace_id, id);
ALTER TABLE requests ADD FOREIGN KEY (workspace_id, user_message_id)
    REFERENCES messages (workspace_id, id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE;
CREATE UNIQUE INDEX requests_id_idx ON requests (id);
-- The ledger outlives a purged workspace (amounts and tokens, no text): no cascade.
ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_workspace_id_fkey;
ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_pkey, ADD PRIMARY KEY (workspace_id, id);
ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_idempotency_key_key;
CREATE UNIQUE INDEX usage_ledger_key_idx ON usage_ledger (workspace_id, idempotency_key);
DROP INDEX usage_request_idx;
CREATE INDEX usage_request_idx ON usage_ledger (workspace_id, request_id);

-- --- jobs --------------------------------------------------------------------------------------

ALTER TABLE memory_jobs ADD COLUMN stop_kind text;    -- unknown | changed | config | ...
ALTER TABLE memory_jobs ADD COLUMN finished_at timestamptz;
UPDATE memory_jobs SET finished_at = updated_at, checkpoint = '{}'::jsonb
    WHERE phase IN ('done', 'failed', 'stopped');
DROP INDEX memory_jobs_due_idx;
CREATE INDEX memory_jobs_due_idx ON memory_jobs (next_attempt_at)
    WHERE phase IN ('extract', 'consolidate');
CREATE INDEX memory_jobs_scope_idx ON memory_jobs (workspace_id, scope_key, id);
CREATE INDEX memory_jobs_finished_idx ON memory_jobs (finished_at) WHERE finished_at IS NOT NULL;
