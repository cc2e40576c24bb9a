"""A purge takes its workspace's row first, then deletes the rows under it: a request closing,
or a billed call settling, at that moment takes the workspace's row first too, so it waits for
the purge and then finds nothing to close, instead of holding a row the purge needs while it
waits for the workspace (a deadlock, one of them failing)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from bot_memory.service import Memory
from bot_memory.storage import Closing, SourceMessage
from tests.db.test_retention import NOW, SCOPE, said

# Made ready before the purge takes the workspace's row: the closing to run meanwhile.
Closer = Callable[[], Coroutine[Any, Any, Any]]


async def answered(memory: Memory, source: SourceMessage) -> Closer:
    return lambda: memory.store.requests.finish(
        source, status="succeeded", now=NOW, idle_seconds=60, answer_text="ok", bot_id=42
    )


async def unanswered(memory: Memory, source: SourceMessage) -> Closer:
    closing = Closing(source.request_id, "unanswered", NOW)
    return lambda: memory.store.requests.close_unanswered([closing], idle_seconds=60)


async def settled(memory: Memory, source: SourceMessage) -> Closer:
    attempt = await memory.store.ledger.open_attempt(
        workspace=SCOPE.workspace,
        request_id=source.request_id,
        job_id=None,
        kind="answer",
        key=f"race:{source.request_id}",
        provider="p",
        model="m",
        worst_usd=0.01,
        workspace_budget_usd=1.0,
    )
    return lambda: memory.store.ledger.close_attempt(attempt, "ok", cost_usd=0.001)


async def waiting_on_a_lock(memory: Memory, text: str) -> None:
    for _ in range(500):
        if await memory.store.pool.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()",
            text,
        ):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"nothing waited: {text}")


@pytest.mark.parametrize(
    ("ready", "statement", "closed"),
    [
        (answered, "bm_finish_answered", False),
        (unanswered, "bm_schedule", []),
        # The ledger outlives a purge (amounts, no text): its line still closes.
        (settled, "bm_close_attempt", True),
    ],
)
async def test_a_purge_and_a_closing_at_once_do_not_deadlock(
    memory: Memory,
    ready: Callable[[Memory, SourceMessage], Awaitable[Closer]],
    statement: str,
    closed: Any,
) -> None:
    source = await said(memory, "hello")
    close = await ready(memory, source)
    async with memory.store.pool.acquire() as purge, purge.transaction():
        await purge.execute("SET LOCAL deadlock_timeout = '100ms'")
        await purge.execute("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", SCOPE.workspace)
        closing = asyncio.create_task(close())
        await waiting_on_a_lock(memory, statement)
        # What erasure.purge does next, with the closing waiting
        await purge.execute(
            "UPDATE usage_ledger SET detail = NULL WHERE workspace_id = $1", SCOPE.workspace
        )
        await purge.execute("DELETE FROM chats WHERE workspace_id = $1", SCOPE.workspace)
        await purge.execute("DELETE FROM workspaces WHERE id = $1", SCOPE.workspace)
    assert await closing == closed  # no deadlock on either side; nothing left to close
    for table in ("requests", "messages", "memory_scopes"):
        assert await memory.store.pool.fetchval(f"SELECT count(*) FROM {table}") == 0, table
