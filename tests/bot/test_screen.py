"""The /memory screen and the command menus, over HTTP through the emulator."""

from __future__ import annotations

import json
from typing import Any

from aiogram import Dispatcher

from bot_memory.service import Memory
from bot_memory_aiogram import setup
from bot_memory_aiogram.routers.screen import MemoryScreen
from bot_memory_aiogram.testing import TestBot, running_bot
from bot_memory_aiogram.testing.fake_openai import default_responder

GROUP = -100555
ADA, BO, ADMIN = 1001, 1002, 1003


def plain(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory)
    return dp


def with_agent(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)
    return dp


def in_group(user_id: int, **extra: Any) -> dict[str, Any]:
    return {"chat_id": GROUP, "user_id": user_id, "chat_type": "supergroup", **extra}


def buttons(bot: TestBot, message_id: int | None = None, chat_id: int = ADA) -> list[list[str]]:
    """The screen's button rows (labels) as the emulator holds the message now."""
    if message_id is None:
        message_id = bot.emu.sent[-1].result["message_id"]
    stored = bot.emu.get_message(chat_id, message_id)
    assert stored is not None
    rows = stored.get("reply_markup", {}).get("inline_keyboard", [])
    return [[b["text"] for b in row] for row in rows]


def data_of(bot: TestBot, label: str, message_id: int, chat_id: int = ADA) -> str:
    stored = bot.emu.get_message(chat_id, message_id)
    assert stored is not None
    for row in stored["reply_markup"]["inline_keyboard"]:
        for b in row:
            if b["text"] == label:
                return str(b["callback_data"])
    raise AssertionError(f"no button {label!r}")


async def press(
    bot: TestBot, data: str, message_id: int, user_id: int = ADA, chat_id: int = ADA
) -> dict[str, Any]:
    """Press a button; returns the answerCallbackQuery call's parameters."""
    before = len(bot.emu.calls_to("answerCallbackQuery"))
    bot.emu.push_callback_query(chat_id=chat_id, user_id=user_id, data=data, message_id=message_id)
    calls = await bot.emu.wait_for_calls("answerCallbackQuery", before + 1)
    await bot.settled()
    return calls[-1].params


def text_of(bot: TestBot, message_id: int, chat_id: int = ADA) -> str:
    stored = bot.emu.get_message(chat_id, message_id)
    assert stored is not None
    return str(stored["text"])


async def test_the_screen_lists_forgets_with_confirmation_and_pages() -> None:
    async with running_bot(plain, workspace="test") as bot:
        for n in range(12):
            await bot.say(f"remember that box {n} is on shelf {n}")
        await bot.say("/memory")
        screen = bot.emu.sent[-1].result["message_id"]
        first = text_of(bot, screen)
        assert (
            first.startswith("Memory in this chat") and "box 11" in first and "box 6" not in first
        )
        assert "12 memories" in first
        assert buttons(bot)[-2:] == [["Next ›"], ["Turn memory off", "Refresh"]]
        # Paging across 12 records: 5, 5, 2.
        await press(bot, data_of(bot, "Next ›", screen), screen)
        assert "box 6" in text_of(bot, screen) and "box 11" not in text_of(bot, screen)
        await press(bot, data_of(bot, "Next ›", screen), screen)
        last = text_of(bot, screen)
        assert "box 1 " in last and "box 0" in last and "box 2 " not in last
        assert buttons(bot, screen)[-2] == ["‹ Previous"]
        # Forget, with a confirm step; the record goes and the screen says so.
        ask = await press(bot, data_of(bot, "Forget 12", screen), screen)
        assert not ask.get("show_alert")
        assert text_of(bot, screen).startswith("Forget “box 0 is on shelf 0”?")
        await press(bot, data_of(bot, "Yes, forget it", screen), screen)
        assert "I forgot one memory" in text_of(bot, screen)
        left = await bot.memory.store.pool.fetch("SELECT summary FROM memory_records")
        assert len(left) == 11 and all("box 0 " not in r["summary"] for r in left)
        # Refresh twice: "message is not modified" is not an error.
        refresh = data_of(bot, "Refresh", screen)
        await press(bot, refresh, screen)
        answered = await press(bot, refresh, screen)
        assert not answered.get("show_alert")
        # A forged button with an unknown record: not a button of this screen, a short alert,
        # nothing changes.
        forged = MemoryScreen(act="a", rid="mem_notarecord", owner=ADA).pack()
        alert = await press(bot, forged, screen)
        assert alert["show_alert"] and "no longer valid" in alert["text"]
        garbage = await press(bot, "bm:zz:0::1001", screen)
        assert garbage["show_alert"]


async def test_with_memory_off_the_screen_lists_and_forgets_what_is_kept() -> None:
    async with running_bot(plain, workspace="test") as bot:
        await bot.say("remember that my cat is Mochi")
        await bot.say("remember that I moved to Lisbon")
        assert (await bot.say("/memory off")).startswith("Memory is off")
        await bot.say("/memory")
        screen = bot.emu.sent[-1].result["message_id"]
        text = text_of(bot, screen)
        off = text.index("Memory is off here")
        assert off < text.index("Lisbon") and off < text.index("Mochi"), text  # the banner first
        assert "2 memories" in text and "already gone" not in text
        await press(bot, data_of(bot, "Forget 2", screen), screen)
        done = await press(bot, data_of(bot, "Yes, forget it", screen), screen)
        assert not done.get("show_alert"), done
        text = text_of(bot, screen)
        assert "I forgot one memory" in text and "Mochi" not in text and "Lisbon" in text
        assert "Memory is off here" in text
        assert await bot.memory.store.pool.fetchval("SELECT enabled FROM memory_scopes") is False


async def test_in_groups_only_the_opener_or_an_admin_may_press() -> None:
    async with running_bot(plain, workspace="test") as bot:
        bot.emu.set_chat_member_status(GROUP, ADMIN, "administrator")
        await bot.say("@memory_test_bot remember that standup is at 10", **in_group(ADA))
        await bot.say("@memory_test_bot remember that I review on Fridays", **in_group(BO))
        await bot.say("/memory", **in_group(ADA))
        screen = bot.emu.sent[-1].result["message_id"]
        text = text_of(bot, screen, GROUP)
        assert "User" in text  # who said it: first names from the updates
        forget = data_of(bot, "Forget 1", screen, GROUP)
        refused = await press(bot, forget, screen, user_id=BO, chat_id=GROUP)
        assert refused["show_alert"] and "Only the person who opened" in refused["text"]
        assert await bot.memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 2
        # The opener may forget her own record, not Bo's (the same rules as saying it).
        await press(bot, data_of(bot, "Forget 1", screen, GROUP), screen, chat_id=GROUP)
        not_hers = await press(
            bot, data_of(bot, "Yes, forget it", screen, GROUP), screen, chat_id=GROUP
        )
        assert not_hers["show_alert"] and "admin" in not_hers["text"]
        await press(bot, data_of(bot, "Cancel", screen, GROUP), screen, chat_id=GROUP)
        await press(bot, data_of(bot, "Forget 2", screen, GROUP), screen, chat_id=GROUP)
        await press(bot, data_of(bot, "Yes, forget it", screen, GROUP), screen, chat_id=GROUP)
        [left] = await bot.memory.store.pool.fetch("SELECT summary FROM memory_records")
        assert "Fridays" in left["summary"]
        # The opener may press, but switching group memory needs an admin.
        toggle = data_of(bot, "Turn memory off", screen, GROUP)
        denied = await press(bot, toggle, screen, user_id=ADA, chat_id=GROUP)
        assert denied["show_alert"] and "admin" in denied["text"]
        done = await press(bot, toggle, screen, user_id=ADMIN, chat_id=GROUP)
        assert not done.get("show_alert")
        assert "Memory is off" in text_of(bot, screen, GROUP)
        enabled = await bot.memory.store.pool.fetchval("SELECT enabled FROM memory_scopes")
        assert enabled is False


async def test_the_command_menus_are_set_per_scope_and_language() -> None:
    async with running_bot(plain, workspace="test") as bot:
        bot.send("hello")  # after startup
        await bot.settled()
        for key in (
            "all_private_chats:",
            "all_private_chats:zh",
            "all_group_chats:",
            "all_group_chats:zh",
        ):
            names = [c["command"] for c in bot.emu.commands[key]]
            assert names == ["memory", "remember", "forget", "memory_on", "memory_off"], key
        zh = {c["command"]: c["description"] for c in bot.emu.commands["all_private_chats:zh"]}
        assert zh["memory"] == "查看这里的记忆"


async def test_the_screen_shows_what_the_pipeline_extracted_and_any_non_switch_words() -> None:
    async with running_bot(with_agent, workspace="test") as bot:
        await bot.say("remember that the router password hint is blue")
        await bot.say("I moved to Lisbon last spring")  # answered: a pair for extraction
        await bot.idle()
        screen = await bot.say("/memory status")
        assert screen.startswith("Memory in this chat")
        assert "Conversation notes" in screen and "router password" in screen  # fake model title
        extracted = await bot.memory.store.pool.fetchval(
            "SELECT count(*) FROM memory_records WHERE origin = 'extracted'"
        )
        assert extracted == 1
        assert (await bot.say("/memory off")).startswith("Memory is off")


async def test_the_screen_lists_and_acts_only_on_what_the_reader_may_read() -> None:
    async with running_bot(plain, workspace="test") as bot:
        await bot.say("@memory_test_bot remember that standup is at 10", **in_group(ADA))
        await bot.say("@memory_test_bot remember that I review on Fridays", **in_group(BO))
        # The host's read grant: nobody but Ada reads what Ada said.
        bot.memory.access.can_read = lambda who, item: (
            who.user_id == ADA or ADA not in item.speaker_ids
        )
        await bot.say("/memory", **in_group(BO))
        screen = bot.emu.sent[-1].result["message_id"]
        text = text_of(bot, screen, GROUP)
        assert "Fridays" in text and "standup" not in text and "1 memory" in text
        hers = await bot.memory.store.pool.fetchval(
            "SELECT id FROM memory_records WHERE summary LIKE '%standup%'"
        )
        for act in ("a", "f"):  # a forged confirm or forget of a record Bo may not read
            forged = MemoryScreen(act=act, rid=hers, page=0, owner=BO).pack()
            refused = await press(bot, forged, screen, user_id=BO, chat_id=GROUP)
            assert refused["show_alert"] and "no longer valid" in refused["text"]
        assert "standup" not in text_of(bot, screen, GROUP)
        assert await bot.memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 2


async def test_an_admin_pressing_on_someones_screen_shows_what_the_opener_may_read() -> None:
    async with running_bot(plain, workspace="test") as bot:
        bot.emu.set_chat_member_status(GROUP, ADMIN, "administrator")
        await bot.say("@memory_test_bot remember that standup is at 10", **in_group(ADA))
        await bot.say("@memory_test_bot remember that I review on Fridays", **in_group(BO))
        # Bo may not read what Ada said; the admin may read everything.
        bot.memory.access.can_read = lambda who, item: (
            who.user_id != BO or ADA not in item.speaker_ids
        )
        await bot.say("/memory", **in_group(BO))
        screen = bot.emu.sent[-1].result["message_id"]
        refresh = data_of(bot, "Refresh", screen, GROUP)
        done = await press(bot, refresh, screen, user_id=ADMIN, chat_id=GROUP)
        assert not done.get("show_alert")
        text = text_of(bot, screen, GROUP)
        assert "Fridays" in text and "standup" not in text  # Bo's screen, in Bo's group message


async def test_someone_promoted_after_speaking_is_an_admin_at_once() -> None:
    async with running_bot(plain, workspace="test") as bot:
        await bot.say("@memory_test_bot remember that standup is at 10", **in_group(BO))
        # Bo's standing is cached as a member; then Bo is promoted (no chat_member update).
        bot.emu.set_chat_member_status(GROUP, BO, "administrator")
        reply = await bot.say("@memory_test_bot turn off memory", **in_group(BO))
        assert reply.startswith("Memory is off"), reply
        assert await bot.memory.store.pool.fetchval("SELECT enabled FROM memory_scopes") is False
        refused = await bot.say("@memory_test_bot turn on memory", **in_group(ADA))
        assert "admin" in refused  # still refused for a member, after asking again


async def test_a_replaced_memory_is_shown_marked_on_the_screen() -> None:
    """Corrections replace: the record a later conversation replaced stays on the screen,
    marked with what replaced it and when, until it is pruned or forgotten."""

    def correcting(body: dict[str, Any]) -> dict[str, Any]:
        answer = default_responder(body)
        document = body["messages"][-1]["content"]
        schema = body.get("response_format", {}).get("json_schema", {})
        if schema.get("name") == "memory_extraction" and "Porto" in document:
            out = json.loads(answer["content"])
            out["replaces"] = [m["id"] for m in json.loads(document)["existing_memories"]]
            answer["content"] = json.dumps(out)
        return answer

    async with running_bot(with_agent, workspace="test") as bot:
        bot.llm.responder = correcting
        await bot.say("I live in Lisbon")
        await bot.idle()
        await bot.say("I moved to Porto")
        await bot.idle()
        old, new = await bot.memory.store.pool.fetch(
            "SELECT id, replaced_by, replaced_at FROM memory_records ORDER BY created_at"
        )
        assert old["replaced_by"] == new["id"] and new["replaced_by"] is None
        await bot.say("/memory")
        screen = text_of(bot, bot.emu.sent[-1].result["message_id"])
        assert "2 memories" in screen
        when = old["replaced_at"].date().isoformat()
        assert f"replaced by {new['id']} on {when}" in screen
        assert screen.count("replaced by") == 1
