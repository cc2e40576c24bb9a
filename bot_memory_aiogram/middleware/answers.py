"""Knowing what the bot answered without asking the host.

A client-session middleware on the bot sees every Bot API call; while a directed message is
being handled, a context variable ties the messages the bot sends to that chat to the message's
request. When the handler returns, the update middleware closes the request with what happened:
succeeded with the answer (several sends become one answer), failed when the handler raised,
unanswered when nothing handled it or nothing was sent.

Handlers can say more with aiogram flags, `@router.message(..., flags={"memory": ...})`:
"skip" (not memory-worthy: never a conversation source), "keep_open" (the host answers later
and calls memory.finish itself), "source" (a command whose exchange should become memory).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.dispatcher.flags import get_flag
from aiogram.methods import TelegramMethod
from aiogram.methods.base import Response, TelegramType
from aiogram.types import Message, TelegramObject

FLAG = "memory"  # handler flag: "skip" | "keep_open" | "source"


@dataclass
class Capture:
    """What the bot sent to one chat while one directed message was handled."""

    chat_id: int
    sent: list[Message] = field(default_factory=list)
    flag: str | None = None

    def answer_text(self) -> str | None:
        parts = [m.text or m.caption for m in self.sent if m.text or m.caption]
        return "\n\n".join(p for p in parts if p) or None


current_capture: ContextVar[Capture | None] = ContextVar("bot_memory_capture", default=None)


class AnswerCapture(BaseRequestMiddleware):
    """Registered on the bot's session once; records the messages sent while a capture runs."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        # aiogram hands the parsed result through this chain (a Message for sendMessage).
        result: Any = await make_request(bot, method)
        capture = current_capture.get()
        if capture is not None:
            sent = result if isinstance(result, list) else [result]
            capture.sent += [
                m for m in sent if isinstance(m, Message) and m.chat.id == capture.chat_id
            ]
        return result  # type: ignore[no-any-return]


def watch(bot: Bot) -> None:
    """Put the capture on this bot's session (once)."""
    if not getattr(bot.session, "_bot_memory_watched", False):
        bot.session.middleware(AnswerCapture())
        bot.session._bot_memory_watched = True  # type: ignore[attr-defined]


class HandlerFlags(BaseMiddleware):
    """Inner middleware: the chosen handler's `memory` flag, for the closing decision."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        capture = current_capture.get()
        if capture is not None:
            flag = get_flag(data, FLAG)
            if flag is not None:
                capture.flag = str(flag)
        return await handler(event, data)
