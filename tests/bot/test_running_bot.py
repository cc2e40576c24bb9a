"""The test kit's harness cleans up whatever stage it reached: a test body that ends at once or
raises, a `build` that raises, a startup hook that raises. Nothing is left open and only the
test's own error comes out."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from aiogram import Dispatcher
from aiogram.types import Message

from bot_memory.service import Memory
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import ReplyRefused, TestBot, running_bot


def plain(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory)
    return dp


async def refused(url: str) -> bool:
    """Nothing listens at this loopback URL any more."""
    async with httpx.AsyncClient() as client:
        try:
            await client.get(url, timeout=2)
        except httpx.ConnectError:
            return True
    return False


async def assert_all_closed(bot: TestBot) -> None:
    assert bot.memory.store.pool.is_closing()
    assert not bot.emu.is_running and not bot.llm.is_running
    assert await refused(bot.emu.base_url) and await refused(bot.llm.base_url)
    assert bot.bot.session._session is None or bot.bot.session._session.closed


async def test_a_body_that_ends_at_once_leaves_nothing_open(db_url: str) -> None:
    async with running_bot(plain, database_url=db_url, workspace="test") as bot:
        pass
    await assert_all_closed(bot)


async def test_a_body_that_raises_gets_its_own_error_and_nothing_stays_open(db_url: str) -> None:
    kept: list[TestBot] = []
    with pytest.raises(ValueError, match="the test's own failure"):
        async with running_bot(plain, database_url=db_url, workspace="test") as bot:
            kept.append(bot)
            raise ValueError("the test's own failure")
    await assert_all_closed(kept[0])


async def test_a_build_that_raises_closes_memory_and_the_fake_model(db_url: str) -> None:
    opened: list[Memory] = []

    def broken(memory: Memory) -> Dispatcher:
        opened.append(memory)
        raise LookupError("the host's build failed")

    with pytest.raises(LookupError, match="the host's build failed"):
        async with running_bot(broken, database_url=db_url, workspace="test"):
            pytest.fail("the body must not run")
    [memory] = opened
    assert memory.store.pool.is_closing()
    assert memory.settings.llm_base_url is not None
    assert await refused(memory.settings.llm_base_url)


async def test_a_startup_hook_that_raises_comes_out_of_running_bot(db_url: str) -> None:
    opened: list[Memory] = []

    def failing_startup(memory: Memory) -> Dispatcher:
        opened.append(memory)
        dp = plain(memory)

        async def boom(**_: Any) -> None:
            raise RuntimeError("the host's startup hook failed")

        dp.startup.register(boom)
        return dp

    with pytest.raises(RuntimeError, match="the host's startup hook failed"):
        async with running_bot(failing_startup, database_url=db_url, workspace="test"):
            pytest.fail("the body must not run: polling never started")
    [memory] = opened
    assert memory.store.pool.is_closing()


async def test_say_raises_when_telegram_refused_the_reply() -> None:
    def broken_html(memory: Memory) -> Dispatcher:
        dp = plain(memory)

        @dp.message()
        async def reply(message: Message) -> None:
            await message.answer("<b>unclosed " + (message.text or ""), parse_mode="HTML")

        return dp

    async with running_bot(broken_html) as bot:
        with pytest.raises(ReplyRefused, match="refused"):
            await bot.say("hello")
