"""The operator's command line: status, inspect, export, forget, consolidate, retry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot_memory.cli import commands as cli
from bot_memory.intents import recognize
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from tests.conftest import make_settings

ROOT = Path(__file__).resolve().parents[2]
ADA = Scope(workspace="tg:42:1001", bot_id=42, kind="private", chat_id=1001, user_id=1001)
GROUP = Scope(workspace="tg:42:-100", bot_id=42, kind="shared", chat_id=-100, topic_id=0)


@pytest.fixture
async def memory(db_url: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Memory]:
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.delenv("BOT_MEMORY_WORKSPACE", raising=False)
    mem = await Memory.open(make_settings(db_url, workspace=None))
    for scope, speaker, text in [
        (ADA, 1001, "remember that my bike is red"),
        (GROUP, 1001, "remember that I host the retro"),
        (GROUP, 1002, "remember that I bring snacks"),
    ]:
        source = await mem.record(scope, text=text, speaker_id=speaker)
        assert source is not None
        request = recognize(text)
        assert request is not None
        await mem.control(request, source)
    await mem.pipeline.tick()
    yield mem
    await mem.close()


async def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = await cli.run_command(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


async def test_status_lists_workspaces_jobs_and_workers(
    memory: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = await run(capsys, "status")
    assert code == 0 and "tg:42:1001" in out and "tg:42:-100" in out and "Workers:" in out
    code, out, _ = await run(capsys, "status", "--json")
    report = json.loads(out[out.index("{") :])
    by_name = {w["workspace"]: w for w in report["workspaces"]}
    assert by_name["tg:42:-100"]["records"] == 2 and report["workers"]


async def test_status_names_the_scopes_and_speakers_at_their_share_of_the_cap(
    memory: Memory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cap of 4 and a share of 0.5: 2 records. The group's one Topic holds 2 (Ada's and Bo's
    # notes): alone in its workspace, its share changes nothing, and nobody is named. Then Ada
    # notes 2 more there and Bo 1 in another Topic: the first Topic holds 4 of the 5, Ada's
    # notes are 3 and Bo's 2, each while others hold memories too.
    monkeypatch.setenv("BOT_MEMORY_WORKSPACE_MAX_RECORDS", "4")
    monkeypatch.setenv("BOT_MEMORY_SCOPE_MAX_SHARE", "0.5")
    code, out, _ = await run(capsys, "status", "--json")
    assert json.loads(out[out.index("{") :])["at_share"] == []
    other_topic = GROUP.model_copy(update={"topic_id": 5})
    for scope, speaker, text in [
        (GROUP, 1001, "remember that the retro is on Fridays"),
        (GROUP, 1001, "remember that I keep the notes"),
        (other_topic, 1002, "remember that I book the room"),
    ]:
        source = await memory.record(scope, text=text, speaker_id=speaker)
        assert source is not None
        request = recognize(text)
        assert request is not None
        await memory.control(request, source)
    code, out, _ = await run(capsys, "status", "--json")
    report = json.loads(out[out.index("{") :])
    assert [(r["holder"], r["who"], r["held"], r["share"]) for r in report["at_share"]] == [
        ("scope", GROUP.key, 4, 2),
        ("speaker", "1001", 3, 2),
        ("speaker", "1002", 2, 2),
    ]
    code, out, _ = await run(capsys, "status")
    assert code == 0 and "At or over their fair share (2 records of a cap of 4" in out
    assert GROUP.key in out and other_topic.key not in out


async def test_inspect_shows_provenance(memory: Memory, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = await run(capsys, "inspect", "tg:42:-100", "--json")
    records = json.loads(out[out.index("[") :])
    assert code == 0 and len(records) == 2
    source = records[0]["sources"][0]
    assert source["source_id"].startswith("m") and len(source["hash"]) == 32
    code, out, _ = await run(capsys, "inspect", "tg:42:-100", "--scope", GROUP.key)
    assert code == 0 and "retro" in out and "m" in out
    code, _, err = await run(capsys, "inspect", "no-such-workspace")
    assert code == 1 and "no workspace" in err and "Traceback" not in err
    code, _, err = await run(capsys, "inspect", "tg:42:-100", "--scope", "tg:42:-100/nope")
    assert code == 1 and "no scope" in err


async def test_export_gives_a_person_their_own_records(
    memory: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = await run(capsys, "export", "--user", "1001")
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert code == 0 and sorted(r["summary"] for r in lines) == [
        "I host the retro",
        "my bike is red",
    ]  # not Bo's snacks
    assert all(r["sources"] for r in lines)
    code, out, _ = await run(capsys, "export", "--scope", GROUP.key)
    assert len([line for line in out.splitlines() if line.startswith("{")]) == 2
    code, _, err = await run(capsys, "export", "--scope", "tg:42:-100/nope")
    assert code == 1 and "no scope" in err and "Traceback" not in err


async def test_forget_consolidate_and_retry(
    memory: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    record = await memory.store.pool.fetchval(
        "SELECT id FROM memory_records WHERE summary LIKE '%bike%'"
    )
    code, out, _ = await run(capsys, "forget", record)
    assert code == 0 and out.startswith("forgotten")
    assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 2
    code, _, err = await run(capsys, "forget", "mem_nothere")
    assert code == 1 and "no memory" in err and "Traceback" not in err

    code, _, err = await run(capsys, "consolidate", "nosuch/scope")
    assert code == 1 and "no scope" in err and "Traceback" not in err
    code, out, err = await run(capsys, "consolidate", GROUP.key)
    assert code == 0 and "job" in out, err
    await memory.store.pool.execute(
        "UPDATE memory_jobs SET phase = 'stopped', stop_kind = 'unknown',"
        " last_error = 'unknown provider outcome: timed out' WHERE phase <> 'done'"
    )
    stopped = await memory.store.pool.fetchval(
        "SELECT id FROM memory_jobs WHERE stop_kind = 'unknown' LIMIT 1"
    )
    code, out, _ = await run(capsys, "status")
    assert "unknown provider outcome" in out  # visible to operators, with its reason
    code, out, _ = await run(capsys, "retry", str(stopped))
    assert code == 0 and "re-armed" in out
    phase = await memory.store.pool.fetchval("SELECT phase FROM memory_jobs WHERE id = $1", stopped)
    assert phase == "consolidate"
    code, _, err = await run(capsys, "retry", "999999")
    assert code == 1 and "no job" in err


def test_the_installed_command_runs_against_database_url(memory_url: str) -> None:
    env = {**os.environ, "DATABASE_URL": memory_url, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "bot_memory", "status"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "workspaces" in out.stdout and "Traceback" not in out.stderr


@pytest.fixture
def memory_url(db_url: str) -> str:
    return db_url


async def test_a_cleanly_stopped_worker_leaves_status_a_crashed_one_shows_silent(
    memory: Memory, capsys: pytest.CaptureFixture[str]
) -> None:
    me = memory.pipeline.worker_id
    await memory.store.pool.execute(
        "INSERT INTO worker_ticks VALUES ('gone:1:abc', now() - interval '1 day',"
        " now() - interval '1 day'), ('old:1:abc', now() - interval '9 days',"
        " now() - interval '8 days')"
    )
    memory.worker.start()
    await memory.worker.stop()
    workers = await memory.store.pool.fetch("SELECT worker_id FROM worker_ticks")
    # A clean stop removes its own row; a week-old silent one is cleared at a worker's start.
    assert [w["worker_id"] for w in workers] == ["gone:1:abc"] and me != "gone:1:abc"
    code, out, _ = await run(capsys, "status")
    assert code == 0 and "gone:1:abc" in out and "silent" in out


async def test_a_memory_closed_after_direct_ticks_leaves_no_worker_row(db_url: str) -> None:
    memory = await Memory.open(make_settings(db_url))
    await memory.pipeline.tick()  # a host or a test driving the pipeline itself
    assert await memory.store.pool.fetchval("SELECT count(*) FROM worker_ticks") == 1
    await memory.close()
    memory = await Memory.open(make_settings(db_url))
    try:
        assert await memory.store.pool.fetchval("SELECT count(*) FROM worker_ticks") == 0
    finally:
        await memory.close()
