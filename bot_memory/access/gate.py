"""Who may read and change memory now: membership, admin status and host read grants.

The core never talks to Telegram: the adapter hands in a `MemberLookup` (getChatMember) and
this module decides, through a cache that chat_member updates refresh at once. A recalled
memory is never an authorization: every decision here comes from the requester's identity and
Telegram's answer, nothing else.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from bot_memory.errors import BotMemoryError
from bot_memory.logs import get_logger
from bot_memory.scopes import Scope

log = get_logger(__name__)

# Telegram's placeholder sender of anonymous admins' messages: never anyone in particular.
ANONYMOUS_ADMIN_BOT_ID = 1087968824
ADMIN_STATUSES = frozenset({"creator", "administrator"})
MEMBER_STATUSES = frozenset({"creator", "administrator", "member"})


@dataclass(frozen=True)
class Requester:
    """Who a request (or a button press) comes from."""

    user_id: int
    chat_id: int
    anonymous_admin: bool = False  # sent as the group itself (sender_chat == chat)


@dataclass(frozen=True)
class MemberStatus:
    status: str  # creator | administrator | member | restricted | left | kicked
    is_member: bool | None = None  # Telegram's flag for "restricted"

    @property
    def member(self) -> bool:
        if self.status == "restricted":
            return bool(self.is_member)
        return self.status in MEMBER_STATUSES

    @property
    def admin(self) -> bool:
        return self.status in ADMIN_STATUSES


class LookupFailed(BotMemoryError, RuntimeError):
    """Telegram could not be asked (network, 429, ...): decisions fail closed."""


MemberLookup = Callable[[int, int], Awaitable[MemberStatus]]  # (chat_id, user_id) -> status


@dataclass(frozen=True)
class Membership:
    """The requester's standing in a scope at one moment."""

    member: bool  # may read this scope's shared memory
    admin: bool  # workspace owner/admin here
    reason: str  # why, for logs: private-owner, status:member, lookup-failed, ...
    cached: bool = False  # from the membership cache, not asked just now

    @property
    def checked(self) -> bool:
        return self.reason != "lookup-failed"


@dataclass
class MembershipCache:
    """(bot, chat, user) -> status for ttl seconds; chat_member updates overwrite at once.
    Each answer keeps when it came (this cache's clock), so a caller may want a younger one."""

    ttl_seconds: float = 300.0
    max_entries: int = 100_000
    clock: Callable[[], float] = time.monotonic
    _entries: OrderedDict[tuple[int, int, int], tuple[float, MemberStatus]] = field(
        default_factory=OrderedDict
    )

    def get(self, key: tuple[int, int, int], max_age: float | None = None) -> MemberStatus | None:
        """The answer, unless it is older than the cache keeps answers, or than `max_age`
        seconds when given (one exactly that old is too old: 0 never serves)."""
        found = self._entries.get(key)
        if found is None:
            return None
        at, status = found
        age = self.clock() - at
        if age > self.ttl_seconds:
            del self._entries[key]
            return None
        if max_age is not None and age >= max_age:
            return None  # kept: the answer asked for now overwrites it
        return status

    def put(self, key: tuple[int, int, int], status: MemberStatus) -> None:
        self._entries[key] = (self.clock(), status)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget_chat(self, bot_id: int, chat_id: int) -> None:
        for key in [k for k in self._entries if k[0] == bot_id and k[1] == chat_id]:
            del self._entries[key]


@dataclass(frozen=True)
class ItemView:
    """What a read-grant hook is shown: a memory record or a chat message."""

    kind: Literal["record", "message"]
    id: str
    scope_key: str
    speaker_ids: list[int]
    thread_ids: list[int]
    source_ids: list[str] = field(default_factory=list)


CanRead = Callable[[Requester, ItemView], bool | Awaitable[bool]]


class Access:
    """Membership and admin checks for one Memory; shared by every bot it serves."""

    def __init__(
        self,
        *,
        admin_user_ids: frozenset[int],
        cache: MembershipCache,
        can_read: CanRead | None = None,
    ) -> None:
        self.admin_user_ids = admin_user_ids
        self.cache = cache
        self.can_read = can_read

    def note(self, bot_id: int, chat_id: int, user_id: int, status: MemberStatus) -> None:
        """A chat_member update: the cache knows at once."""
        if user_id != ANONYMOUS_ADMIN_BOT_ID:
            self.cache.put((bot_id, chat_id, user_id), status)

    async def membership(
        self,
        scope: Scope,
        requester: Requester,
        lookup: MemberLookup | None,
        *,
        fresh: bool = False,
        max_age: float | None = None,
    ) -> Membership:
        """The requester's standing in this scope now.

        Private scope: only its user, who is its owner. Shared scope: an anonymous admin (the
        group itself) is a member and an admin; a listed admin ID is both; anyone else is what
        getChatMember says, through the cache: `fresh` asks Telegram now, `max_age` when the
        cached answer is that many seconds old (Telegram tells a bot that is not an admin
        nothing when a member leaves). Without a lookup (a host using the core directly) a
        group requester is taken as a member, not an admin. A failed lookup is neither, and is
        logged: recall fails closed and never blocks the answer.
        """
        if scope.is_private:
            own = requester.user_id == scope.user_id and not requester.anonymous_admin
            return Membership(member=own, admin=own, reason="private-owner" if own else "other")
        if requester.anonymous_admin and requester.chat_id == scope.chat_id:
            return Membership(member=True, admin=True, reason="anonymous-admin")
        if requester.user_id == ANONYMOUS_ADMIN_BOT_ID:
            return Membership(member=False, admin=False, reason="placeholder-sender")
        if requester.user_id in self.admin_user_ids:
            return Membership(member=True, admin=True, reason="listed-admin")
        if lookup is None:
            return Membership(member=True, admin=False, reason="no-lookup")
        key = (scope.bot_id, scope.chat_id, requester.user_id)
        status = None if fresh else self.cache.get(key, max_age)
        cached = status is not None
        if status is None:
            try:
                status = await lookup(scope.chat_id, requester.user_id)
            except LookupFailed as exc:
                log.warning(
                    "memory.membership_lookup_failed",
                    chat_id=scope.chat_id,
                    user_id=requester.user_id,
                    error=str(exc),
                )
                return Membership(member=False, admin=False, reason="lookup-failed")
            self.cache.put(key, status)
        return Membership(
            member=status.member,
            admin=status.admin,
            reason=f"status:{status.status}",
            cached=cached,
        )

    async def readable(self, requester: Requester | None, item: ItemView) -> bool:
        if self.can_read is None or requester is None:
            return True
        verdict = self.can_read(requester, item)
        if not isinstance(verdict, bool):
            verdict = await verdict
        return bool(verdict)


@dataclass
class Gate:
    """A request's access, asked again at every action (a tool call, a replay, a button)."""

    access: Access
    scope: Scope
    requester: Requester
    lookup: MemberLookup | None = None

    async def membership(self, *, fresh: bool = False, max_age: float | None = None) -> Membership:
        return await self.access.membership(
            self.scope, self.requester, self.lookup, fresh=fresh, max_age=max_age
        )

    async def promoted(self, who: Membership) -> Membership | None:
        """Before refusing an admin-only action on a cached "not an admin", ask Telegram again:
        someone promoted within the cache's lifetime is an admin now. The fresh standing when
        it says admin, else None."""
        if who.admin or not who.reason.startswith("status:"):
            return None
        again = await self.access.membership(self.scope, self.requester, self.lookup, fresh=True)
        return again if again.admin else None

    async def confirmed(self, who: Membership) -> Membership:
        """The standing to grant an admin-only action on: an admin known only from the cache is
        asked about again (someone demoted a minute ago is no admin now); the cache serves to
        refuse, never to grant."""
        if who.admin and who.cached:
            return await self.access.membership(self.scope, self.requester, self.lookup, fresh=True)
        return who

    async def readable(self, item: ItemView) -> bool:
        return await self.access.readable(self.requester, item)
