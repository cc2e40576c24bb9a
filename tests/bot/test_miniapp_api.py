"""The memory manager Mini App's API over HTTP, next to the bot on the emulator and PostgreSQL:
initData, scope tickets, and the chat's own rules on every call."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from aiogram import Dispatcher
from aiogram.webhook.aiohttp_server import SimpleRequestHandler
from aiohttp import web
from aiohttp.test_utils import TestServer
from pydantic import ValidationError

from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram import setup
from bot_memory_aiogram.i18n import t
from bot_memory_aiogram.miniapp import mount
from bot_memory_aiogram.miniapp.tickets import Ticket, issue, ticket_key
from bot_memory_aiogram.testing import TestBot, running_bot
from tests.support.miniapp_kit import APP_URL, Page, client, init_data, served

ADA, BO, CY = 1001, 1002, 1003
# Membership is asked every time (statuses change mid-test); two memories per page load.
SETTINGS: dict[str, Any] = {
    "miniapp_url": APP_URL,
    "member_cache_seconds": 0,
    "miniapp_page_size": 2,
}
GROUP, TOPIC = -1001234567890, 7


def plain(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)  # the agent answers: conversations to extract
    return dp


def in_topic(user_id: int, **extra: Any) -> dict[str, Any]:
    return {
        "chat_id": GROUP,
        "user_id": user_id,
        "chat_type": "supergroup",
        "is_forum": True,
        "thread_id": TOPIC,
        "first_name": {ADA: "Ada", BO: "Bo", CY: "Cy"}[user_id],
        "chat_title": "Launch team",
        **extra,
    }


@dataclass
class App:
    bot: TestBot
    http: httpx.AsyncClient

    def page(self, user_id: int, *, ticket: str = "", **init: Any) -> Page:
        return Page(self.http, init_data(self.bot, user_id, **init), ticket)

    def ticket(self, user_id: int, *, kind: Any = "scope", chat_id: int = GROUP, **kw: Any) -> str:
        now = datetime.now(UTC)
        fields: dict[str, Any] = {
            "kind": kind,
            "private": False,
            "chat_id": chat_id,
            "topic_id": TOPIC,
            "user_id": user_id,
            "expires_at": int((now + timedelta(hours=1)).timestamp()),
            "workspace": self.bot.memory.chats.default_workspace(self.bot.emu.bot_id, chat_id),
            **kw,
        }
        return issue(Ticket(**fields), ticket_key(self.bot.emu.token))

    async def ids(self, like: str) -> list[str]:
        rows = await self.bot.memory.store.pool.fetch(
            "SELECT id FROM memory_records WHERE valid AND summary LIKE $1 ORDER BY id",
            f"%{like}%",
        )
        return [r["id"] for r in rows]


@pytest.fixture
async def app(db_url: str) -> AsyncIterator[App]:
    async with (
        running_bot(plain, database_url=db_url, **SETTINGS) as bot,
        served(bot) as base,
        client(base) as http,
    ):
        await bot.say("remember that my cat is Mochi")
        await bot.say("remember that I moved to Lisbon")
        await bot.say("@memory_test_bot remember that standup is at 10", **in_topic(ADA))
        await bot.say("@memory_test_bot remember that I review on Fridays", **in_topic(BO))
        yield App(bot, http)


async def test_the_page_lists_searches_and_links_what_a_member_may_read(app: App) -> None:
    ada = app.page(ADA)
    session = (await ada.get("api/session")).json()
    assert session["scope"] == {"kind": "private", "topic": False, "title": "Memory in this chat"}
    assert session["strings"]["page-search"] == "Search memories" and session["may_toggle"]
    listed = (await ada.get("api/memories")).json()
    assert [r["title"] for r in listed["records"]] == ["I moved to Lisbon", "my cat is Mochi"]
    assert listed["status"].startswith("2 memories") and listed["standing"] == "ok"
    first = listed["records"][0]
    assert first["summary"] == "I moved to Lisbon" and first["may_forget"]
    assert first["sources"][0]["link"] is None  # a private chat's messages have no links
    found = (await ada.get("api/memories", q="mochi")).json()["records"]
    assert [r["title"] for r in found] == ["my cat is Mochi"]
    # The Topic, through a scope ticket: links to the Topic's messages, speakers by name.
    topic = app.page(BO, ticket=app.ticket(BO), language="zh-hans")
    zh = (await topic.get("api/session")).json()
    assert zh["scope"]["title"] == "本话题的记忆" and zh["strings"]["page-search"] == "搜索记忆"
    records = (await topic.get("api/memories")).json()["records"]
    assert {r["title"] for r in records} == {"standup is at 10", "I review on Fridays"}
    mine = next(r for r in records if r["speakers"] == ["Bo"])
    assert mine["may_forget"] and not next(r for r in records if r is not mine)["may_forget"]
    telegram_id = await app.bot.memory.store.pool.fetchval(
        "SELECT telegram_message_id FROM messages WHERE text LIKE '%Fridays%'"
    )
    assert mine["sources"][0]["link"] == f"https://t.me/c/1234567890/{TOPIC}/{telegram_id}"
    assert "Mochi" not in json.dumps(records)  # the private scope never shows up here
    # Someone who never wrote to the bot (the page opened from its menu): nothing, plainly.
    stranger = app.page(4242)
    nothing = (await stranger.get("api/memories")).json()
    assert nothing["records"] == [] and nothing["standing"] == "gone"
    refused = await stranger.post("api/switch", {"enabled": False})
    assert (
        refused.status_code == 409
        and refused.json()["message"] == "Memory is unavailable in this chat."
    )


async def test_a_note_is_the_fact_in_the_users_own_words_in_four_languages(app: App) -> None:
    said = {  # user: (language, what they said, what is kept)
        2101: ("zh-hans", "@memory_test_bot 记住我的猫叫麻薯", "我的猫叫麻薯"),
        2102: ("ru", "запомни, что мой кот Барсик", "мой кот Барсик"),
        2103: ("uk", "запам'ятай, що мій кіт Мурчик", "мій кіт Мурчик"),
        2104: ("en", "@memory_test_bot remember that my dog is Rex", "my dog is Rex"),
    }
    pool = app.bot.memory.store.pool
    for user, (language, text, _) in said.items():
        await app.bot.say(text, chat_id=user, user_id=user, language_code=language)
    for user, (language, text, kept) in said.items():
        [row] = await pool.fetch(
            "SELECT r.title, r.summary, m.text FROM memory_records r JOIN record_sources x"
            " ON x.workspace_id = r.workspace_id AND x.record_id = r.id JOIN messages m"
            " ON m.workspace_id = r.workspace_id AND m.id = x.message_id"
            " WHERE r.scope_key LIKE $1",
            f"%/p/{user}/%",
        )
        assert (row["title"], row["summary"]) == (kept, kept), language
        assert row["text"] == text  # the source message keeps the whole text
        [shown] = (await app.page(user, language=language).get("api/memories")).json()["records"]
        assert (shown["title"], shown["summary"]) == (kept, kept), language
    # A note stored before, with the request words (its title too, the message's first 60
    # characters): shown the same way, title and summary (export keeps it).
    for stored, kept in (
        ("@memory_test_bot remember that my cat is Mochi", "my cat is Mochi"),
        ("запомни, что мой кот Барсик", "мой кот Барсик"),
    ):
        await pool.execute(
            "UPDATE memory_records SET title = $1, summary = $1 WHERE summary = $2", stored, kept
        )
    mochi = (await app.page(ADA).get("api/memories", q="Mochi")).json()["records"]
    assert [(r["title"], r["summary"]) for r in mochi] == [("my cat is Mochi",) * 2]
    [barsik] = (await app.page(2102, language="ru").get("api/memories")).json()["records"]
    assert (barsik["title"], barsik["summary"]) == ("мой кот Барсик",) * 2
    # A note longer than its stored title: the whole fact, not the title's 60 characters.
    long = "my sister's birthday is on 3 March and she likes tulips, not roses, ever since 2019"
    await app.bot.say(f"remember that {long}", chat_id=2104, user_id=2104)
    [note] = (await app.page(2104).get("api/memories", q="tulips")).json()["records"]
    assert (note["title"], note["summary"]) == (long, long)


async def test_a_record_names_no_ids_and_the_page_gets_the_replaced_strings(app: App) -> None:
    """Who said it: a first name, or null for someone the bot has no name for (the page shows
    "a member"), never the user's ID; replaced_by/replaced_at with each record, and the strings
    the page marks a replaced memory with, in the user's language, placeholders for the page's
    own date and the newer memory's text."""
    pool = app.bot.memory.store.pool
    await pool.execute(  # said by someone the bot has not heard from since a restart
        "UPDATE memory_records SET speaker_ids = '{1009}' WHERE summary = 'I review on Fridays'"
    )
    cy = app.page(CY, ticket=app.ticket(CY))
    listed = (await cy.get("api/memories")).json()["records"]
    assert {tuple(r["speakers"]) for r in listed} == {("Ada",), (None,)}
    assert "1009" not in json.dumps(listed)
    assert all(r["replaced_by"] is None and r["replaced_at"] is None for r in listed)
    strings = (await app.page(ADA, language="ru").get("api/session")).json()["strings"]
    assert strings["screen-someone"] == "участник"
    assert strings["page-replaced"] == "Заменено"
    assert strings["page-replaced-on"] == "Заменено {when}"
    assert strings["page-replaced-by"] == "{when}, записью «{by}»"
    assert strings["page-replaced-by-newer"] == "{when}, более новой записью"


async def test_forged_expired_and_replayed_init_data_are_refused(app: App) -> None:
    valid = init_data(app.bot, ADA)
    assert (await Page(app.http, valid).get("api/session")).status_code == 200
    forged = valid.replace("%22id%22%3A1001", "%22id%22%3A1002")  # claims to be Bo
    assert forged != valid
    other_bot = init_data(app.bot, ADA, token="43:OTHER")  # signed for another bot
    for raw in (forged, other_bot, "", "user=%7B%7D&hash=00"):
        answer = await Page(app.http, raw).get("api/memories")
        assert answer.status_code == 401 and answer.json()["error"] == "auth", raw
        assert "confirm who you are" in answer.json()["message"]
    old = init_data(app.bot, ADA, age_seconds=3601)
    expired = await Page(app.http, old).get("api/memories")
    assert expired.status_code == 401 and expired.json()["error"] == "auth_expired"
    # Ada's valid initData replayed with a ticket issued to Bo: refused.
    replayed = await app.page(ADA, ticket=app.ticket(BO)).get("api/memories")
    assert replayed.status_code == 403 and replayed.json()["error"] == "link"
    # An error is worded in the language the page claims, and says nothing internal.
    zh = await Page(app.http, init_data(app.bot, ADA, language="zh", age_seconds=9999)).get(
        "api/memories"
    )
    assert zh.json()["message"] == "此页面打开太久了。请关闭后从机器人重新打开。"


async def test_scope_tickets_altered_expired_or_for_another_chat_are_refused(app: App) -> None:
    good = app.ticket(ADA)
    assert (await app.page(ADA, ticket=good).get("api/memories")).status_code == 200
    altered = good[:10] + ("A" if good[10] != "A" else "B") + good[11:]
    for ticket, code in (
        (altered, "link"),
        (good + "x", "link"),
        (app.ticket(ADA, expires_at=int(datetime.now(UTC).timestamp()) - 1), "link_expired"),
        (app.ticket(ADA, kind="download", nonce=bytes(16)), "link"),  # a download's is no scope
        (app.ticket(ADA, kind="link"), "link"),
    ):
        answer = await app.page(ADA, ticket=ticket).get("api/memories")
        assert answer.status_code == 403 and answer.json()["error"] == code, ticket
    # A ticket for another chat, where Ada is not a member: nothing of it is shown.
    app.bot.emu.set_chat_member_status(-1009999, ADA, "left")
    other = await app.page(ADA, ticket=app.ticket(ADA, chat_id=-1009999)).get("api/memories")
    assert other.status_code == 403 and other.json()["error"] == "not_member"


async def test_a_member_who_left_is_refused_at_the_next_call(app: App) -> None:
    ada = app.page(ADA, ticket=app.ticket(ADA))
    assert (await ada.get("api/memories")).status_code == 200
    app.bot.emu.set_chat_member_status(GROUP, ADA, "left")
    for answer in (
        await ada.get("api/memories"),
        await ada.post("api/switch", {"enabled": False}),
        await ada.post("api/export-link", {}),
    ):
        assert answer.status_code == 403 and answer.json()["error"] == "not_member"
        assert answer.json()["message"] == "Only current members of this group can use its memory."


async def test_switching_a_groups_memory_takes_an_admin(app: App) -> None:
    bo = app.page(BO, ticket=app.ticket(BO))
    refused = await bo.post("api/switch", {"enabled": False})
    assert refused.status_code == 403 and refused.json()["error"] == "not_allowed"
    assert not (await bo.get("api/session")).json()["may_toggle"]
    enabled = "SELECT enabled FROM memory_scopes WHERE scope_key LIKE '%/g/%'"
    assert await app.bot.memory.store.pool.fetchval(enabled) is True
    app.bot.emu.set_chat_member_status(GROUP, CY, "administrator")
    cy = app.page(CY, ticket=app.ticket(CY))
    done = await cy.post("api/switch", {"enabled": False})
    assert done.status_code == 200 and done.json()["message"].startswith(
        "Memory is off in this topic"
    )
    assert await app.bot.memory.store.pool.fetchval(enabled) is False
    again = await cy.post("api/switch", {"enabled": False})  # the state wanted: no toggle back
    assert again.json()["message"] == "Memory is already off in this topic."
    listed = (await bo.get("api/memories")).json()  # off: kept, and shown, not hidden
    assert listed["enabled"] is False and len(listed["records"]) == 2
    status = (await cy.get("api/status")).json()
    assert status["spend"].startswith("Spent $0.00") and "No jobs need" in status["problems"]
    # Job phases in words, never their names.
    assert not any(p in status["jobs_text"] for p in ("extract", "consolidate", "done"))
    zh = (await app.page(CY, ticket=app.ticket(CY), language="zh-hans").get("api/status")).json()
    assert zh["jobs_text"] == "无" or "：" in zh["jobs_text"]  # none, or phases in words
    counted = (await cy.get("api/session")).json()["counted"]["page-forget-n"]
    assert counted[1] == "Forget 1 memory" and counted[3] == "Forget 3 memories"
    ru = app.page(CY, ticket=app.ticket(CY), language="ru")
    ru_counted = (await ru.get("api/session")).json()["counted"]["page-forget-n"]
    assert ru_counted[1:6:2] == ["Забыть 1 запись", "Забыть 3 записи", "Забыть 5 записей"]
    assert (await bo.get("api/status")).status_code == 403


async def test_with_memory_off_what_is_kept_is_listed_searched_forgotten_and_exported(
    app: App,
) -> None:
    ada = app.page(ADA)
    assert (await ada.post("api/switch", {"enabled": False})).status_code == 200
    listed = (await ada.get("api/memories")).json()
    assert listed["enabled"] is False and listed["standing"] == "off"
    assert [r["title"] for r in listed["records"]] == ["I moved to Lisbon", "my cat is Mochi"]
    assert listed["status"].startswith("2 memories")
    found = (await ada.get("api/memories", q="mochi")).json()["records"]
    assert [r["title"] for r in found] == ["my cat is Mochi"]
    link = (await ada.post("api/export-link", {})).json()["url"]
    lines = (await app.http.get(link, headers=ada.headers)).text.splitlines()
    assert len(lines) == 2 and "Mochi" in lines[0]  # oldest first
    [mochi] = await app.ids("Mochi")
    preview = (await ada.post("api/preview", {"ids": [mochi]})).json()
    assert preview["allowed"] and [r["id"] for r in preview["records"]] == [mochi]
    done = await ada.post("api/forget", {"ids": [mochi]})
    assert done.status_code == 200, done.json()  # was 404 "That memory is already gone."
    assert done.json() == {"forgotten": [mochi], "message": "Done: I forgot one memory."}
    assert await app.ids("Mochi") == []
    after = (await ada.get("api/memories")).json()
    assert after["enabled"] is False and [r["title"] for r in after["records"]] == [
        "I moved to Lisbon"
    ]
    # In a Topic, a participant's own kept memory too.
    app.bot.emu.set_chat_member_status(GROUP, CY, "administrator")
    cy = app.page(CY, ticket=app.ticket(CY))
    assert (await cy.post("api/switch", {"enabled": False})).status_code == 200
    bo = app.page(BO, ticket=app.ticket(BO))
    [fridays] = await app.ids("Fridays")
    assert len((await bo.get("api/memories")).json()["records"]) == 2
    mine = await app.http.get(
        (await bo.post("api/export-link", {})).json()["url"], headers=bo.headers
    )
    assert "Fridays" in mine.text
    gone = await bo.post("api/forget", {"ids": [fridays]})
    assert gone.status_code == 200 and gone.json()["forgotten"] == [fridays]


async def test_a_participant_forgets_only_what_is_theirs(app: App) -> None:
    [standup] = await app.ids("standup")
    [fridays] = await app.ids("Fridays")
    bo = app.page(BO, ticket=app.ticket(BO))
    preview = (await bo.post("api/preview", {"ids": [standup]})).json()
    assert preview["allowed"] is False and "admin" in preview["message"]
    refused = await bo.post("api/forget", {"ids": [standup]})
    assert refused.status_code == 403 and refused.json()["error"] == "not_allowed"
    assert await app.ids("standup") == [standup]
    preview = (await bo.post("api/preview", {"ids": [fridays]})).json()
    assert preview["allowed"] and [r["id"] for r in preview["records"]] == [fridays]
    assert preview["message"] == "This memory will be forgotten:" and "left" not in preview
    # Both chosen: what is theirs goes, the rest is listed as left, and the forget does so.
    preview = (await bo.post("api/preview", {"ids": [fridays, standup]})).json()
    assert preview["allowed"] and [r["id"] for r in preview["records"]] == [fridays]
    assert [r["id"] for r in preview["left"]] == [standup]
    assert preview["left_message"] == t("en", "page-preview-left", count=1)
    both = await bo.post("api/forget", {"ids": [fridays, standup]})
    assert both.status_code == 200 and both.json() == {
        "forgotten": [fridays],
        "left": [standup],
        "message": t("en", "memory-partly-forgotten", count=1, left=1),
    }
    assert await app.ids("Fridays") == [] and await app.ids("standup") == [standup]
    tombstones = await app.bot.memory.store.pool.fetchval("SELECT count(*) FROM tombstones")
    assert tombstones >= 1  # the chat's forget: tombstones, not just a deleted row
    gone = await bo.post("api/forget", {"ids": [fridays]})
    assert gone.status_code == 404 and gone.json()["message"] == "That memory is already gone."
    for body in ({"ids": []}, {"ids": "x"}, {"nope": 1}, {"ids": ["a"] * 51}):
        bad = await bo.post("api/forget", body)
        assert bad.status_code in (400, 404), body


async def test_forgetting_several_previews_what_goes_with_them(app: App) -> None:
    bot = app.bot
    await bot.say("I adopted a second cat, Tofu")  # answered: a pair for extraction
    await bot.idle()
    [tofu] = await app.ids("Tofu")
    await bot.say("she likes tuna")
    said = await bot.memory.store.pool.fetchval(
        "SELECT id FROM messages WHERE text = 'she likes tuna'"
    )
    extraction = {
        "title": "Tofu",
        "summary": "Tofu likes tuna",
        "source_ids": [f"m{said}"],
        "memory_ids": [tofu],
    }
    bot.llm.script({"role": "assistant", "content": json.dumps(extraction)})
    await bot.idle()  # a record built with the first one: it depends on its sources too
    [built] = await app.ids("Tofu likes tuna")
    ada = app.page(ADA)
    first = (await ada.get("api/memories")).json()
    rest = (await ada.get("api/memories", offset=2)).json()
    assert first["more"] and not rest["more"]  # pages of BOT_MEMORY_MINIAPP_PAGE_SIZE (2)
    assert [r["id"] for r in first["records"]] == [built, tofu] and len(rest["records"]) == 2
    preview = (await ada.post("api/preview", {"ids": [tofu]})).json()
    assert preview["allowed"] and {r["id"] for r in preview["records"]} == {tofu, built}
    assert preview["message"] == "These 2 memories will be forgotten:"
    assert await app.ids("Tofu") == sorted([tofu, built])  # a preview changes nothing
    lisbon = await app.ids("Lisbon")
    done = (await ada.post("api/forget", {"ids": [tofu, *lisbon]})).json()
    assert set(done["forgotten"]) == {tofu, built, *lisbon}
    assert done["message"] == "Done: I forgot 3 memories."
    assert await app.ids("Tofu") == [] and await app.ids("Lisbon") == []
    assert len(await app.ids("Mochi")) == 1


async def test_read_grants_hide_records_from_list_preview_and_export(app: App) -> None:
    # The host's read grant: nobody but Ada reads what Ada said.
    app.bot.memory.access.can_read = lambda who, item: (
        who.user_id == ADA or ADA not in item.speaker_ids
    )
    [standup] = await app.ids("standup")
    bo = app.page(BO, ticket=app.ticket(BO))
    listed = (await bo.get("api/memories")).json()["records"]
    assert [r["title"] for r in listed] == ["I review on Fridays"]
    assert (await bo.get("api/memories", q="standup")).json()["records"] == []
    hidden = await bo.post("api/preview", {"ids": [standup]})
    assert hidden.status_code == 404
    ada = app.page(ADA, ticket=app.ticket(ADA))
    assert len((await ada.get("api/memories")).json()["records"]) == 2
    # A grant that hides Bo's own statements from him: his export is empty too.
    app.bot.memory.access.can_read = lambda who, item: who.user_id != BO
    link = (await bo.post("api/export-link", {})).json()["url"]
    assert (await app.http.get(link, headers=bo.headers)).text == ""


async def test_export_is_what_the_user_may_take_as_json_lines(app: App) -> None:
    bo = app.page(BO, ticket=app.ticket(BO))
    link = (await bo.post("api/export-link", {"bearer": True})).json()
    assert link["file_name"].endswith(".jsonl") and link["url"].startswith("api/export?t=")
    download = await app.http.get(link["url"])  # no headers: a bearer link (downloadFile's)
    assert download.status_code == 200
    assert download.headers["content-type"].startswith("application/x-ndjson")
    assert "attachment" in download.headers["content-disposition"]
    lines = [json.loads(line) for line in download.text.splitlines()]
    assert [line["summary"] for line in lines] == ["I review on Fridays"]
    assert lines[0]["sources"][0]["source_id"].startswith("m") and lines[0]["workspace"]
    # Private: everything of the user's own chat, the same lines as `bot-memory export`.
    ada = app.page(ADA)
    mine = await app.http.get(
        (await ada.post("api/export-link", {})).json()["url"], headers=ada.headers
    )  # the page's own fetch: with its login data
    assert len(mine.text.splitlines()) == 2 and "Mochi" in mine.text
    # The link is bound to its user and scope, and to downloads only.
    scope_ticket = app.ticket(BO)
    assert (await app.http.get("api/export", params={"t": scope_ticket})).status_code == 403
    tampered = link["url"][:-3] + ("AAA" if not link["url"].endswith("AAA") else "BBB")
    assert (await app.http.get(tampered)).status_code == 403


async def test_the_chat_screen_offers_the_page_and_shows_its_changes(app: App) -> None:
    bot = app.bot
    await bot.say("/memory")
    screen = bot.emu.sent[-1].result["message_id"]
    rows = bot.emu.get_message(1001, screen)["reply_markup"]["inline_keyboard"]
    assert rows[-1] == [{"text": "Open memory manager", "web_app": {"url": APP_URL}}]
    ada = app.page(ADA)
    [mochi] = await app.ids("Mochi")
    await ada.post("api/forget", {"ids": [mochi]})
    refresh = next(b for row in rows for b in row if b["text"] == "Refresh")
    bot.emu.push_callback_query(
        chat_id=1001, user_id=ADA, data=refresh["callback_data"], message_id=screen
    )
    await bot.emu.wait_for_calls("answerCallbackQuery", 1)
    await bot.settled()
    text = bot.emu.get_message(1001, screen)["text"]
    assert "Lisbon" in text and "Mochi" not in text


async def test_a_topic_opens_through_the_private_chat_with_a_signed_ticket(app: App) -> None:
    bot = app.bot
    await bot.say("/memory", **in_topic(BO))
    screen = bot.emu.sent[-1].result["message_id"]
    rows = bot.emu.get_message(GROUP, screen)["reply_markup"]["inline_keyboard"]
    [button] = rows[-1]
    assert button["text"] == "Open memory manager" and "web_app" not in button  # groups: no
    bot.emu.push_callback_query(
        chat_id=GROUP, user_id=BO, data=button["callback_data"], message_id=screen
    )
    [answered] = await bot.emu.wait_for_calls("answerCallbackQuery", 1)
    url = answered.params["url"]
    assert url.startswith("https://t.me/memory_test_bot?start=bm") and len(url.split("=")[1]) <= 64
    start = "/start " + url.split("=", 1)[1]
    # Someone else arriving with Bo's link is turned away.
    assert "not valid for you" in await bot.say(start, chat_id=CY, user_id=CY)
    reply = await bot.say(start, chat_id=BO, user_id=BO, first_name="Bo")
    assert "Launch team" in reply
    sent = bot.emu.sent[-1].params["reply_markup"]["inline_keyboard"][0][0]
    page_url = sent["web_app"]["url"]
    assert page_url.startswith(APP_URL + "?s=") and str(GROUP) not in page_url
    ticket = page_url.split("?s=", 1)[1]
    topic = app.page(BO, ticket=ticket)
    titles = {r["title"] for r in (await topic.get("api/memories")).json()["records"]}
    assert titles == {"standup is at 10", "I review on Fridays"}
    # The same ticket with Ada's initData: it was issued to Bo.
    assert (await app.page(ADA, ticket=ticket).get("api/memories")).status_code == 403


async def test_the_emulator_refuses_web_app_buttons_where_telegram_does(app: App) -> None:
    bot = app.bot
    markup = {"inline_keyboard": [[{"text": "x", "web_app": {"url": APP_URL}}]]}
    from aiogram.exceptions import TelegramBadRequest
    from aiogram.types import InlineKeyboardMarkup

    keyboard = InlineKeyboardMarkup.model_validate(markup)
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):
        await bot.bot.send_message(GROUP, "in a group", reply_markup=keyboard)
    plain_http = InlineKeyboardMarkup.model_validate(
        {"inline_keyboard": [[{"text": "x", "web_app": {"url": "http://memory.example/"}}]]}
    )
    with pytest.raises(TelegramBadRequest, match="Only HTTPS"):
        await bot.bot.send_message(ADA, "not https", reply_markup=plain_http)
    await bot.bot.send_message(ADA, "fine", reply_markup=keyboard)


async def test_it_mounts_in_a_webhook_server_next_to_the_webhook(app: App) -> None:
    bot = app.bot
    server = web.Application()
    SimpleRequestHandler(dispatcher=bot.dp, bot=bot.bot).register(server, path="/webhook")
    assert mount(server, bot.dp, bot.bot) is not None
    async with (
        TestServer(server) as test_server,
        httpx.AsyncClient(base_url=str(test_server.make_url("/"))) as http,
    ):
        moved = await http.get("/app")
        assert moved.status_code == 308 and moved.headers["location"] == "/app/"
        page = await http.get("/app/")
        assert page.status_code == 200 and "app.js" in page.text
        assert "script-src 'self' https://telegram.org" in page.headers["content-security-policy"]
        session = await http.get(
            "/app/api/session", headers={"Authorization": f"tma {init_data(bot, ADA)}"}
        )
        assert session.json()["user"]["id"] == ADA
        before = len(bot.emu.sent)
        update = {
            "update_id": 990001,
            "message": {
                "message_id": 9001,
                "date": int(datetime.now(UTC).timestamp()),
                "chat": {"id": ADA, "type": "private", "first_name": "Ada"},
                "from": {"id": ADA, "is_bot": False, "first_name": "Ada"},
                "text": "/memory",
                "entities": [{"type": "bot_command", "offset": 0, "length": 7}],
            },
        }
        assert (await http.post("/webhook", json=update)).status_code == 200
        [screen] = (await bot.emu.wait_for_sent(before + 1))[before:]
        assert screen.params["text"].startswith("Memory in this chat")


async def test_without_the_url_setting_nothing_is_served_or_shown(db_url: str) -> None:
    async with running_bot(plain, database_url=db_url) as bot:
        from bot_memory_aiogram.miniapp import serve

        assert await serve(bot.dp, bot.bot, host="127.0.0.1", port=0) is None
        await bot.say("/memory")
        rows = bot.emu.sent[-1].params["reply_markup"]["inline_keyboard"]
        assert all(
            "web_app" not in b and b["text"] != "Open memory manager" for r in rows for b in r
        )
    with pytest.raises(ValidationError, match="https"):
        MemorySettings(miniapp_url="http://memory.example/")


async def test_a_hosts_test_calls_the_api_with_the_kits_signed_init_data() -> None:
    """Only public names, as docs/miniapp.md shows a host's test: the page on a loopback port,
    initData signed by the test kit, a Topic through the ticket in the bot's button."""
    from bot_memory_aiogram.miniapp import serve
    from bot_memory_aiogram.testing import miniapp_headers, sign_init_data

    async with running_bot(plain, miniapp_url="https://bot.example/memory/") as bot:
        assert await bot.say("remember that my cat is Mochi") == "Noted. I'll remember that."
        runner = await serve(bot.dp, bot.bot, host="127.0.0.1", port=0)
        assert runner is not None
        host, port = runner.addresses[0][:2]
        try:
            async with httpx.AsyncClient(base_url=f"http://{host}:{port}/memory/") as http:
                headers = miniapp_headers(bot.emu.token, user=ADA)
                session = await http.get("api/session", headers=headers)
                assert session.status_code == 200 and session.json()["user"]["id"] == ADA
                listed = (await http.get("api/memories", headers=headers)).json()
                assert [r["title"] for r in listed["records"]] == ["my cat is Mochi"]
                switched = await http.post("api/switch", json={"enabled": False}, headers=headers)
                assert switched.status_code == 200 and switched.json()["enabled"] is False
                # Unsigned, signed with another token, or too old: 401 with a code.
                assert (await http.get("api/session")).status_code == 401
                forged = {"Authorization": "tma " + sign_init_data("1:other", user=ADA)}
                assert (await http.get("api/session", headers=forged)).json()["error"] == "auth"
                old = miniapp_headers(
                    bot.emu.token, user=ADA, auth_date=datetime.now(UTC) - timedelta(days=1)
                )
                expired = await http.get("api/session", headers=old)
                assert (expired.status_code, expired.json()["error"]) == (401, "auth_expired")
                # A Topic: the bot's button in the private chat carries the scope ticket.
                await bot.say("@memory_test_bot remember that standup is at 10", **in_topic(BO))
                await bot.say("/memory", **in_topic(BO))
                screen = bot.emu.sent[-1].result["message_id"]
                keyboard = bot.emu.get_message(GROUP, screen)["reply_markup"]["inline_keyboard"]
                bot.emu.push_callback_query(
                    chat_id=GROUP,
                    user_id=BO,
                    data=keyboard[-1][0]["callback_data"],
                    message_id=screen,
                )
                [answered] = await bot.emu.wait_for_calls("answerCallbackQuery", 1)
                start = "/start " + answered.params["url"].split("=", 1)[1]
                await bot.say(start, chat_id=BO, user_id=BO, first_name="Bo")
                button = bot.emu.sent[-1].params["reply_markup"]["inline_keyboard"][0][0]
                ticket = button["web_app"]["url"].split("?s=", 1)[1]
                bo = miniapp_headers(
                    bot.emu.token, user={"id": BO, "first_name": "Bo"}, scope_ticket=ticket
                )
                topic = (await http.get("api/memories", headers=bo)).json()
                assert [r["title"] for r in topic["records"]] == ["standup is at 10"]
        finally:
            await runner.cleanup()


async def _bad_bodies(http: httpx.AsyncClient, headers: dict[str, str], prefix: str) -> None:
    """Every malformed body a 400, every oversized one a 413, no traceback."""
    forget = prefix + "/api/forget"
    nested = "[" * 100_000 + "]" * 100_000  # deeper than json can parse: RecursionError
    for body, status in (
        (b"{not json", 400),
        (nested[:60_000].encode(), 400),
        (json.dumps({"ids": ["mem\u0000x"]}).encode(), 400),  # a NUL in an ID
        (json.dumps({"ids": ["a" * 65]}).encode(), 400),
        (b'{"ids": ["' + b"a" * 70_000 + b'"]}', 413),  # past the page's 64 KiB
        (b"x" * (2 * 1024 * 1024), 413),
    ):
        answer = await http.post(forget, content=body, headers=headers)
        assert answer.status_code == status, (body[:40], answer.status_code, answer.text[:200])


async def test_bad_bodies_are_400_and_413_served_or_mounted(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    headers = {
        "Authorization": f"tma {init_data(app.bot, ADA)}",
        "content-type": "application/json",
    }
    await _bad_bodies(app.http, headers, "")
    # Mounted in a host's app with a far larger limit: the page's own limit still holds.
    server = web.Application(client_max_size=16 * 1024 * 1024)
    assert mount(server, app.bot.dp, app.bot.bot) is not None
    async with (
        TestServer(server) as test_server,
        httpx.AsyncClient(base_url=str(test_server.make_url("/"))) as http,
    ):
        await _bad_bodies(http, headers, "/app")
        csp = (await http.get("/app/")).headers["content-security-policy"]
        assert "frame-ancestors 'self' https://web.telegram.org" in csp
    assert "Traceback" not in caplog.text


async def test_the_page_says_when_its_memories_are_at_their_share_of_the_cap(db_url: str) -> None:
    settings = {**SETTINGS, "workspace": "test", "workspace_max_records": 4}
    async with (
        running_bot(plain, database_url=db_url, **settings) as bot,
        served(bot) as base,
        client(base) as http,
    ):
        ada = App(bot, http).page(ADA)
        await bot.say("remember that my bike is red")
        await bot.say("remember that my car is blue")
        assert "fair share" not in (await ada.get("api/memories")).json()["status"]
        await bot.say("@memory_test_bot remember that standup is at 10", **in_topic(BO))
        status = (await ada.get("api/memories")).json()["status"]
        assert status == (
            "2 memories\nMemory here holds 2; its fair share is 2. When memory is full, the"
            " least used ones here go first."
        ), status
