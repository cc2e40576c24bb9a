"""Starting the database: a malformed DATABASE_URL is one line naming it; the embedded server
says it is starting, and stops a server a killed process left running."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path

import asyncpg
import psutil
import pytest

from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage.database import DatabaseUnavailable, DatabaseUrlInvalid, EmbeddedPostgres

ROOT = Path(__file__).resolve().parents[2]

MALFORMED = [
    "localhost:5432",  # no scheme
    "postgresql://bot:s3cret@db:notaport/bot",
    "mysql://bot:s3cret@db/bot",
    "postgresql://bot:s3cret@[::1/bot",
    "postgresql://bot:s3cret@db/bot?sslmode=sometimes",
]


@pytest.mark.parametrize("url", MALFORMED)
async def test_memory_open_names_a_malformed_database_url(url: str) -> None:
    with pytest.raises(DatabaseUrlInvalid) as caught:
        await Memory.open(MemorySettings(database_url=url, llm_base_url=None))
    message = str(caught.value)
    assert message.startswith("DATABASE_URL is malformed") and "postgresql://" in message
    assert "s3cret" not in message and "\n" not in message
    assert isinstance(caught.value, DatabaseUnavailable)  # what hosts catch at start already


@pytest.mark.slow  # subprocesses
@pytest.mark.parametrize("command", ["status", "worker"])
def test_the_command_line_says_one_line_for_a_malformed_database_url(command: str) -> None:
    env = {**os.environ, "DATABASE_URL": "postgresql://bot:s3cret@db:notaport/bot"}
    env.pop("BOT_MEMORY_SETTINGS", None)
    out = subprocess.run(
        [sys.executable, "-m", "bot_memory", command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = [line for line in out.stderr.splitlines() if "memory.offline_model" not in line]
    assert out.returncode == 2, out.stderr
    assert len(lines) == 1 and lines[0].startswith("bot-memory: DATABASE_URL is malformed")
    assert "s3cret" not in out.stderr


# A process that starts the embedded server, says its pid, and waits to be killed.
HOLDER = """
import asyncio, logging, sys
from pathlib import Path
from bot_memory.storage.database import EmbeddedPostgres

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")

async def main() -> None:
    server = EmbeddedPostgres(Path(sys.argv[1]))
    await server.start()
    print(server._server.get_pid(), flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow  # a subprocess, initdb and two embedded servers
async def test_a_server_left_by_a_killed_process_is_stopped_at_the_next_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOLDER,
        str(tmp_path),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        old_pid = int(await holder.stdout.readline())
    finally:
        holder.kill()  # SIGKILL: no clean-up runs in it
        _, stderr = await holder.communicate()
    first_log = stderr.decode()
    # Its first start said so before the wait, and why it could be long.
    assert "database.embedded_starting" in first_log and "first_use=True" in first_log
    assert "initdb" in first_log
    assert running(old_pid)  # the killed process left its server running

    server = EmbeddedPostgres(tmp_path)
    try:
        with caplog.at_level(logging.INFO, logger="bot_memory"):
            url = await server.start()
    finally:
        if running(old_pid):  # a failed test leaves no server behind either
            psutil.Process(old_pid).kill()
    try:
        assert not running(old_pid)
        new_pid = server._server.get_pid()
        assert new_pid != old_pid and running(new_pid)
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT 1") == 1
        finally:
            await conn.close()
        events = [getattr(r, "event", "") for r in caplog.records]
        assert "database.embedded_starting" in events
        leftover = next(
            r
            for r in caplog.records
            if getattr(r, "event", "") == "database.embedded_leftover_stopped"
        )
        assert leftover.levelno == logging.WARNING and f"pid={old_pid}" in leftover.getMessage()
    finally:
        await server.stop()
    assert not running(new_pid)  # and this one, closed cleanly, stops its own
