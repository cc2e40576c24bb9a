"""The statements of the store's busiest paths, built once: recording a directed message,
closing requests in batches (and scheduling their scopes), and citing what a tool gave with
its line in the usage ledger."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot_memory.storage.requests import Closing
    from bot_memory.storage.store import UsageEntry

CLOSED_STATUSES = ("succeeded", "failed", "unanswered")

# A scope whose wake-up is due at {at}: by the index's minute first (the due time itself is not
# indexed, so the push every finished request makes stays a heap-only update; migration 029).
SCOPE_DUE = "due_minute <= bm_due_minute({at}) AND due_at <= {at}"

# A scope's latest retained messages before one, newest first: forgotten ones (tombstoned, or
# an answer kept content-free) left out. {ws} {scope} {before} {limit} {now} name the parameters.
HISTORY = (
    "SELECT id, role, speaker_id, thread_id, text, sent_at FROM messages m"
    " WHERE workspace_id = {ws} AND scope_key = {scope} AND id < {before} AND text IS NOT NULL"
    " AND (retain_until IS NULL OR retain_until > {now})"
    " AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = {ws}"
    " AND t.scope_key = {scope} AND t.message_id = m.id)"
    " AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.workspace_id = {ws}"
    " AND r.answer_message_id = m.id AND r.answer_forgotten)"
    " ORDER BY id DESC LIMIT {limit}"
)

# What a tool returned counts as used, and it and its sources enter the request's citation set
# ($1 workspace, $2 request, $3 record IDs, $4 source IDs, $5 now).
_GIVEN_USED = (
    "used AS (UPDATE memory_records SET last_used_at = $5 WHERE workspace_id = $1"
    " AND id = ANY($3::text[]) AND last_used_at < $5::timestamptz - interval '1 minute')"
)
_GIVEN_CITED = (
    " UPDATE requests SET citation_source_ids = ARRAY(SELECT DISTINCT unnest("
    "citation_source_ids || $4::text[])), recall_memory_ids = ARRAY(SELECT DISTINCT"
    " unnest(recall_memory_ids || $3::text[])) WHERE workspace_id = $1 AND id = $2"
)
GIVEN = "WITH " + _GIVEN_USED + _GIVEN_CITED
# A line of the usage ledger after $1 workspace and $2 request: {0}-{9} number the parameters
# that `ledger_values` fills.
LEDGER_INSERT = """
    INSERT INTO usage_ledger (workspace_id, request_id, job_id, kind, provider, model,
        prompt_tokens, completion_tokens, cost_usd, outcome, detail, idempotency_key, closed_at)
    VALUES ($1, $2, ${0}, ${1}, ${2}, ${3}, ${4}, ${5}, ${6}, ${7}, ${8}, ${9}, now())
    ON CONFLICT (workspace_id, idempotency_key) DO NOTHING
"""
# The same with the tool call's line in the ledger ($6-$15, as `ledger_values`): a replayed
# call (the same key) is noted once, as record_usage does.
GIVEN_AND_NOTED = (
    "WITH "
    + _GIVEN_USED
    + ", noted AS ("
    + LEDGER_INSERT.format(*range(6, 16))
    + ")"
    + _GIVEN_CITED
)


def ledger_values(entry: UsageEntry) -> tuple[object, ...]:
    """A ledger line's values after its workspace and request."""
    return (
        entry.job_id,
        entry.kind,
        entry.provider,
        entry.model,
        entry.prompt_tokens,
        entry.completion_tokens,
        Decimal(str(entry.cost_usd)),
        entry.outcome,
        entry.detail,
        entry.idempotency_key,
    )


RECORD = """
    WITH m AS (
        INSERT INTO messages (workspace_id, scope_key, bot_id, chat_id, thread_id,
            telegram_message_id, speaker_id, role, text, content_hash, language, sent_at,
            retain_until, search)
        SELECT $1, $2, $3, $4, $5, $6, $7, 'user', $8, $9, $10, $11,
            least($12::timestamptz, bm_chat_keeps_until($3, $4, $11)),
            $15::tsvector
        ON CONFLICT (workspace_id, bot_id, chat_id, telegram_message_id)
            WHERE telegram_message_id IS NOT NULL DO NOTHING
        RETURNING id
    )
    INSERT INTO requests (workspace_id, scope_key, scope, user_message_id, status, budget_usd,
        speaker_id)
    SELECT $1, $2, $13::jsonb, m.id, 'queued', $14, $7 FROM m
    RETURNING id, user_message_id
"""


def _sql_list(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


# Close requests that have nothing to keep and schedule their scopes ($1-$5 arrays from
# `closing_args`, $6 the idle window). Each request closes once: one no longer open is left.
# Each request's workspace row is taken before the request's, the order a purge takes them in.
CLOSE = f"""
    WITH given AS (
        SELECT g.* FROM unnest($1::bigint[], $2::text[], $3::text[],
            $4::timestamptz[], $5::text[]) AS g(id, status, error, at, kind)
        JOIN requests q ON q.id = g.id JOIN workspaces w ON w.id = q.workspace_id
        FOR KEY SHARE OF w
    ), closed AS (
        UPDATE requests r SET status = g.status, error = g.error, updated_at = now(),
            finished_at = g.at, kind = coalesce(g.kind, r.kind)
        FROM given g
        -- Open, said as "not closed": the open statuses would let the planner walk a partial
        -- index of open requests (its dead entries included) instead of looking up the IDs.
        WHERE r.id = g.id AND r.status NOT IN {_sql_list(CLOSED_STATUSES)}
        RETURNING r.id, r.workspace_id, r.scope_key, r.scope, g.at
    ), scheduled AS (
        SELECT bm_schedule(array_agg(workspace_id), array_agg(scope_key), array_agg(scope),
            array_agg(at), $6)
        FROM closed
    )
    SELECT c.id FROM closed c, scheduled
"""


def closing_args(closings: list[Closing], idle_seconds: float) -> tuple[object, ...]:
    first: dict[int, Closing] = {}
    for c in closings:
        first.setdefault(c.request_id, c)  # the first closing of a request counts
    rows = list(first.values())
    return (
        [c.request_id for c in rows],
        [c.status for c in rows],
        [c.error for c in rows],
        [c.at for c in rows],
        [c.kind for c in rows],
        idle_seconds,
    )
