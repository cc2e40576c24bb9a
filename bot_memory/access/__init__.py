"""Access: who may read and change memory now (`gate`: membership, admin status, the host's
read grants) and whose memory it is (`tenancy`: which workspace a chat lives in; `chats`: what
Telegram tells about a chat, applied to memory).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.access import tenancy
from bot_memory.access.chats import ChatEvents
from bot_memory.access.gate import (
    ANONYMOUS_ADMIN_BOT_ID,
    Access,
    CanRead,
    Gate,
    ItemView,
    LookupFailed,
    Membership,
    MembershipCache,
    MemberStatus,
    Requester,
)

__all__ = [
    "ANONYMOUS_ADMIN_BOT_ID",
    "Access",
    "CanRead",
    "ChatEvents",
    "Gate",
    "ItemView",
    "LookupFailed",
    "MemberStatus",
    "Membership",
    "MembershipCache",
    "Requester",
    "tenancy",
]
