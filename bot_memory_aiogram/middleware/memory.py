"""The one outer middleware on dp.update: resolve the workspace and scope, record directed
messages, and hand handlers what they need (the source, the turn, the access gate)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.dispatcher.event.bases import UNHANDLED
from aiogram.exceptions import TelegramAPIError
from aiogram.types import Chat, Message, TelegramObject, Update, User

from bot_memory.access import Gate, LookupFailed, MemberStatus
from bot_memory.ingress import on_redelivery
from bot_memory.logs import get_logger
from bot_memory.scopes import Scope, resolve_scope
from bot_memory.service import Memory, MemoryUnavailable
from bot_memory.storage import SourceMessage, is_connection_error
from bot_memory_aiogram.middleware.answers import (
    Capture,
    current_capture,
    expect_returned,
    returned_answer,
    watch,
)
from bot_memory_aiogram.middleware.directed import is_directed, message_flags, requester_of

log = get_logger(__name__)

SCOPE_KEY = "memory_scope"
SOURCE_KEY = "memory_source"
TURN_KEY = "memory_turn"
GATE_KEY = "memory_gate"
DIRECTED_KEY = "memory_directed"
RECORDED_KEY = "memory_recorded"
UNAVAILABLE_KEY = "memory_unavailable"  # directed, but PostgreSQL is away: held for later
DROPPED_KEY = "memory_dropped"  # a redelivered update answered already: not handled again
NAMES_KEY = "memory_names"  # user id -> first name seen in updates, for the /memory screen

# resolver(chat, user) -> workspace name, or None when memory does not apply to that chat.
WorkspaceResolver = Callable[[Chat, User | None], str | Awaitable[str | None] | None]


def _is_command(message: Message) -> bool:
    entities = message.entities or message.caption_entities or []
    return any(e.type == "bot_command" and e.offset == 0 for e in entities)


def member_lookup(bot: Bot) -> Callable[[int, int], Awaitable[MemberStatus]]:
    """getChatMember as the core's MemberLookup; any failure is LookupFailed."""

    async def lookup(chat_id: int, user_id: int) -> MemberStatus:
        try:
            member = await bot.get_chat_member(chat_id, user_id)
        except (TelegramAPIError, OSError, TimeoutError) as exc:
            raise LookupFailed(str(exc)) from exc
        return MemberStatus(status=member.status, is_member=getattr(member, "is_member", None))

    return lookup


class MemoryMiddleware(BaseMiddleware):
    def __init__(self, memory: Memory, resolver: WorkspaceResolver | None = None) -> None:
        self._memory = memory
        self._resolver = resolver
        self._known_chats: set[tuple[int, int]] = set()
        self._known_after_purges = 0
        self._handling: set[int] = set()  # requests whose handlers run in this process now
        # First names seen in updates, for "who said it" on the /memory screen (bounded).
        self.names: dict[int, str] = {}

    async def workspace_for(self, bot: Bot, chat: Chat, user: User | None) -> str | None:
        if self._resolver is None:
            return self._memory.chats.default_workspace(bot.id, chat.id)
        found = self._resolver(chat, user)
        if inspect.isawaitable(found):
            found = await found
        return found

    async def scope_for(
        self, bot: Bot, chat: Chat, user: User | None, thread_id: int | None
    ) -> Scope | None:
        if chat.type not in ("private", "group", "supergroup"):
            return None
        workspace = await self.workspace_for(bot, chat, user)
        if workspace is None:
            return None  # the host does not serve this chat
        return resolve_scope(
            workspace=workspace,
            bot_id=bot.id,
            chat_type=chat.type,
            chat_id=chat.id,
            user_id=user.id if user else None,
            thread_id=thread_id,
        )

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        data[DIRECTED_KEY] = False
        data[RECORDED_KEY] = False
        data[UNAVAILABLE_KEY] = False
        data[NAMES_KEY] = self.names
        message = event.message if isinstance(event, Update) else None
        user = getattr(data.get("event_context"), "user", None)
        if user is not None and not user.is_bot:
            if len(self.names) > 10_000:
                self.names.clear()
            self.names[user.id] = user.first_name
        if message is None:
            return await handler(event, data)
        with self._memory.requests_first.handling():  # a worker here steps aside meanwhile
            return await self._message(handler, event, message, data)

    async def _message(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        message: Message,
        data: dict[str, Any],
    ) -> Any:
        try:
            await self._ingress(message, data)
        except Exception:  # memory must never take the host's bot down
            log.exception("memory.record_failed", update_id=getattr(event, "update_id", None))
        if data.get(DROPPED_KEY):
            return None  # a redelivery of an update handled already (or being handled)
        source: SourceMessage | None = data.get(SOURCE_KEY)
        if source is None:
            return await handler(event, data)
        self._handling.add(source.request_id)
        try:
            return await self._handled(handler, event, message, data, source)
        finally:
            self._handling.discard(source.request_id)

    async def _handled(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        message: Message,
        data: dict[str, Any],
        source: SourceMessage,
    ) -> Any:
        watch(data["bot"])
        capture = Capture(chat_id=message.chat.id)
        token = current_capture.set(capture)
        try:
            result = await handler(event, data)
        except BaseException as exc:
            # The exception's type only: its text can quote the user, and a request row is
            # kept past forgets and sweeps.
            await self._close(source, capture, data["bot"], message, failed=type(exc).__name__)
            raise
        finally:
            current_capture.reset(token)
        if returned_answer(result, capture) and capture.flag not in ("keep_open", "skip"):
            # `return message.answer(...)`: aiogram sends it after this returns; the request is
            # closed when it is sent (or when it is found to have gone in a webhook response).
            bot = data["bot"]

            async def close(failed: str | None) -> None:
                await self._close(source, capture, bot, message, failed=failed)

            grace = self._memory.settings.returned_answer_grace_seconds
            expect_returned(result, capture, close, grace_seconds=grace)
            return result
        await self._close(source, capture, data["bot"], message, unhandled=result is UNHANDLED)
        return result

    async def _close(
        self,
        source: SourceMessage,
        capture: Capture,
        bot: Bot,
        message: Message,
        *,
        failed: str | None = None,
        unhandled: bool = False,
    ) -> None:
        """Close the request with what happened (a finish the host or a router already made
        stands: closing is once). With nothing to keep, the closing is written later, together
        with others (no second statement on the handler's path)."""
        try:
            if capture.flag == "keep_open":
                await self._memory.store.requests.keep_open(source)
                return
            kind = None
            if _is_command(message) and capture.flag != "source":
                kind = "command"  # recorded and answered, but not a conversation source
            if failed is not None:
                self._memory.close_later(source, status="failed", error=failed, kind=kind)
            elif unhandled or capture.flag == "skip" or not capture.answered:
                self._memory.close_later(source, status="unanswered", kind=kind)
            else:
                await self._memory.finish(
                    source,
                    status="succeeded",
                    answer_text=capture.answer_text(),
                    answer_telegram_id=capture.sent[0].message_id if capture.sent else None,
                    bot_id=bot.id,
                    kind=kind,
                )
        except Exception:  # never let bookkeeping take the host's answer down
            log.exception("memory.close_failed", request=source.request_id)

    async def _ingress(self, message: Message, data: dict[str, Any]) -> None:
        bot: Bot = data["bot"]
        requester = requester_of(message)
        user = message.from_user
        thread = message.message_thread_id if message.is_topic_message else None
        scope = await self.scope_for(bot, message.chat, user, thread)
        data[SCOPE_KEY] = scope
        if scope is None or requester is None:
            return
        me = await bot.me()
        if not is_directed(message, bot_id=bot.id, bot_username=me.username):
            return  # ordinary group traffic is never stored
        data[DIRECTED_KEY] = True
        text = message.text or message.caption
        if not text:
            self._memory.metrics.message_skipped("non_text")
            log.info(
                "memory.skip_non_text",
                chat_id=message.chat.id,
                message_id=message.message_id,
                content_type=message.content_type,
            )
            return
        try:
            await self._know_chat(bot, message.chat, scope.workspace)
        except Exception as exc:
            if not is_connection_error(exc):
                raise  # the record below holds the message while the database is away
        try:
            source = await self._memory.record(
                scope,
                text=text,
                speaker_id=requester.user_id,
                thread_id=thread or 0,
                telegram_message_id=message.message_id,
                language=user.language_code if user else None,
                sent_at=message.date,
            )
        except MemoryUnavailable:
            data[UNAVAILABLE_KEY] = True  # the host's handlers still run, without memory
            return
        if source is None:
            source = await self._redelivered(message, scope, text, data)
            if source is None:
                return
        gate = Gate(self._memory.access, scope, requester, member_lookup(bot))
        quoted, forwarded = message_flags(message)
        data[SOURCE_KEY] = source
        data[GATE_KEY] = gate
        data[RECORDED_KEY] = True
        data[TURN_KEY] = self._memory.turn(source, gate=gate, quoted=quoted, forwarded=forwarded)

    async def _redelivered(
        self, message: Message, scope: Scope, text: str, data: dict[str, Any]
    ) -> SourceMessage | None:
        """This Telegram message was recorded before: a redelivered update (ingress/
        redelivery.py decides), or a database that outlived another run whose message IDs were
        the same (a test kit on a kept database), which is handled without memory. Each is
        said, so none is a silent pass. The request to handle again with, if any."""
        first = await self._memory.store.requests.recorded_before(
            scope, message.message_id, text, message.date
        )
        where = {"chat_id": message.chat.id, "message_id": message.message_id}
        if first is None:
            log.warning(
                "memory.already_recorded",
                **where,
                workspace=scope.workspace,
                reason="this Telegram message was recorded before; handled without memory",
            )
            return None
        source, status = first
        decided = on_redelivery(status, handling_here=source.request_id in self._handling)
        log.info("memory.redelivered", **where, request=source.request_id, outcome=decided)
        if decided == "drop":
            data[DROPPED_KEY] = True
            return None
        return source if decided == "again" else None

    async def _know_chat(self, bot: Bot, chat: Chat, workspace: str) -> None:
        """Once per chat: ask Telegram for its auto-delete timer, so that memory never keeps a
        message longer than the chat does."""
        key = (bot.id, chat.id)
        if self._known_after_purges != self._memory.purges:
            self._known_chats.clear()  # a purge deleted what was known of its chats
            self._known_after_purges = self._memory.purges
        if key in self._known_chats:
            return
        info = await self._memory.chats.chat(bot.id, chat.id)
        if info is None or not info.auto_delete_known or info.workspace != workspace:
            seconds, known = None, False
            try:
                full = await bot.get_chat(chat.id)
                seconds, known = full.message_auto_delete_time, True
            except TelegramAPIError as exc:
                log.warning("memory.get_chat_failed", chat_id=chat.id, error=str(exc))
            await self._memory.store.save_chat(
                bot_id=bot.id,
                chat_id=chat.id,
                workspace=workspace,
                chat_type=chat.type,
                auto_delete_seconds=seconds,
                auto_delete_known=known,
            )
            if not known:
                return  # ask again next time
        self._known_chats.add(key)
