"""Wire bot-memory into a host's Dispatcher."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aiogram import Bot, Dispatcher, Router

from bot_memory.errors import BotMemoryError
from bot_memory.logs import get_logger
from bot_memory.service import Memory
from bot_memory_aiogram.commands import set_commands
from bot_memory_aiogram.i18n import LanguageResolver, Texts
from bot_memory_aiogram.middleware import HandlerFlags, MemoryMiddleware, WorkspaceResolver
from bot_memory_aiogram.middleware.answers import settle_returned
from bot_memory_aiogram.middleware.fairness import FairShare
from bot_memory_aiogram.routers import get_routers, memory_router

log = get_logger(__name__)

# The update types memory handles; `dp.resolve_used_update_types()` finds them too, since the
# library registers a handler for each. chat_member updates also need the bot to be an admin.
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
    requests_in_states: bool = False,
    locales: Iterable[Path | str] = (),
    language: LanguageResolver | None = None,
    close_on_shutdown: bool = False,
) -> MemoryMiddleware:
    """Outer middleware, routers and worker hooks. Call it wherever you like: the memory
    routers are placed before the host's own, so "remember ..." is never swallowed by a
    catch-all.

    workspace(chat, user): the workspace a chat's memory lives in, or None when memory does not
      apply there (default: BOT_MEMORY_WORKSPACE if set, else one per group and per private chat).
    reference_agent: answer every other directed message with the built-in agent.
    requests_in_states: also recognize memory requests inside FSM states (default: a form's
      input belongs to the form).
    locales: extra Fluent folders (<path>/<language>/*.ftl) overriding or adding replies.
    language(message): the reply language (default: the user's language_code).
    close_on_shutdown: close the Memory when the dispatcher shuts down.

    Raises TypeError for an un-awaited `Memory.open()`, and SetupTooLate inside a startup hook
    or once polling runs (what it registers is read before the hooks run: it would do nothing).
    """
    if inspect.iscoroutine(memory):
        memory.close()  # never started, so nothing to undo; and no "never awaited" warning
        raise TypeError(
            "setup() got a coroutine, not a Memory: await it first,"
            " `memory = await Memory.open(settings)`, then `setup(dp, memory)`"
        )
    if too_late := _too_late(dp):
        raise SetupTooLate(
            f"setup() was called {too_late}: the dispatcher read its routers, middlewares,"
            " update types and startup hooks before that, so memory would silently do nothing."
            " Open memory and call setup() before starting the dispatcher:"
            " `memory = await Memory.open(MemorySettings()); setup(dp, memory,"
            " close_on_shutdown=True); await dp.start_polling(bot)` (for webhooks: before"
            " the web app starts)"
        )
    dp["memory"] = memory
    dp["memory_texts"] = texts = Texts(locales, language)
    settings = memory.settings
    # First: a flooding chat is bounded before any database or model work.
    dp.update.outer_middleware(
        FairShare(
            texts,
            max_in_flight=settings.chat_max_in_flight,
            member_max_queued=settings.member_max_queued,
            member_max_in_flight=settings.member_max_in_flight,
            burst=settings.sender_burst_messages,
            per_second=settings.sender_messages_per_second,
            metrics=memory.metrics,
        )
    )
    dp["memory_middleware"] = middleware = MemoryMiddleware(memory, workspace)
    dp.update.outer_middleware(middleware)
    dp.message.middleware(HandlerFlags())
    ours = memory_router(
        get_routers(
            middleware, reference_agent=reference_agent, requests_in_states=requests_in_states
        ),
        reference_agent=reference_agent,
    )
    dp.include_router(ours)
    _first(dp, [ours])

    async def start_worker(*args: Any, **kwargs: Any) -> None:
        # Startup hooks get different arguments from polling, webhooks and emit_startup.
        bot = kwargs.get("bot") or next((a for a in args if isinstance(a, Bot)), None)
        if bot is not None:
            try:  # which model this bot's memory jobs are for (workers on another one leave them)
                await memory.serve_bot(bot.id)
            except Exception as exc:
                log.warning("memory.bot_model_unrecorded", error=repr(exc)[:200])
        if memory.settings.set_commands and bot is not None:
            await set_commands(bot, texts)
        if memory.settings.run_worker:
            memory.worker.start()

    async def stop_worker(*_args: Any, **_kwargs: Any) -> None:
        # Closings still being written go in first (the request timeout would close them as
        # lost otherwise).
        await settle_returned()
        await memory.flush()
        if close_on_shutdown:
            await memory.close()
        else:
            await memory.worker.stop()

    dp.startup.register(start_worker)
    dp.shutdown.register(stop_worker)
    return middleware


class SetupTooLate(BotMemoryError, RuntimeError):
    """setup() called where it cannot take effect: inside a startup hook, or while polling."""


def _too_late(dp: Dispatcher) -> str | None:
    """Where setup() is being called, if the dispatcher has started already."""
    frame = inspect.currentframe()
    while frame is not None:  # webhook apps and polling alike run the hooks in emit_startup
        if frame.f_code is Router.emit_startup.__code__ and frame.f_locals.get("self") is dp:
            return "inside a startup hook"
        frame = frame.f_back
    # start_polling holds this lock from before its startup hooks until polling ends.
    running = getattr(dp, "_running_lock", None)
    if running is not None and running.locked():
        return "after polling started"
    return None


def _first(dp: Dispatcher, ours: list[Router]) -> None:
    """Memory's routers go before any the host included already (in their own order)."""
    rest = [r for r in dp.sub_routers if r not in ours]
    dp.sub_routers[:] = [*ours, *rest]
