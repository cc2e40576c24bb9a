"""Moved: the Bot API emulator is `bot_memory_aiogram.testing.emulator` (and exported from
`bot_memory_aiogram.testing`). This path keeps working for one release, with a
DeprecationWarning."""

from bot_memory.deprecation import warn_deprecated
from bot_memory_aiogram.testing.emulator import (
    ApiCall,
    BotAPIEmulator,
    EmulatorError,
    command_entity,
    mention_entity,
    utf16_len,
)

__all__ = [
    "ApiCall",
    "BotAPIEmulator",
    "EmulatorError",
    "command_entity",
    "mention_entity",
    "utf16_len",
]

warn_deprecated(
    "bot_memory_aiogram.emulator",
    "import BotAPIEmulator and the rest from bot_memory_aiogram.testing",
)
