"""The workspace's cap shared fairly: at `workspace_max_records` the records go from whoever
holds the most, a scope (or one speaker's notes) over its share of the cap
(`scope_max_share`) first, least recently used within it; when nobody is over their share,
the least recently used of the scopes holding the most, never a smaller scope's last."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot_memory.access.gate import Membership
from bot_memory.intents import recognize
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from tests.support.helpers import view

ADA = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
BEN = Scope(workspace="test", bot_id=42, kind="private", chat_id=8, user_id=8)
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-100, topic_id=0)
MEMBER = Membership(member=True, admin=True, reason="private-owner")
NOW = datetime.now(UTC)


async def noted(memory: Memory, scope: Scope, speaker: int, text: str, at: datetime) -> str:
    source = await memory.record(scope, text=text, speaker_id=speaker, sent_at=at)
    assert source is not None
    await memory.begin(source)
    request = recognize(text)
    assert request is not None
    result = await memory.control(request, source, who=MEMBER, now=at)
    assert result.outcome == "remembered", result
    await memory.finish(
        source, status="succeeded", answer_text="Noted.", bot_id=42, kind="memory_control"
    )
    return result.memory_ids[0]


async def test_one_scope_past_the_cap_evicts_its_own_not_another_scopes(
    settings: MemorySettings,
) -> None:
    memory = await Memory.open(settings.model_copy(update={"workspace_max_records": 6}))
    try:
        ben = [
            await noted(memory, BEN, 8, f"remember that my dog is called Rex {i}", NOW + _s(i))
            for i in range(2)
        ]
        ada = [
            await noted(memory, ADA, 7, f"remember that item {i} is mine", NOW + _s(10 + i))
            for i in range(6)
        ]
        kept = set((await view(memory)).records)
        # Ben's two notes, the least recently used of the workspace, survive: Ada is over her
        # share (3 of 6) and her oldest go.
        assert set(ben) <= kept
        assert kept == set(ben) | set(ada[2:])
    finally:
        await memory.close()


async def test_one_speaker_in_a_group_evicts_their_own_notes(settings: MemorySettings) -> None:
    memory = await Memory.open(settings.model_copy(update={"workspace_max_records": 6}))
    try:
        ben = [
            await noted(memory, GROUP, 8, f"remember that Ben's desk is {i}", NOW + _s(i))
            for i in range(2)
        ]
        ada = [
            await noted(memory, GROUP, 7, f"remember that Ada's {i} is here", NOW + _s(10 + i))
            for i in range(6)
        ]
        kept = set((await view(memory)).records)
        assert kept == set(ben) | set(ada[2:])
    finally:
        await memory.close()


async def test_nobody_over_their_share_is_the_lru_of_those_holding_the_most(
    settings: MemorySettings,
) -> None:
    memory = await Memory.open(settings.model_copy(update={"workspace_max_records": 4}))
    try:
        ben = [
            await noted(memory, BEN, 8, f"remember that Ben owns bike {i}", NOW + _s(i))
            for i in range(2)
        ]
        ada = [
            await noted(memory, ADA, 7, f"remember that Ada owns car {i}", NOW + _s(10 + i))
            for i in range(2)
        ]
        carl = await noted(
            memory,
            Scope(workspace="test", bot_id=42, kind="private", chat_id=9, user_id=9),
            9,
            "remember that Carl owns a boat",
            NOW + _s(20),
        )
        # Nobody holds more than 2 of 4 (Ben and Ada at it, not over it): the oldest of theirs.
        assert set((await view(memory)).records) == set(ben[1:]) | set(ada) | {carl}
    finally:
        await memory.close()


async def test_users_at_their_share_do_not_evict_a_third_users_only_memory(
    settings: MemorySettings,
) -> None:
    memory = await Memory.open(settings.model_copy(update={"workspace_max_records": 4}))
    try:
        carl = await noted(
            memory,
            Scope(workspace="test", bot_id=42, kind="private", chat_id=9, user_id=9),
            9,
            "remember that Carl owns a boat",
            NOW,
        )
        ben = [
            await noted(memory, BEN, 8, f"remember that Ben owns bike {i}", NOW + _s(10 + i))
            for i in range(2)
        ]
        ada = [
            await noted(memory, ADA, 7, f"remember that Ada owns car {i}", NOW + _s(20 + i))
            for i in range(2)
        ]
        # Ben and Ada each at their share (2 of 4), nobody over it: Carl's only memory, the
        # workspace's least recently used, stays; the oldest of those holding the most goes.
        assert set((await view(memory)).records) == {carl} | set(ben[1:]) | set(ada)
    finally:
        await memory.close()


def _s(seconds: int) -> timedelta:
    return timedelta(seconds=seconds)
