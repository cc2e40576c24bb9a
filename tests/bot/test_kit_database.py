"""A host's suite on its own PostgreSQL: DATABASE_URL names one server for the whole run, and the
emulator's message IDs start at 1 in every `running_bot`. Each still tests memory (a database of
its own each time), and a message memory drops as recorded before says so at WARNING."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
import pytest
from aiogram import Dispatcher, Router
from aiogram.types import Message

from bot_memory.service import Memory
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import running_bot
from bot_memory_aiogram.testing.databases import PREFIX


def host(memory: Memory) -> Dispatcher:
    """A host whose own LLM handler answers whatever memory did not."""
    dp = Dispatcher()
    own = Router()

    @own.message()
    async def llm_handler(message: Message, memory_turn: Any = None) -> None:
        await message.answer(f"host llm (memory turn: {memory_turn is not None})")

    dp.include_router(own)
    setup(dp, memory)
    return dp


@pytest.fixture
def host_database_url(pg_server_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The host's path: DATABASE_URL, one for every test, no TEST_DATABASE_URL."""
    monkeypatch.delenv("TEST_DATABASE_URL", raising=False)
    monkeypatch.setenv("DATABASE_URL", pg_server_url)
    return pg_server_url


async def kit_databases(server_url: str) -> set[str]:
    conn = await asyncpg.connect(server_url)
    try:
        rows = await conn.fetch(
            "SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname NOT LIKE $2",
            PREFIX + "%",
            PREFIX + "template%",
        )
    finally:
        await conn.close()
    return {r["datname"] for r in rows}


async def test_two_sessions_on_one_database_url_each_get_memory(host_database_url: str) -> None:
    before = await kit_databases(host_database_url)
    urls: list[str | None] = []
    for text in ("my cat is Mochi", "my dog is Rex"):
        async with running_bot(host, workspace="test") as bot:
            urls.append(bot.memory.settings.database_url)
            update = bot.send("remember that " + text)
            [reply] = await bot.emu.wait_for_sent(1)
            assert update["message"]["message_id"] == 1  # the same ID both times
            assert reply.params["text"] == "Noted. I'll remember that."
            await bot.settled()
            notes = await bot.memory.store.pool.fetch(
                "SELECT summary FROM memory_records WHERE origin = 'note'"
            )
            assert [n["summary"] for n in notes] == [text]  # this one's only, in the user's words
    assert urls[0] != urls[1] and all(u and u.startswith(host_database_url[:8]) for u in urls)
    assert await kit_databases(host_database_url) == before  # both dropped on the way out


async def test_a_redelivered_update_answered_already_is_dropped_and_says_so(
    host_database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_bot(host, workspace="test") as bot:
        first = bot.send("remember that my cat is Mochi")
        await bot.emu.wait_for_sent(1)
        await bot.settled()
        with caplog.at_level(logging.INFO, logger="bot_memory_aiogram"):
            bot.emu.push_update({"message": first["message"]})  # Telegram delivers it again
            await bot.emu.wait_idle(quiet=0.3)
        assert len(bot.emu.sent) == 1  # not answered twice
        [said] = [r for r in caplog.records if "memory.redelivered" in r.getMessage()]
        assert said.levelno == logging.INFO
        assert said.fields["outcome"] == "drop"  # type: ignore[attr-defined]
        assert said.fields["message_id"] == first["message"]["message_id"]  # type: ignore[attr-defined]


async def test_a_message_id_met_again_with_other_text_is_handled_without_memory_and_says_so(
    host_database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A database that outlived another run whose message IDs were the same: not a redelivery."""
    async with running_bot(host, workspace="test") as bot:
        first = bot.send("remember that my cat is Mochi")
        await bot.emu.wait_for_sent(1)
        await bot.settled()
        other = {**first["message"], "text": "what is my cat called?"}
        with caplog.at_level(logging.WARNING, logger="bot_memory_aiogram"):
            bot.emu.push_update({"message": other})
            [_, again] = await bot.emu.wait_for_sent(2)
        assert again.params["text"] == "host llm (memory turn: False)"
        [warning] = [r for r in caplog.records if "memory.already_recorded" in r.getMessage()]
        assert warning.levelno == logging.WARNING
        assert "recorded before" in warning.fields["reason"]  # type: ignore[attr-defined]
