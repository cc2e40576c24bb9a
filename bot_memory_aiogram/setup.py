"""Wire bot-memory into a host's Dispatcher."""

from __future__ import annotations

from typing import Any

from aiogram import Dispatcher

from bot_memory.service import Memory
from bot_memory_aiogram.middleware import MemoryMiddleware, WorkspaceResolver
from bot_memory_aiogram.routers import get_routers

# Updates memory needs. Hosts that pass an explicit allowed_updates list must include these;
# chat_member updates also require the bot to be an admin.
ALLOWED_UPDATES = [
    "message",
    "edited_message",
    "callback_query",
    "chat_member",
    "my_chat_member",
    "deleted_business_messages",
]


def setup(
    dp: Dispatcher,
    memory: Memory,
    *,
    workspace: WorkspaceResolver | None = None,
    reference_agent: bool = False,
) -> MemoryMiddleware:
    """Outer middleware + routers + worker hooks.

    `workspace(chat, user)`: the workspace a chat's memory lives in, or None when memory does
    not apply to it (default: BOT_MEMORY_WORKSPACE if set, else one per group and one per
    user's private chat).

    The Memory object goes into workflow data now, once: values put there in a startup hook can
    be shadowed during polling. Startup and shutdown only start and stop its worker.
    """
    dp["memory"] = memory
    middleware = MemoryMiddleware(memory, workspace)
    dp.update.outer_middleware(middleware)
    for router in get_routers(middleware, reference_agent=reference_agent):
        dp.include_router(router)

    async def start_worker(*_args: Any, **_kwargs: Any) -> None:
        if memory.settings.run_worker:
            memory.worker.start()

    async def stop_worker(*_args: Any, **_kwargs: Any) -> None:
        await memory.worker.stop()

    dp.startup.register(start_worker)
    dp.shutdown.register(stop_worker)
    return middleware
