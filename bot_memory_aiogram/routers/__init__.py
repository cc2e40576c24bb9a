"""Chat-facing features, one router each."""

from aiogram import Router

from bot_memory_aiogram.middleware.memory import MemoryMiddleware
from bot_memory_aiogram.routers.agent import agent_router
from bot_memory_aiogram.routers.chat_events import chat_events_router
from bot_memory_aiogram.routers.miniapp import miniapp_router
from bot_memory_aiogram.routers.outage import outage_router
from bot_memory_aiogram.routers.requests import requests_router
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


__all__ = ["agent_router", "chat_events_router", "get_routers", "requests_router"]
