"""The requests table: a recorded directed message opens a request, which its handler starts,
finishes or keeps open; requests nothing answers close in batches, and those their process left
open are abandoned; closing one schedules its scope for the worker (`schedule_scope`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import asyncpg

from bot_memory.records import content_hash, source_id
from bot_memory.scopes import Scope
from bot_memory.storage.handle import Handle
from bot_memory.storage.rows import HistoryMessage, history_of
from bot_memory.storage.statements import CLOSE, HISTORY, closing_args
from bot_memory.terms import text_vector

RequestStatus = Literal[
    "queued", "running", "awaiting_approval", "succeeded", "failed", "unanswered"
]


@dataclass(frozen=True)
class SourceMessage:
    """A recorded directed message and the interactive request it opened."""

    message_id: int
    request_id: int
    scope: Scope
    text: str
    speaker_id: int
    thread_id: int
    telegram_message_id: int | None
    # Model calls an earlier delivery of this update made for its request (it died before
    # answering): a delivery again calls afresh, under keys of its own (agent/reference.py).
    earlier_calls: int = 0

    @property
    def source_id(self) -> str:
        return source_id(self.message_id)


@dataclass(frozen=True)
class Closing:
    """A request to close with no answer to keep: failed, unanswered, or a command's."""

    request_id: int
    status: RequestStatus
    at: datetime
    error: str | None = None
    kind: str | None = None


# $1 workspace, $2 request, $3 provider, $4 model, $5 kind, $6 keep open, $7 recalled IDs.
START = (
    "UPDATE requests SET status = 'running', provider = $3, model = $4, kind = $5,"
    " keep_open = $6, recall_memory_ids = coalesce($7, recall_memory_ids),"
    " updated_at = now() WHERE workspace_id = $1 AND id = $2"
    " AND status IN ('queued', 'running')"
)


class Requests:
    """On the pool (`Store.requests`)."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def recorded_before(
        self, scope: Scope, telegram_message_id: int, text: str, sent_at: datetime
    ) -> tuple[SourceMessage, str] | None:
        """The request a redelivered update opened the first time, with its status: the same
        Telegram message of this scope, with the same text and date (a kept database that meets
        a message ID again from another run is not a redelivery). None when there is none."""
        row = await self._on.fetchrow(
            "SELECT m.id AS message_id, m.speaker_id, m.thread_id, r.id AS request_id, r.status,"
            " (SELECT count(*) FROM usage_ledger l WHERE l.workspace_id = m.workspace_id"
            " AND l.request_id = r.id) AS calls"
            " FROM messages m JOIN requests r ON r.workspace_id = m.workspace_id"
            " AND r.user_message_id = m.id"
            " WHERE m.workspace_id = $1 AND m.bot_id = $2 AND m.chat_id = $3"
            " AND m.telegram_message_id = $4 AND m.role = 'user' AND m.scope_key = $5"
            " AND m.content_hash = $6 AND m.sent_at = $7",
            scope.workspace,
            scope.bot_id,
            scope.chat_id,
            telegram_message_id,
            scope.key,
            content_hash(text),
            sent_at,
        )
        if row is None:
            return None
        source = SourceMessage(
            message_id=row["message_id"],
            request_id=row["request_id"],
            scope=scope,
            text=text,
            speaker_id=row["speaker_id"],
            thread_id=row["thread_id"],
            telegram_message_id=telegram_message_id,
            earlier_calls=row["calls"],
        )
        return source, row["status"]

    async def start(
        self,
        source: SourceMessage,
        *,
        provider: str,
        model: str,
        kind: str = "chat",
        keep_open: bool = False,
        recall_memory_ids: list[str] | None = None,
        history: int = 0,
        now: datetime | None = None,
    ) -> list[HistoryMessage]:
        """Mark the request running, pinned to this provider and model; with the records its
        recall froze (a turn's start), in the same write. `history`: also read that many of the
        scope's messages before it (as `Store.history` at `now`), in the same statement."""
        args = (
            source.scope.workspace,
            source.request_id,
            provider,
            model,
            kind,
            keep_open,
            recall_memory_ids,
        )
        if history <= 0:
            await self._on.execute(START, *args)
            return []
        rows = await self._on.fetch(
            f"WITH started AS ({START}) "
            + HISTORY.format(ws="$1", scope="$8", before="$9", limit="$10", now="$11"),
            *args,
            source.scope.key,
            source.message_id,
            history,
            now or datetime.now(UTC),
        )
        return history_of(rows)

    async def finish(
        self,
        source: SourceMessage,
        *,
        status: RequestStatus,
        now: datetime,
        idle_seconds: float,
        answer_text: str | None = None,
        answer_telegram_id: int | None = None,
        bot_id: int | None = None,
        error: str | None = None,
        kind: str | None = None,
    ) -> bool:
        """Close a request, once (False when it was closed already). A succeeded one keeps its
        answer as the assistant message, which depends on the sources of every record the
        request was given and is retained no longer than the earliest of them."""
        if status != "succeeded" or answer_text is None:
            closing = Closing(source.request_id, status, now, error, kind)
            return bool(await self.close_unanswered([closing], idle_seconds=idle_seconds))
        closed: bool = await self._on.fetchval(
            "SELECT bm_finish_answered($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            source.request_id,
            answer_text,
            content_hash(answer_text),
            text_vector(answer_text),
            answer_telegram_id,
            bot_id,
            now,
            idle_seconds,
            kind,
        )
        return closed

    async def close_unanswered(self, closings: list[Closing], *, idle_seconds: float) -> list[int]:
        """Close requests that have no answer to keep (failed, unanswered, ...) and schedule
        their scopes, in one statement however many: this runs for every directed message
        nothing answered. Each request closes once (the first closing of it counts); returns the
        IDs closed now."""
        closed = await self._on.fetch(
            CLOSE,
            *closing_args(closings, idle_seconds),
        )
        return [r["id"] for r in closed]

    async def abandon(self, *, kept_since: datetime, since: datetime, now: datetime) -> int:
        """Close open requests nothing touched since `since` (those a host kept open: since
        `kept_since`) and schedule their scopes at once; how many closed."""
        rows = await self._on.fetch(
            "UPDATE requests SET status = CASE WHEN keep_open THEN 'failed' ELSE 'unanswered' END,"
            " error = CASE WHEN keep_open THEN 'abandoned: no outcome reported'"
            " ELSE 'never closed: the handling process ended' END,"
            " finished_at = $3, updated_at = now()"
            " WHERE status IN ('queued', 'running', 'awaiting_approval')"
            " AND updated_at < $2 AND (NOT keep_open OR updated_at < $1)"
            " RETURNING workspace_id, scope_key, scope::text",
            kept_since,
            since,
            now,
        )
        if rows:  # every scope at once (apart: the closing is committed, as a purge expects)
            await self._on.execute(
                "SELECT bm_schedule($1::text[], $2::text[], $3::text[]::jsonb[],"
                " array_fill($4::timestamptz, ARRAY[cardinality($1::text[])]), 0)",
                [r["workspace_id"] for r in rows],
                [r["scope_key"] for r in rows],
                [r["scope"] for r in rows],
                now,
            )
        return len(rows)

    async def keep_open(self, source: SourceMessage) -> None:
        """The host answers this request later and closes it itself."""
        await self._on.execute(
            "UPDATE requests SET keep_open = true, updated_at = now() WHERE workspace_id = $1"
            " AND id = $2",
            source.scope.workspace,
            source.request_id,
        )

    async def status(self, source: SourceMessage) -> str | None:
        status: str | None = await self._on.fetchval(
            "SELECT status FROM requests WHERE workspace_id = $1 AND id = $2",
            source.scope.workspace,
            source.request_id,
        )
        return status


async def schedule_scope(
    conn: asyncpg.Connection | asyncpg.Pool, scope: Scope, *, now: datetime, idle_seconds: float
) -> None:
    """Tell the worker to look at this scope once it has been idle for the window.

    Scheduling only (last activity and the due time): memory state is not touched, so this
    needs no workspace lock.
    """
    await conn.execute(
        "SELECT bm_schedule(ARRAY[$1], ARRAY[$2], ARRAY[$3::jsonb], ARRAY[$4::timestamptz], $5)",
        scope.workspace,
        scope.key,
        scope.model_dump_json(),
        now,
        idle_seconds,
    )
