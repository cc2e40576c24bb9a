"""Hostile and unusual input on the real bot over HTTP: forged and broken buttons, bytes the
database refuses, a Bot API that answers nonsense at start. Every press is answered, nothing on
a button decides whose screen it is, and nothing takes the host's bot down."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiogram import Dispatcher

from bot_memory.service import Memory
from bot_memory_aiogram import ALLOWED_UPDATES, setup
from bot_memory_aiogram.routers.screen import MemoryScreen
from bot_memory_aiogram.testing import running_bot
from tests.bot.test_screen import ADA, ADMIN, BO, GROUP, data_of, in_group, press, text_of
from tests.support.e2e import start_env, wait_until


def plain(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory)
    return dp


@pytest.mark.parametrize("data", ["x", "bm:", "bm:zz:1", "bm:p:0::" + "9" * 5000])
async def test_a_press_that_does_not_parse_is_answered(data: str) -> None:
    async with running_bot(plain, workspace="test") as bot:
        await bot.say("remember that my locker is 12")
        await bot.say("/memory")
        screen = bot.emu.sent[-1].result["message_id"]
        answer = await press(bot, data, screen)
        assert answer["show_alert"] is True and answer["text"]
        assert "Memory in this chat" in text_of(bot, screen)  # the screen is untouched


async def test_the_owner_on_a_button_cannot_be_changed_by_the_presser() -> None:
    async with running_bot(plain, workspace="test", member_cache_seconds=0) as bot:
        bot.emu.set_chat_member_status(GROUP, ADA, "member")
        bot.emu.set_chat_member_status(GROUP, BO, "member")
        await bot.say("@memory_test_bot remember that Ada's desk is by the window", **in_group(ADA))
        await bot.say("/memory", **in_group(ADA))
        screen = bot.emu.sent[-1].result["message_id"]
        real = data_of(bot, "Refresh", screen, chat_id=GROUP)
        forged = MemoryScreen.unpack(real).model_copy(update={"owner": BO}).pack()
        answer = await press(bot, forged, screen, user_id=BO, chat_id=GROUP)
        assert answer["show_alert"] is True  # not a button of this screen: refused
        answer = await press(bot, real, screen, user_id=BO, chat_id=GROUP)
        assert answer["show_alert"] is True  # Ada's screen, Bo is no admin


async def test_spend_is_shown_to_an_admin_alone_never_in_the_group() -> None:
    async with running_bot(plain, workspace="test", member_cache_seconds=0) as bot:
        bot.emu.set_chat_member_status(GROUP, ADMIN, "administrator")
        bot.emu.set_chat_member_status(GROUP, ADA, "member")
        await bot.say("@memory_test_bot remember that the retro is on Friday", **in_group(ADMIN))
        await bot.say("/memory", **in_group(ADMIN))
        screen = bot.emu.sent[-1].result["message_id"]
        assert "$" not in text_of(bot, screen, chat_id=GROUP)  # every member reads this
        spend = data_of(bot, "Spend", screen, chat_id=GROUP)
        answer = await press(bot, spend, screen, user_id=ADMIN, chat_id=GROUP)
        assert answer["show_alert"] is True and "$" in answer["text"]  # to the admin only
        answer = await press(bot, spend, screen, user_id=ADA, chat_id=GROUP)
        assert "$" not in answer["text"]


@pytest.mark.parametrize("text", ["my code is 12\x0034", "smile \ud83d and \udc00 go"])
async def test_bytes_the_database_refuses_are_cleaned_and_answered(text: str) -> None:
    async with running_bot(plain, workspace="test") as bot:
        reply = await bot.say(f"remember that {text}")
        assert reply == "Noted. I'll remember that."
        [stored] = await bot.memory.store.pool.fetch(
            "SELECT text, content_hash FROM messages WHERE role = 'user'"
        )
        assert "\x00" not in stored["text"] and "\ud83d" not in stored["text"]
        from bot_memory.records import content_hash

        assert stored["content_hash"] == content_hash(stored["text"])  # hashed as stored


async def test_a_nonsense_answer_while_setting_menus_is_a_warning(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    env = await start_env(db_url)
    env.emu.inject_raw("getMyCommands", times=10)
    polling = asyncio.create_task(
        env.dp.start_polling(
            env.bot, handle_signals=False, polling_timeout=1, allowed_updates=ALLOWED_UPDATES
        )
    )
    try:
        with caplog.at_level(logging.WARNING, logger="bot_memory_aiogram"):
            sent = await env.say(1, chat_id=ADA, user_id=ADA, text="remember that I like tea")
            assert sent["text"] == "Noted. I'll remember that."  # the bot runs
            await wait_until(lambda: _worker_running(env))
        assert any("commands_not_set" in r.getMessage() for r in caplog.records)
    finally:
        await env.dp.stop_polling()
        await asyncio.wait_for(polling, 10)
        await env.memory.close()
        await env.bot.session.close()
        await env.llm.stop()
        await env.emu.stop()


async def _worker_running(env) -> bool:  # type: ignore[no-untyped-def]
    return env.memory.worker.running


async def test_a_demoted_admin_keeps_no_powers_from_the_cache() -> None:
    async with running_bot(plain, workspace="test") as bot:  # the cache trusts 300 s
        bot.emu.set_chat_member_status(GROUP, ADMIN, "administrator")
        await bot.say("/memory", **in_group(ADMIN))  # standing cached as administrator
        bot.emu.set_chat_member_status(GROUP, ADMIN, "member")  # demoted; no update comes
        reply = await bot.say("@memory_test_bot turn off memory", **in_group(ADMIN))
        assert reply == "Only a group admin can do that here."
        enabled = await bot.memory.store.pool.fetchval("SELECT enabled FROM memory_scopes")
        assert enabled is not False


async def test_the_screen_lists_what_is_kept_while_memory_is_off() -> None:
    async with running_bot(plain, workspace="test") as bot:
        await bot.say("remember that my locker is 12")
        await bot.say("/memory off")
        await bot.say("/memory")
        screen = bot.emu.sent[-1].result["message_id"]
        text = text_of(bot, screen)
        assert "locker is 12" in text and "Memory is off" in text


def raising(memory: Memory) -> Dispatcher:
    from aiogram import F
    from aiogram.types import Message

    dp = Dispatcher()

    @dp.message(F.text)
    async def crash(message: Message) -> None:
        raise ValueError(f"could not parse {message.text!r}")  # quotes what the user said

    setup(dp, memory)
    return dp


async def test_a_handlers_exception_text_is_not_kept() -> None:
    async with running_bot(raising, workspace="test") as bot:
        bot.send("my secret plan is Zebra")
        await bot.settled()
        [request] = await bot.memory.store.pool.fetch("SELECT status, error FROM requests")
        assert (request["status"], request["error"]) == ("failed", "ValueError")
        traces = await bot.memory.find_traces("test", texts=["Zebra"])
        assert {(t.table, t.column) for t in traces} == {
            ("messages", "text"),
            ("messages", "search"),
        }
