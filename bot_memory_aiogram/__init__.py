"""The aiogram layer of bot-memory: `setup(dp, memory)` wires it into a host bot.

from bot_memory_aiogram import setup, Directed, ALLOWED_UPDATES
"""

from bot_memory_aiogram.middleware import FLAG as MEMORY_FLAG
from bot_memory_aiogram.routers.common import Directed
from bot_memory_aiogram.setup import ALLOWED_UPDATES, setup

__all__ = ["ALLOWED_UPDATES", "MEMORY_FLAG", "Directed", "setup"]
