"""Memory through PgBouncer in transaction mode (Debian's package, started here on a loopback
port in front of a PostgreSQL on TCP: TEST_DATABASE_URL when it is one, else a throwaway
Debian cluster). Each server connection serves whichever client has a transaction to run, so
nothing may depend on session state: prepared statements (BOT_MEMORY_DB_STATEMENT_CACHE_SIZE=0),
session advisory locks (migrations take a transaction's), SET without LOCAL.

Processes are real ones (`python -c`), started together, each bounded by a timeout so that a
hang fails instead of stalling the suite."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest

from bot_memory.intents import recognize
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage.database import latest_version, migrations
from tests.conftest import make_settings, with_database
from tests.support.helpers import MEMBER, view
from tests.support.pooler import Bouncer, Cluster, pgbouncer_binary, postgres_bin

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 6
ROUNDS = 2  # the first migrates everything, the second opens a current schema
START_SECONDS = 120  # one round of starts on a loaded two-core machine takes a few seconds

OPEN = """
import asyncio
from bot_memory.service import Memory

async def main():
    memory = await Memory.open()
    await memory.close()

asyncio.run(main())
"""

# A start that stops inside migration 005's transaction, holding the migration lock.
# Stalls between statements with migration 005's lock held (as a process killed mid-deploy
# would): the server sees the client go at once. A server-side pg_sleep would keep the lock
# until it returned, whatever became of the client.
SLOW_MIGRATION = """
import asyncio
import time
from bot_memory.service import Memory
from bot_memory.storage import database

plain = database.Migration.sql
database.Migration.sql = lambda m: (time.sleep(120) if m.version == 5 else None) or plain(m)

async def main():
    memory = await Memory.open()
    await memory.close()

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """A PostgreSQL PgBouncer can reach on TCP, with a user that may create databases."""
    external = os.environ.get("TEST_DATABASE_URL")
    host = urlsplit(external).hostname if external else None
    if external and host and not host.startswith("/"):
        yield external
        return
    bin_dir = postgres_bin()
    if bin_dir is None:
        pytest.skip("no Debian PostgreSQL (apt-get install postgresql) to put PgBouncer before")
    cluster = Cluster.start(bin_dir)
    try:
        yield cluster.url
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def bouncer(server_url: str) -> Iterator[Bouncer]:
    if pgbouncer_binary() is None:
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer)")
    # Fewer server connections than the six processes' pools want: clients share them.
    pooler = Bouncer.start(server_url, pool_size=4)
    try:
        yield pooler
    finally:
        pooler.stop()


class Target:
    """One empty database, reached directly and through the pooler."""

    def __init__(self, server_url: str, bouncer: Bouncer) -> None:
        self.name = "pool_" + uuid.uuid4().hex[:10]
        self.direct = with_database(server_url, self.name)
        self.pooled = bouncer.url(self.name)
        self._server_url = server_url

    async def admin(self, sql: str) -> None:
        conn = await asyncpg.connect(self._server_url)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    async def fetchval(self, sql: str) -> object:
        conn = await asyncpg.connect(self.direct)
        try:
            return await conn.fetchval(sql)
        finally:
            await conn.close()

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("BOT_MEMORY_", "LLM_", "OPENAI_", "TEST_DATABASE"))
        }
        env.update(
            DATABASE_URL=self.pooled,
            BOT_MEMORY_DB_STATEMENT_CACHE_SIZE="0",
            BOT_MEMORY_WORKSPACE="test",
            BOT_MEMORY_DATA_DIR=str(ROOT / ".bot_memory-unused"),
            PYTHONPATH=str(ROOT),
        )
        env.update(extra)
        return env

    def start(self, script: str, **extra: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=self.env(**extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture
async def target(server_url: str, bouncer: Bouncer) -> Target:
    made = Target(server_url, bouncer)
    await made.admin(f"CREATE DATABASE {made.name}")
    return made


def finish(procs: list[subprocess.Popen[str]], seconds: float) -> list[str]:
    """Wait for every process (killing what is left at the deadline); one line per failure."""
    deadline = time.monotonic() + seconds
    failures = []
    for proc in procs:
        try:
            _, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            failures.append(f"pid {proc.pid}: hung past {seconds}s")
            continue
        if proc.returncode != 0:
            failures.append(f"pid {proc.pid}: exit {proc.returncode}: {err.strip()[-1500:]}")
    return failures


async def advisory_locks(target: Target) -> object:
    return await target.fetchval(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )


async def test_six_processes_open_at_once_twice(target: Target) -> None:
    for round_ in range(ROUNDS):  # the first on a database that needs every migration
        procs = [target.start(OPEN) for _ in range(PROCESSES)]
        failures = await asyncio.to_thread(finish, procs, START_SECONDS)
        assert failures == [], f"round {round_ + 1}: {failures}"
    assert await target.fetchval("SELECT max(version) FROM schema_migrations") == latest_version()
    assert await target.fetchval("SELECT count(*) FROM schema_migrations") == len(migrations())
    assert await advisory_locks(target) == 0


async def test_the_memory_loop_through_the_pooler(target: Target) -> None:
    """remember, an extraction by the worker, recall, forget: statement cache 0, over PgBouncer."""
    scope = Scope(workspace="test", bot_id=42, kind="private", chat_id=1001, user_id=1001)
    memory = await Memory.open(make_settings(target.pooled, db_statement_cache_size=0))
    try:
        for text in ("I am planning a trip to Kyoto in April", "I prefer quiet hotels"):
            source = await memory.record(scope, text=text, speaker_id=1001)
            assert source is not None
            await memory.begin(source)
            await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)
        report = await memory.pipeline.tick()
        assert set(report.finished.values()) == {"done"}
        [record] = (await view(memory)).valid_records(scope.key)
        assert "Kyoto" in record.summary and record.origin == "extracted"

        text = "remember that my passport expires in May"
        note_source = await memory.record(scope, text=text, speaker_id=1001)
        assert note_source is not None
        request = recognize(text)
        assert request is not None
        assert (await memory.control(request, note_source, who=MEMBER)).outcome == "remembered"
        await memory.pipeline.tick()
        recalled = await memory.recall(scope)
        assert recalled.mode == "index" and record.id in (recalled.text or "")

        forget_text = "forget my passport"
        forget_source = await memory.record(scope, text=forget_text, speaker_id=1001)
        assert forget_source is not None
        forget = recognize(forget_text)
        assert forget is not None
        assert (await memory.control(forget, forget_source, who=MEMBER)).outcome == "forgotten"
        state = await view(memory)
        assert not any("passport" in r.summary for r in state.valid_records(scope.key))
        assert note_source.message_id in state.tombstones[scope.key]
    finally:
        await memory.close()
    assert await advisory_locks(target) == 0


async def test_a_start_killed_mid_migration_leaves_no_lock(target: Target) -> None:
    victim = target.start(SLOW_MIGRATION)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not await advisory_locks(target):  # it holds the lock inside migration 005
            assert victim.poll() is None, victim.communicate()[1][-1500:]
            assert time.monotonic() < deadline, "the victim never took the migration lock"
            await asyncio.sleep(0.05)
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.communicate()
    assert await asyncio.to_thread(finish, [target.start(OPEN)], START_SECONDS) == []
    assert await target.fetchval("SELECT max(version) FROM schema_migrations") == latest_version()
    assert await advisory_locks(target) == 0


async def test_starts_killed_mid_open_leave_nothing_behind(target: Target) -> None:
    for delay in (0.5, 1.0, 1.5, 2.5):
        victim = target.start(OPEN)
        await asyncio.sleep(delay)
        victim.send_signal(signal.SIGKILL)
        victim.communicate()
    procs = [target.start(OPEN) for _ in range(2)]
    assert await asyncio.to_thread(finish, procs, START_SECONDS) == []
    assert await advisory_locks(target) == 0


def run_cli(target: Target, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot_memory", *args],
        cwd=ROOT,
        env=target.env(**env),
        capture_output=True,
        text=True,
        timeout=START_SECONDS,
    )


async def test_migrations_at_deploy_and_a_start_that_may_not_migrate(target: Target) -> None:
    latest = latest_version()
    behind = run_cli(target, "status", BOT_MEMORY_MIGRATE_ON_START="false")
    assert behind.returncode == 2
    assert behind.stderr.strip() == (
        f"bot-memory: the database schema is at 0, this version needs {latest}:"
        " run `bot-memory migrate`"
    )
    check = run_cli(target, "migrate", "--check")
    assert check.returncode == 1 and "run `bot-memory migrate`" in check.stderr

    # At deploy: migrations over a direct connection, the bot's DATABASE_URL the pooler.
    direct = {"BOT_MEMORY_MIGRATION_DATABASE_URL": target.direct}
    done = run_cli(target, "migrate", **direct)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"applied {len(migrations())} migration(s): 001, 002,")
    assert done.stdout.strip().endswith(f"the schema is at {latest}")
    again = run_cli(target, "migrate", **direct)
    assert again.stdout.strip() == f"the schema is current (at {latest}): nothing to apply"
    assert run_cli(target, "migrate", "--check").returncode == 0

    started = run_cli(target, "status", BOT_MEMORY_MIGRATE_ON_START="false")
    assert started.returncode == 0, started.stderr
