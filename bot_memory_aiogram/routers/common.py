"""Small pieces both routers use: the directed-message filter, admin checks, replies."""

from __future__ import annotations

import structlog
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.filters import Filter
from aiogram.types import Message

from bot_memory.store import SourceMessage
from bot_memory_aiogram.i18n import pick_language

log = structlog.get_logger(__name__)

TELEGRAM_TEXT_LIMIT = 4096
ADMIN_STATUSES = frozenset({"creator", "administrator"})


class Directed(Filter):
    """Passes messages the middleware recorded as directed at the bot."""

    async def __call__(self, message: Message, memory_source: SourceMessage | None = None) -> bool:
        return memory_source is not None


async def is_chat_admin(bot: Bot, message: Message) -> bool:
    """Group owner/admin status, asked of Telegram at the time of the request."""
    if message.chat.type == "private" or message.from_user is None:
        return False
    try:
        member = await bot.get_chat_member(message.chat.id, message.from_user.id)
    except TelegramAPIError as exc:
        log.warning("memory.admin_check_failed", chat_id=message.chat.id, error=str(exc))
        return False
    return member.status in ADMIN_STATUSES


def clip(text: str) -> str:
    return text if len(text) <= TELEGRAM_TEXT_LIMIT else text[: TELEGRAM_TEXT_LIMIT - 1] + "…"


def language_of(message: Message, fallback: str | None = None) -> str:
    code = message.from_user.language_code if message.from_user else None
    return pick_language(code, fallback)
