"""Directed messages that arrive while PostgreSQL is away: buffered in a bounded buffer in the
process, and recorded oldest first once the database answers again.

The handler that got the message has already answered without memory, so a buffered message's
request is closed as unanswered when it is finally recorded: it is history, never a request
still waiting for its answer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from bot_memory.logs import get_logger
from bot_memory.scopes import Scope
from bot_memory.storage import SourceMessage, is_connection_error

log = get_logger(__name__)

FIRST_PAUSE_SECONDS = 0.5  # between tries while the database is still away, doubling
LAST_PAUSE_SECONDS = 5.0


@dataclass(frozen=True)
class Buffered:
    """A directed message recorded while the database was away."""

    scope: Scope
    text: str
    speaker_id: int
    thread_id: int
    telegram_message_id: int | None
    language: str | None
    sent_at: datetime


Record = Callable[[Buffered], Awaitable[SourceMessage | None]]
Close = Callable[[SourceMessage], Awaitable[None]]


class OutageBuffer:
    """At most `limit` buffered messages; past it one is skipped with a log line, never queued."""

    def __init__(self, limit: int, record: Record, close_unanswered: Close) -> None:
        self.limit = limit
        self._record = record
        self._close = close_unanswered
        self._waiting: deque[Buffered] = deque()
        self._drainer: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._waiting)

    def add(self, waiting: Buffered, exc: BaseException) -> bool:
        """Keep the message for later; False when the buffer is full and it is skipped."""
        if len(self._waiting) >= self.limit:
            log.warning(
                "memory.ingress_skipped",
                reason="database unavailable and the buffer is full",
                chat_id=waiting.scope.chat_id,
                message_id=waiting.telegram_message_id,
            )
            return False
        self._waiting.append(waiting)
        log.warning("memory.ingress_buffered", buffered=len(self._waiting), error=repr(exc)[:200])
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain(), name="bot-memory-ingress-drain")
        return True

    def cancel(self) -> None:
        if self._drainer is not None:
            self._drainer.cancel()

    async def _drain(self) -> None:
        pause = FIRST_PAUSE_SECONDS
        while self._waiting:
            first = self._waiting[0]
            try:
                source = await self._record(first)
                if source is not None:
                    await self._close(source)
            except Exception as exc:
                if not is_connection_error(exc):
                    log.warning("memory.ingress_dropped", error=repr(exc)[:200])
                    self._waiting.popleft()
                    continue
                await asyncio.sleep(pause)
                pause = min(pause * 2, LAST_PAUSE_SECONDS)
                continue
            self._waiting.popleft()
            pause = FIRST_PAUSE_SECONDS
        log.info("memory.ingress_recovered")
