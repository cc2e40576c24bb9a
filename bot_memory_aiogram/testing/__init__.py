"""A test kit for host bots: your own Dispatcher, polling a Bot API emulator on loopback, with a
fake OpenAI-compatible model server and a real PostgreSQL.

    from bot_memory_aiogram.testing import running_bot

    async def test_it_remembers():
        async with running_bot(build_dispatcher) as bot:      # build_dispatcher(memory) -> dp
            assert await bot.say("remember that my cat is Mochi") == "Noted. I'll remember that."
            await bot.idle()                                    # the idle window passes
            assert "Mochi" in (await bot.memories())[0]

The parts: `harness.py` (`running_bot`, `TestBot`), `emulator/` (the Bot API emulator, one
module per area of the Bot API), `fake_openai.py` (the fake model server) and `loopback.py`
(the lifecycle both servers share); `databases.py` gives each `running_bot` a database of its own
on a configured server, and `miniapp.py` signs initData for calling the Mini App's API.
"""

from bot_memory_aiogram.testing.emulator import (
    ApiCall,
    BotAPIEmulator,
    EmulatorError,
    command_entity,
    mention_entity,
    utf16_len,
)
from bot_memory_aiogram.testing.fake_openai import FakeOpenAI, default_responder
from bot_memory_aiogram.testing.harness import ReplyRefused, TestBot, running_bot
from bot_memory_aiogram.testing.miniapp import miniapp_headers, sign_init_data

__all__ = [
    "ApiCall",
    "BotAPIEmulator",
    "EmulatorError",
    "FakeOpenAI",
    "ReplyRefused",
    "TestBot",
    "command_entity",
    "default_responder",
    "mention_entity",
    "miniapp_headers",
    "running_bot",
    "sign_init_data",
    "utf16_len",
]
