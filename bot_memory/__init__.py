"""bot-memory: long-term, source-linked conversation memory for aiogram 3 Telegram bots.

from bot_memory import Memory, MemorySettings, Turn

The names in `__all__` are the public API (with `bot_memory.models` for a model of your own):
they change only with a CHANGELOG line, and a change that would break a host keeps the old
form working for one release with a DeprecationWarning. Everything else is internal.
"""

from bot_memory.access import Gate, ItemView, Membership, Requester
from bot_memory.agent import ToolContext, Turn
from bot_memory.errors import BotMemoryError
from bot_memory.logs import JsonFormatter
from bot_memory.metrics import MetricsUnavailable
from bot_memory.models import ChatModel, ModelError
from bot_memory.scopes import Scope
from bot_memory.service import Memory, MemoryUnavailable
from bot_memory.settings import MemorySettings
from bot_memory.settings_file import SettingsFileError
from bot_memory.storage import (
    DatabaseUnavailable,
    DatabaseUrlInvalid,
    ExtensionMissing,
    SchemaBehind,
    ServerTooOld,
    SourceMessage,
)

__all__ = [
    "BotMemoryError",
    "ChatModel",
    "DatabaseUnavailable",
    "DatabaseUrlInvalid",
    "ExtensionMissing",
    "Gate",
    "ItemView",
    "JsonFormatter",
    "Membership",
    "Memory",
    "MemorySettings",
    "MemoryUnavailable",
    "MetricsUnavailable",
    "ModelError",
    "Requester",
    "SchemaBehind",
    "Scope",
    "ServerTooOld",
    "SettingsFileError",
    "SourceMessage",
    "ToolContext",
    "Turn",
]
