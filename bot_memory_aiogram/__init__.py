"""The aiogram layer of bot-memory: `setup(dp, memory)` wires it into a host bot."""

from bot_memory_aiogram.setup import ALLOWED_UPDATES, setup

__all__ = ["ALLOWED_UPDATES", "setup"]
