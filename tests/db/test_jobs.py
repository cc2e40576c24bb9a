"""Job claims: one owner at a time, leases that expire, stale owners that cannot commit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.extraction import run_extraction
from bot_memory.pipeline.worker import Pipeline
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage.workspace import WorkspaceView
from tests.support.helpers import view


def scope(n: int) -> Scope:
    return Scope(workspace="test", bot_id=42, kind="private", chat_id=n, user_id=n)


@pytest.fixture
async def memory(settings: MemorySettings) -> AsyncIterator[Memory]:
    mem = await Memory.open(settings)
    yield mem
    await mem.close()


async def finished(memory: Memory, s: Scope, text: str) -> None:
    source = await memory.record(s, text=text, speaker_id=s.chat_id)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)


async def records(memory: Memory) -> WorkspaceView:
    return await view(memory)


async def test_concurrent_workers_claim_each_job_once(memory: Memory) -> None:
    for n in range(1, 7):
        await finished(memory, scope(n), f"note number {n} about the roadmap")
    second = Pipeline(
        PipelineContext(
            store=memory.pipeline.ctx.store, model=memory.model, settings=memory.settings
        )
    )
    reports = await asyncio.gather(memory.pipeline.tick(), second.tick())
    finished_ids = [j for r in reports for j in r.finished]
    assert len(finished_ids) == len(set(finished_ids)) == 12  # 6 extractions, 6 consolidations
    usage = await memory.store.pool.fetch(
        "SELECT job_id, count(*) AS n FROM usage_ledger WHERE kind = 'memory_extract'"
        " GROUP BY job_id"
    )
    assert len(usage) == 6 and all(u["n"] == 1 for u in usage)
    assert len((await records(memory)).records) == 6
    # Six scopes of one workspace: each got its own consolidation too, and nothing twice.
    phases = [r["phase"] for r in await memory.store.pool.fetch("SELECT phase FROM memory_jobs")]
    assert phases.count("done") == 12


async def test_an_expired_lease_passes_ownership_and_the_old_owner_cannot_commit(
    memory: Memory,
) -> None:
    await finished(memory, scope(1), "the staging database moves on Monday")
    ctx = memory.pipeline.ctx
    from bot_memory.pipeline.discovery import plan_due

    [job_id] = await plan_due(ctx, datetime.now(UTC))
    first = await ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    assert first is not None and first.id == job_id
    # While the lease runs nobody else can claim it.
    assert await ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3) is None
    await memory.store.pool.execute(
        "UPDATE memory_jobs SET lease_until = now() - interval '1 second'"
    )
    second = await ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    assert second is not None and second.id == job_id and second.token != first.token
    await run_extraction(ctx, first, datetime.now(UTC))  # stale owner: its writes are refused
    assert (await records(memory)).records == {}
    assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_jobs") == 1
    await memory.pipeline.run_job(second, datetime.now(UTC))
    state = await records(memory)
    assert len(state.records) == 1
    phase = await memory.store.pool.fetchval("SELECT phase FROM memory_jobs WHERE id = $1", job_id)
    assert phase == "done"


async def test_new_messages_supersede_a_waiting_snapshot(memory: Memory) -> None:
    ctx = memory.pipeline.ctx
    from bot_memory.pipeline.discovery import plan_due

    await finished(memory, scope(1), "first thought")
    [old] = await plan_due(ctx, datetime.now(UTC))
    await finished(memory, scope(1), "second thought")
    [new] = await plan_due(ctx, datetime.now(UTC))
    phases = dict(await memory.store.pool.fetch("SELECT id, phase FROM memory_jobs"))
    assert phases == {old: "stopped", new: "extract"}


async def test_the_lag_of_a_scope_due_first_is_how_long_it_has_waited(memory: Memory) -> None:
    """A scope due first (due_at 'epoch', which the planner takes before any time) counts in
    the pipeline lag from when it became due (due_since), never from 1970."""
    for n in (1, 2):
        await finished(memory, scope(n), f"message {n}")
    pool = memory.store.pool
    await pool.execute(
        "UPDATE memory_scopes SET due_at = CASE WHEN chat_id = 1 THEN 'epoch'::timestamptz"
        " ELSE now() + interval '1 hour' END, due_since = CASE WHEN chat_id = 1"
        " THEN now() - interval '30 seconds' END"
    )
    backlog = await memory.store.jobs.backlog(timeout=5)
    assert 30 <= backlog.lag_seconds < 40
    assert (await memory.store.planning.due_scopes(datetime.now(UTC), 10))[0][1] == (
        scope(1).key
    )  # still first for the planner

    # Since when a scope made due first has been due: one due first already keeps its start,
    # one due at a past time keeps that time, any other (or one whose start is unknown, as
    # after the upgrade) is due from now.
    row = await pool.fetchrow(
        """
        SELECT bm_due_since('epoch', now() - interval '1 minute') = now() - interval '1 minute'
                   AS kept,
               bm_due_since(now() - interval '5 minutes', NULL) = now() - interval '5 minutes'
                   AS past,
               bm_due_since(now() + interval '5 minutes', now() - interval '1 day') = now()
                   AS future,
               bm_due_since(NULL, NULL) = now() AS unscheduled,
               bm_due_since('epoch', NULL) = now() AS unknown
        """
    )
    assert row is not None and all(row.values()), dict(row)
