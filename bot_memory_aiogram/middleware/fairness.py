"""One chat's burst cannot delay the others.

An outer middleware placed before everything else of memory's, on the messages memory works
on (every private message; in groups, those directed at the bot), before any database or model
work:

- each sender in a chat has a bucket of `sender_burst_messages` (20) that refills at
  `sender_messages_per_second` (1: a person writes about a message a second); a message that
  finds it empty is skipped, with one short notice to the chat and a log line per flood;
- each chat has at most `chat_max_in_flight` (4) of those being handled at once; the others
  wait their turn without holding a database connection;
- inside a chat the members take turns: a freed slot goes to the next member with a message
  waiting (round-robin), not to the oldest message, so one member's burst in a group cannot
  queue ahead of everyone else's; and in a group each member has at most `member_max_queued`
  (12) messages in flight or waiting, the excess skipped like a flood's (one notice per
  flood), and holds at most `member_max_in_flight` (3) of the chat's slots, so that one
  member's messages held by a slow model never take every slot while another member waits. A
  private chat has one member: its sender's bucket bounds it, as before.

A script pushing thousands of messages thus gets a handful handled, and the rest of the bot's
chats keep the pool's connections, the model and the event loop. Ordinary group traffic (not
directed at the bot) is the host's and passes untouched.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.types import Message, TelegramObject, Update

from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory_aiogram.i18n import Texts
from bot_memory_aiogram.middleware.directed import is_directed

log = get_logger(__name__)

MAX_TRACKED = 10_000  # senders remembered at once; full buckets are forgotten first


@dataclass
class Bucket:
    """Messages a sender may still send now (a token bucket), and the flood it is in."""

    tokens: float
    at: float
    skipped: int = 0
    noticed_at: float | None = None

    def refill(self, now: float, *, burst: int, per_second: float) -> None:
        self.tokens = min(float(burst), self.tokens + (now - self.at) * per_second)
        self.at = now


@dataclass
class _Chat:
    """One chat's slots: who holds them, and who waits for one, member by member."""

    in_flight: int = 0
    member_cap: int = 1  # slots one member may hold at once
    holding: dict[int, int] = field(default_factory=dict)  # per member: slots held
    # The members with a message waiting, in turn order, each with its waiters (oldest first).
    turns: OrderedDict[int, deque[asyncio.Future[None]]] = field(default_factory=OrderedDict)
    pending: dict[int, int] = field(default_factory=dict)  # per member: in flight or waiting

    def idle(self) -> bool:
        return not self.pending

    def may_hold(self, member: int) -> bool:
        return self.holding.get(member, 0) < self.member_cap

    def hold(self, member: int) -> None:
        self.in_flight += 1
        self.holding[member] = self.holding.get(member, 0) + 1

    def unhold(self, member: int) -> None:
        self.in_flight -= 1
        self.holding[member] -= 1
        if self.holding[member] == 0:
            del self.holding[member]


class FairShare(BaseMiddleware):
    def __init__(
        self,
        texts: Texts,
        *,
        max_in_flight: int,
        member_max_queued: int = 12,
        member_max_in_flight: int = 3,
        burst: int,
        per_second: float,
        clock: Callable[[], float] = time.monotonic,
        metrics: Metrics | None = None,
    ) -> None:
        self._metrics = metrics or Metrics(enabled=False)
        self._texts = texts
        self._max_in_flight = max_in_flight
        self._member_max_queued = max(member_max_queued, 1)
        self._member_max_in_flight = max(member_max_in_flight, 1)
        self._burst = burst
        self._per_second = per_second
        self._clock = clock
        self._buckets: dict[tuple[int, int, int], Bucket] = {}
        self._chats: dict[tuple[int, int], _Chat] = {}
        self._notices: set[asyncio.Task[None]] = set()  # held until sent (the loop holds none)

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        message = event.message if isinstance(event, Update) else None
        bot: Bot | None = data.get("bot")
        if message is None or bot is None or self._max_in_flight <= 0:
            return await handler(event, data)
        me = await bot.me()
        if not is_directed(message, bot_id=bot.id, bot_username=me.username):
            return await handler(event, data)  # the host's traffic, not memory's work
        sender = message.from_user.id if message.from_user else message.chat.id
        if not self._admit((bot.id, message.chat.id, sender)):
            self._metrics.fair_share_drop()
            self._skipped(bot, message, sender)
            return None
        key = (bot.id, message.chat.id)
        alone = message.chat.type == "private"  # nobody else in the chat to hold back
        chat = self._chats.get(key)
        if chat is None:
            cap = self._max_in_flight if alone else self._member_max_in_flight
            chat = self._chats[key] = _Chat(member_cap=min(cap, self._max_in_flight))
        if not alone and chat.pending.get(sender, 0) >= self._member_max_queued:
            self._metrics.fair_share_drop()
            self._buckets[(bot.id, message.chat.id, sender)].skipped += 1
            self._skipped(bot, message, sender)
            return None
        chat.pending[sender] = chat.pending.get(sender, 0) + 1
        try:
            await self._take_turn(chat, sender)
            try:
                return await handler(event, data)
            finally:
                self._release(chat, sender)
        finally:
            chat.pending[sender] -= 1
            if chat.pending[sender] == 0:
                del chat.pending[sender]
            if chat.idle():
                del self._chats[key]

    async def _take_turn(self, chat: _Chat, sender: int) -> None:
        """A slot at once if one is free, this member holds less than their share and nobody
        who may take it waits; else this member's next turn."""
        if (
            chat.in_flight < self._max_in_flight
            and chat.may_hold(sender)
            and not any(chat.may_hold(member) for member in chat.turns)
        ):
            chat.hold(sender)
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = chat.turns.get(sender)
        if waiting is None:
            waiting = chat.turns[sender] = deque()  # a member new to the queue: last in turn
        waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release(chat, sender)  # given the slot, then cancelled: pass it on
            else:
                waiting = chat.turns.get(sender)
                if waiting is not None and turn in waiting:
                    waiting.remove(turn)
                    if not waiting:
                        del chat.turns[sender]
            raise

    def _release(self, chat: _Chat, holder: int) -> None:
        """A slot is free: the first member in turn who holds less than their share gets it,
        and goes to the back of the turn; members at their share keep their place."""
        chat.unhold(holder)
        while chat.in_flight < self._max_in_flight:
            member = next((m for m in chat.turns if chat.may_hold(m)), None)
            if member is None:
                return
            waiting = chat.turns[member]
            turn = waiting.popleft()
            if waiting:
                chat.turns.move_to_end(member)
            else:
                del chat.turns[member]
            if not turn.done():
                chat.hold(member)
                turn.set_result(None)

    def _admit(self, key: tuple[int, int, int]) -> bool:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= MAX_TRACKED:
                self._forget_full(now)
            bucket = self._buckets[key] = Bucket(tokens=float(self._burst), at=now)
        bucket.refill(now, burst=self._burst, per_second=self._per_second)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            if bucket.skipped and bucket.tokens >= self._burst / 2:
                log.info("memory.flood_over", skipped=bucket.skipped, sender=key[2])
                bucket.skipped = 0
            return True
        bucket.skipped += 1
        return False

    def _forget_full(self, now: float) -> None:
        """Senders whose bucket has refilled are as good as new: drop them (bounded memory)."""
        for key, bucket in list(self._buckets.items()):
            bucket.refill(now, burst=self._burst, per_second=self._per_second)
            if bucket.tokens >= self._burst:
                del self._buckets[key]

    def _skipped(self, bot: Bot, message: Message, sender: int) -> None:
        bucket = self._buckets[(bot.id, message.chat.id, sender)]
        now = self._clock()
        refill_seconds = self._burst / max(self._per_second, 1e-9)
        if bucket.noticed_at is not None and now - bucket.noticed_at < refill_seconds:
            return  # one notice and one log line per flood
        bucket.noticed_at = now
        log.warning(
            "memory.flood_skipped",
            chat_id=message.chat.id,
            sender=sender,
            burst=self._burst,
            per_second=self._per_second,
            reason="more messages than a person sends; the excess is skipped",
        )
        language = self._texts.for_user(message.from_user)
        text = self._texts(language, "memory-flood")
        thread = message.message_thread_id if message.is_topic_message else None
        task = asyncio.create_task(_notice(bot, message.chat.id, thread, text))
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)


async def _notice(bot: Bot, chat_id: int, thread_id: int | None, text: str) -> None:
    """Off the update's path; a notice that cannot be sent is only logged."""
    try:
        await bot.send_message(chat_id, text, message_thread_id=thread_id)
    except Exception as exc:  # memory must never take the host's bot down
        log.warning("memory.flood_notice_failed", chat_id=chat_id, error=type(exc).__name__)
