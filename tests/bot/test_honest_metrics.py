"""Every metric the operating page lists, checked against the tables after a run that leaves a
consolidation pending: a note makes its scope due first (due_at is the sentinel 'epoch'), and
the pipeline lag is how long that work has waited, not the age of 1970."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot_memory.metrics import SERIES, exposed_name
from bot_memory.pipeline.discovery import plan_due
from tests.bot.test_metrics import parse, value
from tests.support.e2e import Env, running, wait_until

pytestmark = pytest.mark.slow

USER = 1001
KEY = "sk-proj-" + "Zq7" * 16  # a credential in a message: redacted before the model sees it
OPERATING = Path(__file__).parents[2] / "docs" / "operating.md"
# What the ledger's kinds are called in the metrics' `kind` label.
KINDS = {"answer": "chat", "memory_extract": "extraction", "memory_consolidate": "consolidation"}


@pytest.fixture
async def env(db_url: str) -> AsyncIterator[Env]:
    # The worker is driven by hand: nothing moves between a scrape and the tables it is
    # compared with. Priced, so that spend is more than zeros.
    async with running(
        db_url, run_worker=False, llm_input_usd_per_mtok=3.0, llm_output_usd_per_mtok=15.0
    ) as e:
        yield e


def listed_metrics() -> set[str]:
    """The metric names in the operating page's metrics table."""
    return set(re.findall(r"^\| `(bot_memory_\w+)` \|", OPERATING.read_text(), re.M))


async def scrape(env: Env) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    return parse((await env.memory.scrape()).decode())


async def extract_only(env: Env, now: datetime) -> int:
    """What a worker does for one due scope, stopped before it plans again: plan, claim and
    run the extraction. Its commit makes the scope due first, for a consolidation (as it waits
    in a busy worker's tick while the other claimed jobs run). Returns the job's ID."""
    pipeline = env.memory.pipeline
    settings = env.memory.settings
    (planned,) = await plan_due(pipeline.ctx, now)
    job = await pipeline.ctx.store.jobs.claim_next(
        lease_seconds=settings.lease_seconds,
        max_claims=settings.max_claims_per_input,
        pin=pipeline.ctx.pin,
    )
    assert job is not None and job.id == planned and job.phase == "extract"
    assert await pipeline.run_job(job, now) == "done"
    return job.id


async def test_every_listed_metric_agrees_with_the_tables(env: Env) -> None:
    listed = listed_metrics()
    assert listed == {exposed_name(name) for name in SERIES}  # the page lists every series

    # A conversation answered by the model and a note, extracted and consolidated (a whole
    # tick); a question and a new plan, answered with the index; then their extraction alone:
    # its record makes the scope's index pending, and a consolidation waits for the planner.
    # A photo without text is skipped.
    later = datetime.now(UTC) + timedelta(days=1)
    await env.say(1, chat_id=USER, user_id=USER, text=f"I plan a trip to Kyoto, key {KEY}")
    sent = await env.say(2, chat_id=USER, user_id=USER, text="remember that I like green tea")
    assert sent["text"] == "Noted. I'll remember that."
    await env.settled()
    await env.memory.pipeline.tick(now=later)
    await env.say(3, chat_id=USER, user_id=USER, text="What do you know about my Kyoto trip?")
    await env.say(4, chat_id=USER, user_id=USER, text="I also plan to visit Osaka in May")
    await env.settled()
    extraction = await extract_only(env, later + timedelta(hours=1))
    env.emu.push_message(chat_id=USER, user_id=USER, photo=True)

    async def skipped() -> bool:
        return value(await scrape(env), "bot_memory_messages_skipped_total", reason="non_text") == 1

    await wait_until(skipped)
    (due,) = await env.rows(
        "SELECT due_at = 'epoch'::timestamptz AS first, index_pending FROM memory_scopes"
    )
    assert due["first"] and due["index_pending"]  # due first: a consolidation waits

    (before,) = await env.rows("SELECT now() AS at")
    samples = await scrape(env)
    (after,) = await env.rows("SELECT now() AS at")
    await check_against_tables(env, samples, ticks=1)

    # The lag: how long the consolidation has waited, since the extraction's commit made it
    # due (the job's finish, in the same transaction), not since 1970. No alert fires.
    (done,) = await env.rows("SELECT finished_at FROM memory_jobs WHERE id = $1", extraction)
    lag = value(samples, "bot_memory_pipeline_lag_seconds")
    waited = (
        (before["at"] - done["finished_at"]).total_seconds(),
        (after["at"] - done["finished_at"]).total_seconds(),
    )
    assert waited[0] <= lag <= waited[1], (lag, waited)
    assert lag < 600  # the operating page's alert

    # The worker catches up: the consolidation runs, nothing is due, the lag is 0.
    await env.memory.pipeline.tick(now=later + timedelta(hours=2))
    samples = await scrape(env)
    await check_against_tables(env, samples, ticks=2)
    assert value(samples, "bot_memory_pipeline_lag_seconds") == 0
    for state in ("extract", "consolidate"):
        assert value(samples, "bot_memory_jobs", state=state) == 0
    (scope,) = await env.rows("SELECT due_at, index_pending FROM memory_scopes")
    assert scope["due_at"] is None and not scope["index_pending"]


async def check_against_tables(
    env: Env, samples: dict[str, dict[tuple[tuple[str, str], ...], float]], *, ticks: int
) -> None:
    """Each listed metric against what the tables hold (and, for what leaves no row, what the
    test did)."""
    checked: set[str] = set()

    def check(name: str, expected: float, **labels: str) -> None:
        checked.add(name)
        assert value(samples, name, **labels) == pytest.approx(expected), (name, labels)

    users = await env.rows("SELECT count(*) AS n FROM messages WHERE role = 'user'")
    check("bot_memory_messages_recorded_total", users[0]["n"])
    assert users[0]["n"] == 4  # every message pushed but the photo, which left no row
    check("bot_memory_messages_skipped_total", 1, reason="non_text")
    for reason in ("duplicate", "buffered", "buffer_full", "other"):
        check("bot_memory_messages_skipped_total", 0, reason=reason)

    statuses = {
        r["status"]: r["n"]
        for r in await env.rows("SELECT status, count(*) AS n FROM requests GROUP BY status")
    }
    assert set(statuses) == {"succeeded"}  # every request closed
    check("bot_memory_requests_total", statuses["succeeded"], outcome="answered")
    for outcome in ("unanswered", "failed", "abandoned", "other"):
        check("bot_memory_requests_total", 0, outcome=outcome)

    # A recall per request the model answered: the first found nothing stored, the next the
    # index its answer's recall row names.
    chats = await env.rows(
        "SELECT r.recall_memory_ids FROM requests r JOIN usage_ledger u"
        " ON u.workspace_id = r.workspace_id AND u.request_id = r.id AND u.kind = 'answer'"
        " ORDER BY r.id"
    )
    assert [len(c["recall_memory_ids"]) > 0 for c in chats] == [False, True, True]
    check("bot_memory_recalls_total", 1, mode="empty")
    check("bot_memory_recalls_total", 2, mode="index")
    for mode in ("directory", "off", "unavailable", "denied", "other"):
        check("bot_memory_recalls_total", 0, mode=mode)
    # Searches: the messages naming something to look up (Kyoto, Osaka) once the scope holds
    # records, not the first (nothing stored yet) and not the note (answered without the
    # model).
    check("bot_memory_recall_searches_total", 2)

    tools = await env.rows("SELECT 1 FROM usage_ledger WHERE kind LIKE 'tool:%'")
    assert not tools and not any(
        m.get("role") == "tool" for r in env.llm.requests for m in r.get("messages", [])
    )
    for labels in samples["bot_memory_tool_calls_total"]:
        check("bot_memory_tool_calls_total", 0, **dict(labels))

    ledger = await env.rows(
        "SELECT kind, outcome, count(*) AS n, sum(prompt_tokens) AS prompt,"
        " sum(completion_tokens) AS completion, sum(cost_usd) AS usd FROM usage_ledger"
        " WHERE provider IS NOT NULL GROUP BY kind, outcome"
    )
    assert {r["kind"] for r in ledger} <= set(KINDS)
    calls = {(KINDS[r["kind"]], r["outcome"]): r["n"] for r in ledger}
    for kind in ("chat", "extraction", "consolidation", "host", "other"):
        for outcome in ("ok", "error", "unknown", "refused", "other"):
            check(
                "bot_memory_model_calls_total",
                calls.get((kind, outcome), 0),
                kind=kind,
                outcome=outcome,
            )
        rows = [r for r in ledger if KINDS[r["kind"]] == kind]
        for direction in ("prompt", "completion"):
            check(
                "bot_memory_model_tokens_total",
                sum(r[direction] for r in rows),
                kind=kind,
                direction=direction,
            )
        check("bot_memory_model_spend_usd_total", float(sum(r["usd"] for r in rows)), kind=kind)
        check("bot_memory_model_unknown_outcomes_total", calls.get((kind, "unknown"), 0), kind=kind)
    assert len(env.llm.requests) == sum(calls.values())  # every call the model saw

    # Redactions are process-wide (other tests count too): at least the key, which the
    # message row keeps and no model input holds.
    checked.add("bot_memory_redactions_total")
    assert value(samples, "bot_memory_redactions_total") >= 1
    assert await env.rows("SELECT 1 FROM messages WHERE position($1 IN text) > 0", KEY)
    inputs = json.dumps(env.llm.requests)
    assert KEY not in inputs and "[REDACTED]" in inputs

    check("bot_memory_fair_share_drops_total", 0)
    for operation in ("record", "close", "settle", "tick", "scrape", "health", "other"):
        check("bot_memory_database_errors_total", 0, operation=operation)

    (tick,) = await env.rows("SELECT extract(epoch FROM last_tick_at) AS at FROM worker_ticks")
    check("bot_memory_worker_ticks_total", ticks, outcome="ok")
    check("bot_memory_worker_ticks_total", 0, outcome="failed")
    checked.add("bot_memory_worker_last_tick_timestamp_seconds")
    last_tick = value(samples, "bot_memory_worker_last_tick_timestamp_seconds")
    assert abs(last_tick - float(tick["at"])) < 1  # the row is written just before

    phases = {
        r["phase"]: r["n"]
        for r in await env.rows("SELECT phase, count(*) AS n FROM memory_jobs GROUP BY phase")
    }
    for state in ("extract", "consolidate", "done", "failed", "stopped", "other"):
        check("bot_memory_jobs", phases.get(state, 0), state=state)
    checked.add("bot_memory_pipeline_lag_seconds")  # by the caller, against the job's finish

    # The pools: what PostgreSQL sees connected is what they hold open (nothing else connects
    # to the test's database), each within its limit.
    (seen,) = await env.rows(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend'"
    )
    open_ = {p: value(samples, "bot_memory_pool_connections", pool=p) for p in ("main", "worker")}
    assert sum(open_.values()) == seen["n"], (open_, seen["n"])
    checked.add("bot_memory_pool_connections")
    for pool, limit in (
        ("main", env.memory.settings.db_pool_max),
        ("worker", env.memory.settings.worker_pool_max),
    ):
        check("bot_memory_pool_max_connections", limit, pool=pool)
        assert 0 <= value(samples, "bot_memory_pool_idle_connections", pool=pool) <= open_[pool]
        assert open_[pool] <= limit
    checked.add("bot_memory_pool_idle_connections")

    assert checked == listed_metrics()  # none left out
