"""The aiogram layer of bot-memory: `setup(dp, memory)` wires it into a host bot.

from bot_memory_aiogram import setup, Directed, ALLOWED_UPDATES

The names in `__all__` are the public API (with `bot_memory_aiogram.miniapp`'s `mount` and
`serve`, and the test kit `bot_memory_aiogram.testing`); everything else is internal.
"""

from bot_memory_aiogram.middleware import FLAG as MEMORY_FLAG
from bot_memory_aiogram.middleware import WorkspaceResolver
from bot_memory_aiogram.routers.common import Directed
from bot_memory_aiogram.setup import ALLOWED_UPDATES, SetupTooLate, setup

__all__ = [
    "ALLOWED_UPDATES",
    "MEMORY_FLAG",
    "Directed",
    "SetupTooLate",
    "WorkspaceResolver",
    "setup",
]
