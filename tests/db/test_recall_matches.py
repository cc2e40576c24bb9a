"""Recall that fits the question: beside the index (or directory), a request carries the
records that best match its message, under recall's gates, dated, within the block's budget.

Each gate test fails if its gate is removed: the record it hides is one the search finds.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot_memory.access import ItemView, MemberStatus, Requester
from bot_memory.records import MemoryRecord, SourceRef, new_memory_id
from bot_memory.retrieval import RecallContext
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.terms import worth_searching
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI

PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=5, user_id=5)
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-100900, topic_id=0)
T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)
NOW = T0 + timedelta(days=40)


async def add(
    memory: Memory, title: str, summary: str, *, scope: Scope = PRIVATE, at: datetime = T0
) -> str:
    speaker = scope.user_id or 7
    source = await memory.record(scope, text=summary, speaker_id=speaker, sent_at=at)
    assert source is not None
    record = MemoryRecord(
        id=new_memory_id(),
        scope_key=scope.key,
        origin="extracted",
        title=title,
        summary=summary,
        speaker_ids=[speaker],
        thread_ids=[0],
        sources=[SourceRef(message_id=source.message_id, hash="h", speaker_id=speaker)],
        created_at=at,
        last_used_at=at,
    )
    async with memory.store.locked(scope.workspace, scope_key=scope.key) as tx:
        await tx.scope(scope)
        await tx.add_record(record, at)
    return record.id


async def a_scope_with_an_old_boat(memory: Memory, scope: Scope = PRIVATE) -> str:
    """The boat record is older than the eight the directory shows: only a match brings it."""
    boat = await add(memory, "Boat", "My boat is called Aurora", scope=scope, at=T0)
    for day in range(1, 10):
        await add(
            memory,
            f"Note {day}",
            f"Lunch plan number {day}",
            scope=scope,
            at=T0 + timedelta(days=day),
        )
    return boat


async def member(chat_id: int, user_id: int) -> MemberStatus:
    return MemberStatus(status="member")


async def left(chat_id: int, user_id: int) -> MemberStatus:
    return MemberStatus(status="left")


def block(recalled: RecallContext) -> dict[str, object]:
    text = recalled.text or ""
    start = text.index("{")
    return json.loads(text[start : text.rindex("}") + 1])  # type: ignore[no-any-return]


async def test_the_message_brings_its_best_match_dated_beside_the_directory(
    memory: Memory,
) -> None:
    boat = await a_scope_with_an_old_boat(memory)
    plain = await memory.recall(PRIVATE, now=NOW)
    assert plain.mode == "directory" and boat not in plain.memory_ids
    asked = await memory.recall(PRIVATE, now=NOW, message="what is my boat called?")
    assert asked.mode == "directory" and boat in asked.memory_ids  # cited and rechecked
    data = block(asked)
    assert [m["id"] for m in data["matches"]] == [boat]  # type: ignore[index]
    assert data["matches"][0]["said_on"] == "2026-05-01"  # type: ignore[index]
    assert all(r["said_on"] for r in data["records"])  # type: ignore[attr-defined]
    assert "the newer one holds" in (asked.text or "")
    # Nothing the directory already names is repeated.
    named = [r["id"] for r in data["records"]]  # type: ignore[attr-defined]
    assert not set(named) & {m["id"] for m in data["matches"]}  # type: ignore[index]
    used = await memory.store.pool.fetchval(
        "SELECT last_used_at FROM memory_records WHERE id = $1", boat
    )
    assert used == NOW  # a match counts as use


async def test_small_talk_adds_nothing_and_needs_no_search(memory: Memory) -> None:
    await a_scope_with_an_old_boat(memory)
    plain = await memory.recall(PRIVATE, now=NOW)
    for message in ("hi", "thanks!", "ok 👍", "你好", "好的", "спасибо", "", "🐈"):
        assert not worth_searching(message), message
        assert (await memory.recall(PRIVATE, now=NOW, message=message)).text == plain.text
    assert worth_searching("boat?") and worth_searching("我的猫") and worth_searching("лодка")


async def test_a_match_the_read_grant_withholds_is_not_shown(db_url: str, llm: FakeOpenAI) -> None:
    def can_read(requester: Requester, item: ItemView) -> bool:
        return item.id != hidden[0]

    hidden: list[str] = []
    memory = await Memory.open(make_settings(db_url, llm_base_url=llm.base_url), can_read=can_read)
    try:
        hidden.append(await a_scope_with_an_old_boat(memory, GROUP))
        gate = memory.gate(GROUP, Requester(user_id=7, chat_id=GROUP.chat_id), member)
        asked = await memory.recall(GROUP, gate=gate, now=NOW, message="my boat's name")
        assert hidden[0] not in asked.memory_ids and "Aurora" not in (asked.text or "")
    finally:
        await memory.close()


async def test_a_non_member_gets_no_matches(memory: Memory) -> None:
    await a_scope_with_an_old_boat(memory, GROUP)
    gate = memory.gate(GROUP, Requester(user_id=99, chat_id=GROUP.chat_id), left)
    asked = await memory.recall(GROUP, gate=gate, now=NOW, message="boat")
    assert asked.mode == "denied" and asked.memory_ids == [] and asked.text is None


async def test_a_match_past_its_retention_is_not_shown(memory: Memory) -> None:
    boat = await a_scope_with_an_old_boat(memory)
    await memory.store.pool.execute(
        "UPDATE memory_records SET available_until = $2 WHERE id = $1", boat, NOW
    )
    asked = await memory.recall(PRIVATE, now=NOW, message="what is my boat called?")
    assert boat not in asked.memory_ids and "Aurora" not in (asked.text or "")


async def test_no_matches_while_memory_is_off(memory: Memory) -> None:
    await a_scope_with_an_old_boat(memory)
    async with memory.store.locked(PRIVATE.workspace, scope_key=PRIVATE.key) as tx:
        state = await tx.scope(PRIVATE)
        state.enabled = False
        tx.save(state)
    asked = await memory.recall(PRIVATE, now=NOW, message="boat")
    assert asked.mode == "off" and asked.text is None and asked.memory_ids == []


async def test_a_match_forgotten_in_flight_leaves_the_block(memory: Memory) -> None:
    boat = await a_scope_with_an_old_boat(memory)
    source = await memory.record(PRIVATE, text="what is my boat called?", speaker_id=5)
    assert source is not None
    turn = memory.turn(source)
    recalled = await turn.start(now=NOW)
    assert boat in recalled.memory_ids
    async with memory.store.locked(PRIVATE.workspace, scope_key=PRIVATE.key) as tx:
        await tx.scope(PRIVATE)
        await tx.invalidate(await tx.records([boat]), "forgotten")
    again = await turn.current_recall(now=NOW)
    assert boat not in again.memory_ids and "Aurora" not in (again.text or "")
    assert again.entries  # the directory is still there


async def test_matches_stop_at_the_blocks_budget(db_url: str, llm: FakeOpenAI) -> None:
    memory = await Memory.open(make_settings(db_url, llm_base_url=llm.base_url))
    try:
        plain_size = 0
        boat = await a_scope_with_an_old_boat(memory)
        plain = await memory.recall(PRIVATE, now=NOW)
        plain_size = len((plain.text or "").encode())
    finally:
        await memory.close()
    tight = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, recall_block_max_bytes=plain_size + 10)
    )
    try:
        asked = await tight.recall(PRIVATE, now=NOW, message="boat")
        assert boat not in asked.memory_ids  # it would not fit
        assert len((asked.text or "").encode()) <= plain_size + 10
    finally:
        await tight.close()
    off = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, recall_matches_max_records=0)
    )
    try:
        assert boat not in (await off.recall(PRIVATE, now=NOW, message="boat")).memory_ids
    finally:
        await off.close()
