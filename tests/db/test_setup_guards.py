"""`setup()` where it cannot take effect says so, with the fix, instead of doing nothing."""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from bot_memory.service import Memory
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import BotAPIEmulator
from tests.conftest import make_settings


@pytest.fixture
async def bot() -> AsyncIterator[Bot]:
    emu = BotAPIEmulator()
    await emu.start()
    bot = Bot(emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)))
    try:
        yield bot
    finally:
        await bot.session.close()
        await emu.stop()


async def poll_through_startup(dp: Dispatcher, bot: Bot) -> None:
    """Start polling, let every startup hook run, then stop."""
    started = asyncio.Event()

    @dp.startup()
    async def last_hook() -> None:
        started.set()

    polling = asyncio.create_task(dp.start_polling(bot, handle_signals=False, polling_timeout=1))
    waiting = asyncio.create_task(started.wait())
    await asyncio.wait({polling, waiting}, return_when="FIRST_COMPLETED")
    waiting.cancel()
    if not polling.done():
        await dp.stop_polling()
    await polling  # a hook's exception comes out here


async def test_setup_inside_a_startup_hook_raises_with_the_fix(db_url: str, bot: Bot) -> None:
    dp = Dispatcher()
    opened: list[Memory] = []
    refused: list[Exception] = []

    @dp.startup()
    async def open_memory() -> None:  # where many bots open their database
        memory = await Memory.open(make_settings(db_url))
        opened.append(memory)
        try:
            setup(dp, memory)
        except RuntimeError as exc:
            refused.append(exc)
            raise

    try:
        with pytest.raises(RuntimeError, match="startup hook") as caught:
            await poll_through_startup(dp, bot)
    finally:
        for memory in opened:
            await memory.close()
    assert refused and caught.value is refused[0]
    message = str(caught.value)
    assert "before" in message and "await Memory.open(" in message and "start_polling" in message
    assert not dp.sub_routers  # nothing half-registered


async def test_setup_in_a_startup_hook_of_a_webhook_app_raises(db_url: str, bot: Bot) -> None:
    memory = await Memory.open(make_settings(db_url))
    try:
        dp = Dispatcher()

        @dp.startup()
        async def open_memory() -> None:
            setup(dp, memory)

        # aiogram's webhook app runs the startup hooks this way (aiohttp's on_startup).
        with pytest.raises(RuntimeError, match="startup hook"):
            await dp.emit_startup(bot=bot)
    finally:
        await memory.close()


async def test_setup_after_polling_started_raises(db_url: str, bot: Bot) -> None:
    memory = await Memory.open(make_settings(db_url))
    try:
        dp = Dispatcher()
        running = asyncio.Event()

        @dp.startup()
        async def started() -> None:
            running.set()

        polling = asyncio.create_task(
            dp.start_polling(bot, handle_signals=False, polling_timeout=1)
        )
        await running.wait()
        try:
            with pytest.raises(RuntimeError, match="after polling started"):
                setup(dp, memory)
        finally:
            await dp.stop_polling()
            await polling
        assert not dp.sub_routers
    finally:
        await memory.close()


async def test_setup_before_polling_still_works(db_url: str, bot: Bot) -> None:
    memory = await Memory.open(make_settings(db_url, run_worker=True, set_commands=False))
    try:
        dp = Dispatcher()
        setup(dp, memory)
        await poll_through_startup(dp, bot)
        assert dp.sub_routers
    finally:
        await memory.close()


async def test_setup_refuses_an_unawaited_memory_open(db_url: str) -> None:
    dp = Dispatcher()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        pending = Memory.open(make_settings(db_url))
        with pytest.raises(TypeError, match=r"await Memory\.open\(") as caught:
            setup(dp, pending)  # type: ignore[arg-type]
        del pending
        gc.collect()
    assert "coroutine" in str(caught.value)
    # It was closed, so Python does not add "coroutine ... was never awaited" on top.
    assert not [w for w in seen if "never awaited" in str(w.message)]
    assert not dp.sub_routers
