"""Chat-facing features, one router each."""

from typing import Any

from aiogram import Router
from aiogram.filters import Filter
from aiogram.types import Message

from bot_memory_aiogram.middleware.memory import MemoryMiddleware
from bot_memory_aiogram.routers.agent import agent_router
from bot_memory_aiogram.routers.chat_events import chat_events_router
from bot_memory_aiogram.routers.miniapp import miniapp_router
from bot_memory_aiogram.routers.outage import outage_router
from bot_memory_aiogram.routers.requests import recognized, requests_router
from bot_memory_aiogram.routers.screen import fallback_router, screen_router


def get_routers(
    middleware: MemoryMiddleware,
    *,
    reference_agent: bool = False,
    requests_in_states: bool = False,
) -> list[Router]:
    """Fresh routers (a router can be attached to one parent only)."""
    routers = [
        chat_events_router(middleware),
        outage_router(reference_agent=reference_agent),
        requests_router(in_states=requests_in_states),
        screen_router(middleware),
        miniapp_router(middleware),
    ]
    routers.append(fallback_router())  # presses on memory's messages nothing above took
    if reference_agent:
        routers.append(agent_router())
    return routers


class ForMemory(Filter):
    """Passes a message one of memory's routers could take, so that anything else (most of a
    group's traffic, and most of what is said to the bot) costs one check instead of a pass
    through every router: a directed message that asks for a memory action (read here once and
    handed on) or any directed one when the reference agent answers them; a command (/memory,
    the Mini App's /start links); one held while the database is away (the outage notice); a
    service message memory follows (a group upgrade, the auto-delete timer). A router that takes
    other messages adds them here.
    """

    def __init__(self, *, reference_agent: bool) -> None:
        self.reference_agent = reference_agent

    async def __call__(
        self,
        message: Message,
        memory_source: Any = None,
        memory_unavailable: bool = False,
    ) -> bool | dict[str, Any]:
        if message.migrate_to_chat_id or message.migrate_from_chat_id:
            return True
        if message.message_auto_delete_timer_changed is not None:
            return True
        if memory_source is None and not memory_unavailable:
            return (message.text or "").startswith("/")  # e.g. /start from a Mini App link
        request = recognized(message)
        if (
            request is None
            and not self.reference_agent
            and not (message.text or message.caption or "").startswith("/")
        ):
            return False
        return {"memory_request": request, "memory_request_read": True}


def memory_router(routers: list[Router], *, reference_agent: bool = False) -> Router:
    """One parent for memory's routers: messages pass `ForMemory` once; other updates (button
    presses, member changes) reach every router as before."""
    parent = Router(name="bot_memory")
    parent.message.filter(ForMemory(reference_agent=reference_agent))
    parent.include_routers(*routers)
    return parent


__all__ = ["agent_router", "chat_events_router", "get_routers", "requests_router"]
