"""What a host imports stays importable: the public names of `bot_memory`, `bot_memory_aiogram`
and `bot_memory_aiogram.testing` (pinned here, so a removal is a visible change), every import
the README shows, and the old forms kept for one release with a DeprecationWarning."""

from __future__ import annotations

import json

import pytest

from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.tools import ToolContext

GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-9, topic_id=0)


async def _switch_off_as(memory: Memory, ctx: ToolContext) -> object:
    arguments = json.dumps({"action": "disable-memory", "sourceId": ctx.source.source_id})
    result = await memory.tools.execute("manage_memory", arguments, ctx, call_id="c1")
    return result.get("outcome")


async def test_tool_context_still_takes_is_admin_with_a_warning(memory: Memory) -> None:
    source = await memory.record(GROUP, text="turn off memory", speaker_id=77)
    assert source is not None
    await memory.begin(source)
    with pytest.warns(DeprecationWarning, match=r"is_admin.*gate=") as warned:
        admin = ToolContext(source=source, is_admin=True)
    assert warned[0].filename == __file__  # points at the host's line, not ours
    # As before: the host's word that the speaker is an admin (no lookup configured here).
    assert await _switch_off_as(memory, admin) == "disabled"

    with pytest.warns(DeprecationWarning, match="is_admin"):
        member = ToolContext(source=source, is_admin=False)
    assert await memory.tools.gate_for(member).membership() == (
        await memory.tools.gate_for(ToolContext(source=source)).membership()
    )


async def test_tool_context_refuses_is_admin_next_to_a_gate(memory: Memory) -> None:
    source = await memory.record(GROUP, text="turn off memory", speaker_id=77)
    assert source is not None
    gate = memory.tools.gate_for(ToolContext(source=source))
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="not both"):
        ToolContext(source=source, gate=gate, is_admin=True)
