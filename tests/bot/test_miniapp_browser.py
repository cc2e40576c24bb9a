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
    app: Served, said: str, title: str, summary: str, built_with: str | None = None
) -> str:
    """Let the pipeline extract the exchange that began with `said`, the model answering with
    this title and summary; returns the new record's ID."""
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
    }
    app.bot.llm.script({"role": "assistant", "content": json.dumps(answer)})
    await app.bot.idle()
    [row] = await app.rows("SELECT id FROM memory_records WHERE title = $1", title)
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
        context = await self.browser.new_context(viewport=size)

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


DOCS_GROUP, BO, CY = -1004445556667, 1002, 1003  # Bo a member, Cy an admin (and Ada)


async def test_the_screens_for_the_docs_light_and_dark_on_a_phone(app: Served) -> None:
    """The pictures on docs/miniapp.md, at a phone's 390x844: the list, a memory's details,
    the forget confirm and memory off (copied to docs/ from test-out/docs/)."""
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
    workspace = bot.memory.default_workspace(bot.emu.bot_id, DOCS_GROUP)

    def ticket(user: int) -> str:
        expires = int(datetime.now(UTC).timestamp()) + 3600
        scope = Ticket(
            kind="scope",
            private=False,
            chat_id=DOCS_GROUP,
            topic_id=0,
            user_id=user,
            expires_at=expires,
            workspace=workspace,
        )
        return issue(scope, ticket_key(bot.emu.token))

    shots = OUT / "docs"
    shots.mkdir(parents=True, exist_ok=True)
    for scheme, theme in (("light", LIGHT), ("dark", DARK)):
        page = await app.open(
            BO, language="en", theme=theme, ticket=ticket(BO), stub=True, phone=True
        )
        cards = page.locator("#list .card")
        await expect(cards).to_have_count(5)
        await expect(cards.first.locator(".meta")).to_contain_text("Bo")  # a group: who said it
        await cards.filter(has_text="release notes").locator("input").check()
        await page.screenshot(path=str(shots / f"miniapp-list-{scheme}.png"))
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
        await page.screenshot(path=str(shots / f"miniapp-details-{scheme}.png"))
        await page.evaluate("window.__telegram.back()")
        await cards.filter(has_text="release notes").locator(".delete").click()
        await expect(page.locator("#preview-title")).to_have_text("This memory will be forgotten:")
        assert await page.evaluate("Telegram.WebApp.MainButton.text") == "Forget 1 memory"
        await page.screenshot(path=str(shots / f"miniapp-confirm-{scheme}.png"))
        await page.evaluate("window.__telegram.back()")
        await page.context.close()
        # Memory off, as an admin sees it: the switch, the banner, and what is kept below it.
        page = await app.open(
            CY, language="en", theme=theme, ticket=ticket(CY), stub=True, phone=True
        )
        await page.click("#toggle")
        await expect(page.locator("#off")).to_be_visible()
        await expect(page.locator("#list .card")).to_have_count(5)
        await page.locator("#notice").evaluate("node => { node.hidden = true; }")
        await page.screenshot(path=str(shots / f"miniapp-off-{scheme}.png"))
        await page.click("#toggle")
        await expect(page.locator("#off")).to_be_hidden()
        await page.context.close()
