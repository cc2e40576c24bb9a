"""Opening the memory manager Mini App from the /memory screen.

In a private chat the screen's button opens the page directly (a web_app button). Telegram
allows web_app buttons in private chats only, so in a group the button is a callback: pressed by
a current member, it opens the private chat with the bot through a deep link whose start
parameter is a signed ticket for that member and that Topic; the bot answers there with a
web_app button whose URL carries a signed, expiring scope ticket (never a bare chat ID). Every
call the page then makes checks initData, the ticket and membership again.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from aiogram import Bot, F, Router
from aiogram.exceptions import TelegramAPIError
from aiogram.filters import CommandObject, CommandStart
from aiogram.types import (
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    WebAppInfo,
)

from bot_memory.access import Gate, Requester
from bot_memory.logs import get_logger
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory_aiogram.i18n import Texts
from bot_memory_aiogram.middleware.memory import MemoryMiddleware, member_lookup
from bot_memory_aiogram.miniapp.tickets import (
    LINK_PREFIX,
    Ticket,
    TicketError,
    issue,
    read,
    ticket_key,
)

log = get_logger(__name__)

OPEN_APP = "bm-app"  # the group button's callback data (the chat says which chat and Topic)


def app_button(
    memory: Memory, scope: Scope, texts: Texts, language: str
) -> InlineKeyboardButton | None:
    """The /memory screen's button to the page, or None when no Mini App URL is set."""
    url = memory.settings.miniapp_url
    if not url:
        return None
    label = texts(language, "page-open")
    if scope.is_private:  # the page finds the user's own chat from initData
        return InlineKeyboardButton(text=label, web_app=WebAppInfo(url=url))
    return InlineKeyboardButton(text=label, callback_data=OPEN_APP)


def with_app_button(
    markup: InlineKeyboardMarkup, memory: Memory, scope: Scope, texts: Texts, language: str
) -> InlineKeyboardMarkup:
    """The /memory screen's buttons with a last row opening the page (when it is served)."""
    button = app_button(memory, scope, texts, language)
    if button is None:
        return markup
    return InlineKeyboardMarkup(inline_keyboard=[*markup.inline_keyboard, [button]])


def with_ticket(url: str, ticket: str) -> str:
    parts = urlsplit(url)
    query = urlencode([*parse_qsl(parts.query), ("s", ticket)])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def miniapp_router(middleware: MemoryMiddleware) -> Router:
    router = Router(name="bot_memory.miniapp")

    @router.callback_query(F.data == OPEN_APP)
    async def open_from_group(
        query: CallbackQuery, bot: Bot, memory: Memory, memory_texts: Texts
    ) -> None:
        language = memory_texts.for_user(query.from_user)
        message = query.message
        if not isinstance(message, Message) or not memory.settings.miniapp_url:
            await query.answer(memory_texts(language, "screen-invalid"), show_alert=True)
            return
        thread = message.message_thread_id if message.is_topic_message else None
        scope = await middleware.scope_for(bot, message.chat, query.from_user, thread)
        if scope is None or scope.is_private:
            await query.answer(memory_texts(language, "screen-invalid"), show_alert=True)
            return
        requester = Requester(user_id=query.from_user.id, chat_id=scope.chat_id)
        who = await Gate(memory.access, scope, requester, member_lookup(bot)).membership()
        if not who.member:
            await query.answer(memory_texts(language, "memory-not-member"), show_alert=True)
            return
        now = datetime.now(UTC)
        ticket = Ticket(
            kind="link",
            private=False,
            chat_id=scope.chat_id,
            topic_id=scope.topic_id,
            user_id=query.from_user.id,
            expires_at=int(now.timestamp() + memory.settings.miniapp_link_seconds),
        )
        me = await bot.me()
        start = LINK_PREFIX + issue(ticket, ticket_key(bot.token))
        # Telegram opens t.me/<bot>?start=... links given here: the private chat, with Start.
        await query.answer(url=f"https://t.me/{me.username}?start={start}")

    @router.message(
        CommandStart(deep_link=True, magic=F.args.startswith(LINK_PREFIX)),
        F.chat.type == "private",
    )
    async def arrive_in_private(
        message: Message, command: CommandObject, bot: Bot, memory: Memory, memory_texts: Texts
    ) -> None:
        language = memory_texts.language(message)
        url = memory.settings.miniapp_url
        user = message.from_user
        now = datetime.now(UTC)
        try:
            ticket = read(
                (command.args or "")[len(LINK_PREFIX) :],
                ticket_key(bot.token),
                kind="link",
                now=now,
            )
        except TicketError as exc:
            key = "page-link-expired" if exc.expired else "page-link-invalid"
            await message.answer(memory_texts(language, key))
            return
        if not url or user is None or ticket.user_id != user.id:
            log.info("memory.miniapp_link_refused", reason="another user's or no Mini App URL")
            await message.answer(memory_texts(language, "page-link-invalid"))
            return
        try:
            chat = await bot.get_chat(ticket.chat_id)  # the workspace resolver wants the chat
        except TelegramAPIError:
            await message.answer(memory_texts(language, "memory-unavailable"))
            return
        scope = await middleware.scope_for(bot, chat, user, ticket.topic_id or None)
        if scope is None or scope.is_private:
            await message.answer(memory_texts(language, "memory-unavailable"))
            return
        requester = Requester(user_id=user.id, chat_id=scope.chat_id)
        gate = Gate(memory.access, scope, requester, member_lookup(bot))
        # The page's button: a member as recently as the page itself wants (it asks again when
        # it opens).
        who = await gate.membership(max_age=memory.settings.miniapp_member_check_seconds)
        if not who.member:
            await message.answer(memory_texts(language, "memory-not-member"))
            return
        page = Ticket(
            kind="scope",
            private=False,
            chat_id=scope.chat_id,
            topic_id=scope.topic_id,
            user_id=user.id,
            expires_at=int(now.timestamp() + memory.settings.miniapp_link_seconds),
            workspace=scope.workspace,
        )
        button = InlineKeyboardButton(
            text=memory_texts(language, "page-open"),
            web_app=WebAppInfo(url=with_ticket(url, issue(page, ticket_key(bot.token)))),
        )
        text = memory_texts(
            language,
            "page-open-group",
            title=chat.title or "",
            minutes=int(memory.settings.miniapp_link_seconds // 60),
        )
        await message.answer(text, reply_markup=InlineKeyboardMarkup(inline_keyboard=[[button]]))

    return router
