"""The end-to-end environment: the real Dispatcher and Bot over HTTP, the Bot API emulator and
a fake OpenAI-compatible server on loopback, and a Memory on the test's own database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram import ALLOWED_UPDATES, setup
from bot_memory_aiogram.middleware import WorkspaceResolver
from bot_memory_aiogram.testing import BotAPIEmulator
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI


@dataclass
class Env:
    emu: BotAPIEmulator
    llm: FakeOpenAI
    memory: Memory
    dp: Dispatcher
    bot: Bot

    async def say(self, count: int, **message: Any) -> dict[str, Any]:
        """Push a message and wait until the bot has sent `count` messages in total."""
        self.emu.push_message(**message)
        calls = await self.emu.wait_for_sent(count)
        return calls[count - 1].params

    async def rows(self, sql: str, *args: Any) -> list[Any]:
        return list(await self.memory.store.pool.fetch(sql, *args))

    async def settled(self) -> None:
        """Wait until every request is finished: a reply is sent before its request closes,
        and a pipeline tick in between would see the conversation still open."""

        async def finished() -> bool:
            open_ = await self.rows(
                "SELECT 1 FROM requests WHERE status IN ('queued', 'running') LIMIT 1"
            )
            return not open_

        await wait_until(finished)


async def start_env(
    db_url: str,
    *,
    workspace: WorkspaceResolver | None = None,
    workspace_setting: str | None = "test",
    **overrides: Any,
) -> Env:
    """`workspace`: the host's resolver; `workspace_setting`: BOT_MEMORY_WORKSPACE (None: one
    workspace per chat)."""
    emu = BotAPIEmulator()
    await emu.start()
    llm = FakeOpenAI(api_key="test-key")
    await llm.start()
    settings: MemorySettings = make_settings(
        db_url,
        llm_base_url=llm.base_url,
        llm_api_key="test-key",
        llm_model="fake-model",
        llm_timeout_seconds=2,
        workspace=workspace_setting,
        **overrides,
    )
    memory = await Memory.open(settings)
    bot = Bot(emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)))
    dp = Dispatcher()
    setup(dp, memory, workspace=workspace, reference_agent=True)
    return Env(emu=emu, llm=llm, memory=memory, dp=dp, bot=bot)


@asynccontextmanager
async def running(db_url: str, **kwargs: Any) -> AsyncIterator[Env]:
    """An environment with the dispatcher polling the emulator; all of it stopped after."""
    e = await start_env(db_url, **kwargs)
    polling = asyncio.create_task(
        e.dp.start_polling(
            e.bot, handle_signals=False, polling_timeout=1, allowed_updates=ALLOWED_UPDATES
        )
    )
    try:
        yield e
    finally:
        await e.dp.stop_polling()
        await asyncio.wait_for(polling, 10)
        await e.memory.close()
        await e.bot.session.close()
        await e.llm.stop()
        await e.emu.stop()


@pytest.fixture
async def env(db_url: str) -> AsyncIterator[Env]:
    async with running(db_url) as e:
        yield e


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    deadline = asyncio.get_running_loop().time() + timeout
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("condition not reached")
        await asyncio.sleep(0.05)
