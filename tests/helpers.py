"""Small helpers the database tests share."""

from __future__ import annotations

from bot_memory.access import Membership
from bot_memory.service import Memory
from bot_memory.workspace import WorkspaceView

ADMIN = Membership(member=True, admin=True, reason="test-admin")
MEMBER = Membership(member=True, admin=False, reason="test-member")


async def view(memory: Memory, workspace: str = "test") -> WorkspaceView:
    return await memory.store.view(workspace)
