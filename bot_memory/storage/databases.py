"""Databases of their own on a PostgreSQL server: created, migrated, cloned from a template and
dropped (the test kit's per-test databases: `bot_memory_aiogram.testing.databases` decides
which, when and how they are named).

The role in the URL needs CREATEDB; the database the URL names is only connected to, to issue
CREATE DATABASE and DROP DATABASE (nothing in it is read or written).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import asyncpg

from bot_memory.errors import BotMemoryError
from bot_memory.storage.database import apply_migrations


class TemplateMissing(BotMemoryError, LookupError):
    """The template to clone does not exist (gone with a server started afresh)."""


@dataclass(frozen=True)
class NotDropped:
    """Why a database was not dropped: the server was not `reached` (stopped already, say), or
    it refused."""

    reached: bool
    error: str


class Databases:
    """The databases of one server, through a connection to the database a URL names
    (`Databases.on(url)`)."""

    def __init__(self, admin: asyncpg.Connection) -> None:
        self._admin = admin

    @classmethod
    @asynccontextmanager
    async def on(cls, url: str) -> AsyncIterator[Databases]:
        """The server `url` names, connected to for the block."""
        admin = await asyncpg.connect(url)
        try:
            yield cls(admin)
        finally:
            await admin.close()

    async def create(self, name: str) -> None:
        """A new, empty database."""
        await self._admin.execute(f'CREATE DATABASE "{name}"')

    async def clone(self, name: str, template: str) -> None:
        """A new database, a copy of `template` (TemplateMissing: there is no such database)."""
        try:
            try:
                # FILE_COPY (PostgreSQL 15+): a plain copy of a small template, quicker than
                # WAL-logging
                await self._admin.execute(
                    f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY'
                )
            except asyncpg.PostgresSyntaxError:  # an older server: its only way is a file copy
                await self._admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        except asyncpg.InvalidCatalogNameError as exc:
            raise TemplateMissing(template) from exc


async def migrate_database(url: str) -> None:
    """Bring the schema of the database `url` names up to date (a template, made afresh)."""
    conn = await asyncpg.connect(url)
    try:
        await apply_migrations(conn)
    finally:
        await conn.close()


async def drop_database(url: str, name: str) -> NotDropped | None:
    """Drop a database if it is there, through the server `url` names; None when done (or it
    was not there), else why not."""
    try:
        admin = await asyncpg.connect(url, timeout=10)
    except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
        return NotDropped(reached=False, error=type(exc).__name__)
    try:
        try:  # FORCE (PostgreSQL 13+): a connection the test left open does not keep it
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except asyncpg.PostgresSyntaxError:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    except asyncpg.PostgresError as exc:
        return NotDropped(reached=True, error=str(exc))
    finally:
        await admin.close()
    return None
