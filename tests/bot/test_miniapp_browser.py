"""The memory manager page in a real browser: headless Chromium (Debian's `chromium`) driven by
Playwright against the bot on the Bot API emulator and PostgreSQL, in English and Chinese,
light and dark, with Telegram's script present (a recording stand-in) and absent.

One browser and one bot serve the whole module (each test uses its own chats); screenshots
go to test-out/. Without Chromium the module is skipped and says how to run it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
from aiogram import Dispatcher

from bot_memory.service import Memory
from bot_memory_aiogram import setup
from bot_memory_aiogram.miniapp.tickets import Ticket, issue, ticket_key
from bot_memory_aiogram.testing import TestBot, running_bot
from tests.conftest import TEMPLATE, with_database
from tests.support.miniapp_kit import APP_URL, init_data, launch_url, served

CHROMIUM = Path(os.environ.get("BOT_MEMORY_CHROMIUM", "/usr/bin/chromium"))
HOW = (
    "install Chromium (Debian/Ubuntu: apt-get install chromium; elsewhere set"
    " BOT_MEMORY_CHROMIUM to its path) and run `make test` again"
)
try:
    from playwright.async_api import Browser, Page, Route, async_playwright, expect
except ImportError:  # pragma: no cover - the dev extra brings it
    pytest.skip(
        "browser tests skipped: Playwright is missing (pip install -e '.[dev]'); then " + HOW,
        allow_module_level=True,
    )
if not CHROMIUM.exists():
    pytest.skip(f"browser tests skipped: no Chromium at {CHROMIUM}; {HOW}", allow_module_level=True)

pytestmark = pytest.mark.asyncio(loop_scope="module")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LIGHT = {
    "bg_color": "#ffffff",
    "text_color": "#000000",
    "hint_color": "#707579",
    "link_color": "#2481cc",
    "button_color": "#2481cc",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#f1f1f4",
}
DARK = {
    "bg_color": "#17212b",
    "text_color": "#f5f5f5",
    "hint_color": "#708499",
    "link_color": "#6ab3f3",
    "button_color": "#5288c1",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#232e3c",
}
STUB = (Path(__file__).resolve().parents[1] / "support" / "telegram_stub.js").read_text()
OUT = Path(__file__).resolve().parents[2] / "test-out"
ADA = 1001  # private chat, English, light, Telegram's script absent
GROUP, TOPIC, DAI, ELI = -1002223334445, 9, 2001, 2002  # a Topic, Chinese, dark, script present


async def extract(
    app: Served,
    said: str,
    title: str,
    summary: str,
    built_with: str | None = None,
    replaces: str | None = None,
) -> str:
    """Let the pipeline extract the exchange that began with `said`, the model answering with
    this title and summary (a correction of `replaces`); returns the new record's ID."""
    [pair] = await app.rows(
        "SELECT user_message_id, answer_message_id FROM requests r JOIN messages m"
        " ON m.id = r.user_message_id WHERE m.text = $1",
        said,
    )
    answer = {
        "title": title,
        "summary": summary,
        "source_ids": [f"m{pair[0]}", f"m{pair[1]}"],
        "memory_ids": [built_with] if built_with else [],
        "replaces": [replaces] if replaces else [],
    }
    app.bot.llm.script({"role": "assistant", "content": json.dumps(answer)})
    await app.bot.idle()
    [row] = await app.rows("SELECT id FROM memory_records WHERE summary = $1", summary)
    return str(row["id"])


def build(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)
    return dp


@dataclass
class Served:
    bot: TestBot
    base: str
    browser: Browser

    async def rows(self, sql: str, *args: Any) -> list[Any]:
        return list(await self.bot.memory.store.pool.fetch(sql, *args))

    async def open(
        self,
        user_id: int,
        *,
        language: str,
        theme: dict[str, str],
        ticket: str = "",
        stub: bool,
        phone: bool = False,
    ) -> Page:
        """The page as Telegram opens it: the launch parameters in the URL fragment, Telegram's
        script served by the recording stand-in (stub) or unreachable; `phone`: a 390x844
        viewport."""
        size = {"width": 390, "height": 844} if phone else {"width": 420, "height": 860}
        context = await self.browser.new_context(viewport=size, timezone_id="UTC")

        async def telegram(route: Route) -> None:
            if stub:
                await route.fulfill(body=STUB, content_type="text/javascript")
            else:
                await route.abort()

        await context.route("https://telegram.org/**", telegram)
        page = await context.new_page()
        init = init_data(self.bot, user_id, language=language)
        await page.goto(launch_url(self.base, init, ticket=ticket, theme=theme))
        await expect(page.locator("#app")).to_have_attribute("aria-busy", "false")
        return page


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield chromium
        await chromium.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(pg_server_url: str, template_url: str, browser: Browser) -> AsyncIterator[Served]:
    name = "t_" + uuid.uuid4().hex[:12]
    admin = await asyncpg.connect(pg_server_url)
    try:
        await admin.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    finally:
        await admin.close()
    database = with_database(pg_server_url, name)
    async with (
        running_bot(
            build, database_url=database, miniapp_url=APP_URL, member_cache_seconds=0
        ) as bot,
        served(bot) as base,
    ):
        yield Served(bot, base, browser)


async def test_english_light_list_search_forget_switch_and_export(app: Served) -> None:
    bot = app.bot
    for text in (
        "remember that my cat is Mochi",
        "remember that I moved to Lisbon in May",
        "remember that I prefer window seats on trains",
        "remember that my sister's birthday is on 3 March",
    ):
        await bot.say(text, first_name="Ada")
    await bot.idle()  # the notes' index is built: the next tick's first call is an extraction
    # Two conversations the (scripted) model extracts; the second record is built with the
    # first, so forgetting the first takes it along.
    await bot.say("I adopted a second cat, Tofu")
    tofu = await extract(app, "I adopted a second cat, Tofu", "A second cat", "Ada adopted Tofu.")
    await bot.say("she likes tuna")
    await extract(app, "she likes tuna", "Tofu likes tuna", "Tofu likes tuna.", built_with=tofu)

    page = await app.open(ADA, language="en", theme=LIGHT, stub=False)
    cards = page.locator("#list .card")
    await expect(page.locator("#title")).to_have_text("Memory in this chat")
    await expect(cards).to_have_count(6)
    await expect(page.locator("#status")).to_contain_text("6 memories")
    background = "getComputedStyle(document.body).backgroundColor"
    assert await page.evaluate(background) == "rgb(255, 255, 255)"
    assert await page.evaluate("document.documentElement.dataset.scheme") == "light"
    # Compact rows: the text and the date; no speaker in a private chat, no index jargon.
    tuna = cards.filter(has_text="Tofu likes tuna")
    await expect(tuna.locator(".meta")).not_to_contain_text("Ada")
    assert "recall index" not in await page.locator("#app").inner_text()
    # Tap for details: made, last used, and no internal IDs (a private chat has no links).
    await tuna.locator(".body").click()
    details = page.locator("#details")
    await expect(details).to_be_visible()
    await expect(page.locator("#details-meta")).to_contain_text("Made")
    await expect(page.locator("#details-meta")).to_contain_text("Last used")
    await expect(page.locator("#details-sources")).to_have_text(
        "Telegram has no links to messages in this chat."
    )
    assert "m1" not in await details.inner_text()
    await expect(page.locator("#list")).to_be_hidden()
    await page.click("#details-back")
    await expect(cards).to_have_count(6)

    # Search: the same search as query_memories.
    await page.fill("#query", "Lisbon")
    await page.click("#search-go")
    await expect(cards).to_have_count(1)
    await expect(cards.first.locator("h3")).to_have_text("I moved to Lisbon in May")
    await page.fill("#query", "zebra")
    await page.click("#search-go")
    await expect(page.locator("#empty")).to_be_visible()
    await expect(page.locator("#empty")).to_have_text("No memory matches that.")
    await page.click("#search-clear")
    await expect(cards).to_have_count(6)
    # Cleared while a search is still loading: the clear wins, the late answer is dropped (the
    # clear used to be ignored while anything loaded, leaving the old search's list).
    held = asyncio.Event()

    async def hold(route: Any) -> None:
        await held.wait()
        await route.continue_()

    await page.route("**/api/memories?*q=mochi*", hold)
    await page.fill("#query", "mochi")
    await page.click("#search-go")
    await page.click("#search-clear")
    await expect(cards).to_have_count(6)
    async with page.expect_response(lambda r: "q=mochi" in r.url):
        held.set()
    await page.evaluate("() => new Promise((done) => setTimeout(done, 100))")  # it lands
    await expect(cards).to_have_count(6)
    await expect(page.locator("#query")).to_have_value("")
    await page.unroute("**/api/memories?*q=mochi*")

    # Forget two with a preview of everything that goes with them, then confirm.
    await cards.filter(has_text="Ada adopted Tofu").locator("input").check()
    await cards.filter(has_text="Lisbon").locator("input").check()
    await expect(page.locator("#forget")).to_have_text("Forget 2 memories")
    OUT.mkdir(exist_ok=True)
    await page.screenshot(path=str(OUT / "miniapp-en-light.png"), full_page=True)
    await page.click("#forget")
    await expect(page.locator("#preview-title")).to_have_text("These 3 memories will be forgotten:")
    preview = page.locator("#preview-list .card h3")
    await expect(preview).to_have_count(3)
    assert set(await preview.all_inner_texts()) == {
        "A second cat",
        "Tofu likes tuna",
        "I moved to Lisbon in May",
    }
    assert await app.rows("SELECT id FROM memory_records WHERE valid") != []  # nothing yet
    await expect(page.locator("#confirm")).to_have_text("Forget 3 memories")
    await page.click("#confirm")
    await expect(page.locator("#notice")).to_have_text("Done: I forgot 3 memories.")
    await expect(cards).to_have_count(3)
    left = await app.rows("SELECT title FROM memory_records WHERE valid ORDER BY title")
    assert [r["title"] for r in left] == [
        "I prefer window seats on trains",
        "my cat is Mochi",
        "my sister's birthday is on 3 March",
    ]

    # Off and on, through the chat's own switch.
    enabled = "SELECT enabled FROM memory_scopes WHERE scope_key LIKE '%/p/%'"
    # The switch asks first (window.confirm outside Telegram): dismissed, nothing changes.
    answers = [False, True, True]
    asked: list[str] = []

    async def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        await (dialog.accept() if answers.pop(0) else dialog.dismiss())

    page.on("dialog", answer)
    await expect(page.locator("#toggle")).to_be_checked()
    await page.click("#toggle")
    await expect(page.locator("#toggle")).to_be_checked()
    assert await bot.memory.store.pool.fetchval(enabled) is True
    await page.click("#toggle")
    await expect(page.locator("#notice")).to_contain_text("Memory is off in this chat.")
    await expect(page.locator("#off")).to_be_visible()
    assert await bot.memory.store.pool.fetchval(enabled) is False
    # Off: what is kept is still listed (the banner above it), searched and forgotten.
    await expect(cards).to_have_count(3)
    above = (
        "document.getElementById('off').compareDocumentPosition(document.getElementById('list'))"
    )
    assert await page.evaluate(above) & 4  # the list follows the banner
    await page.fill("#query", "Mochi")
    await page.click("#search-go")
    await expect(cards).to_have_count(1)
    await page.click("#search-clear")
    await expect(cards).to_have_count(3)
    await expect(page.locator("#toggle")).not_to_be_checked()
    assert asked[0].startswith("Turn memory off?")
    # Forgotten while off, from the row's own delete action.
    await cards.filter(has_text="window seats").locator(".delete").click()
    await expect(page.locator("#preview-title")).to_have_text("This memory will be forgotten:")
    await page.click("#confirm")
    await expect(page.locator("#notice")).to_have_text("Done: I forgot one memory.")
    await expect(cards).to_have_count(2)
    await expect(page.locator("#off")).to_be_visible()
    left = await app.rows("SELECT title FROM memory_records WHERE valid ORDER BY title")
    await page.click("#toggle")
    await expect(page.locator("#notice")).to_have_text("Memory is on in this chat.")
    assert asked[2].startswith("Turn memory on?")
    await expect(cards).to_have_count(2)
    assert await bot.memory.store.pool.fetchval(enabled) is True
    # Memory text is text: a tag in a memory is shown, never built.
    await bot.say("remember that <img src=x onerror=alert(1)> is how a tag looks")
    await page.fill("#query", "tag")
    await page.click("#search-go")
    await expect(cards.locator("h3")).to_have_text(
        ["<img src=x onerror=alert(1)> is how a tag looks"]
    )
    assert await page.locator("#list img").count() == 0

    # Export: a JSON Lines download (no Telegram script here): the page fetches the link with
    # its login data and saves what came (a link alone is nothing without them).
    await expect(page.locator("#export")).to_have_text("Export")
    async with page.expect_download() as download_info:
        await page.click("#export")
    download = await download_info.value
    assert download.suggested_filename.endswith(".jsonl") and download.url.startswith("blob:")
    saved = Path(await download.path())
    lines = (await asyncio.to_thread(saved.read_text)).splitlines()
    assert sorted(json.loads(line)["title"] for line in lines) == sorted(
        ["<img src=x onerror=alert(1)> is how a tag looks", *(r["title"] for r in left)]
    )
    await page.context.close()


async def test_chinese_dark_topic_through_the_private_chat_with_telegrams_script(
    app: Served,
) -> None:
    bot = app.bot
    topic = {
        "chat_id": GROUP,
        "chat_type": "supergroup",
        "is_forum": True,
        "thread_id": TOPIC,
        "chat_title": "发布小组",
        "language_code": "zh-hans",
    }
    bot.emu.set_chat_member_status(GROUP, DAI, "administrator")
    await bot.say("@memory_test_bot 记住发布日期是周五", user_id=DAI, first_name="Dai", **topic)
    await bot.say("@memory_test_bot 记住我负责写发布说明", user_id=ELI, first_name="Eli", **topic)
    # The /memory screen in the Topic -> a private chat with the bot -> the page's button.
    await bot.say("/memory", user_id=DAI, first_name="Dai", **topic)
    screen = bot.emu.sent[-1].result["message_id"]
    [button] = bot.emu.get_message(GROUP, screen)["reply_markup"]["inline_keyboard"][-1]
    assert button["text"] == "打开记忆管理"
    bot.emu.push_callback_query(
        chat_id=GROUP,
        user_id=DAI,
        data=button["callback_data"],
        message_id=screen,
        language_code="zh-hans",
    )
    [answered] = await bot.emu.wait_for_calls("answerCallbackQuery", 1)
    start = answered.params["url"].split("?start=", 1)[1]
    reply = await bot.say(f"/start {start}", chat_id=DAI, user_id=DAI, language_code="zh-hans")
    assert "发布小组" in reply
    url = bot.emu.sent[-1].params["reply_markup"]["inline_keyboard"][0][0]["web_app"]["url"]
    ticket = url.split("?s=", 1)[1]

    page = await app.open(DAI, language="zh-hans", theme=DARK, ticket=ticket, stub=True)
    cards = page.locator("#list .card")
    await expect(page.locator("#title")).to_have_text("本话题的记忆")
    await expect(page.locator("#query")).to_have_attribute("placeholder", "搜索记忆")
    await expect(cards).to_have_count(2)
    assert (
        await page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(23, 33, 43)"
    )
    assert await page.evaluate("document.documentElement.dataset.scheme") == "dark"
    await expect(page.locator("#spend")).to_contain_text("本工作区已花费 $0.00")  # an admin
    # Labels as Chinese writes them: a full-width colon, never "任务: 已完成：1".
    await expect(page.locator("#jobs")).to_have_text(re.compile(r"^任务 — "))
    box = cards.filter(has_text="负责写发布说明").locator("input")
    assert await box.get_attribute("aria-label") == "选择：我负责写发布说明"
    await expect(cards.filter(has_text="负责写发布说明").locator(".meta")).to_contain_text("Eli")

    # An admin forgets Eli's memory; Telegram's back button closes the preview first.
    # Telegram's MainButton forgets what is selected, and confirms the preview.
    main = "Telegram.WebApp.MainButton"
    assert not await page.evaluate(main + ".isVisible")
    await expect(page.locator("#forget")).to_be_hidden()
    await cards.filter(has_text="负责写发布说明").locator("input").check()
    assert await page.evaluate(main + ".isVisible")
    assert await page.evaluate(main + ".text") == "忘记 1 条记忆"
    await page.evaluate("window.__telegram.main()")
    await expect(page.locator("#preview-title")).to_have_text("将忘记这 1 条记忆：")
    assert await page.evaluate("Telegram.WebApp.BackButton.isVisible")
    assert not await page.evaluate("Telegram.WebApp.SecondaryButton.isVisible")
    await page.evaluate("window.__telegram.back()")
    await expect(page.locator("#preview")).to_be_hidden()
    await page.evaluate("window.__telegram.main()")
    await expect(page.locator("#preview-title")).to_be_visible()
    await page.evaluate("window.__telegram.main()")
    await expect(page.locator("#notice")).to_have_text("好的，已忘记 1 条记忆。")
    await expect(cards).to_have_count(1)
    assert [
        r["summary"]
        for r in await app.rows(
            "SELECT summary FROM memory_records WHERE valid AND scope_key LIKE '%/g/%'"
        )
    ] == ["发布日期是周五"]

    # Off and on for the Topic (admins only), in Chinese.
    await page.click("#toggle")
    await expect(page.locator("#notice")).to_contain_text("本话题的记忆已关闭")
    await page.click("#toggle")
    await expect(page.locator("#notice")).to_contain_text("本话题的记忆已开启")
    OUT.mkdir(exist_ok=True)
    await page.screenshot(path=str(OUT / "miniapp-zh-dark.png"), full_page=True)

    # Export through Telegram's downloadFile: Dai's own statements only.
    assert await page.evaluate("Telegram.WebApp.SecondaryButton.text") == "导出"
    await expect(page.locator("#export")).to_be_hidden()
    await page.evaluate("window.__telegram.second()")
    await expect(page.locator("#notice")).to_have_text("导出文件正在下载。")
    calls = await page.evaluate("window.__telegram.calls")
    [(_, asked)] = [c for c in calls if c[0] == "downloadFile"]
    assert asked["file_name"].endswith(".jsonl") and asked["url"].startswith(
        app.base + "api/export?t="
    )
    exported = await page.request.get(asked["url"])  # as Telegram fetches it: no headers
    lines = [json.loads(line) for line in (await exported.text()).splitlines()]
    assert [line["speaker_ids"] for line in lines] == [[DAI]]
    again = await page.request.get(asked["url"])  # once only
    assert again.status == 410
    assert (await again.json())[
        "message"
    ] == "这个导出链接已经用过了。请再点一次“导出”获取新的链接。"
    assert next(c[1] for c in calls if c[0] == "showConfirm").startswith("关闭记忆？")
    kinds = [c for c in calls if c[0] in ("ready", "expand", "haptic")]
    assert ["ready"] in kinds and ["expand"] in kinds and ["haptic", "success"] in kinds
    await page.context.close()


async def test_outside_telegram_the_page_says_where_to_open_it(app: Served) -> None:
    context = await app.browser.new_context(viewport={"width": 390, "height": 844})
    await context.route("https://telegram.org/**", lambda route: route.abort())
    page = await context.new_page()
    await page.goto(app.base)
    placeholder = page.locator("#placeholder-text")
    await expect(placeholder).to_contain_text("Open this page from the bot in Telegram")
    forged = launch_url(app.base, init_data(app.bot, ADA, token="43:OTHER"))
    await page.goto(forged)
    await page.reload()  # a fragment change alone does not load the page again
    await expect(placeholder).to_have_text(
        "This page could not confirm who you are. Close it and open it again from the bot."
    )
    await expect(page.locator("#close")).to_have_text("Close")
    await expect(page.locator("#search")).to_be_hidden()
    await context.close()


async def test_an_expired_launch_gets_a_placeholder_with_a_close_button(app: Served) -> None:
    context = await app.browser.new_context(viewport={"width": 390, "height": 844})
    await context.route(
        "https://telegram.org/**",
        lambda route: route.fulfill(body=STUB, content_type="text/javascript"),
    )
    page = await context.new_page()
    old = init_data(app.bot, ADA, language="ru", age_seconds=4000)  # past the hour allowed
    await page.goto(launch_url(app.base, old, theme=LIGHT))
    await expect(page.locator("#placeholder-text")).to_have_text(
        "Страница открыта слишком долго. Закройте её и откройте снова из бота."
    )
    box = await page.locator("#placeholder").bounding_box()
    assert box is not None and 200 < box["y"] + box["height"] / 2 < 644  # in the middle
    await page.click("#close")
    assert ["close"] in await page.evaluate("window.__telegram.calls")
    await context.close()


async def test_a_session_that_ages_out_while_open_stops_changes_and_says_how_to_reopen(
    app: Served,
) -> None:
    await app.bot.say("remember that the spare key is under the mat", chat_id=3001, user_id=3001)
    page = await app.open(3001, language="en", theme=DARK, stub=True)
    cards = page.locator("#list .card")
    await expect(cards).to_have_count(1)

    async def expired(route: Route) -> None:  # what the API answers once initData is too old
        body = {"error": "auth_expired", "message": "This page has been open too long."}
        await route.fulfill(status=401, json=body)

    await page.route("**/api/**", expired)
    await cards.first.locator(".delete").click()
    banner = page.locator("#expired")
    await expect(banner).to_have_text(
        "This page has been open too long, so it can no longer make changes."
        " Close it and open it again from the bot with /memory."
    )
    await expect(page.locator("#toggle")).to_be_disabled()
    await expect(cards.first.locator(".delete")).to_be_disabled()
    await expect(page.locator("#query")).to_be_disabled()
    assert not await page.evaluate("Telegram.WebApp.MainButton.isVisible")
    assert not await page.evaluate("Telegram.WebApp.SecondaryButton.isVisible")
    await expect(cards).to_have_count(1)  # what is shown stays readable
    await page.context.close()


MARCH_3 = datetime(2026, 3, 3, 12, tzinfo=UTC)
MARCH_5 = datetime(2026, 3, 5, 9, tzinfo=UTC)
# Any element wider than the viewport or past its edges (hidden ones have no box).
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const out = [...document.querySelectorAll("body *")].filter((node) => {
    const box = node.getBoundingClientRect();
    return box.width > 0 && (box.right > width + 0.5 || box.left < -0.5);
  }).map((node) => node.id || node.className || node.tagName);
  if (document.documentElement.scrollWidth > width) out.push("scrollWidth");
  return out;
}"""


def group_ticket(bot: TestBot, chat_id: int, user: int) -> str:
    """The scope ticket the bot's button would carry for `user` and this group."""
    scope = Ticket(
        kind="scope",
        private=False,
        chat_id=chat_id,
        topic_id=0,
        user_id=user,
        expires_at=int(datetime.now(UTC).timestamp()) + 3600,
        workspace=bot.memory.chats.default_workspace(bot.emu.bot_id, chat_id),
    )
    return issue(scope, ticket_key(bot.emu.token))


async def dated(app: Served, record_id: str, made: datetime, replaced: datetime | None) -> None:
    """A record's dates on the test's own clock."""
    await app.rows(
        "UPDATE memory_records SET created_at = $1, replaced_at = coalesce($2, replaced_at)"
        " WHERE id = $3",
        made,
        replaced,
        record_id,
    )


async def test_a_replaced_memory_is_marked_in_the_list_and_in_its_details(app: Served) -> None:
    bot = app.bot
    user = 3101
    chat = {"chat_id": user, "user_id": user, "first_name": "Ada"}
    await bot.idle()  # what earlier tests left for the worker: the next call is this extraction
    await bot.say("I live in Lisbon", **chat)
    old = await extract(app, "I live in Lisbon", "Home city", "Ada lives in Lisbon.")
    await bot.say("I moved to Porto", **chat)
    new = await extract(app, "I moved to Porto", "Home city", "Ada moved to Porto.", replaces=old)
    [row] = await app.rows("SELECT replaced_by FROM memory_records WHERE id = $1", old)
    assert row["replaced_by"] == new
    await dated(app, old, MARCH_3, MARCH_5)
    await dated(app, new, MARCH_5, None)

    page = await app.open(user, language="en", theme=LIGHT, stub=False)
    cards = page.locator("#list .card")
    await expect(cards).to_have_count(2)
    lisbon, porto = cards.filter(has_text="Lisbon"), cards.filter(has_text="Porto")
    await expect(lisbon).to_have_class(re.compile(r"\breplaced\b"))
    await expect(lisbon.locator(".meta")).to_have_text("Mar 3, 2026Replaced on Mar 5, 2026")
    await expect(lisbon.locator(".meta .mark")).to_have_text("Replaced on Mar 5, 2026")
    await expect(porto.locator(".mark")).to_have_count(0)
    # Its details: when, and by what (the newer memory's text, never its ID).
    await lisbon.locator(".body").click()
    replaced = page.locator("#details-meta dt:text-is('Replaced') + dd")
    await expect(replaced).to_have_text("Mar 5, 2026, by “Ada moved to Porto.”")
    assert new not in await page.locator("#app").inner_text()
    OUT.mkdir(exist_ok=True)
    await page.screenshot(path=str(OUT / "miniapp-replaced-details.png"))
    await page.click("#details-back")
    # The newer one forgotten: what it replaced holds again.
    await porto.locator(".delete").click()
    await page.click("#confirm")
    await expect(cards).to_have_count(1)
    await expect(cards.first.locator(".mark")).to_have_count(0)
    await page.context.close()
    # The newer one pruned instead (a replacement stays): "by a newer memory".
    await app.rows(
        "UPDATE memory_records SET replaced_by = 'mem_pruned', replaced_at = $2 WHERE id = $1",
        old,
        MARCH_5,
    )
    page = await app.open(user, language="en", theme=LIGHT, stub=False)
    cards = page.locator("#list .card")
    await expect(cards.first.locator(".mark")).to_have_text("Replaced on Mar 5, 2026")
    await cards.first.locator(".body").click()
    replaced = page.locator("#details-meta dt:text-is('Replaced') + dd")
    await expect(replaced).to_have_text("Mar 5, 2026, by a newer memory")
    await page.context.close()
    # In Chinese, dark.
    page = await app.open(user, language="zh-hans", theme=DARK, stub=True, phone=True)
    mark = page.locator("#list .card .mark")
    await expect(mark).to_have_text("已于 2026年3月5日 被取代")
    await page.screenshot(path=str(OUT / "miniapp-zh-replaced-dark.png"))
    await page.locator("#list .card .body").click()
    replaced = page.locator("#details-meta dt:text-is('已被取代') + dd")
    await expect(replaced).to_have_text("2026年3月5日，被一条更新的记忆取代")
    await page.screenshot(path=str(OUT / "miniapp-zh-replaced-details-dark.png"))
    await page.context.close()


@dataclass(frozen=True)
class Cyrillic:
    code: str
    group: int
    names: tuple[str, str]  # the admin who opens the page, a member
    facts: tuple[str, ...]  # notes, the member's last
    lived: tuple[str, str, str, str]  # said, then its summary; the correction, its summary
    remember: str
    title: str
    status: str  # the admin's status line begins so
    forget: tuple[str, str, str]  # the MainButton with 1, 2 and 5 selected
    preview: str  # the confirm's title for 2
    replaced: str  # the row's mark
    replaced_by: str  # the details' line
    speakers: str  # the details' label


RU = Cyrillic(
    code="ru",
    group=-1007770001111,
    names=("Александра", "Константин"),
    facts=(
        "пароль от гостевого Wi-Fi меняется каждый понедельник",
        "достопримечательности Санкт-Петербурга лучше смотреть с экскурсоводом",
        "документация: https://example.com/очень/длинный/путь/к/документации/без/пробелов",
        "переговорная «Высокопроизводительная» забронирована на четверг",
        "я отвечаю за непрерывную интеграцию и человеконенавистнические отзывы",
    ),
    lived=(
        "я живу в Казани",
        "Александра живёт в Казани.",
        "я переехала в Санкт-Петербург",
        "Александра переехала в Санкт-Петербург.",
    ),
    remember="запомни, что",
    title="Память этого чата",
    status="7 записей · ",
    forget=("Забыть 1 запись", "Забыть 2 записи", "Забыть 5 записей"),
    preview="Будут забыты 2 записи:",
    replaced="Заменено 5 мар. 2026\u202fг.",
    replaced_by="5 мар. 2026\u202fг., записью «Александра переехала в Санкт-Петербург.»",
    speakers="Со слов",
)
UK = Cyrillic(
    code="uk",
    group=-1007770002222,
    names=("Олександра", "Святослав"),
    facts=(
        "пароль від гостьового Wi-Fi змінюється щопонеділка",
        "найвідоміші пам’ятки Кам’янця-Подільського варто дивитися з екскурсоводом",
        "документація: https://example.com/дуже/довгий/шлях/до/документації/без/пробілів",
        "переговорна «Високопродуктивна» заброньована на четвер",
        "я відповідаю за безперервну інтеграцію та найрізноманітніші відгуки",
    ),
    lived=(
        "я живу в Житомирі",
        "Олександра живе в Житомирі.",
        "я переїхала до Івано-Франківська",
        "Олександра переїхала до Івано-Франківська.",
    ),
    remember="запам’ятай, що",
    title="Пам’ять цього чату",
    status="7 записів · ",
    forget=("Забути 1 запис", "Забути 2 записи", "Забути 5 записів"),
    preview="Буде забуто 2 записи:",
    replaced="Замінено 5 бер. 2026\u202fр.",
    replaced_by="5 бер. 2026\u202fр., записом «Олександра переїхала до Івано-Франківська.»",
    speakers="Зі слів",
)


@pytest.mark.parametrize("speech", [RU, UK], ids=["ru", "uk"])
async def test_russian_and_ukrainian_on_a_phone(app: Served, speech: Cyrillic) -> None:
    """At 390x844, in Russian (light) and Ukrainian (dark): plural forms agree with the count
    (1, 2, 5), and long words, a long URL and a replaced memory's mark stay inside the screen
    in the list, a memory's details and the confirm (screenshots in test-out/)."""
    bot = app.bot
    s = speech
    admin, member = 4001 if s.code == "ru" else 4002, 4011 if s.code == "ru" else 4012
    group = {"chat_id": s.group, "chat_type": "supergroup", "chat_title": "Команда запуска"}
    bot.emu.set_chat_member_status(s.group, admin, "administrator")
    said = {"user_id": admin, "first_name": s.names[0], "language_code": s.code, **group}
    city = "Город" if s.code == "ru" else "Місто"
    await bot.idle()  # what earlier tests left for the worker: the next call is this extraction
    await bot.say(f"@memory_test_bot {s.lived[0]}", **said)
    old = await extract(app, f"@memory_test_bot {s.lived[0]}", city, s.lived[1])
    await bot.say(f"@memory_test_bot {s.lived[2]}", **said)
    new = await extract(app, f"@memory_test_bot {s.lived[2]}", city, s.lived[3], replaces=old)
    other = {**said, "user_id": member, "first_name": s.names[1]}
    for n, fact in enumerate(s.facts):
        who = said if n < len(s.facts) - 1 else other  # the last one the member's
        await bot.say(f"@memory_test_bot {s.remember} {fact}", **who)
    await dated(app, old, MARCH_3, MARCH_5)
    await dated(app, new, MARCH_5, None)

    theme, scheme = (LIGHT, "light") if s.code == "ru" else (DARK, "dark")
    ticket = group_ticket(bot, s.group, admin)
    page = await app.open(admin, language=s.code, theme=theme, ticket=ticket, stub=True, phone=True)
    cards = page.locator("#list .card")
    await expect(cards).to_have_count(7)
    await expect(page.locator("#title")).to_have_text(s.title)
    await expect(page.locator("#status")).to_contain_text(s.status)
    await expect(cards.filter(has_text=s.lived[1]).locator(".mark")).to_have_text(s.replaced)
    await expect(cards.filter(has_text=s.facts[-1]).locator(".meta")).to_contain_text(s.names[1])
    boxes = cards.locator("input")
    main = "Telegram.WebApp.MainButton.text"
    for count, label in zip((1, 2, 5), s.forget, strict=True):
        while await page.locator("#list input:checked").count() < count:
            await boxes.nth(await page.locator("#list input:checked").count()).check()
        assert await page.evaluate(main) == label
        if count == 2:
            await page.screenshot(path=str(OUT / f"miniapp-{s.code}-list-{scheme}.png"))
            assert await page.evaluate(OVERFLOW) == []
            await page.evaluate("window.__telegram.main()")
            await expect(page.locator("#preview-title")).to_have_text(s.preview)
            await page.screenshot(path=str(OUT / f"miniapp-{s.code}-confirm-{scheme}.png"))
            assert await page.evaluate(OVERFLOW) == []
            await page.evaluate("window.__telegram.back()")
    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    await page.screenshot(path=str(OUT / f"miniapp-{s.code}-list-end-{scheme}.png"))
    assert await page.evaluate(OVERFLOW) == []
    checked = page.locator("#list input:checked")
    while await checked.count():
        await checked.first.uncheck()
    await cards.filter(has_text=s.lived[1]).locator(".body").click()
    label = s.replaced.split()[0]  # "Заменено" / "Замінено"
    await expect(page.locator(f"#details-meta dt:text-is('{label}') + dd")).to_have_text(
        s.replaced_by
    )
    await expect(page.locator(f"#details-meta dt:text-is('{s.speakers}') + dd")).to_have_text(
        s.names[0]
    )
    await page.screenshot(path=str(OUT / f"miniapp-{s.code}-details-{scheme}.png"))
    assert await page.evaluate(OVERFLOW) == []
    await page.evaluate("window.__telegram.back()")
    await cards.filter(has_text="https://").locator(".body").click()
    await page.screenshot(path=str(OUT / f"miniapp-{s.code}-details-url-{scheme}.png"))
    assert await page.evaluate(OVERFLOW) == []
    await page.context.close()


DOCS_GROUP, BO, CY = -1004445556667, 1002, 1003  # Bo a member, Cy an admin (and Ada)


async def test_the_screens_for_the_docs_light_and_dark_on_a_phone(app: Served) -> None:
    """The pictures on docs/miniapp.md, at a phone's 390x844: the list (a replaced memory
    among them), a memory's details, the forget confirm and memory off (copied to docs/ from
    test-out/docs/)."""
    bot = app.bot
    group = {"chat_id": DOCS_GROUP, "chat_type": "supergroup", "chat_title": "Launch team"}
    bot.emu.set_chat_member_status(DOCS_GROUP, CY, "administrator")
    for user, name, fact in (
        (ADA, "Ada", "the staging password rotates every Monday"),
        (BO, "Bo", "the design review moved to room 4B"),
        (ADA, "Ada", "I review the changelog before each release"),
        (BO, "Bo", "I write the release notes"),
        (BO, "Bo", "the launch is on Friday at 10:00"),
    ):
        await bot.say(
            f"@memory_test_bot remember that {fact}", user_id=user, first_name=name, **group
        )
    # A later conversation corrects the room: the note stays listed, marked replaced.
    await bot.idle()  # the notes' index is built: the next call is the extraction
    said = "@memory_test_bot the design review is in room 5A now"
    await bot.say(said, user_id=BO, first_name="Bo", **group)
    [room] = await app.rows(
        "SELECT id FROM memory_records WHERE summary = 'the design review moved to room 4B'"
    )
    summary = "The design review is in room 5A now."
    await extract(app, said, "Design review room", summary, replaces=room["id"])

    def ticket(user: int) -> str:
        return group_ticket(bot, DOCS_GROUP, user)

    shots = OUT / "docs"
    shots.mkdir(parents=True, exist_ok=True)
    for scheme, theme in (("light", LIGHT), ("dark", DARK)):
        page = await app.open(
            BO, language="en", theme=theme, ticket=ticket(BO), stub=True, phone=True
        )
        cards = page.locator("#list .card")
        await expect(cards).to_have_count(6)
        await expect(cards.first.locator(".meta")).to_contain_text("Bo")  # a group: who said it
        await expect(cards.filter(has_text="room 4B").locator(".mark")).to_contain_text("Replaced")
        await cards.filter(has_text="release notes").locator("input").check()
        await page.screenshot(path=str(shots / f"miniapp-list-{scheme}.png"), animations="disabled")
        await page.locator("#list input:checked").uncheck()
        # Someone else's memory: why it is not Bo's to forget, and a link to the message.
        await cards.filter(has_text="staging password").locator(".body").click()
        await expect(page.locator("#details-why")).to_have_text(
            "Someone else said this, so only they or a group admin can forget it."
        )
        link = page.locator("#details-sources a")
        await expect(link).to_have_text("Message 1")
        assert (await link.get_attribute("href") or "").startswith("https://t.me/c/4445556667/")
        await expect(page.locator("#details-forget")).to_be_hidden()
        await page.screenshot(
            path=str(shots / f"miniapp-details-{scheme}.png"), animations="disabled"
        )
        await page.evaluate("window.__telegram.back()")
        await cards.filter(has_text="release notes").locator(".delete").click()
        await expect(page.locator("#preview-title")).to_have_text("This memory will be forgotten:")
        assert await page.evaluate("Telegram.WebApp.MainButton.text") == "Forget 1 memory"
        await page.screenshot(
            path=str(shots / f"miniapp-confirm-{scheme}.png"), animations="disabled"
        )
        await page.evaluate("window.__telegram.back()")
        await page.context.close()
        # Memory off, as an admin sees it: the switch, the banner, and what is kept below it.
        page = await app.open(
            CY, language="en", theme=theme, ticket=ticket(CY), stub=True, phone=True
        )
        await page.click("#toggle")
        await expect(page.locator("#off")).to_be_visible()
        await expect(page.locator("#list .card")).to_have_count(6)
        await page.locator("#notice").evaluate("node => { node.hidden = true; }")
        # Nothing is rebuilt while memory is off: the status does not say the index is.
        await expect(page.locator("#status")).not_to_contain_text("being updated")
        await page.screenshot(path=str(shots / f"miniapp-off-{scheme}.png"), animations="disabled")
        await page.click("#toggle")
        await expect(page.locator("#off")).to_be_hidden()
        await page.context.close()
