"""Small helpers the database tests share."""

from __future__ import annotations

from bot_memory.access.gate import Membership
from bot_memory.control import ControlResult
from bot_memory.intents import recognize
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from bot_memory.storage.workspace import WorkspaceView

ADMIN = Membership(member=True, admin=True, reason="test-admin")
MEMBER = Membership(member=True, admin=False, reason="test-member")


async def view(memory: Memory, workspace: str = "test") -> WorkspaceView:
    return await memory.store.view(workspace)


async def act(
    memory: Memory, source: SourceMessage, who: Membership | None = None
) -> ControlResult:
    """Carry out the memory request a recorded message makes (it must make one)."""
    request = recognize(source.text)
    assert request is not None, source.text
    return await memory.control(request, source, who=who)
