"""Every finished request pushes its scope's wake-up back: within a minute the push updates
the scope's row in place (a heap-only update, no index entry, nothing for VACUUM), and the
planner still finds the scope due by the wake-up's minute."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage.requests import schedule_scope

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
AT = datetime(2026, 12, 3, 12, 0, 5, tzinfo=UTC)


async def test_pushing_a_wake_up_back_within_a_minute_is_a_heap_only_update(
    memory: Memory,
) -> None:
    await memory.store.pool.execute(
        "INSERT INTO workspaces (id) VALUES ('test') ON CONFLICT DO NOTHING"
    )
    await schedule_scope(memory.store.pool, SCOPE, now=AT, idle_seconds=600)
    async with memory.store.pool.acquire() as conn, conn.transaction():
        for n in range(1, 6):
            await schedule_scope(conn, SCOPE, now=AT + timedelta(seconds=n), idle_seconds=600)
        updated, hot = await conn.fetchrow(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables"
            " WHERE relname = 'memory_scopes'"
        )
    assert (updated, hot) == (5, 5)


async def test_the_planner_finds_a_scope_due_by_its_minute(memory: Memory) -> None:
    await memory.store.pool.execute(
        "INSERT INTO workspaces (id) VALUES ('test') ON CONFLICT DO NOTHING"
    )
    await schedule_scope(memory.store.pool, SCOPE, now=AT, idle_seconds=30)
    due = AT + timedelta(seconds=30)
    planning = memory.store.planning
    assert await planning.due_scopes(due - timedelta(microseconds=1), 10) == []
    assert await planning.due_scopes(due, 10) == [("test", SCOPE.key)]
    assert await planning.due_scopes(due + timedelta(minutes=5), 10) == [("test", SCOPE.key)]
