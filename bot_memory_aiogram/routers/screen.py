"""/memory: this chat's (or Topic's) memories on a screen, five per page, with buttons to
forget one (after a confirm step), page, switch memory on or off, and refresh.

Every press is checked like a spoken request: the presser's standing now (a current member; the
admin rules for switching and for others' records), and in groups only whoever opened the
screen, or an admin, may press. Button data carries record IDs and numbers only (never text),
within Telegram's 64 bytes; a record that is gone or a forged button gets a short alert.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from aiogram import Bot, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.filters.callback_data import CallbackData
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.utils.formatting import Bold, Italic, Text, as_line, as_list
from pydantic import field_validator

from bot_memory.access import Gate, Membership, Requester
from bot_memory.control import acting, forget_record, switch
from bot_memory.intents import recognize
from bot_memory.logs import get_logger
from bot_memory.records import MemoryRecord
from bot_memory.retrieval import Reader
from bot_memory.service import Memory
from bot_memory.storage import ScopeSummary
from bot_memory_aiogram import display
from bot_memory_aiogram.i18n import Texts
from bot_memory_aiogram.middleware.memory import MemoryMiddleware, member_lookup
from bot_memory_aiogram.routers.common import Directed
from bot_memory_aiogram.routers.miniapp import with_app_button

log = get_logger(__name__)

PAGE = 5
TITLE_CHARS = 80
NEWER_CHARS = 60  # the newer memory's text in a replaced memory's mark


class MemoryScreen(CallbackData, prefix="bm"):
    """p: page, a: ask to forget, f: forget, t: toggle, r: refresh, s: spend (admins).

    Pressed data counts only if it is one of the buttons on the pressed message (Telegram keeps
    the message and its keyboard): a client that sends other data (another owner, another
    record) is refused, so nothing here has to be trusted or signed."""

    act: str
    page: int = 0
    rid: str = ""
    owner: int = 0

    @field_validator("rid", mode="before")
    @classmethod
    def _no_record(cls, value: object) -> object:
        # aiogram before 3.19 unpacks an empty part as None, not as the field's default.
        return "" if value is None else value


@dataclass(frozen=True)
class Page:
    records: list[MemoryRecord]
    page: int
    pages: int
    summary: ScopeSummary
    admin: bool
    private: bool
    topic: bool
    budget_usd: float
    # What replaced a record on the page: the newer memory's text, for those the reader may
    # read and that are still there (the others are "a newer memory").
    newer: dict[str, str] = dataclasses.field(default_factory=dict)


def render(
    p: Page, texts: Texts, language: str, names: dict[int, str], owner: int, notice: str = ""
) -> tuple[Text, InlineKeyboardMarkup]:
    """Pure: the screen's text and buttons."""

    def t(key: str, **args: object) -> str:
        return texts(language, key, **args)

    s = p.summary
    where = "topic" if p.topic else "chat"
    lines: list[Text | str] = [Bold(t(f"screen-title-{where}"))]
    if notice:
        lines.append(Italic(notice))
    if not s.enabled:
        lines.append(t("screen-is-off"))
    if not p.records:
        lines.append(t("screen-empty"))
    for n, record in enumerate(p.records, start=1 + p.page * PAGE):
        # As the page shows it: the fact in the user's words, the date in their language, who
        # said it in groups only (by name, never an ID).
        parts = [display.day(texts, language, record.created_at)]
        if not p.private:
            parts.append(display.speakers_line(texts, language, record, names))
        newer = p.newer.get(record.replaced_by or "")
        mark = display.replaced_mark(texts, language, record, newer)
        if mark:
            parts.append(mark)
        title = display.cut(display.title(record), TITLE_CHARS)
        lines.append(as_line(f"{n}. ", Bold(title), " — ", Italic(" · ".join(parts)), end=""))
    # The recall index and memory's runs are for a group's admins; everyone else reads a count.
    lines.append(Italic(display.status_line(texts, language, s, admin=p.admin and not p.private)))
    share = display.share_line(texts, language, s)
    if share:
        lines.append(Italic(share))

    def button(label: str, act: str, page: int = p.page, rid: str = "") -> InlineKeyboardButton:
        data = MemoryScreen(act=act, page=page, rid=rid, owner=owner).pack()
        return InlineKeyboardButton(text=label, callback_data=data)

    rows = [
        [button(t("screen-forget", n=n), "a", rid=r.id)]
        for n, r in enumerate(p.records, start=1 + p.page * PAGE)
    ]
    paging = []
    if p.page > 0:
        paging.append(button(t("screen-prev"), "p", page=p.page - 1))
    if p.page + 1 < p.pages:
        paging.append(button(t("screen-next"), "p", page=p.page + 1))
    if paging:
        rows.append(paging)
    controls = [
        button(t("screen-turn-off" if s.enabled else "screen-turn-on"), "t"),
        button(t("screen-refresh"), "r"),
    ]
    if p.admin and not p.private:
        # Every member reads a group message: spend goes to the admin who asks, alone.
        controls.append(button(t("screen-spend-button"), "s"))
    rows.append(controls)
    return as_list(*lines, sep="\n\n"), InlineKeyboardMarkup(inline_keyboard=rows)


def confirm(
    record: MemoryRecord, page: int, texts: Texts, language: str, owner: int
) -> tuple[Text, InlineKeyboardMarkup]:
    title = display.cut(display.title(record), TITLE_CHARS)
    yes = MemoryScreen(act="f", page=page, rid=record.id, owner=owner).pack()
    no = MemoryScreen(act="p", page=page, owner=owner).pack()
    markup = InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text=texts(language, "screen-yes"), callback_data=yes),
                InlineKeyboardButton(text=texts(language, "screen-cancel"), callback_data=no),
            ]
        ]
    )
    return Text(texts(language, "screen-confirm", title=title)), markup


def screen_router(middleware: MemoryMiddleware) -> Router:
    router = Router(name="bot_memory.screen")
    router.message(Command("memory"), Directed())(open_screen)

    @router.callback_query(MemoryScreen.filter())
    async def pressed(
        query: CallbackQuery,
        callback_data: MemoryScreen,
        bot: Bot,
        memory: Memory,
        memory_texts: Texts,
        memory_names: dict[int, str],
    ) -> None:
        await press(middleware, query, callback_data, bot, memory, memory_texts, memory_names)

    return router


async def page_of(memory: Memory, gate: Gate, page: int, *, admin: bool, topic: bool) -> Page:
    """The screen's page of what the reader may read: paged by the scope's count, or, when the
    host's read grants decide, by what they leave."""
    scope = gate.scope
    now = datetime.now(UTC)
    summary = await memory.store.summary(scope, now)
    reader = Reader(memory.store.search, scope, gate)
    known: dict[str, MemoryRecord] | None = None  # None: look up what is not on the page
    if not reader.grants:
        pages = max(1, -(-summary.records // PAGE))
        page = min(max(page, 0), pages - 1)
        records = (await reader.page(now, offset=page * PAGE, limit=PAGE)).records
    else:  # list only what the one acting may read
        readable = (await reader.every(now, most=summary.records + PAGE)).records
        summary = dataclasses.replace(summary, records=len(readable))
        pages = max(1, -(-len(readable) // PAGE))
        page = min(max(page, 0), pages - 1)
        records = readable[page * PAGE : (page + 1) * PAGE]
        known = {r.id: r for r in readable}  # anything else the reader may not read
    newer = await reader.replacing(records, now, known=known)
    return Page(
        records=records,
        page=page,
        pages=pages,
        summary=summary,
        admin=admin,
        private=scope.is_private,
        topic=topic,
        budget_usd=memory.settings.workspace_budget_usd,
        newer={rid: display.cut(display.summary(r), NEWER_CHARS) for rid, r in newer.items()},
    )


async def open_screen(
    message: Message,
    command: CommandObject,
    bot: Bot,
    memory: Memory,
    memory_gate: Gate,
    memory_texts: Texts,
    memory_names: dict[int, str],
) -> None:
    """/memory: the first page, for a current member."""
    if command.args and recognize(message.text or ""):
        return  # "/memory off" is a request; the requests router had its turn (states)
    language = memory_texts.language(message)
    who = await memory_gate.membership()
    if not who.member:
        await message.answer(memory_texts(language, "memory-not-member"))
        return
    p = await page_of(memory, memory_gate, 0, admin=who.admin, topic=bool(message.chat.is_forum))
    owner = memory_gate.requester.user_id
    text, markup = render(p, memory_texts, language, memory_names, owner)
    markup = with_app_button(markup, memory, memory_gate.scope, memory_texts, language)
    await message.answer(**text.as_kwargs(), reply_markup=markup)


@dataclass(frozen=True)
class Press:
    """A button pressed on the screen, by someone who may press it."""

    query: CallbackQuery
    data: MemoryScreen
    message: Message
    memory: Memory
    gate: Gate
    who: Membership
    texts: Texts
    language: str
    now: datetime

    @property
    def presser(self) -> int:
        return self.query.from_user.id

    async def alert(self, key: str) -> None:
        await self.query.answer(self.texts(self.language, key), show_alert=True)


async def press(
    middleware: MemoryMiddleware,
    query: CallbackQuery,
    callback_data: MemoryScreen,
    bot: Bot,
    memory: Memory,
    memory_texts: Texts,
    memory_names: dict[int, str],
) -> None:
    """A press: checked (one of this message's buttons, by its opener or an admin, a current
    member), carried out, and the screen shown again with a notice."""
    message = query.message
    language = memory_texts.for_user(query.from_user)

    async def alert(key: str) -> None:
        await query.answer(memory_texts(language, key), show_alert=True)

    if not isinstance(message, Message) or not on_message(message, query.data):
        log.info("memory.screen_refused", reason="not a button of this message")
        return await alert("screen-invalid")
    chat = message.chat
    thread = message.message_thread_id if message.is_topic_message else None
    scope = await middleware.scope_for(bot, chat, query.from_user, thread)
    if scope is None:
        return await alert("screen-invalid")
    requester = Requester(user_id=query.from_user.id, chat_id=chat.id)
    gate = Gate(memory.access, scope, requester, member_lookup(bot))
    who = await gate.membership()
    presser = query.from_user.id
    if scope.is_private and presser != scope.user_id:
        return await alert("screen-not-yours")
    if not scope.is_private and presser != callback_data.owner and not who.admin:
        log.info("memory.screen_refused", scope=scope.key, reason="not the opener or an admin")
        return await alert("screen-not-yours")
    if not who.member:
        return await alert("memory-not-member")
    p = Press(
        query, callback_data, message, memory, gate, who, memory_texts, language, datetime.now(UTC)
    )
    act = callback_data.act
    if act not in _ACTS:
        return await alert("screen-invalid")
    notice = await _ACTS[act](p)
    if notice is None:
        return None  # answered already
    # The screen is its opener's: an admin pressing on it sees what the opener may read.
    owner = callback_data.owner or presser
    shown = (
        gate
        if owner == presser
        else Gate(
            memory.access, scope, Requester(user_id=owner, chat_id=chat.id), member_lookup(bot)
        )
    )
    page = await page_of(
        memory, shown, callback_data.page, admin=who.admin, topic=bool(chat.is_forum)
    )
    text, markup = render(page, memory_texts, language, memory_names, callback_data.owner, notice)
    markup = with_app_button(markup, memory, scope, memory_texts, language)
    await _edit(message, text, markup)
    await query.answer()
    return None


# Each act returns the notice to show on the screen drawn again, or None when it answered the
# press itself (an alert, the confirm step).


async def _spend(p: Press) -> str | None:
    # Fresh: spend is for admins now, not for whoever the cache remembers as one.
    fresh = await p.gate.confirmed(p.who)
    if not fresh.admin:
        await p.alert("memory-not-allowed")
        return None
    summary = await p.memory.store.summary(p.gate.scope, p.now)
    spent, budget = summary.spent_usd, p.memory.settings.workspace_budget_usd
    spend = p.texts(p.language, "screen-spend", spent=f"${spent:.2f}", budget=f"${budget:.2f}")
    await p.query.answer(spend, show_alert=True)
    return None


async def _pressed_record(p: Press) -> MemoryRecord | None:
    """The button's record, if it is there and the presser may read it (else an alert)."""
    found = await Reader(p.memory.store.search, p.gate.scope, p.gate).one(p.data.rid, p.now)
    if found is None:
        await p.alert("screen-gone")  # gone, forged, or not the presser's to read
    return found


async def _ask(p: Press) -> str | None:
    record = await _pressed_record(p)
    if record is not None:
        text, markup = confirm(record, p.data.page, p.texts, p.language, p.data.owner)
        await _edit(p.message, text, markup)
        await p.query.answer()
    return None


async def _forget(p: Press) -> str | None:
    if await _pressed_record(p) is None:
        return None
    scope, store = p.gate.scope, p.memory.store
    result = await acting(
        p.gate,
        p.who,
        lambda w: forget_record(store, scope, p.data.rid, actor_id=p.presser, who=w, now=p.now),
    )
    log.info("memory.screen_forget", scope=scope.key, outcome=result.outcome)
    if result.outcome == "nothing_to_forget":
        await p.alert("screen-gone")
        return None
    if result.outcome not in ("forgotten", "partly_forgotten"):
        await p.alert(_REPLY.get(result.outcome, "memory-not-allowed"))
        return None
    key = "memory-partly-forgotten" if result.left else "memory-forgotten"
    return p.texts(p.language, key, count=len(result.memory_ids), left=len(result.left))


async def _toggle(p: Press) -> str | None:
    scope, store = p.gate.scope, p.memory.store
    want = not (await store.summary(scope, p.now)).enabled
    result = await acting(
        p.gate,
        p.who,
        lambda w: switch(store, scope, want, actor_id=p.presser, who=w, now=p.now),
    )
    if result.outcome not in ("enabled", "disabled"):
        await p.alert(_REPLY.get(result.outcome, "memory-not-allowed"))
        return None
    key = "memory-enabled" if result.outcome == "enabled" else "memory-disabled"
    topic = bool(p.message.chat.is_forum)
    return p.texts(p.language, key + ("-topic" if topic else ""))


async def _again(p: Press) -> str | None:
    return ""  # a page, or Refresh: the screen drawn again


_ACTS: dict[str, Callable[[Press], Awaitable[str | None]]] = {
    "s": _spend,
    "a": _ask,
    "f": _forget,
    "t": _toggle,
    "p": _again,
    "r": _again,
}


def fallback_router() -> Router:
    """Presses on memory's messages (or with its prefix) that nothing else took: data that
    does not parse, a forged or outdated button. Answered with a short alert, so the presser's
    spinner stops; included after memory's other routers."""
    router = Router(name="bot_memory.screen_fallback")

    @router.callback_query(_ours)
    async def unknown_press(query: CallbackQuery, memory_texts: Texts) -> None:
        log.info("memory.screen_refused", reason="a press that does not parse")
        language = memory_texts.for_user(query.from_user)
        await query.answer(memory_texts(language, "screen-invalid"), show_alert=True)

    return router


def _ours(query: CallbackQuery) -> bool:
    data = query.data or ""
    if data == "bm" or data.startswith("bm:"):
        return True
    message = query.message
    markup = message.reply_markup if isinstance(message, Message) else None
    return markup is not None and any(
        (b.callback_data or "").startswith(("bm:", "bm-"))
        for row in markup.inline_keyboard
        for b in row
    )


def on_message(message: Message, data: str | None) -> bool:
    """Whether `data` is one of the buttons on this message, as Telegram keeps it."""
    markup = message.reply_markup
    return (
        data is not None
        and markup is not None
        and any(b.callback_data == data for row in markup.inline_keyboard for b in row)
    )


_REPLY = {
    "not_allowed": "memory-not-allowed",
    "cascade_not_allowed": "memory-cascade-not-allowed",
    "not_member": "memory-not-member",
    "memory_off": "memory-off",
    "unavailable": "memory-unavailable",
}


async def _edit(message: Message, text: Text, markup: InlineKeyboardMarkup) -> None:
    try:
        await message.edit_text(**text.as_kwargs(), reply_markup=markup)
    except TelegramBadRequest as exc:
        if "message is not modified" not in str(exc):  # pressing Refresh twice is fine
            raise
