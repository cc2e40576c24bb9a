"""What the planner reads and writes: due scopes and their wake-ups (memory_scopes' schedule
columns), the requests still open and the answered exchanges after a scope's watermark, with
their sources as a job's snapshot names them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import asyncpg

from bot_memory.records import source_id
from bot_memory.storage.handle import Handle
from bot_memory.storage.jobs import SnapshotSource
from bot_memory.storage.statements import SCOPE_DUE


@dataclass(frozen=True)
class Due:
    """A scope's schedule as the planner found it."""

    last_activity: datetime | None
    due_at: datetime | None
    wakes: int  # bumped by every reschedule: a wake-up decided on an older read is not written


@dataclass(frozen=True)
class Answered:
    """An answered request of a scope: its two messages as snapshot sources."""

    request_id: int
    provider: str | None
    model: str | None
    answer_forgotten: bool
    user: SnapshotSource
    assistant: SnapshotSource
    user_kept: bool  # the text is still stored
    assistant_kept: bool


class Planning:
    """On the pool (`Store.planning`) or inside the workspace lock (`WorkspaceTx.planning`)."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def due_scopes(self, now: datetime, limit: int) -> list[tuple[str, str]]:
        """(workspace, scope key) of scopes due now, the longest due first."""
        rows = await self._on.fetch(
            "SELECT workspace_id, scope_key FROM memory_scopes"
            f" WHERE {SCOPE_DUE.format(at='$1')} ORDER BY due_at LIMIT $2",
            now,
            limit,
        )
        return [(r["workspace_id"], r["scope_key"]) for r in rows]

    async def rearm(self, workspace: str, scope_key: str, at: datetime) -> None:
        """Look at a scope again at `at` (or sooner if already due), without touching its
        activity."""
        await self._on.execute("SELECT bm_rearm($1, $2, $3)", workspace, scope_key, at)

    async def due(self, workspace: str, scope_key: str) -> Due | None:
        row = await self._on.fetchrow(
            "SELECT last_activity, due_at, wakes FROM memory_scopes WHERE workspace_id = $1"
            " AND scope_key = $2",
            workspace,
            scope_key,
        )
        return None if row is None else Due(row["last_activity"], row["due_at"], row["wakes"])

    async def set_due(
        self, workspace: str, scope_key: str, due_at: datetime | None, *, wakes: int
    ) -> None:
        """The scope's next wake-up, only if nothing rescheduled it since it was read at
        `wakes` (a request closed meanwhile scheduled its own)."""
        await self._on.execute(
            "UPDATE memory_scopes SET due_at = $3 WHERE workspace_id = $1 AND scope_key = $2"
            " AND wakes = $4",
            workspace,
            scope_key,
            due_at,
            wakes,
        )

    async def oldest_open(self, workspace: str, scope_key: str) -> tuple[int, datetime] | None:
        """The scope's oldest request still open and when its message was sent."""
        row = await self._on.fetchrow(
            "SELECT r.id, coalesce(m.sent_at, m.created_at) AS at FROM requests r"
            " JOIN messages m ON m.workspace_id = r.workspace_id AND m.id = r.user_message_id"
            " WHERE r.workspace_id = $1 AND r.scope_key = $2"
            " AND r.status IN ('queued', 'running', 'awaiting_approval') ORDER BY r.id LIMIT 1",
            workspace,
            scope_key,
        )
        return None if row is None else (row["id"], row["at"])

    async def answered(
        self, workspace: str, scope_key: str, *, after: int, before: int | None
    ) -> list[Answered]:
        """The scope's answered chat requests after the watermark `after` (and before `before`,
        when given), oldest first."""
        rows = await self._on.fetch(
            """
            SELECT r.id AS request_id, r.provider, r.model, r.answer_forgotten,
                   u.id AS u_id, u.content_hash AS u_hash, u.speaker_id AS u_speaker,
                   u.thread_id AS u_thread, coalesce(u.sent_at, u.created_at) AS u_at,
                   u.text IS NOT NULL AS u_kept,
                   a.id AS a_id, a.content_hash AS a_hash, a.speaker_id AS a_speaker,
                   a.thread_id AS a_thread, coalesce(a.sent_at, a.created_at) AS a_at,
                   a.text IS NOT NULL AS a_kept
            FROM requests r
            JOIN messages u ON u.workspace_id = r.workspace_id AND u.id = r.user_message_id
            JOIN messages a ON a.workspace_id = r.workspace_id AND a.id = r.answer_message_id
            WHERE r.workspace_id = $1 AND r.scope_key = $2 AND r.id > $3
              AND ($4::bigint IS NULL OR r.id < $4)
              AND r.status = 'succeeded' AND r.kind = 'chat'
            ORDER BY r.id
            """,
            workspace,
            scope_key,
            after,
            before,
        )
        return [
            Answered(
                request_id=r["request_id"],
                provider=r["provider"],
                model=r["model"],
                answer_forgotten=r["answer_forgotten"],
                user=_source(r, "u", "user"),
                assistant=_source(r, "a", "assistant"),
                user_kept=r["u_kept"],
                assistant_kept=r["a_kept"],
            )
            for r in rows
        ]

    async def last_answered(self, workspace: str, scope_key: str) -> tuple[int, str, str] | None:
        """The scope's newest succeeded request pinned to a model: (ID, provider, model)."""
        row = await self._on.fetchrow(
            "SELECT id, provider, model FROM requests WHERE workspace_id = $1 AND scope_key = $2"
            " AND status = 'succeeded' AND provider IS NOT NULL ORDER BY id DESC LIMIT 1",
            workspace,
            scope_key,
        )
        return None if row is None else (row["id"], row["provider"], row["model"])

    async def newest_request(self, workspace: str, scope_key: str) -> int:
        """The ID of the scope's newest request (0: none yet)."""
        found: int = await self._on.fetchval(
            "SELECT coalesce(max(id), 0) FROM requests WHERE workspace_id = $1 AND scope_key = $2",
            workspace,
            scope_key,
        )
        return found

    async def kept_texts(self, workspace: str, ids: list[int]) -> dict[int, str]:
        """Texts of messages that still have them."""
        rows = await self._on.fetch(
            "SELECT id, text FROM messages WHERE workspace_id = $1 AND id = ANY($2::bigint[])"
            " AND text IS NOT NULL",
            workspace,
            ids,
        )
        return {r["id"]: r["text"] for r in rows}


def _source(row: asyncpg.Record, prefix: str, role: Literal["user", "assistant"]) -> SnapshotSource:
    """One side of a request row (columns u_* or a_*) as a snapshot source."""
    return SnapshotSource(
        id=source_id(row[f"{prefix}_id"]),
        message_id=row[f"{prefix}_id"],
        request_id=row["request_id"],
        hash=row[f"{prefix}_hash"],
        role=role,
        speaker_id=row[f"{prefix}_speaker"],
        thread_id=row[f"{prefix}_thread"],
        created_at=row[f"{prefix}_at"],
    )
