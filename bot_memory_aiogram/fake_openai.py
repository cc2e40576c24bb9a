"""Moved: the fake model server is `bot_memory_aiogram.testing.fake_openai` (`FakeOpenAI` and
`default_responder` are exported from `bot_memory_aiogram.testing`). This path keeps working
for one release, with a DeprecationWarning."""

from bot_memory.deprecation import warn_deprecated
from bot_memory_aiogram.testing.fake_openai import (
    HANG_SECONDS,
    FakeOpenAI,
    Responder,
    ScriptItem,
    default_responder,
    error_body,
)

__all__ = [
    "HANG_SECONDS",
    "FakeOpenAI",
    "Responder",
    "ScriptItem",
    "default_responder",
    "error_body",
]

warn_deprecated(
    "bot_memory_aiogram.fake_openai",
    "import FakeOpenAI and default_responder from bot_memory_aiogram.testing",
)
