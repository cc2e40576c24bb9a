"""What a storage area's statements run on: the pool (each statement, or each method's own
transaction, on a connection of its own) or one connection inside the caller's transaction
(the workspace lock's, or a settlement's), so a method reads the same from either."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeAlias

import asyncpg

# A pool (or the worker's gated one, which passes for it), or a connection.
Handle: TypeAlias = asyncpg.Pool | asyncpg.Connection


@asynccontextmanager
async def connection(on: Handle) -> AsyncIterator[asyncpg.Connection]:
    """A connection to run several statements on: the pool's next one, or the one given."""
    if isinstance(on, asyncpg.Connection):  # a pool's connections pass for one too
        yield on
    else:
        async with on.acquire() as conn:
            yield conn


@asynccontextmanager
async def transaction(on: Handle) -> AsyncIterator[asyncpg.Connection]:
    """A transaction: on a connection of the pool, or a savepoint inside the caller's."""
    async with connection(on) as conn, conn.transaction():
        yield conn
