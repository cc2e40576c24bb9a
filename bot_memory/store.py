"""Conversation rows, usage and charges, and the locked workspace record.

Ingress writes here in one short statement; the pipeline and the tools change the workspace
record only through `locked_workspace`, which also rewrites the recall rows it derives.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal

import asyncpg

from bot_memory.scopes import Scope
from bot_memory.state import (
    RecallRow,
    WorkspaceState,
    build_recall_row,
    content_hash,
    invalidate_sources,
    source_id,
)

RequestStatus = Literal["queued", "running", "awaiting_approval", "succeeded", "failed"]


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

    @property
    def source_id(self) -> str:
        return source_id(self.message_id)


@dataclass(frozen=True)
class HistoryMessage:
    message_id: int
    role: Literal["user", "assistant"]
    speaker_id: int
    thread_id: int
    text: str
    created_at: datetime


@dataclass(frozen=True)
class UsageEntry:
    workspace: str
    request_id: int | None
    kind: str
    provider: str | None
    model: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    outcome: Literal["ok", "error", "unknown"] = "ok"
    detail: str | None = None
    job_id: int | None = None
    idempotency_key: str | None = None


@dataclass
class WorkspaceTx:
    """The locked record of one workspace inside one transaction."""

    conn: asyncpg.Connection
    workspace: str
    state: WorkspaceState
    version: int
    touched: set[str] = field(default_factory=set)

    def touch(self, *scope_keys: str) -> None:
        """Mark scopes whose memory changed: the record and their recall rows are rewritten."""
        self.touched.update(scope_keys)


class Store:
    def __init__(self, pool: asyncpg.Pool, *, directory_max: int = 8) -> None:
        self.pool = pool
        self._directory_max = directory_max

    # --- workspaces -----------------------------------------------------------------------------

    async def ensure_workspace(self, workspace: str) -> None:
        await self.pool.execute(
            "INSERT INTO workspaces (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", workspace
        )

    @asynccontextmanager
    async def locked_workspace(
        self, workspace: str, *, pool: asyncpg.Pool | None = None
    ) -> AsyncIterator[WorkspaceTx]:
        async with (pool or self.pool).acquire() as conn, conn.transaction():
            tx = await lock_workspace(conn, workspace)
            yield tx
            await write_workspace(tx, directory_max=self._directory_max)

    async def delete_workspace(self, workspace: str) -> None:
        """Workspace deletion purges all memory state (and, by cascade, its conversations)."""
        await self.pool.execute("DELETE FROM workspaces WHERE id = $1", workspace)

    # --- ingress ----------------------------------------------------------------------------------

    async def record_directed(
        self,
        scope: Scope,
        *,
        thread_id: int,
        telegram_message_id: int | None,
        speaker_id: int,
        text: str,
        language: str | None,
        budget_usd: float,
    ) -> SourceMessage:
        """One statement: the message and the queued request it opens."""
        row = await self.pool.fetchrow(
            """
            WITH m AS (
                INSERT INTO messages (workspace_id, scope_key, chat_id, thread_id,
                    telegram_message_id, speaker_id, role, text, content_hash, language)
                VALUES ($1, $2, $3, $4, $5, $6, 'user', $7, $8, $9)
                RETURNING id
            )
            INSERT INTO requests (workspace_id, scope_key, scope, user_message_id, status,
                budget_usd)
            SELECT $1, $2, $10::jsonb, m.id, 'queued', $11 FROM m
            RETURNING id, user_message_id
            """,
            scope.workspace,
            scope.key,
            scope.chat_id,
            thread_id,
            telegram_message_id,
            speaker_id,
            text,
            content_hash(text),
            language,
            scope.model_dump_json(),
            Decimal(str(budget_usd)),
        )
        assert row is not None
        return SourceMessage(
            message_id=row["user_message_id"],
            request_id=row["id"],
            scope=scope,
            text=text,
            speaker_id=speaker_id,
            thread_id=thread_id,
            telegram_message_id=telegram_message_id,
        )

    async def record_edit(
        self, workspace: str, *, chat_id: int, telegram_message_id: int, text: str
    ) -> str | None:
        """A stored message was edited: keep the new text, make memories built on it unavailable."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "UPDATE messages SET text = $4, content_hash = $5, edited_at = now()"
                " WHERE workspace_id = $1 AND chat_id = $2 AND telegram_message_id = $3"
                " AND content_hash <> $5 RETURNING id",
                workspace,
                chat_id,
                telegram_message_id,
                text,
                content_hash(text),
            )
            if row is None:
                return None
            sid = source_id(row["id"])
            tx = await lock_workspace(conn, workspace)
            tx.touch(*invalidate_sources(tx.state, {sid}, "source edited"))
            await write_workspace(tx, directory_max=self._directory_max)
            return sid

    # --- requests ---------------------------------------------------------------------------------

    async def start_request(
        self, request_id: int, *, provider: str, model: str, kind: str = "chat"
    ) -> None:
        await self.pool.execute(
            "UPDATE requests SET status = 'running', provider = $2, model = $3, kind = $4,"
            " updated_at = now() WHERE id = $1",
            request_id,
            provider,
            model,
            kind,
        )

    async def finish_request(
        self,
        request_id: int,
        *,
        status: RequestStatus,
        answer_text: str | None = None,
        answer_telegram_id: int | None = None,
        bot_id: int | None = None,
        error: str | None = None,
    ) -> None:
        """Close a request; a succeeded one keeps its answer as the assistant message."""
        async with self.pool.acquire() as conn, conn.transaction():
            answer_id = None
            if answer_text is not None:
                answer_id = await conn.fetchval(
                    """
                    INSERT INTO messages (workspace_id, scope_key, chat_id, thread_id,
                        telegram_message_id, speaker_id, role, text, content_hash)
                    SELECT r.workspace_id, r.scope_key, m.chat_id, m.thread_id, $2, $3,
                        'assistant', $4, $5
                    FROM requests r JOIN messages m ON m.id = r.user_message_id
                    WHERE r.id = $1
                    RETURNING id
                    """,
                    request_id,
                    answer_telegram_id,
                    bot_id or 0,
                    answer_text,
                    content_hash(answer_text),
                )
            await conn.execute(
                "UPDATE requests SET status = $2, answer_message_id = $3, error = $4,"
                " updated_at = now(), finished_at = now() WHERE id = $1",
                request_id,
                status,
                answer_id,
                error,
            )

    async def set_recall(self, request_id: int, memory_ids: list[str]) -> None:
        await self.pool.execute(
            "UPDATE requests SET recall_memory_ids = $2 WHERE id = $1", request_id, memory_ids
        )

    async def add_citations(self, request_id: int, source_ids: list[str]) -> None:
        await self.pool.execute(
            "UPDATE requests SET citation_source_ids = ARRAY(SELECT DISTINCT unnest("
            "citation_source_ids || $2::text[])) WHERE id = $1",
            request_id,
            source_ids,
        )

    async def history(
        self, scope_key: str, workspace: str, *, before_message_id: int, limit: int
    ) -> list[HistoryMessage]:
        """The scope's latest retained messages before this one, oldest first."""
        rows = await self.pool.fetch(
            "SELECT id, role, speaker_id, thread_id, text, created_at FROM messages"
            " WHERE workspace_id = $1 AND scope_key = $2 AND id < $3 AND deleted_at IS NULL"
            " AND (retain_until IS NULL OR retain_until > now())"
            " ORDER BY id DESC LIMIT $4",
            workspace,
            scope_key,
            before_message_id,
            limit,
        )
        return [
            HistoryMessage(
                message_id=r["id"],
                role=r["role"],
                speaker_id=r["speaker_id"],
                thread_id=r["thread_id"],
                text=r["text"],
                created_at=r["created_at"],
            )
            for r in reversed(rows)
        ]

    async def source_texts(self, workspace: str, message_ids: list[int]) -> dict[int, str]:
        rows = await self.pool.fetch(
            "SELECT id, text FROM messages WHERE workspace_id = $1 AND id = ANY($2::bigint[])"
            " AND deleted_at IS NULL",
            workspace,
            message_ids,
        )
        return {r["id"]: r["text"] for r in rows}

    # --- usage and budgets --------------------------------------------------------------------

    async def record_usage(
        self, entry: UsageEntry, *, conn: asyncpg.Connection | None = None
    ) -> bool:
        """Append to the ledger and charge the request and workspace; False if a replay."""

        async def write(c: asyncpg.Connection) -> bool:
            async with c.transaction():
                inserted = await c.fetchval(
                    """
                    INSERT INTO usage_ledger (workspace_id, request_id, job_id, kind, provider,
                        model, prompt_tokens, completion_tokens, cost_usd, outcome, detail,
                        idempotency_key)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                    ON CONFLICT (idempotency_key) DO NOTHING
                    RETURNING id
                    """,
                    entry.workspace,
                    entry.request_id,
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
                if inserted is None:
                    return False
                if entry.cost_usd:
                    cost = Decimal(str(entry.cost_usd))
                    if entry.request_id is not None:
                        await c.execute(
                            "UPDATE requests SET charged_usd = charged_usd + $2 WHERE id = $1",
                            entry.request_id,
                            cost,
                        )
                    await c.execute(
                        "UPDATE workspaces SET spent_usd = spent_usd + $2 WHERE id = $1",
                        entry.workspace,
                        cost,
                    )
                return True

        if conn is not None:
            return await write(conn)
        async with self.pool.acquire() as c:
            return await write(c)

    async def remaining_budget(
        self, request_id: int, workspace_budget_usd: float
    ) -> tuple[float, float]:
        """(request remaining, workspace remaining) in dollars."""
        row = await self.pool.fetchrow(
            "SELECT r.budget_usd - r.charged_usd AS req, w.spent_usd AS spent"
            " FROM requests r JOIN workspaces w ON w.id = r.workspace_id WHERE r.id = $1",
            request_id,
        )
        if row is None:
            return 0.0, 0.0
        return float(row["req"]), workspace_budget_usd - float(row["spent"])

    async def workspace_spent(self, workspace: str) -> float:
        spent = await self.pool.fetchval(
            "SELECT spent_usd FROM workspaces WHERE id = $1", workspace
        )
        return float(spent or 0)

    # --- recall -------------------------------------------------------------------------------

    async def recall_row(self, workspace: str, scope_key: str) -> RecallRow | None:
        raw = await self.pool.fetchval(
            "SELECT row FROM recall_index WHERE workspace_id = $1 AND scope_key = $2",
            workspace,
            scope_key,
        )
        return None if raw is None else RecallRow.model_validate_json(raw)


async def lock_workspace(conn: asyncpg.Connection, workspace: str) -> WorkspaceTx:
    """Lock the workspace row (creating it if needed) and load its state; inside a transaction."""
    row = await conn.fetchrow(
        "SELECT state, version FROM workspaces WHERE id = $1 FOR UPDATE", workspace
    )
    if row is None:
        await conn.execute(
            "INSERT INTO workspaces (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", workspace
        )
        row = await conn.fetchrow(
            "SELECT state, version FROM workspaces WHERE id = $1 FOR UPDATE", workspace
        )
    assert row is not None
    state = WorkspaceState.model_validate_json(row["state"])
    return WorkspaceTx(conn=conn, workspace=workspace, state=state, version=row["version"])


async def write_workspace(tx: WorkspaceTx, *, directory_max: int) -> None:
    """Write the state back with its derived recall rows; nothing if no scope was touched."""
    if not tx.touched:
        return
    tx.version += 1
    await tx.conn.execute(
        "UPDATE workspaces SET state = $2::jsonb, version = $3, updated_at = now() WHERE id = $1",
        tx.workspace,
        tx.state.model_dump_json(),
        tx.version,
    )
    rows = [
        (
            tx.workspace,
            key,
            tx.version,
            build_recall_row(tx.state, key, directory_max=directory_max).model_dump_json(),
        )
        for key in sorted(tx.touched)
    ]
    await tx.conn.executemany(
        "INSERT INTO recall_index (workspace_id, scope_key, state_version, row)"
        " VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (workspace_id, scope_key)"
        " DO UPDATE SET state_version = EXCLUDED.state_version, row = EXCLUDED.row",
        rows,
    )
    tx.touched.clear()


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
