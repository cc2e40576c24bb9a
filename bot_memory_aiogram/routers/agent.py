"""The reference agent's router: answers every other directed text message via the model."""

from __future__ import annotations

import structlog
from aiogram import Bot, F, Router
from aiogram.types import Message

from bot_memory.models.base import ModelError
from bot_memory.service import Memory
from bot_memory.store import SourceMessage
from bot_memory.tools import ToolContext
from bot_memory_aiogram.i18n import t
from bot_memory_aiogram.middleware.directed import message_flags
from bot_memory_aiogram.routers.common import Directed, deliver, is_chat_admin, language_of

log = structlog.get_logger(__name__)


def agent_router() -> Router:
    router = Router(name="bot_memory.agent")
    router.message.filter(Directed())
    router.message.register(on_directed_message, F.text | F.caption)
    return router


async def on_directed_message(
    message: Message, bot: Bot, memory: Memory, memory_source: SourceMessage
) -> None:
    await memory.begin(memory_source)
    quoted, forwarded = message_flags(message)
    is_admin = False
    if not memory_source.scope.is_private:
        is_admin = await is_chat_admin(bot, message)
    ctx = ToolContext(source=memory_source, quoted=quoted, forwarded=forwarded, is_admin=is_admin)
    try:
        answer = await memory.agent.answer(ctx)
    except ModelError as exc:
        log.warning("memory.answer_failed", error=str(exc), outcome=exc.outcome)
        text = t(language_of(message), "memory-model-unavailable")
        await deliver(message, bot, memory, memory_source, text, failed=str(exc))
        return
    await deliver(message, bot, memory, memory_source, answer.text)
