"""The memory manager page asks Telegram, not its cache, and its export links work once.

Telegram sends a bot that is not a group's admin no update when a member leaves, so the
five-minute membership cache would let someone who left keep reading the Topic's memory: the
page confirms membership with getChatMember at every page open (`api/session`) and at least
every BOT_MEMORY_MINIAPP_MEMBER_CHECK_SECONDS while it is used. An export link is good for one
download, by the user it was issued to (their login data, when the download carries it), and
whichever of the bot's processes serves it. Through the real parts: the page over HTTP, the Bot
API emulator, PostgreSQL; time is a clock the test moves (nothing sleeps).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiogram import Dispatcher

from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram import setup
from bot_memory_aiogram.miniapp import serve
from bot_memory_aiogram.miniapp.tickets import Ticket, issue, ticket_key
from bot_memory_aiogram.testing import TestBot, running_bot
from tests.support.miniapp_kit import APP_URL, Page, client, init_data, served

ADA, BO = 1001, 1002
GROUP, TOPIC = -1005556667778, 3
CHECK = 60.0  # BOT_MEMORY_MINIAPP_MEMBER_CHECK_SECONDS here; the cache keeps answers 300 s
NOT_MEMBER = "Only current members of this group can use its memory."
USED_RU = "Эта ссылка на экспорт уже использована. Нажмите «Экспорт» ещё раз, чтобы получить новую."


@dataclass
class Clock:
    """One time for the page (initData's age, tickets) and the membership cache (its answers'
    ages, on its monotonic clock): a test moves it instead of sleeping."""

    at: datetime

    def now(self) -> datetime:
        return self.at

    def monotonic(self) -> float:
        return self.at.timestamp()

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def plain(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory)
    return dp


def in_topic(user_id: int) -> dict[str, Any]:
    return {
        "chat_id": GROUP,
        "user_id": user_id,
        "chat_type": "supergroup",
        "is_forum": True,
        "thread_id": TOPIC,
        "first_name": {ADA: "Ada", BO: "Bo"}[user_id],
        "chat_title": "Launch team",
    }


@dataclass
class App:
    bot: TestBot
    http: httpx.AsyncClient
    clock: Clock

    def page(self, user_id: int, *, topic: bool = False, **init: Any) -> Page:
        ticket = self.topic_ticket(user_id) if topic else ""
        return Page(self.http, init_data(self.bot, user_id, **init), ticket)

    def topic_ticket(self, user_id: int) -> str:
        ticket = Ticket(
            kind="scope",
            private=False,
            chat_id=GROUP,
            topic_id=TOPIC,
            user_id=user_id,
            expires_at=int((self.clock.now() + timedelta(hours=1)).timestamp()),
            workspace=self.bot.memory.chats.default_workspace(self.bot.emu.bot_id, GROUP),
        )
        return issue(ticket, ticket_key(self.bot.emu.token))

    def lookups(self) -> int:
        return len(self.bot.emu.calls_to("getChatMember"))

    async def export_link(self, page: Page, **body: Any) -> str:
        answer = await page.post("api/export-link", body)
        assert answer.status_code == 200, answer.text
        return str(answer.json()["url"])


@pytest.fixture
async def app(db_url: str) -> AsyncIterator[App]:
    clock = Clock(datetime.now(UTC))
    async with running_bot(
        plain, database_url=db_url, miniapp_url=APP_URL, miniapp_member_check_seconds=CHECK
    ) as bot:
        bot.memory.access.cache.clock = clock.monotonic  # the default 300 s cache, on our time
        async with served(bot, clock=clock.now) as base, client(base) as http:
            await bot.say("remember that my cat is Mochi")
            await bot.say("@memory_test_bot remember that standup is at 10", **in_topic(ADA))
            await bot.say("@memory_test_bot remember that I review on Fridays", **in_topic(BO))
            yield App(bot, http, clock)


async def test_a_member_who_left_is_refused_at_the_next_page_open_at_once(app: App) -> None:
    ada = app.page(ADA, topic=True)
    assert (await ada.get("api/session")).status_code == 200
    app.clock.advance(5)  # far inside the cache's five minutes, and inside CHECK
    app.bot.emu.set_chat_member_status(GROUP, ADA, "left")  # and no chat_member update
    again = await ada.get("api/session")
    assert again.status_code == 403, again.text
    assert again.json() == {"error": "not_member", "message": NOT_MEMBER, "close": "Close"}
    # Reopened from the bot, a new launch: still refused, and nothing of the Topic is shown.
    reopened = app.page(ADA, topic=True)
    listed = await reopened.get("api/memories")
    assert listed.status_code == 403 and "standup" not in listed.text


async def test_a_member_who_left_is_refused_on_any_call_once_check_seconds_pass(app: App) -> None:
    ada = app.page(ADA, topic=True)
    assert (await ada.get("api/session")).status_code == 200
    asked = app.lookups()
    listed = await ada.get("api/memories")
    assert listed.status_code == 200 and "standup is at 10" in listed.text
    assert app.lookups() == asked  # an answer younger than CHECK serves the calls in between
    app.bot.emu.set_chat_member_status(GROUP, ADA, "left")  # no chat_member update
    app.clock.advance(CHECK - 1)
    assert (await ada.get("api/memories")).status_code == 200  # the answer is CHECK - 1 old
    app.clock.advance(1)
    for answer in (
        await ada.get("api/memories"),
        await ada.post("api/export-link", {}),
        await ada.post("api/preview", {"ids": ["x"]}),
    ):
        assert answer.status_code == 403, answer.text
        assert answer.json()["error"] == "not_member"
    assert app.lookups() == asked + 1  # asked once, then the new answer served the others
    # Back in the group: the page works again at the next check (no update either way).
    app.bot.emu.set_chat_member_status(GROUP, ADA, "member")
    app.clock.advance(CHECK)
    assert (await ada.get("api/memories")).status_code == 200


async def test_the_page_button_for_a_topic_is_not_given_to_a_member_who_left(app: App) -> None:
    bot = app.bot
    await bot.say("/memory", **in_topic(BO))
    screen = bot.emu.sent[-1].result["message_id"]
    [button] = bot.emu.get_message(GROUP, screen)["reply_markup"]["inline_keyboard"][-1]
    bot.emu.push_callback_query(
        chat_id=GROUP, user_id=BO, data=button["callback_data"], message_id=screen
    )
    [answered] = await bot.emu.wait_for_calls("answerCallbackQuery", 1)
    start = "/start " + answered.params["url"].split("=", 1)[1]
    bot.emu.set_chat_member_status(GROUP, BO, "left")  # no chat_member update
    app.clock.advance(CHECK)
    reply = await bot.say(start, chat_id=BO, user_id=BO, first_name="Bo")
    assert reply == NOT_MEMBER
    assert "reply_markup" not in bot.emu.sent[-1].params


async def test_a_private_page_asks_telegram_nothing(app: App) -> None:
    asked = app.lookups()
    ada = app.page(ADA)
    assert (await ada.get("api/session")).status_code == 200
    assert (await ada.get("api/memories")).status_code == 200
    link = await app.export_link(ada)
    assert "Mochi" in (await app.http.get(link, headers=ada.headers)).text
    assert app.lookups() == asked  # the private chat's only member is its owner


async def test_an_export_link_downloads_once(app: App, caplog: pytest.LogCaptureFixture) -> None:
    ada = app.page(ADA, language="ru")
    link = await app.export_link(ada)  # the page's own fetch, with its login data
    first = await app.http.get(link, headers=ada.headers)
    assert first.status_code == 200 and "Mochi" in first.text
    second = await app.http.get(link, headers=ada.headers)
    assert second.status_code == 410, second.text
    assert second.json()["error"] == "link_used" and second.json()["message"] == USED_RU
    # A link for Telegram's downloadFile (the client fetches it without headers): once too,
    # refused in the language of the user it was issued to.
    bearer = await app.export_link(ada, bearer=True)
    assert "Mochi" in (await app.http.get(bearer)).text
    again = await app.http.get(bearer)
    assert again.status_code == 410 and again.json()["message"] == USED_RU
    assert (await app.http.get(bearer, headers=ada.headers)).status_code == 410
    # A new link is a new download; two at once of one link: one of them.
    assert "Mochi" in (await app.http.get(await app.export_link(ada), headers=ada.headers)).text
    link = await app.export_link(ada)
    both = await asyncio.gather(*(app.http.get(link, headers=ada.headers) for _ in range(2)))
    assert sorted(answer.status_code for answer in both) == [200, 410]
    assert "Traceback" not in caplog.text


async def test_a_head_request_does_not_use_up_an_export_link(app: App) -> None:
    """A link preview or a proxy asks HEAD first: the download that follows still works."""
    ada = app.page(ADA)
    bearer = await app.export_link(ada, bearer=True)
    head = await app.http.head(bearer)
    assert head.status_code == 200 and head.headers["content-type"].startswith(
        "application/x-ndjson"
    )
    assert head.content == b""
    assert "Mochi" in (await app.http.get(bearer)).text
    assert (await app.http.get(bearer)).status_code == 410


async def test_an_export_link_is_refused_with_another_users_login_data(app: App) -> None:
    ada = app.page(ADA, topic=True)
    link = await app.export_link(ada)
    for headers, status, code in (
        (app.page(BO).headers, 403, "link"),  # Bo's own, valid login data
        (app.page(BO, topic=True).headers, 403, "link"),
        ({"Authorization": "tma " + init_data(app.bot, ADA, token="43:OTHER")}, 401, "auth"),
        ({}, 401, "auth"),  # a link for the page is worth nothing without its user's login
    ):
        answer = await app.http.get(link, headers=headers)
        assert (answer.status_code, answer.json()["error"]) == (status, code), answer.text
    mine = await app.http.get(link, headers=ada.headers)  # refusals did not use it up
    assert mine.status_code == 200
    assert [json.loads(line)["summary"] for line in mine.text.splitlines()] == ["standup is at 10"]
    # A link for Telegram's downloadFile goes without headers, but never with someone else's.
    bearer = await app.export_link(ada, bearer=True)
    stolen = await app.http.get(bearer, headers=app.page(BO).headers)
    assert stolen.status_code == 403 and stolen.json()["error"] == "link"
    assert (await app.http.get(bearer)).status_code == 200


async def test_a_download_confirms_membership_with_telegram(app: App) -> None:
    ada = app.page(ADA, topic=True)
    assert (await ada.get("api/session")).status_code == 200  # asked just now: a member
    bearer = await app.export_link(ada, bearer=True)
    app.bot.emu.set_chat_member_status(GROUP, ADA, "left")  # no chat_member update
    refused = await app.http.get(bearer)  # the link alone: its user is asked about again
    assert refused.status_code == 403 and refused.json()["error"] == "not_member"
    assert "standup" not in refused.text


async def test_a_link_is_single_use_across_processes(app: App, tmp_path: Path) -> None:
    """Two of the bot's processes (replicas) on one database: each serves the page with its
    own Memory and cache, and a link used at one is used at the other."""
    settings = MemorySettings(
        database_url=app.bot.memory.settings.database_url,
        data_dir=tmp_path,
        miniapp_url=APP_URL,
        run_worker=False,
        set_commands=False,
    )
    async with await Memory.open(settings) as other:
        replica = Dispatcher()
        setup(replica, other)
        runner = await serve(replica, app.bot.bot, host="127.0.0.1", port=0, clock=app.clock.now)
        assert runner is not None
        try:
            host, port = runner.addresses[0][:2]
            async with client(f"http://{host}:{port}/app/") as there:
                ada = app.page(ADA)
                link = await app.export_link(ada)
                assert "Mochi" in (await there.get(link, headers=ada.headers)).text
                here = await app.http.get(link, headers=ada.headers)
                assert here.status_code == 410 and here.json()["error"] == "link_used"
                at_replica = Page(there, init_data(app.bot, ADA))
                bearer = (await at_replica.post("api/export-link", {"bearer": True})).json()["url"]
                assert "Mochi" in (await app.http.get(bearer)).text
                assert (await there.get(bearer)).status_code == 410
        finally:
            await runner.cleanup()


async def test_used_links_are_dropped_once_they_expired(app: App) -> None:
    ada = app.page(ADA)
    link = await app.export_link(ada)
    assert (await app.http.get(link, headers=ada.headers)).status_code == 200
    pool = app.bot.memory.store.pool
    assert await pool.fetchval("SELECT count(*) FROM used_tickets") == 1
    worker = app.bot.memory.pipeline
    await worker.tick(now=app.clock.now() + timedelta(minutes=10))
    assert await pool.fetchval("SELECT count(*) FROM used_tickets") == 1  # kept past expiry
    await worker.tick(now=app.clock.now() + timedelta(hours=2))
    assert await pool.fetchval("SELECT count(*) FROM used_tickets") == 0
    # Expired by then: refused as expired, not downloaded again.
    app.clock.advance(600)
    late = await app.http.get(link, headers=app.page(ADA).headers)
    assert late.status_code == 403 and late.json()["error"] == "link_expired"
