-- bot-memory's schema as it is now: every table, index and constraint, and every server
-- function (bm_*) with its current body. This is what a reader reads; it is not applied.
--
-- How it relates to the migrations (migrations/NNN_*.sql):
--
--   * The migrations are the history: every database, new or existing, is built and upgraded
--     by applying them in order, each once (database.apply_migrations). A landed migration is
--     never edited.
--   * This file is the schema they add up to, written once, tables with their columns in the
--     order the migrations left them (columns a migration added come last).
--   * A change is made here AND in a new migration: the migration carries the change out on
--     existing databases (ALTER TABLE ..., or a function restated whole with CREATE OR REPLACE
--     FUNCTION, copied from here), this file shows the result. tests/db/test_schema.py builds one
--     database from the migrations and one from this file and fails on any difference
--     (columns, defaults, storage, indexes, constraints, triggers, function signatures and
--     bodies), so the two cannot drift apart.
--   * A commit the application calls takes one document (`c jsonb`): a later version adds keys,
--     which an older caller leaves out, instead of a new function with more arguments. Steps
--     inside commits are functions of their own, named for what they do; each body is written
--     once.
--   * A function whose meaning changes for its callers gets a new name rather than a new body
--     under the old one: a process still running the previous release keeps calling the
--     function it was written against until it is restarted. A superseded version lives one
--     release: superseded.sql holds what the previous release calls and the current code does
--     not (each a wrapper over what runs now), and the next release's first migration drops
--     them, so this file shows only what runs. What is superseded before it was ever released
--     goes in the migration that supersedes it.

-- --- workspaces: the lock and the budget -------------------------------------------------------

-- A workspace's memory (scopes, records, tombstones) changes only while its row is held FOR NO
-- KEY UPDATE (storage/workspace.py). Every table's key begins with workspace_id, except `chats`
-- (a directory from a Telegram chat to its workspace), the bots' and workers' own rows and the
-- Mini App's used download tickets.
CREATE TABLE workspaces (
    id             text PRIMARY KEY,
    version        bigint NOT NULL DEFAULT 0,            -- bumped by every memory commit
    spent_usd      numeric(14, 6) NOT NULL DEFAULT 0,    -- charges against the workspace budget
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    legacy         boolean NOT NULL DEFAULT false,       -- held a whole bot before per-chat tenancy
    reserved_usd   numeric(14, 6) NOT NULL DEFAULT 0,    -- worst cases of calls in flight
    last_served_at timestamptz
) WITH (fillfactor = 50);  -- every billed call writes its row twice: in place, in this room

-- What memory knows of a Telegram chat.
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

-- --- conversation --------------------------------------------------------------------------------

-- Directed messages only (ordinary group traffic is never stored) and the bot's answers. An
-- erased message keeps its row, content-free (text and search terms NULL).
CREATE TABLE messages (
    id                  bigserial NOT NULL,
    workspace_id        text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key           text NOT NULL,
    chat_id             bigint NOT NULL,
    thread_id           bigint NOT NULL DEFAULT 0,
    telegram_message_id bigint,
    speaker_id          bigint NOT NULL,
    role                text NOT NULL CHECK (role IN ('user', 'assistant')),
    text                text,                  -- NULL once erased
    content_hash        text NOT NULL,
    language            text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    edited_at           timestamptz,
    retain_until        timestamptz,           -- original retention; memory never extends it
    bot_id              bigint NOT NULL,
    erased_at           timestamptz,
    erase_reason        text,
    sent_at             timestamptz NOT NULL DEFAULT now(),  -- Telegram's message date
    -- Terms cut by the application (bot_memory/terms.py), kept in the row.
    search              tsvector,
    PRIMARY KEY (workspace_id, id)
);
ALTER TABLE messages ALTER COLUMN search SET STORAGE MAIN;  -- (STORAGE in CREATE TABLE: 16+)
CREATE INDEX messages_scope_idx ON messages (workspace_id, scope_key, id);
CREATE UNIQUE INDEX messages_telegram_idx ON messages (workspace_id, bot_id, chat_id,
    telegram_message_id) WHERE telegram_message_id IS NOT NULL;
CREATE INDEX messages_chat_idx ON messages (bot_id, chat_id, telegram_message_id)
    WHERE telegram_message_id IS NOT NULL;
CREATE INDEX messages_expiry_idx ON messages (retain_until) WHERE erased_at IS NULL
    AND retain_until IS NOT NULL;
CREATE INDEX messages_speaker_idx ON messages (workspace_id, speaker_id);
CREATE INDEX messages_unsearched_idx ON messages (id)
    WHERE search IS NULL AND text IS NOT NULL;

-- An answer depends on the chat excerpts it was shown (and, in rows from before
-- answer_records, on the sources of its records, flattened): a sweep of any of them reaches it.
CREATE TABLE message_deps (
    workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    message_id        bigint NOT NULL,
    source_message_id bigint NOT NULL,
    PRIMARY KEY (workspace_id, message_id, source_message_id)
);
CREATE INDEX message_deps_source_idx ON message_deps (workspace_id, source_message_id);

-- An answer depends on the sources of every record it was given, through the records: one row
-- per answer, and each record's sources once in given_sources, however many answers it was
-- given to (flattened per answer, a long conversation's rows grew with its square). Found by
-- record (the index compresses an ID many answers share); written once, so the index is
-- written at once rather than through a pending list a later insert pays to flush.
CREATE TABLE answer_records (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    message_id   bigint NOT NULL,
    record_ids   text[] NOT NULL,
    PRIMARY KEY (workspace_id, message_id)
);
CREATE INDEX answer_records_record_idx ON answer_records USING gin (record_ids)
    WITH (fastupdate = off);

-- The sources of each record an answer was given, as record_sources had them then: kept after
-- the record is gone (replaced, evicted), for as long as an answer depends on it.
CREATE TABLE given_sources (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    record_id    text NOT NULL,
    message_id   bigint NOT NULL,
    PRIMARY KEY (workspace_id, record_id, message_id)
);
CREATE INDEX given_sources_message_idx ON given_sources (workspace_id, message_id);

-- Interactive requests: one directed user message and the answer to it. Request IDs come from
-- one sequence; lookups by ID alone (a request closed after its group moved) use a plain index.
CREATE TABLE requests (
    id                  bigserial NOT NULL,
    workspace_id        text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key           text NOT NULL,
    scope               jsonb NOT NULL,
    -- A command not addressed to memory is recorded and answered, but is not a conversation
    -- source: extraction never plans it.
    kind                text NOT NULL DEFAULT 'chat'
                            CHECK (kind IN ('chat', 'memory_control', 'command')),
    user_message_id     bigint NOT NULL,
    answer_message_id   bigint,
    status              text NOT NULL CHECK (status IN ('queued', 'running',
                            'awaiting_approval', 'succeeded', 'failed', 'unanswered')),
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
    finished_at         timestamptz,
    reserved_usd        numeric(12, 6) NOT NULL DEFAULT 0,
    keep_open           boolean NOT NULL DEFAULT false,
    speaker_id          bigint,
    -- A forget landed while this request was being answered: its answer is treated as
    -- forgotten too (never extracted, never shown to the model again).
    answer_forgotten    boolean NOT NULL DEFAULT false,
    -- A source it was given was erased while it was being answered: its answer is kept
    -- content-free (ID and hash), like the source it may repeat.
    answer_erased       boolean NOT NULL DEFAULT false,
    PRIMARY KEY (workspace_id, id),
    FOREIGN KEY (workspace_id, user_message_id)
        REFERENCES messages (workspace_id, id) ON DELETE CASCADE DEFERRABLE INITIALLY IMMEDIATE
);
CREATE INDEX requests_scope_idx ON requests (workspace_id, scope_key, id);
CREATE INDEX requests_open_idx ON requests (workspace_id, scope_key)
    WHERE status IN ('queued', 'running', 'awaiting_approval');
CREATE INDEX requests_abandon_idx ON requests (updated_at)
    WHERE status IN ('queued', 'running', 'awaiting_approval');
CREATE INDEX requests_id_idx ON requests (id);

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

-- --- billing -----------------------------------------------------------------------------------

-- Every model call and tool call, attached to the request it serves. Each billed call is an
-- attempt here before it is sent: 'pending' until closed ok (with usage), error (certainly
-- not processed) or unknown (it may have been); its worst case is reserved meanwhile. The
-- ledger outlives a purged workspace (amounts and tokens, no text): no cascade.
CREATE TABLE usage_ledger (
    id                bigserial NOT NULL,
    workspace_id      text NOT NULL,
    request_id        bigint,
    job_id            bigint,
    kind              text NOT NULL,  -- answer | memory_extract | memory_consolidate | tool:<name>
    provider          text,
    model             text,
    prompt_tokens     integer NOT NULL DEFAULT 0,
    completion_tokens integer NOT NULL DEFAULT 0,
    cost_usd          numeric(12, 6) NOT NULL DEFAULT 0,
    outcome           text NOT NULL CHECK (outcome IN ('pending', 'ok', 'error', 'unknown')),
    detail            text,
    idempotency_key   text,           -- a replayed call is recorded once
    created_at        timestamptz NOT NULL DEFAULT now(),
    reserved_usd      numeric(12, 6) NOT NULL DEFAULT 0,
    closed_at         timestamptz,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX usage_request_idx ON usage_ledger (workspace_id, request_id);
CREATE UNIQUE INDEX usage_ledger_key_idx ON usage_ledger (workspace_id, idempotency_key);
CREATE INDEX usage_ledger_pending_idx ON usage_ledger (workspace_id, job_id)
    WHERE outcome = 'pending';

-- --- memory ------------------------------------------------------------------------------------

-- Whole minutes from 1970 to t ('epoch', due first, is minute 0): the due-scope index's key.
-- The epoch does not depend on the time zone, so this is immutable.
CREATE OR REPLACE FUNCTION bm_due_minute(t timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
    SELECT floor(extract(epoch FROM t) / 60)::bigint
$$;

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
    -- Derived (bm_derive, bm_prepend); rewritten with every change and read whole by every
    -- request: kept out of line but not compressed.
    recall            jsonb,
    last_activity     timestamptz,                       -- newest finished request
    due_at            timestamptz,                       -- when the worker should look again
    -- Wake-ups scheduled (each finished request adds one), so the planner never overwrites one
    -- scheduled while it was deciding.
    wakes             bigint NOT NULL DEFAULT 0,
    -- Every record the index was built from: its text may repeat any of them.
    index_candidates  text[] NOT NULL DEFAULT '{}',
    -- While due_at is 'epoch' (due now, first), since when (bm_due_since): where the pipeline
    -- lag starts. Left as it is when due_at moves on; read only beside the sentinel.
    due_since         timestamptz,
    -- The due-scope index's key: the wake-up's minute, not the wake-up, so the push every
    -- finished request makes within a minute updates the row in place (heap-only), in the
    -- room the fill factor leaves.
    due_minute        bigint GENERATED ALWAYS AS (bm_due_minute(due_at)) STORED,
    PRIMARY KEY (workspace_id, scope_key)
) WITH (fillfactor = 50);
ALTER TABLE memory_scopes ALTER COLUMN recall SET STORAGE EXTERNAL;
CREATE INDEX memory_scopes_due_idx ON memory_scopes (due_minute) WHERE due_minute IS NOT NULL;
CREATE INDEX memory_scopes_chat_idx ON memory_scopes (bot_id, chat_id);

-- Rows up to a page's size stay whole (search terms included, compressed in place when they
-- must shrink): a search reads them without TOAST lookups.
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
    search          tsvector,
    -- A later record of its scope corrected it or made it obsolete (extraction said so): it
    -- is no longer recalled, matched or consolidated; query_memories finds it after the
    -- current records, marked, as the screens show it, until it is pruned or forgotten.
    -- Forgetting the newer record makes it current again (bm_forget_commit).
    replaced_by     text,
    replaced_at     timestamptz,
    PRIMARY KEY (workspace_id, id)
) WITH (toast_tuple_target = 8160);
ALTER TABLE memory_records ALTER COLUMN search SET STORAGE MAIN;
CREATE INDEX memory_records_scope_idx
    ON memory_records (workspace_id, scope_key, created_at DESC, id DESC) WHERE valid;
CREATE INDEX memory_records_used_idx ON memory_records (last_used_at);
CREATE INDEX memory_records_lru_idx
    ON memory_records (workspace_id, last_used_at DESC, created_at DESC, id DESC);
CREATE INDEX memory_records_invalid_idx ON memory_records (workspace_id) WHERE NOT valid;
CREATE INDEX memory_records_until_idx ON memory_records (available_until)
    WHERE available_until IS NOT NULL;
CREATE INDEX memory_records_id_idx ON memory_records (id);
CREATE INDEX memory_records_unsearched_idx ON memory_records (workspace_id, id)
    WHERE search IS NULL;

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

-- Content-free: a forgotten source's ID, kept while the original message is retained.
CREATE TABLE tombstones (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key    text NOT NULL,
    message_id   bigint NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, scope_key, message_id)
);
CREATE INDEX tombstones_message_idx ON tombstones (workspace_id, message_id);

-- Background memory jobs: one row per (scope, input snapshot).
CREATE TABLE memory_jobs (
    id                bigserial NOT NULL,
    workspace_id      text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    scope_key         text NOT NULL,
    phase             text NOT NULL CHECK (phase IN
                          ('extract', 'consolidate', 'done', 'failed', 'stopped')),
    input_hash        text NOT NULL,
    snapshot          jsonb NOT NULL,         -- source IDs + hashes, never contents
    origin_request_id bigint,
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
    stop_kind         text,    -- unknown | changed | config | ...
    finished_at       timestamptz,
    PRIMARY KEY (workspace_id, id),
    UNIQUE (workspace_id, scope_key, input_hash)
);
CREATE INDEX memory_jobs_due_idx ON memory_jobs (next_attempt_at)
    WHERE phase IN ('extract', 'consolidate');
CREATE INDEX memory_jobs_scope_idx ON memory_jobs (workspace_id, scope_key, id);
CREATE INDEX memory_jobs_finished_idx ON memory_jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX memory_jobs_id_idx ON memory_jobs (id);

-- --- who runs what (bot-memory status) ---------------------------------------------------------

-- Each worker's last tick, the model it calls and the settings it runs with.
CREATE TABLE worker_ticks (
    worker_id    text PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    last_tick_at timestamptz NOT NULL DEFAULT now(),
    provider     text,
    model        text,
    settings     jsonb
);

-- The model (and settings) each bot's process started with: memory jobs run under it.
CREATE TABLE bot_models (
    bot_id     bigint PRIMARY KEY,
    provider   text NOT NULL,
    model      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    settings   jsonb
);

-- --- the Mini App ------------------------------------------------------------------------------

-- Download tickets used: an export link downloads once, whichever process serves it (storage/
-- claims.py). No workspace, chat, user or text: a random nonce and its ticket's expiry.
CREATE TABLE used_tickets (
    nonce      bytea PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX used_tickets_expires_idx ON used_tickets (expires_at);

-- === server functions ==========================================================================
--
-- What a commit does under the workspace lock (lock, change, derived recall rows, version) runs
-- on the server, each step a function here, so a commit is one to three statements. The
-- application still decides what it decides (who may, what a forget reaches, what a record
-- says); these functions carry the decisions out in the same order, under the same lock.
-- Every function that changes memory takes the workspace row FOR NO KEY UPDATE first. PL/pgSQL
-- runs each statement on a fresh snapshot, so what is read after the lock includes whatever the
-- previous holder committed. SQL-language functions are checked when created: each comes after
-- the functions it calls.

-- --- a commit's document --------------------------------------------------------------------

-- A document's list of texts (record IDs, scope keys) or of message IDs as an array.
CREATE OR REPLACE FUNCTION bm_texts(j jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(ARRAY(SELECT jsonb_array_elements_text(j)), '{}')
$$;

CREATE OR REPLACE FUNCTION bm_ids(j jsonb) RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(j) x), '{}')
$$;

-- A scope's row, made the first time something is stored for it (`scope`: the application's
-- Scope as JSON, its key as scope_key).
CREATE OR REPLACE FUNCTION bm_ensure_scope(ws text, scope jsonb) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id, topic_id)
    VALUES (ws, scope->>'scope_key', scope->>'kind', (scope->>'bot_id')::bigint,
        (scope->>'chat_id')::bigint, (scope->>'user_id')::bigint, (scope->>'topic_id')::bigint)
    ON CONFLICT (workspace_id, scope_key) DO NOTHING
$$;

-- --- recall rows --------------------------------------------------------------------------

-- Timestamps in recall rows as the application writes them: UTC, ISO 8601.
CREATE OR REPLACE FUNCTION bm_iso(t timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- A recall entry: what recall shows of a record (records.RecallEntry): its title, the first
-- `summary_chars` characters of its summary, who said it and where, its retention boundary and
-- its sources' IDs (for the host's read-grant hook).
CREATE OR REPLACE FUNCTION bm_recall_entry(ws text, r memory_records, summary_chars integer)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object(
        'id', r.id, 'title', r.title, 'summary', left(r.summary, summary_chars),
        'speaker_ids', to_jsonb(r.speaker_ids), 'thread_ids', to_jsonb(r.thread_ids),
        'until', bm_iso(r.available_until), 'created_at', bm_iso(r.created_at),
        'source_ids', coalesce((SELECT jsonb_agg('m' || x.message_id ORDER BY x.message_id)
            FROM record_sources x WHERE x.workspace_id = ws AND x.record_id = r.id),
            '[]'::jsonb))
$$;

-- A recall row's switches (records.RecallRow): the scope's, and `pending` while its index is
-- stale or there is none (recall shows the directory then).
CREATE OR REPLACE FUNCTION bm_recall_switches(s memory_scopes) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object('enabled', s.enabled, 'suspended', s.suspended,
                              'pending', s.index_pending OR s.index_text = '')
$$;

-- A scope's state with its recall row derived from its records (the rule, here only: tests check
-- it against rows written out by hand): the newest valid records are the directory, the valid
-- records its index names are the index's entries (bm_recall_entry); a replaced record is in
-- neither. An index that names a record that is gone or replaced, or was built from one (its text
-- may repeat any of them), is dropped with its text; with no records left there is nothing to
-- consolidate. Reads only: the caller writes the row.
--
-- An entry the row's previous recall already holds is kept as it is: what an entry shows of a
-- record never changes once it is stored, except its retention boundary, which is compared.
CREATE OR REPLACE FUNCTION bm_derive(ws text, s memory_scopes, directory_max integer, summary_chars integer)
RETURNS memory_scopes
LANGUAGE plpgsql STABLE AS $$
DECLARE
    before jsonb;
    known jsonb;  -- the previous row's entries by record ID
    directory jsonb;
    indexed jsonb;
    n_newest integer;
    n_indexed integer;
    n_left integer := 0;
BEGIN
    before := s.recall || '{}'::jsonb;  -- read once (a row's field is read anew each time)
    SELECT jsonb_object_agg(k->>'id', k) INTO known
    FROM jsonb_array_elements(coalesce(before->'directory', '[]'::jsonb)
                              || coalesce(before->'index_entries', '[]'::jsonb)) k;
    WITH picked AS (
        (SELECT m.id, m.available_until, m.created_at, true AS newest, 0::bigint AS n
         FROM memory_records m
         WHERE m.workspace_id = ws AND m.scope_key = s.scope_key AND m.valid
           AND m.replaced_by IS NULL
         ORDER BY m.created_at DESC, m.id DESC LIMIT directory_max)
        UNION ALL
        (SELECT m.id, m.available_until, m.created_at, false, i.n
         FROM unnest(s.index_ids) WITH ORDINALITY AS i(id, n)
         CROSS JOIN LATERAL (SELECT r.id, r.available_until, r.created_at FROM memory_records r
                             WHERE r.workspace_id = ws AND r.id = i.id AND r.valid
                               AND r.replaced_by IS NULL) m)
    ), entries AS (
        SELECT p.newest, p.n, p.created_at, p.id, CASE
            WHEN known->p.id->>'until' IS NOT DISTINCT FROM bm_iso(p.available_until)
                AND known ? p.id THEN known->p.id
            ELSE (SELECT bm_recall_entry(ws, r, summary_chars)
                  FROM memory_records r WHERE r.workspace_id = ws AND r.id = p.id) END AS entry
        FROM picked p
    )
    SELECT coalesce(jsonb_agg(e.entry ORDER BY e.created_at DESC, e.id DESC)
                        FILTER (WHERE e.newest), '[]'::jsonb),
           count(*) FILTER (WHERE e.newest),
           coalesce(jsonb_agg(e.entry ORDER BY e.n) FILTER (WHERE NOT e.newest), '[]'::jsonb),
           count(*) FILTER (WHERE NOT e.newest)
      INTO directory, n_newest, indexed, n_indexed
      FROM entries e;
    IF n_newest + n_indexed > 0 AND cardinality(s.index_candidates) > 0 THEN
        SELECT count(*) INTO n_left FROM memory_records c
        WHERE c.workspace_id = ws AND c.id = ANY(s.index_candidates) AND c.valid
          AND c.replaced_by IS NULL;
    END IF;
    IF n_indexed <> cardinality(s.index_ids)
       OR n_left <> (SELECT count(DISTINCT c) FROM unnest(s.index_candidates) c) THEN
        s.index_text := '';
        s.index_ids := '{}';
        s.index_candidates := '{}';
        s.index_built_at := NULL;
        s.index_pending := n_newest > 0;
        indexed := '[]'::jsonb;
    ELSIF n_newest = 0 THEN
        s.index_pending := false;  -- nothing left to consolidate
    END IF;
    s.recall := bm_recall_switches(s) || jsonb_build_object(
        'index_text', s.index_text, 'memory_ids', to_jsonb(s.index_ids),
        'index_entries', indexed, 'directory', directory);
    RETURN s;
END $$;

-- The recall row of a scope whose only change is one record added, from the row it had: the
-- new record leads the directory, the index and its entries are as they were (`added`: the
-- record's scope and ID, and the records evicted with it). NULL when that is not certain (no
-- row before, an evicted record was shown or its index was built from it, the new one is not
-- the newest): then bm_derive. Each part of the previous row is taken out once, the checks stop
-- at the first that fails, and a full directory drops its last entry instead of being taken
-- apart and built again.
CREATE OR REPLACE FUNCTION bm_prepend(
    ws text, s memory_scopes, added jsonb, directory_max integer, summary_chars integer
) RETURNS memory_scopes
LANGUAGE plpgsql STABLE AS $$
DECLARE
    before jsonb := s.recall;
    directory jsonb := before->'directory';
    evicted text[] := ARRAY(SELECT jsonb_array_elements_text(added->'evicted'));
    entry jsonb;
    created timestamptz;
    n integer;
BEGIN
    IF before IS NULL OR s.index_candidates && evicted THEN
        RETURN NULL;
    END IF;
    IF cardinality(evicted) > 0 AND EXISTS (
            SELECT 1 FROM jsonb_array_elements(directory || (before->'index_entries')) e
            WHERE e->>'id' = ANY(evicted)) THEN
        RETURN NULL;
    END IF;
    SELECT r.created_at, bm_recall_entry(ws, r, summary_chars)
      INTO created, entry
      FROM memory_records r
      WHERE r.workspace_id = ws AND r.id = added->>'id' AND r.scope_key = s.scope_key
        AND r.valid;
    -- The order is obvious only when the new record is the newest.
    IF entry IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements(directory) e
            WHERE e->>'created_at' IS NULL
               OR ((e->>'created_at')::timestamptz, e->>'id') >= (created, added->>'id')) THEN
        RETURN NULL;
    END IF;
    n := jsonb_array_length(directory);
    s.recall := before || bm_recall_switches(s) || jsonb_build_object(
        'directory', CASE
            WHEN n < directory_max THEN jsonb_build_array(entry) || directory
            WHEN n = directory_max AND n > 0 THEN jsonb_build_array(entry) || (directory - (-1))
            ELSE (SELECT jsonb_agg(d.e ORDER BY d.n)
                  FROM jsonb_array_elements(jsonb_build_array(entry) || directory)
                       WITH ORDINALITY AS d(e, n)
                  WHERE d.n <= directory_max) END);
    RETURN s;
END $$;

-- --- the lock and the write-back of a transaction -----------------------------------------

-- Lock the workspace row, then read the scope a transaction will work on (if any). No row when
-- the workspace does not exist (and may not be created here: only ingress creates them).
CREATE OR REPLACE FUNCTION bm_lock(ws text, skey text, create_missing boolean)
RETURNS TABLE (
    version bigint, scope_key text, kind text, bot_id bigint, chat_id bigint, user_id bigint,
    topic_id bigint, enabled boolean, suspended boolean, off_since bigint, off_ranges jsonb,
    extracted_through bigint, index_text text, index_ids text[], index_built_at timestamptz,
    index_pending boolean, index_candidates text[]
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    found_version bigint;
BEGIN
    SELECT w.version INTO found_version FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND AND create_missing THEN
        INSERT INTO workspaces (id) VALUES (ws) ON CONFLICT (id) DO NOTHING;
        SELECT w.version INTO found_version FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    END IF;
    IF found_version IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT found_version, s.scope_key, s.kind, s.bot_id, s.chat_id, s.user_id, s.topic_id,
               s.enabled, s.suspended, s.off_since, s.off_ranges, s.extracted_through,
               s.index_text, s.index_ids, s.index_built_at, s.index_pending, s.index_candidates
        FROM (SELECT 1) one
        LEFT JOIN memory_scopes s ON s.workspace_id = ws AND s.scope_key = skey;
END $$;

-- A scope made due first (due_at = 'epoch', which the planner takes before any time): since
-- when it has been due, for the pipeline lag. One already due first keeps its start, one due
-- at a time past keeps that time (it was due then), any other is due from now.
CREATE OR REPLACE FUNCTION bm_due_since(due_at timestamptz, due_since timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN due_at = 'epoch'::timestamptz THEN coalesce(due_since, now())
        WHEN due_at <= now() THEN due_at ELSE now() END
$$;

-- Write back what a transaction changed, in key order (the order every writer of several scope
-- rows keeps): the scopes whose states the application decided (`states`, as JSON), the scopes
-- whose records changed (`touched`: their indexes are stale; a scope with no row is left alone)
-- and the scopes whose rows the caller wrote itself (`written`), each with its recall row
-- derived anew (from the one it had, when its only change is the record `added`: see
-- bm_prepend); then bump the workspace's version. A pending index makes the scope due at
-- once, whatever clock the planner runs on.
CREATE OR REPLACE FUNCTION bm_save_scopes(
    ws text, states jsonb, touched text[], written text[], added jsonb, directory_max integer,
    summary_chars integer
) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    skey text;
    state jsonb;
    s memory_scopes%ROWTYPE;
    shortcut memory_scopes%ROWTYPE;
BEGIN
    FOR skey IN
        SELECT k FROM (SELECT x->>'scope_key' FROM jsonb_array_elements(states) x
                       UNION SELECT unnest(touched) UNION SELECT unnest(written)) AS keys(k)
        WHERE k IS NOT NULL ORDER BY k
    LOOP
        SELECT x INTO state FROM jsonb_array_elements(states) x WHERE x->>'scope_key' = skey;
        IF state IS NULL THEN  -- its row is as it should be, but for the recall row
            SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
            CONTINUE WHEN NOT FOUND;
            s.index_pending := s.index_pending OR coalesce(skey = ANY(touched), false);
            shortcut := NULL;
            IF added->>'scope_key' = skey THEN
                shortcut := bm_prepend(ws, s, added, directory_max, summary_chars);
            END IF;
            IF shortcut.scope_key IS NOT NULL THEN
                s := shortcut;
            ELSE
                s := bm_derive(ws, s, directory_max, summary_chars);
            END IF;
            UPDATE memory_scopes SET
                index_text = s.index_text, index_ids = s.index_ids,
                index_candidates = s.index_candidates, index_built_at = s.index_built_at,
                index_pending = s.index_pending, recall = s.recall,
                due_at = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
                    THEN 'epoch'::timestamptz ELSE due_at END,
                due_since = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
                    THEN bm_due_since(due_at, due_since) ELSE due_since END
            WHERE workspace_id = ws AND scope_key = skey;
            CONTINUE;
        END IF;
        s := jsonb_populate_record(NULL::memory_scopes, state);
        s.workspace_id := ws;
        s.recall := (SELECT m.recall FROM memory_scopes m
                     WHERE m.workspace_id = ws AND m.scope_key = skey);
        s.index_pending := s.index_pending OR coalesce(skey = ANY(touched), false);
        s := bm_derive(ws, s, directory_max, summary_chars);
        INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id,
            topic_id, enabled, suspended, off_since, off_ranges, extracted_through, index_text,
            index_ids, index_built_at, index_pending, index_candidates, recall, due_at,
            due_since)
        VALUES (ws, skey, s.kind, s.bot_id, s.chat_id, s.user_id, s.topic_id, s.enabled,
            s.suspended, s.off_since, s.off_ranges, s.extracted_through, s.index_text,
            s.index_ids, s.index_built_at, s.index_pending, s.index_candidates, s.recall,
            CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
                THEN 'epoch'::timestamptz END,
            CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended THEN now() END)
        ON CONFLICT (workspace_id, scope_key) DO UPDATE SET
            due_at = CASE WHEN EXCLUDED.index_pending AND EXCLUDED.enabled
                AND NOT EXCLUDED.suspended THEN 'epoch'::timestamptz
                ELSE memory_scopes.due_at END,
            due_since = CASE WHEN EXCLUDED.index_pending AND EXCLUDED.enabled
                AND NOT EXCLUDED.suspended
                THEN bm_due_since(memory_scopes.due_at, memory_scopes.due_since)
                ELSE memory_scopes.due_since END,
            enabled = EXCLUDED.enabled, suspended = EXCLUDED.suspended,
            off_since = EXCLUDED.off_since, off_ranges = EXCLUDED.off_ranges,
            extracted_through = EXCLUDED.extracted_through, index_text = EXCLUDED.index_text,
            index_ids = EXCLUDED.index_ids, index_built_at = EXCLUDED.index_built_at,
            index_pending = EXCLUDED.index_pending, recall = EXCLUDED.recall,
            index_candidates = EXCLUDED.index_candidates;
    END LOOP;
    UPDATE workspaces SET version = version + 1, updated_at = now() WHERE id = ws;
END $$;

-- What a transaction changed, written back (WorkspaceTx.flush; `c`: workspace, states (the
-- changed scopes' rows as JSON), touched (scopes whose records changed), limits.directory_max,
-- limits.summary_chars): bm_save_scopes.
CREATE OR REPLACE FUNCTION bm_write_back(c jsonb) RETURNS void
LANGUAGE sql AS $$
    SELECT bm_save_scopes(c->>'workspace', coalesce(c->'states', '[]'::jsonb),
        bm_texts(c->'touched'), '{}', NULL, (c->'limits'->>'directory_max')::integer,
        (c->'limits'->>'summary_chars')::integer)
$$;

-- --- records ------------------------------------------------------------------------------

-- The cap's fair share, in records: what one scope, or one speaker's notes, may hold of a
-- workspace's `max_records` before the cap evicts from them first (at least one record).
CREATE OR REPLACE FUNCTION bm_fair_share(max_records integer, max_share real) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$
    SELECT greatest(1, floor(max_records * max_share))::integer
$$;

-- Store a record and evict past the workspace's cap (`c`: workspace, record (the application's
-- MemoryRecord as JSON, sources included), fingerprint, search (its terms as tsvector text),
-- limits.max_records and limits.max_share (default 1: plain LRU)). The new record is never
-- evicted, and a record whose ID exists is left as it is (a note is one per message). Past the
-- cap the records go from whoever holds the most, one at a time: from the scope holding the
-- most if it holds more than its share of the cap (bm_fair_share), else from the whole
-- workspace; within that, the least recently used note of the speaker with the most notes there
-- if they are over the same share, else the least recently used record there; with nobody over
-- their share it is the least recently used of the scopes holding the most, so a scope's last
-- memories never go while another holds more. Rows: the added record with its retention
-- boundary (no later than the earliest of its sources'), then the evicted.
CREATE OR REPLACE FUNCTION bm_record_store(c jsonb)
RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    ws text := c->>'workspace';
    rec jsonb := c->'record';
    max_records integer := (c->'limits'->>'max_records')::integer;
    r memory_records%ROWTYPE := jsonb_populate_record(NULL::memory_records, c->'record');
    bound timestamptz;
    share integer := bm_fair_share(
        (c->'limits'->>'max_records')::integer,
        coalesce((c->'limits'->>'max_share')::real, 1.0));
    total integer;
    top integer;
    big_key text;
    big_speaker bigint;
    held integer;
    victim text;
BEGIN
    INSERT INTO memory_records AS m (workspace_id, id, scope_key, origin, title, summary,
        speaker_ids, thread_ids, cited, derived_from, created_at, last_used_at,
        available_until, fingerprint, search)
    VALUES (ws, r.id, r.scope_key, r.origin, r.title, r.summary, r.speaker_ids, r.thread_ids,
        r.cited, r.derived_from, r.created_at, r.last_used_at,
        least(r.available_until, (SELECT min(g.retain_until) FROM messages g
            WHERE g.workspace_id = ws AND g.id = ANY(ARRAY(SELECT (x->>'message_id')::bigint
            FROM jsonb_array_elements(rec->'sources') x)))),
        c->>'fingerprint', (c->>'search')::tsvector)
    ON CONFLICT (workspace_id, id) DO NOTHING
    RETURNING m.available_until INTO bound;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO record_sources (workspace_id, record_id, message_id, hash, speaker_id,
        thread_id, role, inherited)
    SELECT ws, r.id, s.message_id, s.hash, s.speaker_id, s.thread_id, s.role, s.inherited
    FROM jsonb_to_recordset(rec->'sources') AS s(message_id bigint, hash text,
        speaker_id bigint, thread_id bigint, role text, inherited boolean);
    RETURN QUERY SELECT r.id, r.scope_key, true, bound;
    SELECT count(*) INTO total FROM memory_records o WHERE o.workspace_id = ws;
    WHILE total > max_records LOOP
        victim := NULL;
        -- Where from: the scope holding the most if it is over its share, else the workspace.
        SELECT o.scope_key, count(*) INTO big_key, held FROM memory_records o
            WHERE o.workspace_id = ws GROUP BY o.scope_key
            ORDER BY count(*) DESC, o.scope_key LIMIT 1;
        top := held;
        IF held <= share THEN
            big_key := NULL;
        END IF;
        -- Within it, the speaker with the most notes if they are over the share.
        SELECT p.speaker, count(*) INTO big_speaker, held
            FROM memory_records o, unnest(o.speaker_ids) AS p(speaker)
            WHERE o.workspace_id = ws AND o.origin = 'note'
              AND (big_key IS NULL OR o.scope_key = big_key)
            GROUP BY p.speaker ORDER BY count(*) DESC, p.speaker LIMIT 1;
        IF held > share THEN
            SELECT o.id INTO victim FROM memory_records o
                WHERE o.workspace_id = ws AND o.origin = 'note'
                  AND (big_key IS NULL OR o.scope_key = big_key)
                  AND big_speaker = ANY(o.speaker_ids) AND o.id <> r.id
                ORDER BY o.last_used_at, o.created_at, o.id LIMIT 1;
        END IF;
        IF victim IS NULL THEN  -- the least recently used there, of the scopes holding the most
            SELECT o.id INTO victim FROM memory_records o
                WHERE o.workspace_id = ws AND o.id <> r.id
                  AND (o.scope_key = big_key OR big_key IS NULL AND o.scope_key IN (
                      SELECT t.scope_key FROM memory_records t WHERE t.workspace_id = ws
                      GROUP BY t.scope_key HAVING count(*) = top))
                ORDER BY o.workspace_id, o.last_used_at, o.created_at, o.id LIMIT 1;
        END IF;
        EXIT WHEN victim IS NULL;
        RETURN QUERY
            DELETE FROM memory_records d WHERE d.workspace_id = ws AND d.id = victim
            RETURNING d.id, d.scope_key, false, NULL::timestamptz;
        total := total - 1;
    END LOOP;
END $$;

-- bm_record_store's outcome as bm_save_scopes and bm_prepend take it: the added record's scope
-- and ID (NULL when it existed already), the records evicted and their scopes.
CREATE OR REPLACE FUNCTION bm_record_added(c jsonb) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'scope_key', max(a.scope_key) FILTER (WHERE a.added),
        'id', max(a.id) FILTER (WHERE a.added),
        'evicted', coalesce(jsonb_agg(a.id) FILTER (WHERE NOT a.added), '[]'::jsonb),
        'evicted_scopes', coalesce(jsonb_agg(DISTINCT a.scope_key) FILTER (WHERE NOT a.added),
                                   '[]'::jsonb))
    FROM bm_record_store(c) a
$$;

-- Messages and every answer derived from them, and from those, to a fixed point.
CREATE OR REPLACE FUNCTION bm_derived_closure(ws text, ids bigint[]) RETURNS bigint[]
LANGUAGE sql AS $$
    WITH RECURSIVE reached(id) AS (
        SELECT DISTINCT unnest(ids)
        UNION
        SELECT d.message_id FROM reached r CROSS JOIN LATERAL (
            SELECT m.message_id FROM message_deps m
            WHERE m.workspace_id = ws AND m.source_message_id = r.id
            UNION ALL
            SELECT a.message_id FROM answer_records a
            WHERE a.workspace_id = ws AND a.record_ids && ARRAY(SELECT g.record_id
                FROM given_sources g WHERE g.workspace_id = ws AND g.message_id = r.id)) d
    )
    SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM reached
$$;

-- Tombstones are content-free: only the IDs of what was forgotten, so extraction cannot restore
-- it. A record still built on any of them becomes unavailable (it says what was forgotten).
-- Returns how many tombstones are new and the scopes whose records became unavailable.
CREATE OR REPLACE FUNCTION bm_tombstone(ws text, skey text, ids bigint[], OUT added integer, OUT scopes text[])
LANGUAGE plpgsql AS $$
BEGIN
    added := 0;
    scopes := '{}';
    IF coalesce(cardinality(ids), 0) = 0 THEN
        RETURN;
    END IF;
    WITH invalid AS (
        UPDATE memory_records r SET valid = false, invalid_reason = 'a source was forgotten'
        WHERE r.workspace_id = ws AND r.valid AND r.id = ANY(ARRAY(SELECT d.record_id
            FROM record_sources d WHERE d.workspace_id = ws AND d.message_id = ANY(ids)))
        RETURNING r.scope_key
    )
    SELECT coalesce(array_agg(DISTINCT scope_key ORDER BY scope_key), '{}') INTO scopes
    FROM invalid;
    INSERT INTO tombstones (workspace_id, scope_key, message_id)
    SELECT ws, skey, m FROM unnest(ids) m ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
END $$;

-- --- requests -----------------------------------------------------------------------------

-- Scopes seen again, each with the time it was (`ats`): a scope's row the first time; its
-- activity and due time only move forward, the due time an idle window after its activity.
-- Each scope once (an upsert may not touch a row twice in one statement).
CREATE OR REPLACE FUNCTION bm_schedule(
    wss text[], skeys text[], scopes jsonb[], ats timestamptz[], idle_seconds double precision
) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id,
        topic_id, last_activity, due_at, suspended)
    SELECT c.ws, c.skey, c.scope->>'kind', (c.scope->>'bot_id')::bigint,
        (c.scope->>'chat_id')::bigint, (c.scope->>'user_id')::bigint,
        (c.scope->>'topic_id')::bigint, c.at, c.at + make_interval(secs => idle_seconds),
        coalesce((SELECT NOT h.bot_active FROM chats h
                  WHERE h.bot_id = (c.scope->>'bot_id')::bigint
                  AND h.chat_id = (c.scope->>'chat_id')::bigint), false)
    FROM (SELECT DISTINCT ON (g.ws, g.skey) g.*
          FROM unnest(wss, skeys, scopes, ats) AS g(ws, skey, scope, at)
          ORDER BY g.ws, g.skey, g.at DESC) c
    ON CONFLICT (workspace_id, scope_key) DO UPDATE SET
        last_activity = greatest(memory_scopes.last_activity, EXCLUDED.last_activity),
        due_at = greatest(memory_scopes.due_at, EXCLUDED.due_at),
        wakes = memory_scopes.wakes + 1
$$;

-- When a chat's auto-delete timer removes a message sent at `at` (NULL: the chat keeps its
-- messages): nothing memory keeps of it outlives that.
CREATE OR REPLACE FUNCTION bm_chat_keeps_until(bot bigint, chat bigint, at timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT at + make_interval(secs => h.auto_delete_seconds) FROM chats h
    WHERE h.bot_id = bot AND h.chat_id = chat AND h.auto_delete_seconds > 0
$$;

-- Close a request with its answer (requests.finish), once: false when it is closed already.
-- The answer is kept as the assistant message (content-free when a source it was given was
-- erased meanwhile), retained no longer than anything it was given nor than the chat keeps
-- messages; it depends on its records (their sources kept once, in given_sources) and on the
-- chat excerpts it was shown. Then the request's scope is scheduled. By request ID alone: a
-- chat moved meanwhile (a group upgrade) keeps its requests. The workspace's row is taken
-- before the request's, the order a purge takes them in (else each waits for the other).
CREATE OR REPLACE FUNCTION bm_finish_answered(
    request bigint, answer_text text, answer_hash text, answer_search text,
    answer_telegram_id bigint, sender bigint, at timestamptz, idle_seconds double precision,
    request_kind text
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    r requests%ROWTYPE;
    ws text;
    cited bigint[];
    answer bigint;
BEGIN
    LOOP  -- again if the request's chat moved to another workspace meanwhile
        SELECT q.workspace_id INTO ws FROM requests q WHERE q.id = request;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        PERFORM 1 FROM workspaces w WHERE w.id = ws FOR KEY SHARE;
        SELECT * INTO r FROM requests q WHERE q.id = request FOR UPDATE;
        IF NOT FOUND OR r.status NOT IN ('queued', 'running', 'awaiting_approval') THEN
            RETURN false;
        END IF;
        EXIT WHEN r.workspace_id = ws;
    END LOOP;
    cited := ARRAY(SELECT substr(c, 2)::bigint FROM unnest(r.citation_source_ids) c
                   WHERE c ~ '^m[0-9]+$');
    INSERT INTO messages (workspace_id, scope_key, bot_id, chat_id, thread_id,
        telegram_message_id, speaker_id, role, text, content_hash, sent_at, retain_until,
        erased_at, erase_reason, search)
    SELECT r.workspace_id, r.scope_key, m.bot_id, m.chat_id, m.thread_id, answer_telegram_id,
        coalesce(sender, m.bot_id), 'assistant',
        CASE WHEN r.answer_erased THEN NULL ELSE answer_text END, answer_hash, at,
        least(
            (SELECT min(d.retain_until) FROM messages d
             WHERE d.workspace_id = r.workspace_id AND d.id IN (
                 SELECT s.message_id FROM record_sources s
                 WHERE s.workspace_id = r.workspace_id AND s.record_id = ANY(r.recall_memory_ids)
                 UNION SELECT unnest(cited))),
            bm_chat_keeps_until(m.bot_id, m.chat_id, at)),
        CASE WHEN r.answer_erased THEN at END,
        CASE WHEN r.answer_erased THEN 'a source it was given was erased' END,
        CASE WHEN r.answer_erased THEN NULL ELSE answer_search::tsvector END
    FROM messages m WHERE m.workspace_id = r.workspace_id AND m.id = r.user_message_id
    RETURNING id INTO answer;
    IF answer IS NOT NULL THEN
        -- A record's sources are copied the first time an answer is given it.
        INSERT INTO given_sources (workspace_id, record_id, message_id)
        SELECT s.workspace_id, s.record_id, s.message_id FROM record_sources s
        WHERE s.workspace_id = r.workspace_id AND s.record_id = ANY(r.recall_memory_ids)
          AND NOT EXISTS (SELECT 1 FROM given_sources g
                          WHERE g.workspace_id = r.workspace_id AND g.record_id = s.record_id)
        ON CONFLICT DO NOTHING;
        IF cardinality(r.recall_memory_ids) > 0 THEN
            INSERT INTO answer_records (workspace_id, message_id, record_ids)
            VALUES (r.workspace_id, answer, r.recall_memory_ids) ON CONFLICT DO NOTHING;
        END IF;
        INSERT INTO message_deps (workspace_id, message_id, source_message_id)
        SELECT r.workspace_id, answer, d FROM unnest(cited) d ON CONFLICT DO NOTHING;
    END IF;
    UPDATE requests SET status = 'succeeded', answer_message_id = answer, error = NULL,
        updated_at = now(), finished_at = at, kind = coalesce(request_kind, kind)
    WHERE workspace_id = r.workspace_id AND id = request;
    PERFORM bm_schedule(ARRAY[r.workspace_id], ARRAY[r.scope_key], ARRAY[r.scope], ARRAY[at],
        idle_seconds);
    RETURN true;
END $$;

-- --- billed calls -------------------------------------------------------------------------

-- A call's charge replaces its reservation: the request's (when it has one) and the
-- workspace's.
CREATE OR REPLACE FUNCTION bm_settle(ws text, request bigint, reserved numeric, cost numeric)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF request IS NOT NULL THEN
        UPDATE requests SET reserved_usd = greatest(reserved_usd - reserved, 0),
            charged_usd = charged_usd + cost
        WHERE workspace_id = ws AND id = request;
    END IF;
    UPDATE workspaces SET reserved_usd = greatest(reserved_usd - reserved, 0),
        spent_usd = spent_usd + cost
    WHERE id = ws;
END $$;

-- Reserve a call's worst case against the request's budget (when it has one) and the
-- workspace's, and write its attempt as pending; the ledger line's ID. Raises BM002 (nothing
-- changed) when a budget does not cover the worst case, or this attempt (its key) was made.
-- The workspace's row is taken first, the order a purge takes them in.
CREATE OR REPLACE FUNCTION bm_open_attempt(
    ws text, request bigint, job bigint, call_kind text, call_provider text, call_model text,
    worst numeric, key text, workspace_budget numeric
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    remaining numeric;
    made bigint;
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF request IS NOT NULL THEN
        UPDATE requests SET reserved_usd = reserved_usd + worst
        WHERE workspace_id = ws AND id = request AND budget_usd - charged_usd - reserved_usd > 0
          AND budget_usd - charged_usd - reserved_usd >= worst;
        IF NOT FOUND THEN
            SELECT budget_usd - charged_usd - reserved_usd INTO remaining FROM requests
            WHERE workspace_id = ws AND id = request;
            RAISE EXCEPTION 'budget exhausted: the request has $% left, the call may cost up to $%',
                to_char(coalesce(remaining, 0), 'FM999999990.000000'),
                to_char(worst, 'FM999999990.000000') USING ERRCODE = 'BM002';
        END IF;
    END IF;
    UPDATE workspaces SET reserved_usd = reserved_usd + worst
    WHERE id = ws AND workspace_budget - spent_usd - reserved_usd > 0
      AND workspace_budget - spent_usd - reserved_usd >= worst;
    IF NOT FOUND THEN
        SELECT workspace_budget - spent_usd - reserved_usd INTO remaining FROM workspaces
        WHERE id = ws;
        RAISE EXCEPTION 'budget exhausted: the workspace has $% left, the call may cost up to $%',
            to_char(coalesce(remaining, 0), 'FM999999990.000000'),
            to_char(worst, 'FM999999990.000000') USING ERRCODE = 'BM002';
    END IF;
    INSERT INTO usage_ledger (workspace_id, request_id, job_id, kind, provider, model, outcome,
        reserved_usd, idempotency_key)
    VALUES (ws, request, job, call_kind, call_provider, call_model, 'pending', worst, key)
    ON CONFLICT (workspace_id, idempotency_key) DO NOTHING
    RETURNING id INTO made;
    IF made IS NULL THEN
        RAISE EXCEPTION 'this call (%) was attempted before: not sending it again', key
            USING ERRCODE = 'BM002';
    END IF;
    RETURN made;
END $$;

-- Settle a pending attempt with its outcome and charge; false when someone else closed it.
-- The workspace's row is taken first, the order a purge takes them in.
CREATE OR REPLACE FUNCTION bm_close_attempt(
    ws text, ledger bigint, request bigint, reserved numeric, call_outcome text,
    prompt integer, completion integer, cost numeric, call_detail text
) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    UPDATE usage_ledger SET outcome = call_outcome, prompt_tokens = prompt,
        completion_tokens = completion, cost_usd = cost, reserved_usd = 0, detail = call_detail,
        closed_at = now()
    WHERE workspace_id = ws AND id = ledger AND outcome = 'pending';
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM bm_settle(ws, request, reserved, cost);
    RETURN true;
END $$;

-- --- jobs and references ------------------------------------------------------------------

-- Stop a scope's active jobs that hold these sources (all of them when NULL), and every
-- consolidation of the scope, clearing their checkpoints; returns how many.
CREATE OR REPLACE FUNCTION bm_stop_jobs_touching(ws text, skey text, ids bigint[], reason text)
RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    stopped integer;
BEGIN
    UPDATE memory_jobs SET phase = 'stopped', stop_kind = 'changed', last_error = left(reason, 1000),
        lease_until = NULL, ownership_token = NULL, checkpoint = '{}'::jsonb,
        finished_at = now(), updated_at = now()
    WHERE workspace_id = ws AND scope_key = skey AND phase IN ('extract', 'consolidate')
      AND (ids IS NULL OR phase = 'consolidate' OR EXISTS (
          SELECT 1 FROM jsonb_array_elements(snapshot->'sources') s
          WHERE (s->>'message_id')::bigint = ANY(ids)));
    GET DIAGNOSTICS stopped = ROW_COUNT;
    RETURN stopped;
END $$;

-- End an owned job without retry (Jobs.stop); its checkpoint goes with it.
CREATE OR REPLACE FUNCTION bm_stop_job(
    ws text, job_id bigint, token uuid, reason text, kind text, refund boolean
) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_jobs SET phase = 'stopped', stop_kind = kind, last_error = left(reason, 1000),
        lease_until = NULL, ownership_token = NULL, checkpoint = '{}'::jsonb,
        claims = CASE WHEN refund THEN greatest(claims - 1, 0) ELSE claims END,
        finished_at = now(), updated_at = now()
    WHERE workspace_id = ws AND id = job_id AND ownership_token = token
$$;

-- A job bm_extraction_commit ended as done, stopped instead: what bm_stop_job writes (the
-- lease, token and checkpoint are gone already).
CREATE OR REPLACE FUNCTION bm_stopped(ws text, job_id bigint, reason text, kind text) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_jobs SET phase = 'stopped', stop_kind = kind, last_error = left(reason, 1000)
    WHERE workspace_id = ws AND id = job_id
$$;

-- Move an owned job on (Jobs.advance); ending releases the lease and drops the checkpoint.
CREATE OR REPLACE FUNCTION bm_job_phase(ws text, job_id bigint, new_phase text) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_jobs SET phase = new_phase, updated_at = now(),
        lease_until = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN NULL
            ELSE lease_until END,
        ownership_token = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN NULL
            ELSE ownership_token END,
        checkpoint = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN '{}'::jsonb
            ELSE checkpoint END,
        finished_at = CASE WHEN new_phase IN ('done', 'failed', 'stopped') THEN now() END
    WHERE workspace_id = ws AND id = job_id
$$;

-- Look at a scope again at `at` (or sooner if already due), without touching its activity.
CREATE OR REPLACE FUNCTION bm_rearm(ws text, skey text, rearm_at timestamptz) RETURNS void
LANGUAGE sql AS $$
    UPDATE memory_scopes SET due_at = least(coalesce(due_at, rearm_at), rearm_at)
    WHERE workspace_id = ws AND scope_key = skey
$$;

-- IDs of forgotten or erased messages leave derived data too: citation sets of past requests,
-- and snapshots of finished jobs.
CREATE OR REPLACE FUNCTION bm_scrub(ws text, ids bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    names text[] := ARRAY(SELECT 'm' || i FROM unnest(ids) i ORDER BY i);
BEGIN
    UPDATE requests SET citation_source_ids = ARRAY(SELECT c FROM unnest(citation_source_ids) c
        WHERE c <> ALL(names))
    WHERE workspace_id = ws AND citation_source_ids && names;
    DELETE FROM memory_jobs j WHERE j.workspace_id = ws AND j.phase IN ('done', 'failed', 'stopped')
        AND EXISTS (SELECT 1 FROM jsonb_array_elements(j.snapshot->'sources') s
                    WHERE (s->>'message_id')::bigint = ANY(ids));
END $$;

-- Scopes with nothing stored (no records, tombstones, retained messages or open requests) and
-- default switches are dropped, so a workspace's scope rows stay bounded; returns their keys.
CREATE OR REPLACE FUNCTION bm_drop_empty_scopes(ws text, keys text[]) RETURNS text[]
LANGUAGE sql AS $$
    WITH dropped AS (
        DELETE FROM memory_scopes s WHERE s.workspace_id = ws AND s.scope_key = ANY(keys)
          AND s.enabled AND NOT s.suspended AND s.off_since IS NULL
          AND NOT EXISTS (SELECT 1 FROM memory_records r WHERE r.workspace_id = ws
                          AND r.scope_key = s.scope_key)
          AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = ws
                          AND t.scope_key = s.scope_key)
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = ws
                          AND m.scope_key = s.scope_key AND m.text IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.workspace_id = ws
                          AND q.scope_key = s.scope_key
                          AND q.status IN ('queued', 'running', 'awaiting_approval'))
        RETURNING s.scope_key
    )
    SELECT coalesce(array_agg(scope_key ORDER BY scope_key), '{}') FROM dropped
$$;

-- The sources part of what a job may still work on: NULL when every snapshot source is
-- retained (its boundary not passed by `at`: the expiry pass erases only what was due at a
-- tick's start; a boundary passing later in the tick is caught here, before each call and at
-- commit), unedited and not forgotten; otherwise why, for the first (in snapshot order) that
-- changed.
CREATE OR REPLACE FUNCTION bm_source_problem_v2(ws text, skey text, sources jsonb, at timestamptz)
RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT 'source m' || e.message_id || CASE
            WHEN m.id IS NULL OR m.text IS NULL THEN ' was removed or expired'
            WHEN m.retain_until <= at THEN ' passed its retention boundary'
            WHEN t.message_id IS NOT NULL THEN ' was forgotten'
            ELSE ' was edited' END
    FROM (SELECT (x.src->>'message_id')::bigint AS message_id, x.src->>'hash' AS hash, x.n
          FROM jsonb_array_elements(sources) WITH ORDINALITY AS x(src, n)) e
    LEFT JOIN LATERAL (SELECT g.id, g.text, g.content_hash, g.retain_until FROM messages g
                       WHERE g.workspace_id = ws AND g.id = e.message_id) m ON true
    LEFT JOIN LATERAL (SELECT f.message_id FROM tombstones f WHERE f.workspace_id = ws
                       AND f.scope_key = skey AND f.message_id = e.message_id) t ON true
    WHERE m.id IS NULL OR m.text IS NULL OR m.retain_until <= at OR t.message_id IS NOT NULL
       OR m.content_hash <> e.hash
    ORDER BY e.n LIMIT 1
$$;

-- What a job may still work on (Jobs.input_problem): NULL when memory is on in the scope, the
-- bot is there, and every snapshot source holds at `at` (bm_source_problem_v2); otherwise the
-- stop kind and why.
CREATE OR REPLACE FUNCTION bm_input_problem_v2(
    ws text, skey text, sources jsonb, at timestamptz, OUT kind text, OUT problem text
)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN s.scope_key IS NULL THEN 'gone' WHEN NOT s.enabled OR s.suspended THEN 'off'
                WHEN c.problem IS NOT NULL THEN 'changed' END,
           CASE WHEN s.scope_key IS NULL THEN 'the scope is gone'
                WHEN NOT s.enabled THEN 'memory was turned off in this scope'
                WHEN s.suspended THEN 'the bot is no longer in this chat'
                ELSE c.problem END
    FROM (SELECT 1) one
    LEFT JOIN memory_scopes s ON s.workspace_id = ws AND s.scope_key = skey
    LEFT JOIN LATERAL (SELECT bm_source_problem_v2(ws, skey, sources, at) AS problem
                       WHERE s.enabled AND NOT s.suspended) c ON true
$$;

-- Attempts of a job still pending (Ledger.close_abandoned_attempts): the process making them
-- died mid-call, so the provider may have processed and billed them. They become unknown,
-- charged their reservation; returns how many.
CREATE OR REPLACE FUNCTION bm_close_abandoned(ws text, job bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    cut record;
    closed integer := 0;
BEGIN
    FOR cut IN
        UPDATE usage_ledger SET outcome = 'unknown', cost_usd = reserved_usd, reserved_usd = 0,
            detail = 'the process making this call ended before its answer was recorded',
            closed_at = now()
        WHERE workspace_id = ws AND job_id = job AND outcome = 'pending'
        RETURNING request_id, cost_usd
    LOOP
        closed := closed + 1;
        PERFORM bm_settle(ws, cut.request_id, cut.cost_usd, cut.cost_usd);
    END LOOP;
    RETURN closed;
END $$;

-- --- the commits --------------------------------------------------------------------------

-- Records as the application reads them (storage/rows.py: record_from_row), by ID: their own sources
-- first, then those inherited, each in message order (as rows.RECORD_SOURCES reads them);
-- what replaced them only when something did (a record read by an older process has the keys
-- it knows).
CREATE OR REPLACE FUNCTION bm_records_json(ws text, ids text[]) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object(
        'id', r.id, 'scope_key', r.scope_key, 'origin', r.origin, 'title', r.title,
        'summary', r.summary, 'speaker_ids', to_jsonb(r.speaker_ids),
        'thread_ids', to_jsonb(r.thread_ids), 'cited', to_jsonb(r.cited),
        'derived_from', to_jsonb(r.derived_from), 'created_at', r.created_at,
        'last_used_at', r.last_used_at, 'valid', r.valid, 'invalid_reason', r.invalid_reason,
        'available_until', r.available_until,
        'sources', coalesce((SELECT jsonb_agg(jsonb_build_object('message_id', s.message_id,
            'hash', s.hash, 'speaker_id', s.speaker_id, 'thread_id', s.thread_id,
            'role', s.role, 'inherited', s.inherited) ORDER BY s.inherited, s.message_id)
            FROM record_sources s WHERE s.workspace_id = ws AND s.record_id = r.id), '[]'::jsonb)
    ) || jsonb_strip_nulls(jsonb_build_object('replaced_by', r.replaced_by,
        'replaced_at', r.replaced_at)) ORDER BY r.id), '[]'::jsonb)
    FROM memory_records r WHERE r.workspace_id = ws AND r.id = ANY(ids)
$$;

-- What forgetting these records would reach, read under the lock (taken here first) for the
-- application to decide on (control._forget): the scope's state, the chosen records (valid, in
-- the scope), every record sharing a source with them, the answers derived from those sources
-- (with their texts: an answer that repeats what is forgotten goes too) and the records built
-- on those answers. With `flag`, the scope's requests still being answered (the forget's own,
-- and of `asker` only when given) are flagged first, their answers not in yet, and then the
-- messages not yet extracted are read (after the flag: an answer committed meanwhile is either
-- flagged or found). A forget that changes nothing after all rolls back. NULL: no workspace.
CREATE OR REPLACE FUNCTION bm_forget_reach(
    ws text, skey text, ids text[], flag boolean, request_id bigint, asker bigint
) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    s memory_scopes%ROWTYPE;
    stored boolean;
    chosen text[];
    deps text[];
    dep_messages bigint[];
    given jsonb := '[]'::jsonb;
    given_ids bigint[] := '{}';
    answer_deps text[] := '{}';
    unextracted jsonb := '[]'::jsonb;
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
    stored := FOUND;
    SELECT c.ids, d.ids, m.ids INTO chosen, deps, dep_messages
      FROM (SELECT ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
                AND r.id = ANY(ids) AND r.valid AND r.scope_key = skey ORDER BY r.id) AS ids) c
      CROSS JOIN LATERAL (SELECT ARRAY(SELECT DISTINCT x.record_id FROM record_sources x
                WHERE x.workspace_id = ws AND x.message_id = ANY(ARRAY(SELECT y.message_id
                    FROM record_sources y WHERE y.workspace_id = ws
                    AND y.record_id = ANY(c.ids)))) AS ids) d
      CROSS JOIN LATERAL (SELECT ARRAY(SELECT DISTINCT z.message_id FROM record_sources z
                WHERE z.workspace_id = ws AND z.record_id = ANY(d.ids)) AS ids) m;
    IF cardinality(dep_messages) > 0 THEN
        SELECT coalesce(jsonb_agg(jsonb_build_object('id', g.id, 'text', g.text) ORDER BY g.id),
                        '[]'::jsonb),
               coalesce(array_agg(g.id), '{}')
          INTO given, given_ids
          FROM messages g
          WHERE g.workspace_id = ws AND g.text IS NOT NULL AND g.id = ANY(ARRAY(
              SELECT a FROM unnest(bm_derived_closure(ws, dep_messages)) a
              WHERE a <> ALL(dep_messages)));
        IF cardinality(given_ids) > 0 THEN
            answer_deps := ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
                WHERE d.workspace_id = ws AND d.message_id = ANY(given_ids));
        END IF;
    END IF;
    IF flag THEN
        UPDATE requests r SET answer_forgotten = true
        WHERE r.workspace_id = ws AND r.scope_key = skey AND (r.id = request_id
            OR (r.status IN ('queued', 'running', 'awaiting_approval') AND (asker IS NULL
                OR EXISTS (SELECT 1 FROM messages u WHERE u.workspace_id = ws
                           AND u.id = r.user_message_id AND u.speaker_id = asker))));
        SELECT coalesce(jsonb_agg(jsonb_build_object('id', m.id, 'text', m.text) ORDER BY m.id),
                        '[]'::jsonb)
          INTO unextracted
          FROM requests r JOIN messages m ON m.workspace_id = r.workspace_id
              AND m.id IN (r.user_message_id, r.answer_message_id)
          WHERE r.workspace_id = ws AND r.scope_key = skey
            AND r.id > coalesce(s.extracted_through, 0) AND r.kind = 'chat'
            AND m.text IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = ws
                            AND t.scope_key = skey AND t.message_id = m.id)
            AND (asker IS NULL OR EXISTS (SELECT 1 FROM messages u WHERE u.workspace_id = ws
                 AND u.id = r.user_message_id AND u.speaker_id = asker));
    END IF;
    RETURN jsonb_build_object(
        'scope', CASE WHEN stored THEN to_jsonb(s) - 'recall' END,
        'chosen', to_jsonb(chosen), 'dependents', to_jsonb(deps),
        'answer_dependents', to_jsonb(answer_deps),
        'records', bm_records_json(ws, chosen || deps || answer_deps),
        'answers', given, 'unextracted', unextracted);
END $$;

-- Erase messages and everything derived from them (retention.erase), in one statement:
-- answers derived from them to a fixed point, records depending on any of them, job
-- checkpoints holding them, tombstones of the erased originals, references, and scopes left
-- empty; then the scopes that lost records are written back. `gone`: no workspace.
CREATE OR REPLACE FUNCTION bm_erase(
    ws text, ids bigint[], reason text, directory_max integer, summary_chars integer,
    OUT gone boolean, OUT originals integer, OUT answers integer, OUT records integer,
    OUT checkpoints integer, OUT dropped_tombstones integer, OUT scopes text[]
)
LANGUAGE plpgsql AS $$
DECLARE
    doomed bigint[];
    removed text[];
    lost text[];
    dropped text[];
    skey text;
BEGIN
    originals := 0; answers := 0; records := 0; checkpoints := 0; dropped_tombstones := 0;
    scopes := '{}';
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    gone := NOT FOUND;
    IF gone OR coalesce(cardinality(ids), 0) = 0 THEN
        RETURN;
    END IF;
    -- Requests still being answered that were given any of this may repeat it: flag them
    -- first (their answers are then stored content-free), and only then look again for
    -- answers, so one committed meanwhile is found rather than missed by both.
    doomed := bm_derived_closure(ws, ids);
    UPDATE requests SET answer_erased = true, answer_forgotten = true
    WHERE workspace_id = ws AND status IN ('queued', 'running', 'awaiting_approval')
      AND (recall_memory_ids && ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
               WHERE d.workspace_id = ws AND d.message_id = ANY(doomed))
           OR citation_source_ids && ARRAY(SELECT 'm' || m FROM unnest(doomed) m));
    doomed := bm_derived_closure(ws, ids);
    removed := ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
        WHERE d.workspace_id = ws AND d.message_id = ANY(doomed));
    WITH erased AS (
        UPDATE messages SET text = NULL, search = NULL, erased_at = now(), erase_reason = reason
        WHERE workspace_id = ws AND id = ANY(doomed) AND text IS NOT NULL
        RETURNING id, scope_key
    )
    SELECT count(*) FILTER (WHERE id = ANY(ids)), count(*) FILTER (WHERE NOT id = ANY(ids)),
           coalesce(array_agg(DISTINCT scope_key), '{}')
      INTO originals, answers, scopes
      FROM erased;
    DELETE FROM message_deps WHERE workspace_id = ws
        AND (message_id = ANY(doomed) OR source_message_id = ANY(doomed));
    -- Every answer given a record built on any of these is among them (the closure).
    DELETE FROM given_sources WHERE workspace_id = ws AND record_id IN (SELECT g.record_id
        FROM given_sources g WHERE g.workspace_id = ws AND g.message_id = ANY(doomed));
    DELETE FROM answer_records WHERE workspace_id = ws AND message_id = ANY(doomed);
    records := cardinality(removed);
    WITH deleted AS (
        DELETE FROM memory_records r WHERE r.workspace_id = ws AND r.id = ANY(removed)
        RETURNING r.scope_key
    )
    SELECT coalesce(array_agg(DISTINCT scope_key), '{}') INTO lost FROM deleted;
    DELETE FROM tombstones WHERE workspace_id = ws AND message_id = ANY(doomed);
    GET DIAGNOSTICS dropped_tombstones = ROW_COUNT;
    scopes := ARRAY(SELECT DISTINCT k FROM unnest(scopes || lost) k ORDER BY k);
    FOR skey IN SELECT s.scope_key FROM memory_scopes s
                WHERE s.workspace_id = ws AND s.scope_key = ANY(scopes) ORDER BY s.scope_key
    LOOP
        checkpoints := checkpoints + bm_stop_jobs_touching(ws, skey, doomed, reason);
    END LOOP;
    PERFORM bm_scrub(ws, doomed);
    dropped := bm_drop_empty_scopes(ws, scopes);
    IF cardinality(scopes) > 0 THEN
        PERFORM bm_save_scopes(ws, '[]'::jsonb,
            ARRAY(SELECT k FROM unnest(lost) k WHERE NOT k = ANY(dropped)), '{}', NULL,
            directory_max, summary_chars);
    END IF;
END $$;

-- Remember a note (control._remember) in one statement (`c`: workspace, scope (with its
-- scope_key), record, fingerprint, search, limits, at, check_sources (default true)): unless
-- the bot left the chat ('unavailable') or memory is off here ('memory_off'), and, when checked,
-- only while its source is the message's text, retained at `at` (else 'source_changed': a
-- note is the message as it is at commit and never brings back what retention or a sweep
-- removed), store the note (its scope's row too, the first time), evict past the cap, and
-- write back what changed. 'gone': no workspace.
CREATE OR REPLACE FUNCTION bm_note_commit(c jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->'scope'->>'scope_key';
    s memory_scopes%ROWTYPE;
    added jsonb;
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN 'gone';
    END IF;
    SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
    IF FOUND AND s.suspended THEN
        RETURN 'unavailable';
    ELSIF FOUND AND NOT s.enabled THEN
        RETURN 'memory_off';
    END IF;
    IF coalesce((c->>'check_sources')::boolean, true) AND bm_source_problem_v2(
            ws, skey, c->'record'->'sources', (c->>'at')::timestamptz) IS NOT NULL THEN
        RETURN 'source_changed';
    END IF;
    IF s.scope_key IS NULL THEN
        PERFORM bm_ensure_scope(ws, c->'scope');
    END IF;
    added := bm_record_added(c);
    PERFORM bm_save_scopes(ws, '[]'::jsonb,
        skey || bm_texts(added->'evicted_scopes'), '{}', added,
        (c->'limits'->>'directory_max')::integer, (c->'limits'->>'summary_chars')::integer);
    RETURN 'remembered';
END $$;

-- A forget, decided (control._carry_out; `c`: workspace, scope_key, removed (record IDs),
-- doomed (message IDs), rearm_at, states, touched, limits): the removed records go, the doomed
-- messages become tombstones (records still built on them become unavailable), jobs holding
-- them stop, references to them are scrubbed, what they replaced is current again, the scope is
-- looked at again at `rearm_at` (when given), and the transaction's scopes are written back.
CREATE OR REPLACE FUNCTION bm_forget_commit(c jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->>'scope_key';
    doomed bigint[] := bm_ids(c->'doomed');
    changed text[];
BEGIN
    WITH gone AS (
        DELETE FROM memory_records r WHERE r.workspace_id = ws
            AND r.id = ANY(bm_texts(c->'removed'))
        RETURNING r.scope_key
    )
    SELECT coalesce(array_agg(DISTINCT scope_key), '{}') INTO changed FROM gone;
    -- A correction forgotten: what it replaced and the forget did not reach holds again (its
    -- scope is the forgotten record's, written back below).
    UPDATE memory_records r SET replaced_by = NULL, replaced_at = NULL
    WHERE r.workspace_id = ws AND r.replaced_by = ANY(bm_texts(c->'removed'));
    SELECT changed || t.scopes INTO changed FROM bm_tombstone(ws, skey, doomed) t;
    PERFORM bm_stop_jobs_touching(ws, skey, doomed, 'a source was forgotten');
    PERFORM bm_scrub(ws, doomed);
    IF c->>'rearm_at' IS NOT NULL THEN
        PERFORM bm_rearm(ws, skey, (c->>'rearm_at')::timestamptz);
    END IF;
    PERFORM bm_save_scopes(ws, coalesce(c->'states', '[]'::jsonb),
        bm_texts(c->'touched') || changed, '{}', NULL,
        (c->'limits'->>'directory_max')::integer, (c->'limits'->>'summary_chars')::integer);
END $$;

-- Forget records chosen by ID in one statement when nothing is left for the application to
-- decide (control.forget_record; `c`: workspace, scope_key, ids, request_id, asker, rearm_at,
-- limits): the actor may forget anything in the scope (the application's rule), the bot is in
-- the chat, and no answer given with what is forgotten and no message not yet extracted has to
-- be read for what it says. Then everything the records reach goes, as bm_forget_commit does.
-- 'nothing': none of them is there to forget; raises BM001 (nothing changed) when the
-- application decides (bm_forget_reach); 'gone': no workspace.
CREATE OR REPLACE FUNCTION bm_forget_at_once_commit(c jsonb, OUT outcome text, OUT removed text[])
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->>'scope_key';
    asker bigint := (c->>'asker')::bigint;
    s memory_scopes%ROWTYPE;
    chosen text[];
    doomed bigint[];
BEGIN
    removed := '{}';
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        outcome := 'gone'; RETURN;
    END IF;
    SELECT * INTO s FROM memory_scopes WHERE workspace_id = ws AND scope_key = skey;
    IF s.suspended THEN
        outcome := 'undecided'; RETURN;
    END IF;
    chosen := ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
        AND r.id = ANY(bm_texts(c->'ids')) AND r.valid AND r.scope_key = skey);
    IF cardinality(chosen) = 0 THEN
        outcome := 'nothing'; RETURN;
    END IF;
    doomed := ARRAY(SELECT DISTINCT d.message_id FROM record_sources d
        WHERE d.workspace_id = ws AND d.record_id = ANY(chosen));
    removed := ARRAY(SELECT DISTINCT d.record_id FROM record_sources d
        WHERE d.workspace_id = ws AND d.message_id = ANY(doomed) ORDER BY d.record_id);
    doomed := ARRAY(SELECT DISTINCT z.message_id FROM record_sources z
        WHERE z.workspace_id = ws AND z.record_id = ANY(removed));
    IF cardinality(removed) = 0 OR EXISTS (SELECT 1 FROM messages g
            WHERE g.workspace_id = ws AND g.text IS NOT NULL AND g.id = ANY(ARRAY(
                SELECT a FROM unnest(bm_derived_closure(ws, doomed)) a
                WHERE a <> ALL(doomed)))) THEN
        removed := '{}';
        outcome := 'undecided'; RETURN;
    END IF;
    -- As bm_forget_reach: the answers in flight are flagged, then what is not extracted yet is
    -- read; if there is any, the application reads it (the flags go with this statement).
    UPDATE requests r SET answer_forgotten = true
    WHERE r.workspace_id = ws AND r.scope_key = skey AND (r.id = (c->>'request_id')::bigint
        OR (r.status IN ('queued', 'running', 'awaiting_approval') AND (asker IS NULL
            OR EXISTS (SELECT 1 FROM messages u WHERE u.workspace_id = ws
                       AND u.id = r.user_message_id AND u.speaker_id = asker))));
    IF EXISTS (SELECT 1 FROM requests r JOIN messages m ON m.workspace_id = r.workspace_id
                   AND m.id IN (r.user_message_id, r.answer_message_id)
               WHERE r.workspace_id = ws AND r.scope_key = skey
                 AND r.id > coalesce(s.extracted_through, 0) AND r.kind = 'chat'
                 AND m.text IS NOT NULL
                 AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = ws
                                 AND t.scope_key = skey AND t.message_id = m.id)
                 AND (asker IS NULL OR EXISTS (SELECT 1 FROM messages u
                      WHERE u.workspace_id = ws AND u.id = r.user_message_id
                      AND u.speaker_id = asker))) THEN
        RAISE EXCEPTION 'the application decides this forget' USING ERRCODE = 'BM001';
    END IF;
    PERFORM bm_forget_commit(jsonb_build_object('workspace', ws, 'scope_key', skey,
        'removed', to_jsonb(removed), 'doomed', to_jsonb(doomed), 'rearm_at', c->'rearm_at',
        'limits', c->'limits'));
    outcome := 'forgotten';
END $$;

-- The job ended as done while its ownership is checked (one write of its row; a commit that
-- stops it instead writes the stop over that, as bm_stop_job leaves a job): false when the job
-- is not this token's, or its lease ran out.
CREATE OR REPLACE FUNCTION bm_finish_owned_job(ws text, job bigint, token uuid) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_jobs SET phase = 'done', lease_until = NULL, ownership_token = NULL,
        checkpoint = '{}'::jsonb, finished_at = now(), updated_at = now()
    WHERE workspace_id = ws AND id = job AND ownership_token = token AND lease_until > now();
    RETURN FOUND;
END $$;

-- A record that carried facts from others (`kept`) depends on their sources too: its own
-- sources first, the carried records' after them as inherited, and it is derived from them.
CREATE OR REPLACE FUNCTION bm_inherit_sources(ws text, rec jsonb, kept text[]) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN cardinality(kept) = 0 THEN rec ELSE rec || jsonb_build_object(
        'derived_from', to_jsonb(kept),
        'sources', (rec->'sources') || coalesce((
            SELECT jsonb_agg(jsonb_build_object('message_id', i.message_id, 'hash', i.hash,
                'speaker_id', i.speaker_id, 'thread_id', i.thread_id, 'role', i.role,
                'inherited', true) ORDER BY i.message_id)
            FROM (SELECT DISTINCT ON (d.message_id) d.* FROM record_sources d
                  WHERE d.workspace_id = ws AND d.record_id = ANY(kept)
                    AND d.message_id NOT IN (SELECT (x->>'message_id')::bigint
                        FROM jsonb_array_elements(rec->'sources') x)
                  ORDER BY d.message_id, d.record_id) i), '[]'::jsonb)) END
$$;

-- Records of a scope a new one replaces, marked replaced by it at `at`: each still valid and
-- not replaced already (one forgotten or evicted meanwhile has nothing left to replace), and
-- only while the new record is there. Whether any was marked.
CREATE OR REPLACE FUNCTION bm_mark_replaced(
    ws text, skey text, new_id text, replaces text[], at timestamptz
) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_records r SET replaced_by = new_id, replaced_at = at
    WHERE r.workspace_id = ws AND r.scope_key = skey AND r.id = ANY(replaces)
      AND r.id <> new_id AND r.valid AND r.replaced_by IS NULL
      AND EXISTS (SELECT 1 FROM memory_records n WHERE n.workspace_id = ws AND n.id = new_id);
    RETURN FOUND;
END $$;

-- Commit an extraction job's answer (pipeline/extraction._commit) in one statement (`c`:
-- workspace, scope_key, job {id, token, sources (snapshot order: message_id, hash),
-- through_request}, record (NULL for an empty answer), fingerprint, search, carried (the
-- records it carried facts from), replaces (the records its answer corrects or makes
-- obsolete), at (the commit's time), limits), if the job is still this worker's ('lost'
-- otherwise), no attempt of it was cut off ('cut_off': they become unknown and the job stops
-- for an operator, as the worker's check before a model call does) and its input still holds
-- at `at` (else the job stops: 'stopped' and why): the record, depending on its batch and
-- inheriting the sources of the records it carried facts from, the records it replaces marked,
-- the scope's watermark, the job done, the scope looked at again for later batches, and the
-- write-back. 'gone': no workspace.
CREATE OR REPLACE FUNCTION bm_extraction_commit(c jsonb, OUT outcome text, OUT detail text)
LANGUAGE plpgsql AS $$
DECLARE
    ws text := c->>'workspace';
    skey text := c->>'scope_key';
    job bigint := (c->'job'->>'id')::bigint;
    at timestamptz := (c->>'at')::timestamptz;
    rec jsonb := CASE WHEN jsonb_typeof(c->'record') = 'object' THEN c->'record' END;
    carried text[] := bm_texts(c->'carried');
    directory_max integer := (c->'limits'->>'directory_max')::integer;
    summary_chars integer := (c->'limits'->>'summary_chars')::integer;
    s memory_scopes%ROWTYPE;
    shortcut memory_scopes%ROWTYPE;
    stop_kind text := 'changed';
    kept text[] := '{}';
    added jsonb;
    others text[] := '{}';
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        outcome := 'gone'; RETURN;
    END IF;
    IF NOT bm_finish_owned_job(ws, job, (c->'job'->>'token')::uuid) THEN
        outcome := 'lost'; RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM usage_ledger l WHERE l.workspace_id = ws AND l.job_id = job
               AND l.outcome = 'pending') THEN
        PERFORM bm_close_abandoned(ws, job);
        detail := 'unknown provider outcome: the call was cut off';
        PERFORM bm_stopped(ws, job, detail, 'unknown');
        outcome := 'cut_off'; RETURN;
    END IF;
    -- The scope, read once (as bm_input_problem_v2 checks it, then as bm_save_scopes writes it).
    SELECT * INTO s FROM memory_scopes m WHERE m.workspace_id = ws AND m.scope_key = skey;
    IF NOT FOUND THEN
        stop_kind := 'gone'; detail := 'the scope is gone';
    ELSIF NOT s.enabled THEN
        stop_kind := 'off'; detail := 'memory was turned off in this scope';
    ELSIF s.suspended THEN
        stop_kind := 'off'; detail := 'the bot is no longer in this chat';
    ELSE
        detail := bm_source_problem_v2(ws, skey, c->'job'->'sources', at);  -- retained at `at`
    END IF;
    IF detail IS NULL AND rec IS NOT NULL AND cardinality(carried) > 0 THEN
        kept := ARRAY(SELECT r.id FROM memory_records r WHERE r.workspace_id = ws
            AND r.id = ANY(carried) AND r.valid ORDER BY r.id);
        IF cardinality(kept) <> (SELECT count(DISTINCT k) FROM unnest(carried) k) THEN
            detail := 'a memory it carried facts from is gone';
        END IF;
    END IF;
    -- What it replaces must still be there as it was given: a record forgotten, made
    -- unavailable or replaced meanwhile is not corrected by an answer written without knowing.
    IF detail IS NULL AND rec IS NOT NULL AND cardinality(bm_texts(c->'replaces')) > 0
            AND (SELECT count(*) FROM memory_records r WHERE r.workspace_id = ws
                 AND r.scope_key = skey AND r.id = ANY(bm_texts(c->'replaces')) AND r.valid
                 AND r.replaced_by IS NULL)
                <> (SELECT count(DISTINCT k) FROM unnest(bm_texts(c->'replaces')) k) THEN
        detail := 'a memory it replaces is gone or changed';
    END IF;
    IF detail IS NOT NULL THEN
        PERFORM bm_stopped(ws, job, detail || ' during extraction', stop_kind);
        outcome := 'stopped'; RETURN;
    END IF;
    -- The watermark moves on (off ranges wholly behind it are no longer needed).
    s.extracted_through := greatest(s.extracted_through, (c->'job'->>'through_request')::bigint);
    IF s.off_ranges <> '[]'::jsonb THEN
        s.off_ranges := (SELECT coalesce(jsonb_agg(o.r ORDER BY o.n), '[]'::jsonb)
                         FROM jsonb_array_elements(s.off_ranges) WITH ORDINALITY AS o(r, n)
                         WHERE (o.r->>1)::bigint > s.extracted_through);
    END IF;
    IF rec IS NOT NULL THEN
        added := bm_record_added(c || jsonb_build_object('record',
            bm_inherit_sources(ws, rec, kept)));
        s.index_pending := true;  -- its records changed: the index is stale
        others := ARRAY(SELECT k FROM jsonb_array_elements_text(added->'evicted_scopes') k
                        WHERE k <> skey ORDER BY k);
        -- What it replaces leaves the directory: the row is derived again, not prepended to.
        IF NOT bm_mark_replaced(ws, skey, rec->>'id', bm_texts(c->'replaces'), at)
                AND added->>'scope_key' = skey THEN
            shortcut := bm_prepend(ws, s, added, directory_max, summary_chars);
        END IF;
    END IF;
    IF shortcut.scope_key IS NOT NULL THEN
        s := shortcut;
    ELSE
        s := bm_derive(ws, s, directory_max, summary_chars);
    END IF;
    -- due_at from the row as it is now: ingress schedules wake-ups without the workspace lock.
    UPDATE memory_scopes SET
        extracted_through = s.extracted_through, off_ranges = s.off_ranges,
        index_text = s.index_text, index_ids = s.index_ids,
        index_candidates = s.index_candidates, index_built_at = s.index_built_at,
        index_pending = s.index_pending, recall = s.recall,
        due_at = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
            THEN 'epoch'::timestamptz ELSE least(coalesce(due_at, at), at) END,
        due_since = CASE WHEN s.index_pending AND s.enabled AND NOT s.suspended
            THEN bm_due_since(due_at, due_since) ELSE due_since END
    WHERE workspace_id = ws AND scope_key = skey;
    IF cardinality(others) > 0 THEN  -- records of other scopes were evicted
        PERFORM bm_save_scopes(ws, '[]'::jsonb, others, '{}', NULL, directory_max,
            summary_chars);  -- bumps the version
    ELSE
        UPDATE workspaces SET version = version + 1, updated_at = now() WHERE id = ws;
    END IF;
    outcome := 'done';
END $$;
