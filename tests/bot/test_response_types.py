"""aiogram parses each Bot API answer as `Response[T]`; pydantic keeps that class only while
something refers to it. Through memory's session middleware a class made for a call outlives a
garbage collection, so the next call does not build it again."""

from __future__ import annotations

import gc
import weakref

from aiogram.methods.base import Response
from aiogram.types import Message

from bot_memory_aiogram.middleware.answers import watch
from bot_memory_aiogram.testing import BotAPIEmulator
from tests.bot.test_emulator import make_bot


async def test_a_sent_messages_response_class_outlives_a_collection() -> None:
    async with BotAPIEmulator() as emu:
        bot = make_bot(emu)
        try:
            watch(bot)
            await bot.send_message(7, "one")
            made = weakref.ref(Response[Message])
            gc.collect()
            assert made() is not None
            await bot.send_message(7, "two")
            assert Response[Message] is made()
        finally:
            await bot.session.close()
