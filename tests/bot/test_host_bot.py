"""The example host bot (examples/host_bot: its own routers, an FSM form, a throttling
middleware, an openai-SDK LLM handler), driven over HTTP through the shipped test kit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from aiogram import Dispatcher

from bot_memory.service import Memory
from bot_memory_aiogram.testing import running_bot
from examples.host_bot.bot import build_dispatcher
from examples.host_bot.routers import feedback


class Clock:
    """The throttle's clock, moved by the test alone: two messages are "too fast" when the test
    says so, not when a loaded machine happens to answer quickly (or slowly)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def on(clock: Clock) -> Callable[[Memory], Dispatcher]:
    return lambda memory: build_dispatcher(memory, clock=clock)


async def test_commands_are_answered_and_conversation_becomes_memory() -> None:
    clock = Clock()
    async with running_bot(on(clock), workspace="test") as bot:
        assert (await bot.say("/start")).startswith("Welcome!")
        clock.advance(0.6)  # past the host's throttle
        reply = await bot.say("I moved to Lisbon last spring")
        assert reply.startswith("fake answer")  # the host's own handler, through the SDK
        await bot.idle()
        [memory] = await bot.memories()
        assert "Lisbon" in memory and "/start" not in memory  # a command is not a source
        statuses = await bot.memory.store.pool.fetch(
            "SELECT kind, status FROM requests ORDER BY id"
        )
        assert [(r["kind"], r["status"]) for r in statuses] == [
            ("command", "succeeded"),
            ("chat", "succeeded"),
        ]
        # The next request's prompt carries the memory the host's handler asked for.
        clock.advance(0.6)  # the throttle
        await bot.say("where do I live?")
        prompt = json.dumps(bot.llm.chat_requests()[-1]["messages"], ensure_ascii=False)
        record = await bot.memory.store.pool.fetchval("SELECT id FROM memory_records")
        assert "memory_context" in prompt and record in prompt
        assert {t["function"]["name"] for t in bot.llm.chat_requests()[-1]["tools"]} >= {
            "query_memories",
            "manage_memory",
        }


async def test_a_form_is_not_hijacked_by_memory_requests() -> None:
    clock = Clock()
    async with running_bot(on(clock), workspace="test") as bot:
        assert await bot.say("/feedback") == "What would you like to tell us?"
        clock.advance(0.6)
        reply = await bot.say("remember that the app crashes on login")
        assert reply == "Thanks, your feedback was sent."
        assert feedback.received[-1] == "remember that the app crashes on login"
        notes = await bot.memory.store.pool.fetch("SELECT 1 FROM memory_records")
        assert notes == []
        clock.advance(0.6)
        assert await bot.say("remember that I prefer tea") == "Noted. I'll remember that."


async def test_a_dropped_message_does_not_stall_memory() -> None:
    clock = Clock()  # never moved: the second message is within the throttle, however late
    async with running_bot(on(clock), workspace="test") as bot:
        # Two at once: the host's throttle drops one of them (whichever it sees second).
        bot.send("my favourite colour is teal")
        bot.send("and my favourite number is 7")
        await bot.settled()
        statuses = sorted(
            r["status"] for r in await bot.memory.store.pool.fetch("SELECT status FROM requests")
        )
        assert statuses == ["succeeded", "unanswered"]  # closed, nothing holds the scope
        await bot.idle()
        [memory] = await bot.memories()
        assert ("teal" in memory) != ("7" in memory)  # the answered one, and only it


async def test_an_edit_invalidates_a_memory_with_resolved_update_types() -> None:
    async with running_bot(on(Clock()), workspace="test") as bot:
        assert "edited_message" in bot.dp.resolve_used_update_types()
        update = bot.send("my locker is number 12")
        await bot.emu.wait_for_sent(1)
        await bot.idle()
        assert len(await bot.memories()) == 1
        bot.emu.push_edited_message(
            chat_id=1001, message_id=update["message"]["message_id"], text="my locker is 40"
        )
        await bot.settled()
        for _ in range(100):
            if not await bot.memories():
                break
            await asyncio.sleep(0.05)
        assert await bot.memories() == []


async def test_setup_called_after_a_catch_all_still_comes_first() -> None:
    from aiogram import Dispatcher, F, Router
    from aiogram.types import Message

    from bot_memory_aiogram import setup

    def late_setup(memory):  # type: ignore[no-untyped-def]
        dp = Dispatcher()
        catch_all = Router()

        @catch_all.message(F.text)
        async def echo(message: Message) -> None:
            await message.answer("echo")

        dp.include_router(catch_all)
        setup(dp, memory)  # after the catch-all
        return dp

    async with running_bot(late_setup, workspace="test") as bot:
        assert await bot.say("remember that I like jazz") == "Noted. I'll remember that."
        assert await bot.say("hello") == "echo"
