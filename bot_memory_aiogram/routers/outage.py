"""While PostgreSQL is away: memory requests get a clear notice instead of going unanswered,
and (with the reference agent) so do other directed messages. Both are recorded once the
database is back; a host's own handlers still run for everything else."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Filter
from aiogram.types import Message

from bot_memory_aiogram.i18n import Texts
from bot_memory_aiogram.routers.common import clip, has_text
from bot_memory_aiogram.routers.requests import RecognizedRequest


class MemoryUnavailableNow(Filter):
    async def __call__(self, message: Message, memory_unavailable: bool = False) -> bool:
        return memory_unavailable


def outage_router(*, reference_agent: bool) -> Router:
    router = Router(name="bot_memory.outage")
    router.message.filter(MemoryUnavailableNow())
    router.message.register(notice, RecognizedRequest())
    if reference_agent:
        router.message.register(notice, has_text)
    return router


async def notice(message: Message, memory_texts: Texts) -> None:
    text = memory_texts(memory_texts.language(message), "memory-db-unavailable")
    await message.answer(clip(text))
