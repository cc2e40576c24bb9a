"""A host on webhooks: the emulator posts each update to the bot's aiohttp server, as Telegram
does, and carries out a method the bot puts in its HTTP answer. Answers awaited and answers
returned are both kept, whether aiogram answers in the response or handles in the background."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiogram import Bot, Dispatcher, F
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import Message
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

from bot_memory.service import Memory
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import BotAPIEmulator
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI

SECRET = "s3cret-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def all_closed(memory: Memory) -> None:
    """Handled in the background, a request closes after the webhook's answer: wait for it."""
    for _ in range(500):
        await memory.flush()
        if not await memory.store.pool.fetchval(
            "SELECT count(*) FROM requests WHERE status IN ('queued', 'running')"
        ):
            return
        await asyncio.sleep(0.01)


def answering(memory: Memory, *, returned: bool) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory)

    @dp.message(F.text)
    async def echo(message: Message) -> object:
        if returned:
            return message.answer(f"you said: {message.text}")
        await message.answer(f"you said: {message.text}")
        return None

    return dp


@asynccontextmanager
async def webhook_bot(
    memory: Memory, *, returned: bool, background: bool, secret: str = SECRET
) -> AsyncIterator[BotAPIEmulator]:
    async with BotAPIEmulator() as emu:
        bot = Bot(emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)))
        dp = answering(memory, returned=returned)
        app = web.Application()
        SimpleRequestHandler(
            dispatcher=dp, bot=bot, secret_token=SECRET, handle_in_background=background
        ).register(app, path="/tg/hook")
        setup_application(app, dp, bot=bot)
        runner = web.AppRunner(app)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        try:
            await bot.set_webhook(f"http://127.0.0.1:{port}/tg/hook", secret_token=secret)
            yield emu
        finally:
            await runner.cleanup()
            await bot.session.close()


@pytest.mark.parametrize("background", [False, True], ids=["in-response", "background"])
@pytest.mark.parametrize("returned", [False, True], ids=["awaited", "returned"])
async def test_answers_under_webhooks_are_kept(
    memory: Memory, returned: bool, background: bool
) -> None:
    async with webhook_bot(memory, returned=returned, background=background) as emu:
        emu.push_message(chat_id=31, user_id=31, text="my boat is called Aurora")
        [sent] = await emu.wait_for_sent(1)
        assert sent.params["text"] == "you said: my boat is called Aurora"
        await emu.wait_idle()
        await all_closed(memory)
        row = await memory.store.pool.fetchrow(
            "SELECT r.status, a.text, a.telegram_message_id FROM requests r"
            " LEFT JOIN messages a ON a.id = r.answer_message_id"
        )
        assert row is not None and row["status"] == "succeeded", row
        assert row["text"] == "you said: my boat is called Aurora"
        if returned and not background:
            # In the webhook's HTTP response: Telegram's message ID never reaches the bot.
            assert row["telegram_message_id"] is None
        else:
            assert row["telegram_message_id"] == sent.result["message_id"]


async def test_a_post_without_the_secret_is_refused(memory: Memory) -> None:
    async with webhook_bot(memory, returned=True, background=False, secret="wrong") as emu:
        emu.push_message(chat_id=31, user_id=31, text="hello")
        for _ in range(500):  # posted, refused, posted again
            if len(emu.webhook_statuses) >= 2:
                break
            await asyncio.sleep(0.01)
        assert set(emu.webhook_statuses) == {401}
        assert not emu.sent
        assert await memory.store.pool.fetchval("SELECT count(*) FROM messages") == 0


async def test_an_answer_in_the_webhook_response_is_closed_at_shutdown_within_the_grace(
    db_url: str, llm: FakeOpenAI
) -> None:
    # The bot returns its answer in the HTTP response and shuts down before the grace (here a
    # minute) has run: the exchange is closed at shutdown with its text, not left open for the
    # request timeout (and never made memory).
    memory = await Memory.open(
        make_settings(
            db_url,
            llm_base_url=llm.base_url,
            llm_api_key="k",
            llm_model="m",
            returned_answer_grace_seconds=60,
        )
    )
    try:
        async with webhook_bot(memory, returned=True, background=False) as emu:
            emu.push_message(chat_id=31, user_id=31, text="my kayak is called Nereid")
            [sent] = await emu.wait_for_sent(1)
            assert sent.params["text"] == "you said: my kayak is called Nereid"
            await emu.wait_idle()
        # The web app has shut down (its dispatcher's shutdown hooks ran).
        row = await memory.store.pool.fetchrow(
            "SELECT r.status, a.text FROM requests r"
            " LEFT JOIN messages a ON a.id = r.answer_message_id"
        )
        assert row is not None and row["status"] == "succeeded", row
        assert row["text"] == "you said: my kayak is called Nereid"
    finally:
        await memory.close()
