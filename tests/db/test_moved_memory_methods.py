"""Memory's methods that moved to `memory.chats` (and `still_available`, to the store) keep
working for a release, each use warned."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from bot_memory.deprecation import KEPT_FOR_ONE_RELEASE
from bot_memory.scopes import Scope
from bot_memory.service import Memory


@pytest.mark.filterwarnings("default::DeprecationWarning")
async def test_the_old_forms_warn_and_reach_the_new_ones(memory: Memory) -> None:
    with pytest.warns(DeprecationWarning, match=re.escape(KEPT_FOR_ONE_RELEASE)):
        workspace = memory.default_workspace(42, -100)
    assert workspace == memory.chats.default_workspace(42, -100)
    with pytest.warns(DeprecationWarning, match="memory.chats.auto_delete_changed"):
        await memory.auto_delete_changed(
            bot_id=42, chat_id=-100, chat_type="group", workspace=workspace, seconds=86400
        )
    info = await memory.chats.chat(42, -100)
    assert info is not None and info.auto_delete_seconds == 86400
    with pytest.warns(DeprecationWarning, match="memory.chats.bot_membership"):
        changed = await memory.bot_membership(
            bot_id=42, chat_id=-100, chat_type="group", workspace=workspace, active=False
        )
    assert changed == 0
    scope = Scope(workspace=workspace, bot_id=42, kind="shared", chat_id=-100, topic_id=0)
    with pytest.warns(DeprecationWarning, match="store.available_of"):
        assert await memory.still_available(scope, ["mem_x"], datetime.now(UTC)) == set()
