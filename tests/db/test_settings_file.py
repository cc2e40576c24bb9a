"""One settings file for the bot and its worker: BOT_MEMORY_SETTINGS or `--settings`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot_memory.cli import commands as cli
from bot_memory.settings import MemorySettings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "BOT_MEMORY_SETTINGS",
        "DATABASE_URL",
        "BOT_MEMORY_DATABASE_URL",
        "BOT_MEMORY_IDLE_WINDOW_SECONDS",
        "LLM_MODEL",
        "BOT_MEMORY_LLM_MODEL",
        "OPENAI_MODEL",
        "BOT_MEMORY_WORKSPACE",
    ):
        monkeypatch.delenv(name, raising=False)


def test_a_dotenv_file_named_by_bot_memory_settings_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.env"
    path.write_text(
        "# the host's own lines are ignored\nBOT_TOKEN=1:abc\n"
        "DATABASE_URL=postgresql://bot@db/bot\nBOT_MEMORY_IDLE_WINDOW_SECONDS=600\n"
        "LLM_MODEL=gpt-4o\n"
    )
    monkeypatch.setenv("BOT_MEMORY_SETTINGS", str(path))
    settings = MemorySettings()
    assert settings.database_url == "postgresql://bot@db/bot"
    assert (settings.idle_window_seconds, settings.llm_model) == (600, "gpt-4o")
    # The environment wins over the file, and code over both.
    monkeypatch.setenv("BOT_MEMORY_IDLE_WINDOW_SECONDS", "60")
    assert MemorySettings().idle_window_seconds == 60
    assert MemorySettings(idle_window_seconds=5).idle_window_seconds == 5


def test_a_toml_file_takes_field_names_or_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.toml"
    path.write_text(
        'database_url = "postgresql://bot@db/bot"\n'
        "BOT_MEMORY_IDLE_WINDOW_SECONDS = 600\n"
        'OPENAI_MODEL = "gpt-4o"\n'
        "admin_user_ids = [7, 8]\n"
    )
    monkeypatch.setenv("BOT_MEMORY_SETTINGS", str(path))
    settings = MemorySettings()
    assert settings.database_url == "postgresql://bot@db/bot"
    assert (settings.idle_window_seconds, settings.llm_model) == (600, "gpt-4o")
    assert settings.admin_user_ids == frozenset({7, 8})


def test_a_hosts_own_toml_keeps_memory_settings_in_their_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bot.toml"
    path.write_text('token = "1:abc"\n\n[bot_memory]\nworkspace = "acme"\n')
    monkeypatch.setenv("BOT_MEMORY_SETTINGS", str(path))
    assert MemorySettings().workspace == "acme"


def test_a_misspelt_setting_in_a_toml_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.toml"
    path.write_text("idle_windows_seconds = 600\n")
    monkeypatch.setenv("BOT_MEMORY_SETTINGS", str(path))
    with pytest.raises(ValueError, match="idle_windows_seconds"):
        MemorySettings()


def test_a_missing_settings_file_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOT_MEMORY_SETTINGS", str(tmp_path / "nope.env"))
    with pytest.raises((ValueError, ValidationError), match=r"BOT_MEMORY_SETTINGS.*nope\.env"):
        MemorySettings()


async def test_the_command_line_reads_the_file_given_by_settings(
    db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("BOT_MEMORY_SETTINGS", "")  # restored after: the command line sets it
    path = tmp_path / "memory.env"
    path.write_text(f"DATABASE_URL={db_url}\nBOT_MEMORY_WORKSPACE=acme\n")
    before, after = ["--settings", str(path), "status"], ["status", "--settings", str(path)]
    for argv in (before, after):
        code = await cli.run_command(argv)
        out = capsys.readouterr().out
        assert code == 0 and "workspaces" in out  # it reached the database named in the file
    # `worker` and `run` take it too, the same way.
    assert cli.parser().parse_args(["worker", "--settings", str(path)]).settings == str(path)


@pytest.mark.slow  # a subprocess
def test_a_bad_setting_is_one_line_naming_it_on_the_command_line() -> None:
    env = {**os.environ, "BOT_MEMORY_IDLE_WINDOW_SECONDS": "half an hour"}
    env.pop("BOT_MEMORY_SETTINGS", None)
    out = subprocess.run(
        [sys.executable, "-m", "bot_memory", "status"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("bot-memory: BOT_MEMORY_IDLE_WINDOW_SECONDS: ")


def test_a_settings_file_given_on_the_command_line_is_named_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOT_MEMORY_SETTINGS", "")  # restored after: the command line sets it
    path = tmp_path / "memory.toml"
    path.write_text("idle_windows_seconds = 60\n")
    assert cli.main(["status", "--settings", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bot-memory: --settings: ") and "idle_windows_seconds" in err, err
    assert "BOT_MEMORY_SETTINGS" not in err
