"""Requests that end with nothing to keep, closed in batches off the handler's path.

Every directed message nothing answered (and every failed one) is closed with a status; doing
that while the handler returns costs each message a second statement. Closings queue here
instead and are written together, one statement for all that arrived within a short linger, by
a task of their own. While the database is away a batch is tried again a few times; a closing
lost with its process (a crash before the write) is not lost to memory either: a request left
open is closed by the request timeout (`request_timeout_seconds`).

Closing is once, so the closer also remembers the requests this process closed lately: the
adapter closes a request after its handler even when the handler (the reference agent's
delivery, a host's `finish`) closed it already, and that second closing needs no statement.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict

from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.storage import Closing, Store, is_connection_error

log = get_logger(__name__)

# Requests closed here that are remembered: far more than are handled at once.
REMEMBERED_CLOSINGS = 4096


class RequestCloser:
    def __init__(
        self,
        store: Store,
        *,
        idle_seconds: float,
        linger_seconds: float,
        retry_pauses: tuple[float, ...] = (0.5, 2.0),
        metrics: Metrics | None = None,
    ) -> None:
        self._metrics = metrics or Metrics(enabled=False)
        self._store = store
        self._retry_pauses = retry_pauses
        self._idle_seconds = idle_seconds
        self._linger = linger_seconds
        self._queue: list[Closing] = []
        self._task: asyncio.Task[None] | None = None
        self._hurry = asyncio.Event()  # flush(): write what is queued without lingering
        self._closed: OrderedDict[int, None] = OrderedDict()

    def closed_here(self, request_id: int) -> bool:
        """This process's closing of the request reached the database lately (a queued one
        has not yet: a finish after it still goes, and the first to arrive counts)."""
        return request_id in self._closed

    def note_closed(self, request_id: int) -> None:
        self._closed[request_id] = None
        if len(self._closed) > REMEMBERED_CLOSINGS:
            self._closed.popitem(last=False)

    def close_later(self, closing: Closing) -> None:
        self._queue.append(closing)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="bot_memory.request_closer")

    async def flush(self) -> None:
        """Return once every closing queued before this call is written (or failed)."""
        while self._task is not None and not self._task.done():
            self._hurry.set()
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)

    @property
    def pending(self) -> int:
        return len(self._queue)

    async def _run(self) -> None:
        while self._queue:
            if self._linger > 0 and not self._hurry.is_set():
                # Messages keep arriving while this waits: their closings join this statement.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._hurry.wait(), self._linger)
            batch, self._queue = self._queue, []
            await self._write(batch)
        self._hurry.clear()

    async def _write(self, batch: list[Closing]) -> None:
        """One statement; while the database is away, again a few times; a batch refused for
        another reason (one bad row) row by row, so the others still close."""
        for attempt, pause in enumerate((*self._retry_pauses, None)):
            try:
                await self._store.requests.close_unanswered(batch, idle_seconds=self._idle_seconds)
                for closing in batch:
                    self.note_closed(closing.request_id)
                return
            except Exception as exc:
                if not is_connection_error(exc):
                    break
                self._metrics.database_error("close")
                if pause is None:  # the request timeout closes them (as lost)
                    log.warning("memory.close_deferred", requests=len(batch), attempts=attempt + 1)
                    return
                await asyncio.sleep(pause)
        if len(batch) == 1:
            log.warning("memory.close_failed", request=batch[0].request_id)
            return
        for closing in batch:
            await self._write([closing])
