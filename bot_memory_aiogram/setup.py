"""Wire bot-memory into a host's Dispatcher."""

from __future__ import annotations

from typing import Any

from aiogram import Dispatcher

from bot_memory.service import Memory
from bot_memory_aiogram.middleware import MemoryMiddleware
from bot_memory_aiogram.routers import get_routers

# Updates memory needs. Hosts that pass an explicit allowed_updates list must include these;
# chat_member updates also require the bot to be an admin.
ALLOWED_UPDATES = ["message", "edited_message", "callback_query", "chat_member", "my_chat_member"]


def setup(dp: Dispatcher, memory: Memory, *, reference_agent: bool = False) -> None:
    """Outer middleware + routers + worker hooks. Call before including catch-all routers.

    The Memory object goes into workflow data now, once: values put there in a startup hook can
    be shadowed during polling. Startup and shutdown only start and stop its worker.
    """
    dp["memory"] = memory
    dp.update.outer_middleware(MemoryMiddleware(memory))
    for router in get_routers(reference_agent=reference_agent):
        dp.include_router(router)

    async def start_worker(*_args: Any, **_kwargs: Any) -> None:
        memory.worker.start()

    async def stop_worker(*_args: Any, **_kwargs: Any) -> None:
        await memory.worker.stop()

    dp.startup.register(start_worker)
    dp.shutdown.register(stop_worker)
