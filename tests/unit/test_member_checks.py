"""The membership cache's answers keep when they came: a caller that must know recently (the
Mini App, every BOT_MEMORY_MINIAPP_MEMBER_CHECK_SECONDS) asks Telegram again past that age,
through the same cache (the new answer serves everyone)."""

from __future__ import annotations

from bot_memory.access import Access, MembershipCache, MemberStatus, Requester
from bot_memory.scopes import Scope

GROUP = Scope(workspace="w", bot_id=42, kind="shared", chat_id=-100, topic_id=0)
PRIVATE = Scope(workspace="w", bot_id=42, kind="private", chat_id=7, user_id=7)


class Telegram:
    """What getChatMember answers (the core's MemberLookup), counting the questions."""

    def __init__(self) -> None:
        self.status = "member"
        self.asked = 0

    async def __call__(self, chat_id: int, user_id: int) -> MemberStatus:
        self.asked += 1
        return MemberStatus(self.status)


async def test_an_answer_older_than_max_age_is_asked_again() -> None:
    now = [1000.0]
    access = Access(
        admin_user_ids=frozenset(),
        cache=MembershipCache(ttl_seconds=300, clock=lambda: now[0]),
    )
    telegram, ada = Telegram(), Requester(user_id=7, chat_id=-100)
    assert (await access.membership(GROUP, ada, telegram)).member
    telegram.status = "left"  # and no chat_member update
    now[0] += 59
    young = await access.membership(GROUP, ada, telegram, max_age=60)
    assert young.member and young.cached and telegram.asked == 1
    now[0] += 1  # exactly max_age old: too old
    left = await access.membership(GROUP, ada, telegram, max_age=60)
    assert not left.member and not left.cached and telegram.asked == 2
    # The new answer serves every caller, with or without a max age.
    assert not (await access.membership(GROUP, ada, telegram)).member
    assert not (await access.membership(GROUP, ada, telegram, max_age=60)).member
    assert telegram.asked == 2
    assert not (await access.membership(GROUP, ada, telegram, max_age=0)).cached  # never served
    assert telegram.asked == 3
    # A private chat's standing is its owner's, asked of nobody.
    owner = await access.membership(PRIVATE, Requester(user_id=7, chat_id=7), telegram, fresh=True)
    assert owner.member and telegram.asked == 3
