"""Moved: `bot_memory_aiogram.testing.loopback`. This path keeps working for one release, with a
DeprecationWarning."""

from bot_memory.deprecation import warn_deprecated
from bot_memory_aiogram.testing.loopback import LoopbackServer

__all__ = ["LoopbackServer"]

warn_deprecated("bot_memory_aiogram.loopback", "import it from bot_memory_aiogram.testing.loopback")
