"""Small pieces the routers share: the directed-message filter and replies."""

from __future__ import annotations

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.filters import Filter
from aiogram.types import Message

from bot_memory.logs import get_logger
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from bot_memory_aiogram.i18n import pick_language

log = get_logger(__name__)

TELEGRAM_TEXT_LIMIT = 4096


class Directed(Filter):
    """Passes messages the middleware recorded as directed at the bot."""

    async def __call__(self, message: Message, memory_source: SourceMessage | None = None) -> bool:
        return memory_source is not None


# Filters memory checks on every message are coroutines: aiogram runs a plain callable (a
# magic F filter included) in a worker thread, a thread hop per message per filter.


async def has_text(message: Message) -> bool:
    return bool(message.text or message.caption)


async def chat_moved(message: Message) -> bool:
    return bool(message.migrate_to_chat_id or message.migrate_from_chat_id)


async def timer_changed(message: Message) -> bool:
    return message.message_auto_delete_timer_changed is not None


def clip(text: str) -> str:
    return text if len(text) <= TELEGRAM_TEXT_LIMIT else text[: TELEGRAM_TEXT_LIMIT - 1] + "…"


def language_of(message: Message, fallback: str | None = None) -> str:
    code = message.from_user.language_code if message.from_user else None
    return pick_language(code, fallback)


def in_topic(message: Message) -> bool:
    """Replies about switching say "in this topic" in forum groups."""
    return bool(message.chat.is_forum)


async def deliver(
    message: Message,
    bot: Bot,
    memory: Memory,
    source: SourceMessage,
    text: str,
    *,
    failed: str | None = None,
) -> None:
    """Send the reply, then close the request with what really happened.

    A reply that was delivered makes the request succeeded (its text becomes the assistant
    message) unless `failed` says why the request failed anyway; a reply that could not be
    delivered fails it, so no scope waits on it.
    """
    try:
        sent = await message.answer(clip(text))
    except TelegramAPIError as exc:
        await memory.finish(source, status="failed", error=f"delivery failed: {exc}"[:500])
        raise
    if failed is not None:
        await memory.finish(source, status="failed", error=failed[:500])
        return
    await memory.finish(
        source,
        status="succeeded",
        answer_text=sent.text or text,
        answer_telegram_id=sent.message_id,
        bot_id=bot.id,
    )
