"""The one outer middleware on dp.update: resolve the scope, record directed messages."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from aiogram import BaseMiddleware, Bot
from aiogram.types import Message, TelegramObject, Update

from bot_memory.scopes import resolve_scope
from bot_memory.service import Memory
from bot_memory_aiogram.middleware.directed import is_directed

log = structlog.get_logger(__name__)

SCOPE_KEY = "memory_scope"
SOURCE_KEY = "memory_source"


class MemoryMiddleware(BaseMiddleware):
    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        ctx = data.get("event_context")
        bot: Bot = data["bot"]
        chat = getattr(ctx, "chat", None)
        scope = resolve_scope(
            workspace=self._memory.settings.workspace,
            bot_id=bot.id,
            chat_type=chat.type if chat else None,
            chat_id=chat.id if chat else None,
            user_id=getattr(ctx, "user_id", None),
            thread_id=getattr(ctx, "thread_id", None),
        )
        data[SCOPE_KEY] = scope
        if scope is not None and isinstance(event, Update):
            try:
                if event.message is not None:
                    source = await self._record(event.message, scope, bot)
                    if source is not None:
                        data[SOURCE_KEY] = source
                elif event.edited_message is not None and event.edited_message.text:
                    edited = event.edited_message
                    await self._memory.record_edit(
                        edited.chat.id, edited.message_id, edited.text or ""
                    )
            except Exception:  # memory must never take the host's bot down
                log.exception("memory.record_failed", update_id=event.update_id)
        return await handler(event, data)

    async def _record(self, message: Message, scope: Any, bot: Bot) -> Any:
        if message.from_user is None or message.from_user.is_bot:
            return None
        me = await bot.me()
        if not is_directed(message, bot_id=bot.id, bot_username=me.username):
            return None  # ordinary group traffic is never stored
        text = message.text or message.caption
        if not text:
            log.info(
                "memory.skip_non_text",
                chat_id=message.chat.id,
                message_id=message.message_id,
                content_type=message.content_type,
            )
            return None
        return await self._memory.record(
            scope,
            text=text,
            speaker_id=message.from_user.id,
            thread_id=(message.message_thread_id or 0) if message.is_topic_message else 0,
            telegram_message_id=message.message_id,
            language=message.from_user.language_code,
        )
