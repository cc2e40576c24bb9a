"""Drops a user's messages that come faster than one per `seconds` (a common host pattern).

`clock` is when "now" is (seconds, `time.monotonic` by default): a test passes one it moves
itself, so whether two messages are "too fast" does not depend on how loaded the machine is."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import Message, TelegramObject


class ThrottlingMiddleware(BaseMiddleware):
    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.last: dict[int, float] = {}

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        user = event.from_user if isinstance(event, Message) else None
        if user is not None:
            now = self.clock()
            last = self.last.get(user.id)
            if last is not None and now - last < self.seconds:
                return None  # dropped: no handler runs
            self.last[user.id] = now
        return await handler(event, data)
