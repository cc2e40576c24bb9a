"""How requests close: answers a handler returns instead of awaiting (aiogram sends them after
the handler), and closings with nothing to keep written together, off the handler's path."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from aiogram import Dispatcher, F
from aiogram.types import Message

from bot_memory.ingress.closing import RequestCloser
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import Closing, Store
from bot_memory.storage.statements import CLOSE, closing_args
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import running_bot
from tests.support.statement_log import CountingPool

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)


def returning(memory: Memory, dp: Dispatcher | None = None) -> Dispatcher:
    """Memory set up on `dp` (a fresh one by default), and a handler that returns its answer."""
    dp = dp or Dispatcher()
    setup(dp, memory)

    @dp.message(F.text)
    async def echo(message: Message) -> object:
        return message.answer(f"you said: {message.text}")

    return dp


async def test_an_answer_a_handler_returns_is_kept_under_polling() -> None:
    async with running_bot(returning, workspace="test") as bot:
        assert await bot.say("my boat is called Aurora") == "you said: my boat is called Aurora"
        await bot.settled()
        pool = bot.memory.store.pool
        row = await pool.fetchrow(
            "SELECT r.status, a.text, a.telegram_message_id FROM requests r"
            " JOIN messages a ON a.id = r.answer_message_id"
        )
        assert row is not None, "the returned answer was not kept"
        assert row["status"] == "succeeded"
        assert row["text"] == "you said: my boat is called Aurora"
        assert row["telegram_message_id"] == bot.emu.sent[-1].result["message_id"]
        await bot.idle()  # a conversation now: it becomes memory
        assert any("Aurora" in m for m in await bot.memories())


async def test_a_returned_answer_telegram_refuses_fails_the_request() -> None:
    async with running_bot(returning, workspace="test") as bot:
        bot.emu.inject_error("sendMessage", description="Bad Request: message is too long")
        bot.send("hello")
        await bot.settled()
        status, error = await bot.memory.store.pool.fetchrow("SELECT status, error FROM requests")
        assert (status, error) == ("failed", "TelegramBadRequest")


async def test_closings_with_nothing_to_keep_are_one_statement(memory: Memory) -> None:
    now = datetime(2024, 5, 1, tzinfo=UTC)
    sources = [
        await memory.record(SCOPE, text=f"message {i}", speaker_id=7, sent_at=now) for i in range(5)
    ]
    counting = CountingPool(memory.store.pool)
    closer = RequestCloser(Store(counting), idle_seconds=0, linger_seconds=0.01)  # type: ignore[arg-type]
    for source in sources:
        assert source is not None
        closer.close_later(Closing(source.request_id, "unanswered", now))
    closer.close_later(Closing(sources[0].request_id, "failed", now, "late"))  # type: ignore[union-attr]
    assert closer.pending == 6
    await closer.flush()
    # Six closings, five requests, one statement (the closing, scheduling with bm_schedule).
    assert await counting.taken() == ["bm_schedule"]
    rows = await memory.store.pool.fetch("SELECT status, error FROM requests ORDER BY id")
    assert [tuple(r) for r in rows] == [("unanswered", None)] * 5  # the first closing counts
    scheduled = await memory.store.pool.fetchval(
        "SELECT last_activity FROM memory_scopes WHERE scope_key = $1", SCOPE.key
    )
    assert scheduled == now  # the scope was scheduled with the batch


async def test_a_closing_that_was_never_written_is_closed_by_the_request_timeout(
    memory: Memory,
) -> None:
    now = datetime(2024, 5, 1, tzinfo=UTC)
    source = await memory.record(SCOPE, text="hello", speaker_id=7, sent_at=now)
    assert source is not None
    # The process dies with the closing queued: nothing was written.
    assert await memory.store.requests.status(source) == "queued"
    await memory.store.pool.execute("UPDATE requests SET updated_at = $1", now)
    later = datetime(2024, 5, 1, 1, tzinfo=UTC)
    await memory.pipeline.tick(now=later)
    assert await memory.store.requests.status(source) == "unanswered"


def returning_behind_a_slow_middleware(memory: Memory) -> Dispatcher:
    """A host's outer middleware, registered before setup(), that finishes its own work (a
    database session's commit, say) after the handler returned."""
    dp = Dispatcher()

    async def commits_after(handler: Any, event: Any, data: dict[str, Any]) -> Any:
        result = await handler(event, data)
        await asyncio.sleep(0.05)
        return result

    dp.update.outer_middleware(commits_after)
    return returning(memory, dp)


async def test_a_returned_answer_sent_after_a_hosts_middleware_is_what_telegram_returned() -> None:
    async with running_bot(returning_behind_a_slow_middleware, workspace="test") as bot:
        assert await bot.say("hello") == "you said: hello"
        await bot.settled()
        row = await bot.memory.store.pool.fetchrow(
            "SELECT r.status, a.telegram_message_id FROM requests r"
            " JOIN messages a ON a.id = r.answer_message_id"
        )
        assert row is not None and row["status"] == "succeeded"
        assert row["telegram_message_id"] == bot.emu.sent[-1].result["message_id"]

        bot.emu.inject_error(
            "sendMessage", error_code=403, description="Forbidden: bot was blocked by the user"
        )
        bot.send("are you there?")
        await bot.settled()
        status, error = await bot.memory.store.pool.fetchrow(
            "SELECT status, error FROM requests ORDER BY id DESC LIMIT 1"
        )
        assert (status, error) == ("failed", "TelegramForbiddenError")


async def test_a_batch_with_a_row_the_database_refuses_still_closes_the_others(
    memory: Memory,
) -> None:
    now = datetime(2024, 5, 1, tzinfo=UTC)
    sources = [
        await memory.record(SCOPE, text=f"message {i}", speaker_id=7, sent_at=now) for i in range(3)
    ]
    ids = [s.request_id for s in sources if s is not None]
    closer = RequestCloser(memory.store, idle_seconds=0, linger_seconds=0.01)
    closer.close_later(Closing(ids[0], "failed", now, "bad \x00 byte"))
    for request_id in ids[1:]:
        closer.close_later(Closing(request_id, "unanswered", now))
    await closer.flush()
    rows = await memory.store.pool.fetch("SELECT status FROM requests ORDER BY id")
    assert [r["status"] for r in rows] == ["queued", "unanswered", "unanswered"]


async def test_close_later_cleans_what_the_database_refuses(memory: Memory) -> None:
    source = await memory.record(SCOPE, text="hello", speaker_id=7)
    assert source is not None
    memory.close_later(source, status="failed", error="bad \x00 byte")
    await memory.flush()
    assert await memory.store.pool.fetchval("SELECT error FROM requests") == "bad  byte"


def _index_scans(plan: dict[str, Any]) -> list[str]:
    found = (
        [plan["Index Name"]]
        if plan.get("Relation Name") == "requests" and "Index Name" in plan
        else []
    )
    for child in plan.get("Plans", []):
        found += _index_scans(child)
    return found


async def test_a_closing_looks_its_requests_up_by_id_when_many_are_open(memory: Memory) -> None:
    """Statistics taken while few requests were open (as autovacuum finds a quiet bot) made
    the planner walk the partial index of open requests, thousands of entries dead or alive,
    for each closing: 1-3 ms a statement instead of a lookup."""
    store = memory.store
    now = datetime.now(UTC)

    async def record(n: int, first: int) -> list[int]:
        ids = []
        for i in range(first, first + n):
            source = await memory.record(
                SCOPE, text=f"note {i}", speaker_id=7, telegram_message_id=i
            )
            assert source is not None
            ids.append(source.request_id)
        return ids

    quiet = await record(200, 0)
    await store.requests.close_unanswered(
        [Closing(i, "unanswered", now) for i in quiet], idle_seconds=60
    )
    await store.pool.execute("ANALYZE requests")
    busy = await record(1500, 1000)
    plan = await store.pool.fetchval(
        "EXPLAIN (FORMAT JSON) " + CLOSE,
        *closing_args([Closing(busy[-1], "unanswered", now)], 60.0),
    )
    scans = _index_scans(json.loads(plan)[0]["Plan"])
    # (By ID twice: once to take the workspace's row first, once to close.)
    assert scans and set(scans) == {"requests_id_idx"}, scans


async def test_abandoned_requests_schedule_their_scopes_in_one_statement(memory: Memory) -> None:
    """Requests no one closed (their processes died) close, and every scope of theirs is
    scheduled at once: two statements however many, not one more per request."""
    then = datetime(2024, 5, 1, tzinfo=UTC)
    other = Scope(workspace="test", bot_id=42, kind="private", chat_id=8, user_id=8)
    for scope, n in ((SCOPE, 2), (other, 1)):
        for i in range(n):
            source = await memory.record(scope, text=f"hello {i}", speaker_id=scope.chat_id)
            assert source is not None
    counting = CountingPool(memory.store.pool)
    now = datetime.now(UTC)
    closed = await Store(counting).requests.abandon(  # type: ignore[arg-type]
        kept_since=now, since=now, now=then
    )
    assert closed == 3
    assert await counting.taken() == ["UPDATE requests", "bm_schedule"]
    rows = await memory.store.pool.fetch(
        "SELECT scope_key, last_activity, due_at FROM memory_scopes ORDER BY scope_key"
    )
    assert [(r["scope_key"], r["last_activity"], r["due_at"]) for r in rows] == [
        (SCOPE.key, then, then),
        (other.key, then, then),
    ]


def agent(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)
    return dp


async def test_an_answer_the_agent_delivered_is_closed_in_one_statement() -> None:
    # The agent's delivery keeps the answer; the middleware, seeing the reply go out, closed the
    # request again after the handler (one more statement, refused by the database each time).
    async with running_bot(agent, workspace="test") as bot:
        assert await bot.say("hello there")
        await bot.settled()
        counting = CountingPool(bot.memory.store.pool)
        bot.memory.store.pool = counting  # type: ignore[assignment]
        assert await bot.say("what do you know?")
        await bot.settled()
        taken = await counting.taken()
        finishes = [s for s in taken if s in ("bm_finish_answered", "bm_schedule")]
        assert finishes == ["bm_finish_answered"], taken
        rows = await bot.memory.store.pool.fetch("SELECT status FROM requests ORDER BY id")
        assert [r["status"] for r in rows] == ["succeeded", "succeeded"]


async def test_an_answer_kept_after_a_closing_still_queued_wins(memory: Memory) -> None:
    # The memory of closings is of those written: one still queued does not stop a finish.
    source = await memory.record(SCOPE, text="hello", speaker_id=7)
    assert source is not None
    memory.close_later(source, status="unanswered")
    assert await memory.finish(source, status="succeeded", answer_text="hi", bot_id=42)
    await memory.flush()
    status = await memory.store.pool.fetchval(
        "SELECT status FROM requests WHERE id = $1", source.request_id
    )
    assert status == "succeeded"
