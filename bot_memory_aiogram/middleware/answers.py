"""Knowing what the bot answered without asking the host.

A client-session middleware on the bot sees every Bot API call; while a directed message is
being handled, a context variable ties the messages the bot sends to that chat to the message's
request. When the handler returns, the update middleware closes the request with what happened:
succeeded with the answer (several sends become one answer), failed when the handler raised,
unanswered when nothing handled it or nothing was sent.

A handler may also return its answer (`return message.answer("...")`): aiogram sends it after
the handler, through the session (polling, webhooks handled in the background: the capture sees
it go and closes the request with the message Telegram returns) or as the webhook's HTTP
response (never seen here: once a grace period has passed without it going through the session,
the request is closed with the method's text). The grace covers what may run between the
handler and the send: a host's middleware finishing its work, a webhook answer moved to the
background because it was slow. At shutdown every returned answer still within its grace is
closed at once with its text (`settle_returned`, from setup()'s shutdown hook).

Handlers can say more with aiogram flags, `@router.message(..., flags={"memory": ...})`:
"skip" (not memory-worthy: never a conversation source), "keep_open" (the host answers later
and calls memory.finish itself), "source" (a command whose exchange should become memory).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
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

from bot_memory_aiogram.middleware.response_types import keep_response_type

FLAG = "memory"  # handler flag: "skip" | "keep_open" | "source"


@dataclass
class Capture:
    """What the bot sent to one chat while one directed message was handled."""

    chat_id: int
    sent: list[Message] = field(default_factory=list)
    flag: str | None = None
    returned_text: str | None = None  # a returned answer that went in a webhook response

    def answer_text(self) -> str | None:
        parts = [m.text or m.caption for m in self.sent if m.text or m.caption]
        parts.append(self.returned_text)
        return "\n\n".join(p for p in parts if p) or None

    @property
    def answered(self) -> bool:
        return bool(self.sent) or self.returned_text is not None


Close = Callable[[str | None], Coroutine[Any, Any, None]]  # close(failed error type or None)


@dataclass
class _Returned:
    method: TelegramMethod[Any]
    capture: Capture
    close: Close
    seen: bool = False
    timer: asyncio.TimerHandle | None = None


# Answers handlers returned, until aiogram sends them: id(method) -> what closes the request.
_expected: dict[int, _Returned] = {}
_closing: set[asyncio.Task[None]] = set()


def returned_answer(result: object, capture: Capture) -> bool:
    """A handler returned a method that sends a message to the chat it answers."""
    return (
        isinstance(result, TelegramMethod)
        and getattr(result, "__returning__", None) is Message
        and str(getattr(result, "chat_id", None)) == str(capture.chat_id)
    )


def expect_returned(
    method: TelegramMethod[Any], capture: Capture, close: Close, *, grace_seconds: float
) -> None:
    entry = _Returned(method, capture, close)
    _expected[id(method)] = entry
    # Polling and background webhooks hand the method to the session right after the handler
    # (a host's middleware or a slow webhook's fallback a little later); a webhook that answers
    # in its HTTP response never does.
    entry.timer = asyncio.get_running_loop().call_later(grace_seconds, _not_through_session, entry)


async def settle_returned() -> None:
    """At shutdown: close every returned answer still waiting for its grace, with its text (a
    webhook that answered in its HTTP response and stops within the grace would otherwise
    leave its exchange open until the request timeout, and never memory), then wait for
    those closings and the ones already under way."""
    for entry in list(_expected.values()):
        _not_through_session(entry)
    while _closing:
        await asyncio.gather(*list(_closing), return_exceptions=True)


def _not_through_session(entry: _Returned) -> None:
    if entry.seen:
        return
    entry.seen = True  # closed once: by its timer or at shutdown, whichever comes first
    if entry.timer is not None:
        entry.timer.cancel()
    _expected.pop(id(entry.method), None)
    text = getattr(entry.method, "text", None) or getattr(entry.method, "caption", None)
    entry.capture.returned_text = text if isinstance(text, str) else ""
    task = asyncio.create_task(entry.close(None))
    _closing.add(task)
    task.add_done_callback(_closing.discard)


current_capture: ContextVar[Capture | None] = ContextVar("bot_memory_capture", default=None)


class AnswerCapture(BaseRequestMiddleware):
    """Registered on the bot's session once; records the messages sent while a capture runs
    (and keeps aiogram's response class for each method alive)."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        keep_response_type(method)
        entry = _expected.pop(id(method), None)
        if entry is not None and entry.method is method:
            return await _send_returned(entry, make_request, bot, method)
        # aiogram hands the parsed result through this chain (a Message for sendMessage).
        result: Any = await make_request(bot, method)
        capture = current_capture.get()
        if capture is not None:
            sent = result if isinstance(result, list) else [result]
            capture.sent += [
                m for m in sent if isinstance(m, Message) and m.chat.id == capture.chat_id
            ]
        return result  # type: ignore[no-any-return]


async def _send_returned(
    entry: _Returned,
    make_request: NextRequestMiddlewareType[TelegramType],
    bot: Bot,
    method: TelegramMethod[TelegramType],
) -> Response[TelegramType]:
    entry.seen = True
    try:
        result: Any = await make_request(bot, method)
    except BaseException as exc:
        await entry.close(type(exc).__name__)  # Telegram refused it: the request failed
        raise
    if isinstance(result, Message):
        entry.capture.sent.append(result)
    await entry.close(None)
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
