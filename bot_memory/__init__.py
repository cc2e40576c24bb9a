"""bot-memory: long-term, source-linked conversation memory for aiogram 3 Telegram bots.

from bot_memory import Memory, MemorySettings, Turn
"""

from bot_memory.access import ItemView, Membership, Requester
from bot_memory.logs import JsonFormatter
from bot_memory.service import Memory, MemoryUnavailable
from bot_memory.settings import MemorySettings
from bot_memory.turn import Turn

__all__ = [
    "ItemView",
    "JsonFormatter",
    "Membership",
    "Memory",
    "MemorySettings",
    "MemoryUnavailable",
    "Requester",
    "Turn",
]
