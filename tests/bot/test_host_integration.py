"""Integration details a host relies on: requests that close themselves (and the flags that
change how), logging through the host's configuration, the openai SDK's environment, and
replies a host can re-word or translate."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiogram import Dispatcher, F, Router
from aiogram.filters import Command
from aiogram.types import Message

from bot_memory.models import build_model
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import running_bot

ROOT = Path(__file__).resolve().parents[2]


def host(**setup_kwargs: Any) -> Any:
    def build(memory: Memory) -> Dispatcher:
        dp = Dispatcher()
        r = Router()

        @r.message(Command("later"), flags={"memory": "keep_open"})
        async def later(message: Message) -> None:
            await message.answer("I'll get back to you")

        @r.message(Command("help"), flags={"memory": "source"})
        async def help_(message: Message) -> None:
            await message.answer("I remember what you tell me")

        @r.message(F.text == "private stuff", flags={"memory": "skip"})
        async def skip(message: Message) -> None:
            await message.answer("ok, not keeping that")

        @r.message(F.text == "boom")
        async def boom(message: Message) -> None:
            raise RuntimeError("the host's handler failed")

        @r.message(F.text == "two parts")
        async def two(message: Message) -> None:
            await message.answer("first part")
            await message.answer("second part")

        @r.message(F.text == "silent")
        async def silent(message: Message) -> None:
            return None

        dp.include_router(r)
        setup(dp, memory, **setup_kwargs)
        return dp

    return build


async def statuses(bot: Any) -> list[tuple[str, str, bool]]:
    rows = await bot.memory.store.pool.fetch(
        "SELECT r.kind, r.status, r.answer_message_id IS NOT NULL AS answered FROM requests r"
        " JOIN messages m ON m.workspace_id = r.workspace_id AND m.id = r.user_message_id"
        " ORDER BY m.telegram_message_id"  # in the order sent: updates are handled concurrently
    )
    return [(r["kind"], r["status"], r["answered"]) for r in rows]


async def test_requests_close_themselves_by_what_happened() -> None:
    async with running_bot(host(), workspace="test") as bot:
        await bot.say("two parts")
        bot.send("boom")
        bot.send("silent")
        bot.send("nobody handles this one with a photo", photo=False, entities=[])
        await bot.settled()
        await bot.say("private stuff")
        await bot.say("/help")
        await bot.say("/later")
        await bot.settled()
        assert await statuses(bot) == [
            ("chat", "succeeded", True),  # two sends, one answer
            ("chat", "failed", False),  # the handler raised
            ("chat", "unanswered", False),  # handled, nothing sent
            ("chat", "unanswered", False),  # not handled at all
            ("chat", "unanswered", False),  # flags={"memory": "skip"}
            ("chat", "succeeded", True),  # a command the host marked as a source
            ("chat", "queued", False),  # kept open: the host closes it with memory.finish
        ]
        answer = await bot.memory.store.pool.fetchval(
            "SELECT text FROM messages WHERE role = 'assistant' ORDER BY id LIMIT 1"
        )
        assert answer == "first part\n\nsecond part"
        kept = await bot.memory.store.pool.fetchval(
            "SELECT keep_open FROM requests ORDER BY id DESC LIMIT 1"
        )
        assert kept is True


async def test_the_library_logs_through_the_hosts_logging(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="bot_memory"):
        async with running_bot(host(), workspace="test") as bot:
            await bot.say("two parts")
    assert not [
        r for r in caplog.records if r.name.startswith("bot_memory") and r.levelno < logging.WARNING
    ]
    with caplog.at_level(logging.INFO, logger="bot_memory"):
        async with running_bot(host(), workspace="test") as bot:
            await bot.say("two parts")
    events = {getattr(r, "event", "") for r in caplog.records}
    assert "memory.opened" in events
    texts = " ".join(r.getMessage() for r in caplog.records)
    assert "two parts" not in texts  # no user text in logs


def test_importing_prints_nothing_and_warns_nothing() -> None:
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import bot_memory, bot_memory_aiogram"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert out.stdout == "" and out.stderr == ""


def test_the_openai_sdk_environment_configures_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(f"BOT_MEMORY_{name}", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o-mini")
    model = build_model(MemorySettings())
    # The server it names: a port given is part of it (another port is another server).
    assert model.provider == "openai-compatible:127.0.0.1:9" and model.model == "gpt-4o-mini"
    assert model.price_known  # from the shipped table
    monkeypatch.delenv("OPENAI_BASE_URL")
    model = build_model(MemorySettings())  # a key alone: the OpenAI API itself
    assert model.provider == "openai-compatible:api.openai.com"


async def test_replies_can_be_reworded_and_translated(tmp_path: Path) -> None:
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "voice.ftl").write_text("memory-remembered = Got it, filed away.\n")
    (tmp_path / "de").mkdir()
    (tmp_path / "de" / "memory.ftl").write_text("memory-remembered = Gemerkt.\n")
    async with running_bot(host(locales=[tmp_path]), workspace="test") as bot:
        assert await bot.say("remember that I like jazz") == "Got it, filed away."
        reply = await bot.say("remember that I like tea", language_code="de")
        assert reply == "Gemerkt."
        reply = await bot.say("remember that I like rain", language_code="zh-hans")
        assert reply == "好的，我记住了。"  # ours, where the host added nothing
