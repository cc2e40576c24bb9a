"""`python -m bot_memory run`: the reference bot with long polling."""

from __future__ import annotations

import asyncio
import os
import sys

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from bot_memory.database import DatabaseUnavailable
from bot_memory.logs import get_logger
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram.miniapp import serve
from bot_memory_aiogram.setup import ALLOWED_UPDATES, setup

log = get_logger(__name__)


def make_bot(token: str, api_url: str | None) -> Bot:
    """A Bot on the public Bot API, or on the server at api_url (a local telegram-bot-api)."""
    if api_url:
        return Bot(token, session=AiohttpSession(api=TelegramAPIServer.from_base(api_url)))
    return Bot(token)


async def run(settings: MemorySettings | None = None) -> int:
    token = os.environ.get("BOT_TOKEN")
    if not token:
        print("BOT_TOKEN is not set: the bot's token from @BotFather is required.", file=sys.stderr)
        return 2
    try:
        memory = await Memory.open(settings or MemorySettings())
    except DatabaseUnavailable as exc:
        print(f"bot-memory: {exc}", file=sys.stderr)
        return 1
    bot = make_bot(token, os.environ.get("TELEGRAM_API_URL"))
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)
    # The memory manager Mini App on BOT_MEMORY_MINIAPP_HOST:_PORT, if BOT_MEMORY_MINIAPP_URL
    # says where your HTTPS proxy publishes it.
    page = await serve(dp, bot)
    try:
        await dp.start_polling(bot, allowed_updates=ALLOWED_UPDATES)
    finally:
        if page is not None:
            await page.cleanup()
        await memory.close()
        await bot.session.close()
    return 0


def main() -> int:
    return asyncio.run(run())
