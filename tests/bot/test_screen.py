"""The /memory screen and the command menus, over HTTP through the emulator."""

from __future__ import annotations

import json
from datetime import UTC, datetime
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


def correcting(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model, extracting "I moved to Porto" as a correction of what it was given."""
    answer = default_responder(body)
    document = body["messages"][-1]["content"]
    schema = body.get("response_format", {}).get("json_schema", {})
    if schema.get("name") == "memory_extraction" and "Porto" in document:
        out = json.loads(answer["content"])
        out["replaces"] = [m["id"] for m in json.loads(document)["existing_memories"]]
        answer["content"] = json.dumps(out)
    return answer


MARCH_3 = datetime(2026, 3, 3, 12, tzinfo=UTC)
MARCH_5 = datetime(2026, 3, 5, 9, tzinfo=UTC)


def day(text: str) -> str:
    """A date as the screen writes it: on one line (no-break spaces)."""
    return text.replace(" ", "\u00a0")


async def test_a_replaced_memory_is_shown_marked_on_the_screen() -> None:
    """Corrections replace: the record a later conversation replaced stays on the screen,
    marked with when (in the user's language) and by what (the newer memory's text, never its
    ID; "a newer memory" once that one is gone), until it is pruned or forgotten."""
    async with running_bot(with_agent, workspace="test") as bot:
        bot.llm.responder = correcting
        await bot.say("I live in Lisbon")
        await bot.idle()
        await bot.say("I moved to Porto")
        await bot.idle()
        pool = bot.memory.store.pool
        old, new = await pool.fetch(
            "SELECT id, replaced_by, summary FROM memory_records ORDER BY created_at"
        )
        assert old["replaced_by"] == new["id"] and new["replaced_by"] is None
        await pool.execute(  # on a clock of the test's own
            "UPDATE memory_records SET created_at = $1, replaced_at = $2 WHERE id = $3",
            MARCH_3,
            MARCH_5,
            old["id"],
        )
        await pool.execute(
            "UPDATE memory_records SET created_at = $1 WHERE id = $2", MARCH_5, new["id"]
        )
        await bot.say("/memory")
        screen = bot.emu.sent[-1].result["message_id"]
        text = text_of(bot, screen)
        newer = new["summary"][:59] + "…" if len(new["summary"]) > 60 else new["summary"]
        assert "Porto" in newer and "2 memories" in text
        mar3, mar5 = day("Mar 3, 2026"), day("Mar 5, 2026")
        assert f"— {mar3} · replaced on {mar5} by “{newer}”" in text, text
        assert text.count("replaced on") == 1 and new["id"] not in text
        assert "2026-03" not in text
        # In Russian; then the newer memory forgotten, and the newer memory pruned.
        await bot.say("/memory", language_code="ru")
        ru = bot.emu.sent[-1].result["message_id"]
        ru3, ru5 = day("3 мар. 2026\u202fг."), day("5 мар. 2026\u202fг.")
        assert f"— {ru3} · заменено {ru5} записью «{newer}»" in text_of(bot, ru)
        await press(bot, data_of(bot, "Forget 1", screen), screen)
        await press(bot, data_of(bot, "Yes, forget it", screen), screen)
        text = text_of(bot, screen)
        assert "Porto" not in text and "replaced" not in text  # what it replaced holds again
        # The newer one pruned instead (a replacement stays): "by a newer memory".
        await pool.execute(
            "UPDATE memory_records SET replaced_by = 'mem_pruned', replaced_at = $2 WHERE id = $1",
            old["id"],
            MARCH_5,
        )
        await bot.say("/memory")
        text = text_of(bot, bot.emu.sent[-1].result["message_id"])
        assert f"— {mar3} · replaced on {mar5} by a newer memory" in text, text


async def test_a_note_reads_as_the_fact_in_the_users_words_with_a_date_in_their_language() -> None:
    """The screen shows a note as the page does: the fact without "remember that" (and 记住,
    запомни, запам'ятай, a leading @mention), also for notes stored before with those words;
    the date in the user's language, never ISO; who said it only in groups, by name (one the bot
    has no name for is "a member", never the user's ID); and the recall index and runs for a
    group's admins only."""
    said = {  # user: (language, what they said, the row's text and date)
        2101: (
            "en",
            "@memory_test_bot remember that my dog is Rex",
            "my dog is Rex",
            "Mar 3, 2026",
        ),
        2102: ("zh-hans", "@memory_test_bot 记住我的猫叫麻薯", "我的猫叫麻薯", "2026年3月3日"),
        2103: ("ru", "запомни, что мой кот Барсик", "мой кот Барсик", "3 мар. 2026\u202fг."),
        2104: ("uk", "запам'ятай, що мій кіт Мурчик", "мій кіт Мурчик", "3 бер. 2026\u202fр."),
    }
    async with running_bot(plain, workspace="test") as bot:
        for user, (language, text, _, _) in said.items():
            await bot.say(text, chat_id=user, user_id=user, language_code=language)
        await bot.say("@memory_test_bot remember that standup is at 10", **in_group(ADA))
        await bot.say("@memory_test_bot remember that I review on Fridays", **in_group(BO))
        pool = bot.memory.store.pool
        # A note stored by an older version: the whole message, the request words included.
        await pool.execute(
            "UPDATE memory_records SET title = $1, summary = $1 WHERE summary = $2",
            "@memory_test_bot remember that I review on Fridays",
            "I review on Fridays",
        )
        await pool.execute("UPDATE memory_records SET created_at = $1", MARCH_3)
        for user, (language, _, fact, made) in said.items():
            await bot.say("/memory", chat_id=user, user_id=user, language_code=language)
            text = text_of(bot, bot.emu.sent[-1].result["message_id"], chat_id=user)
            assert f"1. {fact} — {day(made)}\n" in text, text  # a private chat: no speaker
            assert "2026-03-03" not in text and "remember" not in text and "@" not in text
        # A group. The bot learns names from updates: someone who has not written since a
        # restart has none yet (here Bo's note, said by user 1009 as far as the bot knows).
        await pool.execute(
            "UPDATE memory_records SET speaker_ids = '{1009}' WHERE summary LIKE '%Fridays'"
        )
        bot.emu.set_chat_member_status(GROUP, ADMIN, "administrator")
        await bot.say("/memory", **in_group(ADA, first_name="Ada"))
        text = text_of(bot, bot.emu.sent[-1].result["message_id"], GROUP)
        mar3 = day("Mar 3, 2026")
        assert f". I review on Fridays — {mar3} · a member\n" in text, text
        assert f". standup is at 10 — {mar3} · Ada\n" in text, text
        assert "1009" not in text and "@" not in text and "remember" not in text
        assert text.endswith("2 memories") and "index" not in text  # a member: the count
        await bot.say("/memory", **in_group(ADMIN, first_name="Cy"))
        text = text_of(bot, bot.emu.sent[-1].result["message_id"], GROUP)
        assert text.endswith("2 memories · the index is being updated · not run here yet"), text


async def test_a_row_stays_short_however_many_speakers_it_has() -> None:
    """A memory of a long group conversation names its first three speakers and how many more:
    five such rows, every name at Telegram's 64 characters, stay within a message's 4096."""
    async with running_bot(plain, workspace="test") as bot:
        for n in range(5):
            await bot.say(f"@memory_test_bot remember that plan {n} is agreed", **in_group(ADA))
        speakers = list(range(5001, 5021))
        await bot.memory.store.pool.execute("UPDATE memory_records SET speaker_ids = $1", speakers)
        for user in speakers:
            name = f"{user}" + "x" * 60
            bot.send("hello", **in_group(user, first_name=name))
        await bot.settled()
        await bot.say("/memory", **in_group(ADA))
        text = text_of(bot, bot.emu.sent[-1].result["message_id"], GROUP)
        assert len(text) <= 4096 and text.count("and 17 more") == 5, len(text)


async def test_the_screen_says_when_its_memories_are_at_their_share_of_the_cap() -> None:
    """The cap shared fairly: a scope holding its share of the workspace's cap while others hold
    memories too gives its least used memories first when the cap is reached, and its screen
    says so (cap 4, share 0.5: 2; one workspace for the bot)."""
    async with running_bot(
        plain, workspace="test", workspace_max_records=4, scope_max_share=0.5
    ) as bot:
        await bot.say("remember that my bike is red")
        await bot.say("remember that my car is blue")
        await bot.say("/memory")
        text = text_of(bot, bot.emu.sent[-1].result["message_id"])
        assert "fair share" not in text, text  # alone in the workspace: nothing to share
        await bot.say("@memory_test_bot remember that standup is at 10", **in_group(BO))
        await bot.say("/memory")
        text = text_of(bot, bot.emu.sent[-1].result["message_id"])
        assert "Memory here holds 2; its fair share is 2." in text, text
        await bot.say("/memory", language_code="zh")
        zh = text_of(bot, bot.emu.sent[-1].result["message_id"])
        assert "这里保存了 2 条记忆，其公平份额为 2 条。" in zh, zh
