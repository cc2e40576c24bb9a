"""The statements a path sends, counted on the real connections of a pool: asyncpg's query
logger sees every statement that reaches the server, BEGIN and COMMIT included."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

# asyncpg's own: the first time a connection meets a type (an array of bigint, say) it looks
# the type up, with JIT off around it. Not the path's statements.
_INTROSPECTION = re.compile(
    r"^WITH RECURSIVE typeinfo_tree|^SELECT (current_setting|set_config)\('jit'"
)


class CountingPool:
    """The real pool, noting each statement its connections run (stands in for `Store.pool`)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.statements: list[str] = []

    def _note(self, record: Any) -> None:
        query = " ".join(record.query.split())
        if not _INTROSPECTION.search(query):
            self.statements.append(query)

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[asyncpg.Connection]:
        async with self.pool.acquire() as conn:
            conn.add_query_logger(self._note)
            try:
                yield conn
            finally:
                conn.remove_query_logger(self._note)

    async def execute(self, *args: Any) -> Any:
        async with self.acquire() as conn:
            return await conn.execute(*args)

    async def fetch(self, *args: Any) -> Any:
        async with self.acquire() as conn:
            return await conn.fetch(*args)

    async def fetchrow(self, *args: Any) -> Any:
        async with self.acquire() as conn:
            return await conn.fetchrow(*args)

    async def fetchval(self, *args: Any) -> Any:
        async with self.acquire() as conn:
            return await conn.fetchval(*args)

    async def taken(self) -> list[str]:
        """The statements sent since the last call, each by what it calls or begins with."""
        for _ in range(3):  # the logger reports on a later turn of the loop
            await asyncio.sleep(0)
        taken, self.statements = self.statements, []
        return [_name(s) for s in taken]


def _name(statement: str) -> str:
    called = re.search(r"\b(bm_[a-z0-9_]+)\(", statement)
    if called:
        return called.group(1)
    return " ".join(statement.rstrip(";").split()[:2])
