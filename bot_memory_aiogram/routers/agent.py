"""The reference agent's router: answers every other directed text message via the model."""

from __future__ import annotations

from aiogram import Bot, Router
from aiogram.filters import StateFilter
from aiogram.types import Message

from bot_memory.agent import Turn
from bot_memory.logs import get_logger
from bot_memory.models import ModelError
from bot_memory.service import Memory
from bot_memory_aiogram.i18n import Texts
from bot_memory_aiogram.routers.common import Directed, deliver, has_text

log = get_logger(__name__)


def agent_router() -> Router:
    router = Router(name="bot_memory.agent.reference")
    router.message.filter(Directed(), StateFilter(None))
    router.message.register(on_directed_message, has_text)
    return router


async def on_directed_message(
    message: Message, bot: Bot, memory: Memory, memory_turn: Turn, memory_texts: Texts
) -> None:
    try:
        answer = await memory.agent.answer(memory_turn)
    except ModelError as exc:
        log.warning("memory.answer_failed", error=str(exc), outcome=exc.outcome)
        text = memory_texts(memory_texts.language(message), "memory-model-unavailable")
        await deliver(message, bot, memory, memory_turn.source, text, failed=str(exc))
        return
    await deliver(message, bot, memory, memory_turn.source, answer.text)
