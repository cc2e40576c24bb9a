"""The harness: your own Dispatcher polling the Bot API emulator on loopback, memory on a real
PostgreSQL and the fake model server (`running_bot`), and what a test does with it (`TestBot`).

PostgreSQL: a database of each `running_bot`'s own. On the server DATABASE_URL (or
TEST_DATABASE_URL) names, when set: a database cloned from a migrated template (made once per
process) and dropped at the end (`databases.py`); else an embedded server in a temporary folder.
A `database_url=` keyword is used as it is (the test's own database, reset by the test).

The model: the fake server (`bot.llm`), whose base URL and key are in the Memory's settings
(`memory.settings.llm_base_url`), so a host's own openai client can point at it too.
Polling subscribes to `dp.resolve_used_update_types()`, as a careful host would.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from bot_memory.errors import BotMemoryError
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram.testing.databases import own_database
from bot_memory_aiogram.testing.emulator import BotAPIEmulator
from bot_memory_aiogram.testing.fake_openai import FakeOpenAI

__all__ = ["ReplyRefused", "TestBot", "running_bot"]

BuildDispatcher = Callable[[Memory], Dispatcher | Awaitable[Dispatcher]]


class ReplyRefused(BotMemoryError, AssertionError):
    """The bot's reply to a `say` was refused by Telegram (bad markup, too long, ...): the user
    saw nothing."""


@dataclass
class TestBot:
    __test__ = False  # not a pytest test class

    emu: BotAPIEmulator
    llm: FakeOpenAI
    memory: Memory
    dp: Dispatcher
    bot: Bot
    chat_id: int = 1001

    async def say(self, text: str, **message: Any) -> str:
        """Send a message (private chat 1001 unless chat_id/user_id say otherwise) and return
        the bot's reply to it, once its request is closed: each say is one whole turn.
        Keywords shape the message: chat_id, user_id, chat_type ("supergroup"), first_name,
        language_code ("zh"), thread_id with is_forum and is_topic_message, reply_to_message_id,
        anonymous_admin (see BotAPIEmulator.push_message)."""
        expected = len(self.emu.sent) + 1
        update = self.send(text, **message)
        calls = await self.emu.wait_for_sent(expected)
        sent = update["message"]
        await self._closed(sent["chat"]["id"], sent["message_id"])
        reply = calls[expected - 1]
        if reply.error is not None:
            raise ReplyRefused(f"Telegram refused the bot's reply ({reply.error}): {reply.params}")
        return str(reply.params.get("text", ""))

    async def _closed(self, chat_id: int, message_id: int, seconds: float = 5.0) -> None:
        """Wait (a little) for this message's request to close; other chats' are not waited on."""
        for _ in range(int(seconds / 0.02)):
            try:
                still_open = await self.memory.store.watch.open_requests_of(chat_id, message_id)
            except Exception:  # the database is away (a test of that): the reply is the turn
                return
            if not still_open:
                return
            await asyncio.sleep(0.02)

    def send(self, text: str, **message: Any) -> dict[str, Any]:
        """Send a message without waiting for a reply; returns the update."""
        message.setdefault("chat_id", self.chat_id)
        message.setdefault("user_id", message["chat_id"] if message["chat_id"] > 0 else 1001)
        return self.emu.push_message(text=text, **message)

    async def settled(self) -> None:
        """Every update consumed, handled, and its request closed."""
        await self.emu.wait_idle(quiet=0.1)
        # Consumed is not yet handled: polling handles each update in a task of its own.
        handling = getattr(self.dp, "_handle_update_tasks", None)
        if handling:
            await asyncio.gather(*list(handling), return_exceptions=True)
        await self.memory.flush()
        for _ in range(500):
            if not await self.memory.store.watch.open_requests(counting_kept=False):
                return
            await asyncio.sleep(0.02)

    async def idle(self) -> None:
        """Let the idle window pass and the worker extract and consolidate (one tick)."""
        await self.settled()
        await self.memory.pipeline.tick()

    async def memories(self, workspace: str | None = None) -> list[str]:
        """The titles and summaries of the stored, valid records (of one workspace or all)."""
        found = await self.memory.store.watch.memories(workspace)
        return [f"{title}\n{summary}" for title, summary in found]


@asynccontextmanager
async def running_bot(
    build: BuildDispatcher, *, worker: bool = False, **settings: Any
) -> AsyncIterator[TestBot]:
    """Your Dispatcher, polling the emulator, with memory on a fake model.

    `build(memory)` returns the Dispatcher, with `setup(dp, memory)` already called, exactly as
    your bot builds it. `worker=True` also runs the background worker (by default tests drive it
    with `await bot.idle()`). Other keywords are MemorySettings fields.

    The database is fresh every time: with DATABASE_URL (or TEST_DATABASE_URL) set, one created
    on that server for this block and dropped after it (the role needs CREATEDB); without, an
    embedded server of its own. `database_url=...` is used as given instead (the emulator's
    message IDs start at 1 each time, so a database kept from another run already holds them).

    The body runs once polling has started (a startup hook that raises comes out of here).
    Whatever stage was reached is undone on the way out, and only the body's own error, if any,
    comes out of the exit.
    """
    async with AsyncExitStack() as stack:
        emu = BotAPIEmulator()
        await emu.start()
        stack.push_async_callback(emu.stop)
        llm = FakeOpenAI(api_key="test-key")
        await llm.start()
        stack.push_async_callback(llm.stop)
        # Registered before the memory: an embedded server's files go after it has stopped.
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="bot-memory-test-"))
        url = settings.pop("database_url", None)
        if url is None:
            server = os.environ.get("TEST_DATABASE_URL") or os.environ.get("DATABASE_URL")
            if server:  # one server for the run, a database for each test
                url = await stack.enter_async_context(own_database(server))
        values: dict[str, Any] = {
            "database_url": url,
            "data_dir": Path(folder),
            "llm_base_url": llm.base_url,
            "llm_api_key": "test-key",
            "llm_model": "fake-model",
            "idle_window_seconds": 0,
            "tick_interval_seconds": 0.05,
            "run_worker": worker,
            **settings,
        }
        memory = await Memory.open(MemorySettings(**values))
        stack.push_async_callback(memory.close)
        bot = Bot(emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)))
        stack.push_async_callback(bot.session.close)
        built = build(memory)
        dp = await built if inspect.isawaitable(built) else built
        polling = asyncio.create_task(
            dp.start_polling(
                bot,
                handle_signals=False,
                polling_timeout=1,
                allowed_updates=dp.resolve_used_update_types(),
            )
        )
        stack.push_async_exit(_PollingStop(dp, polling).exit)
        await _polling_started(emu, polling)
        yield TestBot(emu=emu, llm=llm, memory=memory, dp=dp, bot=bot)


async def _polling_started(emu: BotAPIEmulator, polling: asyncio.Task[None]) -> None:
    """Wait for the first getUpdates (startup hooks have run); a polling task that ended before
    that (a startup hook raised) raises its error here."""
    first_poll = asyncio.create_task(emu.wait_for_calls("getUpdates", 1, timeout=30))
    try:
        await asyncio.wait({first_poll, polling}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        first_poll.cancel()
        with suppress(asyncio.CancelledError, TimeoutError):
            await first_poll
    if polling.done():
        polling.result()  # the startup error; else polling ended by itself
        msg = "polling ended before it started"
        raise RuntimeError(msg)
    if not emu.calls_to("getUpdates"):
        msg = "polling did not start within 30 s"
        raise TimeoutError(msg)


@dataclass
class _PollingStop:
    """Stops polling at whatever stage it is; its own error surfaces only when the body had
    none (the body's error is the one a test author needs to see)."""

    dp: Dispatcher
    polling: asyncio.Task[None]

    async def exit(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        polling = self.polling
        if not polling.done():
            try:
                await asyncio.wait_for(self.dp.stop_polling(), 10)
            except (RuntimeError, TimeoutError):  # not started yet, or stuck: cancel it
                polling.cancel()
        try:
            await asyncio.wait_for(polling, 10)  # cancels it if it does not end
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the test itself is being cancelled
        except Exception:
            if exc is None:
                raise
        return False
