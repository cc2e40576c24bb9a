"""The bot's entry point: `python -m examples.host_bot.bot` with BOT_TOKEN and an
OpenAI-compatible server (OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL, or LLM_*)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable

from aiogram import Bot, Dispatcher

from bot_memory import Memory, MemorySettings  # memory
from bot_memory_aiogram import setup  # memory
from examples.host_bot.middlewares.throttling import ThrottlingMiddleware
from examples.host_bot.routers import get_routers


def build_dispatcher(memory: Memory, *, clock: Callable[[], float] = time.monotonic) -> Dispatcher:
    """The bot's Dispatcher; `clock` is the throttle's (a test moves its own)."""
    dp = Dispatcher()
    dp.message.middleware(ThrottlingMiddleware(seconds=0.5, clock=clock))
    dp.include_routers(*get_routers())
    dp["llm"] = memory.settings  # the LLM handler reads the same model settings
    setup(dp, memory, close_on_shutdown=True)  # memory
    return dp


async def main() -> None:
    logging.basicConfig(level=logging.INFO)
    memory = await Memory.open(MemorySettings())  # memory
    dp = build_dispatcher(memory)
    bot = Bot(os.environ["BOT_TOKEN"])
    await dp.start_polling(bot, allowed_updates=dp.resolve_used_update_types())


if __name__ == "__main__":
    asyncio.run(main())
