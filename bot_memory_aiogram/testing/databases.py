"""A database of its own for each `running_bot` on a configured PostgreSQL server.

A test run reuses one server (DATABASE_URL or TEST_DATABASE_URL), but never one database: the
emulator's message IDs start at 1 in every test, so a database kept from an earlier test holds
"the same" messages already and memory would drop each of them as a redelivery. Each
`running_bot` therefore gets a database cloned from a migrated template (created once per
process, on first use, and dropped when the process exits) and drops it on the way out.

The role in the URL needs CREATEDB; the database the URL names is only connected to, to issue
CREATE DATABASE and DROP DATABASE (nothing in it is read or written).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import uuid
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from urllib.parse import urlsplit, urlunsplit

from bot_memory.logs import get_logger
from bot_memory.storage import Databases, TemplateMissing, drop_database, migrate_database

log = get_logger(__name__)

PREFIX = "bm_kit_"  # every database the kit creates is named so: leftovers are easy to find

# server (the URL without its database) -> (a URL to reach it, the template this process made)
_templates: dict[str, tuple[str, str]] = {}
# one template build at a time per event loop (tests may run one loop each)
_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


def with_database(url: str, name: str) -> str:
    """The same server and options, another database."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def _server(url: str) -> str:
    return with_database(url, "")


@asynccontextmanager
async def own_database(url: str) -> AsyncIterator[str]:
    """A fresh, migrated database on the server `url` names, for the block; dropped after."""
    name = f"{PREFIX}{uuid.uuid4().hex[:16]}"
    template = await _template(url)
    async with Databases.on(url) as admin:
        try:
            await admin.clone(name, template)
        except TemplateMissing:  # the template went (a server started afresh)
            _templates.pop(_server(url), None)
            template = await _template(url)
            await admin.clone(name, template)
    log.debug("testing.database_created", database=name, template=template)
    try:
        yield with_database(url, name)
    finally:
        await _drop(url, name)


async def _template(url: str) -> str:
    server = _server(url)
    loop = asyncio.get_running_loop()
    lock = _locks.setdefault(loop, asyncio.Lock())
    async with lock:
        found = _templates.get(server)
        if found is not None:
            return found[1]
        name = f"{PREFIX}template_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        async with Databases.on(url) as admin:
            await admin.create(name)
        try:
            await migrate_database(with_database(url, name))
        except BaseException:
            await _drop(url, name)
            raise
        if not _templates:
            atexit.register(_drop_templates)
        _templates[server] = (url, name)
        return name


async def _drop(url: str, name: str, *, quiet: bool = False) -> None:
    """Drop a database the kit made; a server already gone (stopped by the suite) is fine."""
    failed = await drop_database(url, name)
    if failed is not None and (failed.reached or not quiet):
        log.warning("testing.database_not_dropped", database=name, error=failed.error)


def _drop_templates() -> None:
    """At exit: the templates this process made (best effort; the server may be gone)."""

    async def drop_all() -> None:
        for url, name in list(_templates.values()):
            with suppress(Exception):
                await _drop(url, name, quiet=True)
        _templates.clear()

    with suppress(Exception):
        asyncio.run(drop_all())
