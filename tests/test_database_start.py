"""Starting the database: a malformed DATABASE_URL is one line naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot_memory.database import DatabaseUnavailable, DatabaseUrlInvalid
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings

ROOT = Path(__file__).resolve().parent.parent

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
