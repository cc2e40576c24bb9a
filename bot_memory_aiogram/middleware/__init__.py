"""Ingress: the outer middleware that resolves scopes and records directed messages."""

from bot_memory_aiogram.middleware.answers import FLAG, HandlerFlags
from bot_memory_aiogram.middleware.directed import (
    is_directed,
    message_flags,
    replied_to,
    requester_of,
)
from bot_memory_aiogram.middleware.memory import (
    DIRECTED_KEY,
    GATE_KEY,
    RECORDED_KEY,
    SCOPE_KEY,
    SOURCE_KEY,
    TURN_KEY,
    UNAVAILABLE_KEY,
    MemoryMiddleware,
    WorkspaceResolver,
    member_lookup,
)

__all__ = [
    "DIRECTED_KEY",
    "FLAG",
    "GATE_KEY",
    "RECORDED_KEY",
    "SCOPE_KEY",
    "SOURCE_KEY",
    "TURN_KEY",
    "UNAVAILABLE_KEY",
    "HandlerFlags",
    "MemoryMiddleware",
    "WorkspaceResolver",
    "is_directed",
    "member_lookup",
    "message_flags",
    "replied_to",
    "requester_of",
]
