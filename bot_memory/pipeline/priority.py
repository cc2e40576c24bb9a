"""Requests first: a worker in the bot's process steps aside while messages are handled.

The worker and the handlers share one event loop (and, on a small machine, the same cores as
PostgreSQL). Every statement the worker starts while a message is being handled lengthens
that message's turn. So the worker's store waits (`step_aside`, before each statement or
acquire: storage's GatedPool), until no message is in flight, but never longer than a short
bound: a steady stream of messages slows the worker, it never stops it. A worker in a process
of its own is not gated.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


class RequestsFirst:
    def __init__(self, max_wait_seconds: float) -> None:
        self.max_wait = max_wait_seconds
        self._in_flight = 0
        self._quiet = asyncio.Event()
        self._quiet.set()

    @contextlib.contextmanager
    def handling(self) -> Any:
        """Around the handling of one message."""
        self._in_flight += 1
        self._quiet.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._quiet.set()

    async def step_aside(self) -> None:
        if self._in_flight == 0 or self.max_wait <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._quiet.wait(), self.max_wait)
