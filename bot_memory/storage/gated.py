"""A pool whose every statement and acquire first waits for its turn: the worker in the bot's
process steps aside while messages are handled (pipeline/priority.py says when)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import asyncpg


class GatedPool:
    """A pool each use of which waits for its turn first (the rest passes through)."""

    def __init__(self, pool: asyncpg.Pool, wait: Callable[[], Awaitable[None]]) -> None:
        self._pool = pool
        self._wait = wait

    @contextlib.asynccontextmanager
    async def acquire(self, **kwargs: Any) -> AsyncIterator[asyncpg.Connection]:
        await self._wait()
        async with self._pool.acquire(**kwargs) as conn:
            yield conn

    async def execute(self, *args: Any, **kwargs: Any) -> Any:
        await self._wait()
        return await self._pool.execute(*args, **kwargs)

    async def executemany(self, *args: Any, **kwargs: Any) -> Any:
        await self._wait()
        return await self._pool.executemany(*args, **kwargs)

    async def fetch(self, *args: Any, **kwargs: Any) -> Any:
        await self._wait()
        return await self._pool.fetch(*args, **kwargs)

    async def fetchrow(self, *args: Any, **kwargs: Any) -> Any:
        await self._wait()
        return await self._pool.fetchrow(*args, **kwargs)

    async def fetchval(self, *args: Any, **kwargs: Any) -> Any:
        await self._wait()
        return await self._pool.fetchval(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)
