"""Ingress: the outer middleware that resolves scopes and records directed messages."""

from bot_memory_aiogram.middleware.directed import is_directed, message_flags
from bot_memory_aiogram.middleware.memory import SCOPE_KEY, SOURCE_KEY, MemoryMiddleware

__all__ = ["SCOPE_KEY", "SOURCE_KEY", "MemoryMiddleware", "is_directed", "message_flags"]
