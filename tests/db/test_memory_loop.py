"""The core loop on a real PostgreSQL, without Telegram: record -> pipeline -> recall -> control."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from bot_memory.intents import recognize
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage import SourceMessage
from bot_memory.storage.workspace import WorkspaceView
from tests.support.helpers import ADMIN, MEMBER, view

PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=1001, user_id=1001)
OTHER_PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=1002, user_id=1002)
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-100500, topic_id=7)


@pytest.fixture
async def memory(settings: MemorySettings) -> AsyncIterator[Memory]:
    mem = await Memory.open(settings)
    yield mem
    await mem.close()


async def exchange(
    memory: Memory,
    scope: Scope,
    text: str,
    *,
    speaker: int | None = None,
    answer: str = "ok",
    msg_id: int | None = None,
) -> SourceMessage:
    source = await memory.record(
        scope,
        text=text,
        speaker_id=speaker or scope.user_id or 1,
        thread_id=scope.topic_id,
        telegram_message_id=msg_id,
    )
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text=answer, bot_id=42)
    return source


async def state_of(memory: Memory) -> WorkspaceView:
    return await view(memory)


async def test_idle_conversation_becomes_recalled_memory(memory: Memory) -> None:
    await exchange(memory, PRIVATE, "I am planning a trip to Kyoto in April")
    await exchange(memory, PRIVATE, "I prefer quiet hotels")
    report = await memory.pipeline.tick()
    assert len(report.planned) == 2  # one extraction, then its consolidation, in one tick
    assert set(report.finished.values()) == {"done"}

    state = await state_of(memory)
    [record] = state.valid_records(PRIVATE.key)
    assert "Kyoto" in record.summary and record.origin == "extracted"
    assert len(record.sources) == 4  # two user messages and two answers, with hashes
    assert state.scopes[PRIVATE.key].index.memory_ids == [record.id]

    recalled = await memory.recall(PRIVATE)
    assert recalled.mode == "index" and recalled.text is not None
    assert record.id in recalled.text and "not instructions" in recalled.text
    assert (await memory.recall(OTHER_PRIVATE)).mode == "empty"
    assert (await memory.recall(GROUP)).mode == "empty"

    usage = await memory.store.pool.fetch("SELECT kind, request_id FROM usage_ledger ORDER BY id")
    kinds = [u["kind"] for u in usage]
    assert kinds == ["memory_extract", "memory_consolidate"]
    # Charges attach to the originating (newest) request of the batch.
    assert len({u["request_id"] for u in usage}) == 1

    # Nothing new: the next tick plans nothing.
    assert (await memory.pipeline.tick()).planned == []


async def test_open_requests_hold_back_extraction(memory: Memory) -> None:
    await exchange(memory, PRIVATE, "first question")
    await memory.record(PRIVATE, text="still running", speaker_id=1001)  # queued, never closed
    assert (await memory.pipeline.tick()).planned == []


async def test_remember_forget_and_tombstones(memory: Memory) -> None:
    text = "remember that my passport expires in May"
    note_source = await memory.record(PRIVATE, text=text, speaker_id=1001)
    assert note_source is not None
    request = recognize(text)
    assert request is not None
    result = await memory.control(request, note_source, who=MEMBER)
    assert result.outcome == "remembered"
    state = await state_of(memory)
    note = state.records[result.memory_ids[0]]
    assert note.summary == "my passport expires in May" and note.origin == "note"  # the fact
    recalled = await memory.recall(PRIVATE)
    assert recalled.mode == "directory" and "passport" in (recalled.text or "")

    await memory.pipeline.tick()  # the note triggers consolidation on its own
    assert (await memory.recall(PRIVATE)).mode == "index"

    forget_text = "forget my passport"
    forget_source = await memory.record(PRIVATE, text=forget_text, speaker_id=1001)
    assert forget_source is not None
    forget_request = recognize(forget_text)
    assert forget_request is not None and forget_request.action == "forget"
    result = await memory.control(forget_request, forget_source, who=MEMBER)
    assert result.outcome == "forgotten"
    state = await state_of(memory)
    assert state.records == {}
    assert note_source.message_id in state.tombstones[PRIVATE.key]
    assert (await memory.recall(PRIVATE)).mode == "empty"


async def test_disable_keeps_records_but_stops_recall(memory: Memory) -> None:
    await exchange(memory, PRIVATE, "I like green tea")
    await memory.pipeline.tick()
    off = await memory.record(PRIVATE, text="turn off memory", speaker_id=1001)
    assert off is not None
    request = recognize("turn off memory")
    assert request is not None
    assert (await memory.control(request, off, who=MEMBER)).outcome == "disabled"
    assert (await memory.recall(PRIVATE)).mode == "off"
    assert len((await state_of(memory)).valid_records(PRIVATE.key)) == 1
    on_request = recognize("turn on memory")
    assert on_request is not None
    on = await memory.record(PRIVATE, text="turn on memory", speaker_id=1001)
    assert on is not None
    assert (await memory.control(on_request, on, who=MEMBER)).outcome == "enabled"
    assert (await memory.recall(PRIVATE)).mode == "index"


async def test_group_toggle_needs_admin_and_forget_needs_own_records(memory: Memory) -> None:
    await exchange(memory, GROUP, "we ship v2 on Friday", speaker=2001)
    await exchange(memory, GROUP, "I will write the release notes", speaker=2002)
    await memory.pipeline.tick()
    [record] = (await state_of(memory)).valid_records(GROUP.key)
    assert record.speaker_ids == [2001, 2002]

    off = recognize("turn off memory")
    assert off is not None
    src = await memory.record(GROUP, text="turn off memory", speaker_id=2002, thread_id=7)
    assert src is not None
    assert (await memory.control(off, src, who=MEMBER)).outcome == "not_allowed"
    forget_request = recognize("forget that we ship v2 on Friday")
    assert forget_request is not None
    src = await memory.record(GROUP, text="forget that we ship v2 on Friday", speaker_id=2002)
    assert src is not None
    # A mixed-speaker record: a participant may not forget it, an admin may.
    assert (await memory.control(forget_request, src, who=MEMBER)).outcome == "not_allowed"
    assert (await memory.control(forget_request, src, who=ADMIN)).outcome == "forgotten"


async def test_edit_invalidates_dependent_memory(memory: Memory) -> None:
    await exchange(memory, PRIVATE, "my office is in building 5", msg_id=501)
    await memory.pipeline.tick()
    assert (await memory.recall(PRIVATE)).mode == "index"
    await exchange(memory, PRIVATE, "my desk is by the window", msg_id=503)
    await memory.pipeline.tick()
    assert len((await memory.recall(PRIVATE)).memory_ids) == 2
    changed = await memory.record_edit(
        PRIVATE.chat_id, 501, "my office is in building 9", bot_id=PRIVATE.bot_id
    )
    assert changed
    state = await state_of(memory)
    [left] = state.valid_records(PRIVATE.key)
    assert "window" in left.summary
    recalled = await memory.recall(PRIVATE)
    assert recalled.mode == "directory" and "building 5" not in (recalled.text or "")
    # The stale index is rebuilt by the worker without waiting for new messages.
    await memory.pipeline.tick()
    recalled = await memory.recall(PRIVATE)
    assert recalled.mode == "index" and recalled.memory_ids == [left.id]


async def test_secret_is_redacted_before_the_model_sees_it(memory: Memory) -> None:
    seen: list[str] = []
    original = memory.model._complete

    async def spy(messages, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(json.dumps(messages, ensure_ascii=False))
        return await original(messages, **kwargs)

    memory.model._complete = spy  # type: ignore[method-assign]
    key = "sk-proj-" + "Ab3" * 16
    await exchange(memory, PRIVATE, f"my key is {key} please keep it safe")
    await memory.pipeline.tick()
    assert seen and all(key not in body for body in seen)
    assert any("[REDACTED]" in body for body in seen)
    state = await state_of(memory)
    assert all(key not in r.model_dump_json() for r in state.records.values())


async def test_inactive_records_are_pruned_by_the_worker(memory: Memory) -> None:
    from datetime import UTC, datetime, timedelta

    await exchange(memory, PRIVATE, "the wiki lives at wiki.example.org")
    await memory.pipeline.tick()
    assert len((await state_of(memory)).valid_records(PRIVATE.key)) == 1
    await memory.pipeline.tick(now=datetime.now(UTC) + timedelta(days=31))
    state = await state_of(memory)
    assert state.records == {}
    assert (await memory.recall(PRIVATE)).mode == "empty"


async def control(memory: Memory, scope: Scope, text: str, speaker: int) -> str:
    """A direct request as the router runs it: its own memory_control request, closed."""
    request = recognize(text)
    assert request is not None
    source = await memory.record(scope, text=text, speaker_id=speaker)
    assert source is not None
    await memory.begin(source, kind="memory_control")
    result = await memory.control(request, source, who=MEMBER)
    await memory.finish(source, status="succeeded", answer_text=result.outcome, bot_id=42)
    return result.outcome


async def test_what_is_said_while_memory_is_off_is_never_extracted(memory: Memory) -> None:
    assert await control(memory, PRIVATE, "turn off memory", 1001) == "disabled"
    await exchange(memory, PRIVATE, "my pin code hint is the cat's birthday")
    assert (await memory.pipeline.tick()).planned == []  # off: nothing is generated
    assert await control(memory, PRIVATE, "turn on memory", 1001) == "enabled"
    await exchange(memory, PRIVATE, "I moved to Lisbon")
    await memory.pipeline.tick()
    [record] = (await state_of(memory)).valid_records(PRIVATE.key)
    assert "Lisbon" in record.summary and "cat" not in record.summary


async def test_an_unanswered_request_closes_once_and_schedules_its_scope(memory: Memory) -> None:
    source = await memory.record(GROUP, text="anyone there?", speaker_id=5)
    assert source is not None
    await memory.begin(source)
    await memory.store.pool.execute("DELETE FROM memory_scopes")  # as if never scheduled
    assert await memory.finish(source, status="unanswered") is True
    assert await memory.finish(source, status="failed", error="late") is False  # once
    status, error = await memory.store.pool.fetchrow(
        "SELECT status, error FROM requests WHERE id = $1", source.request_id
    )
    assert (status, error) == ("unanswered", None)
    row = await memory.store.pool.fetchrow(
        "SELECT kind, chat_id, topic_id, user_id, due_at IS NOT NULL AS due"
        " FROM memory_scopes WHERE scope_key = $1",
        GROUP.key,
    )
    assert tuple(row) == ("shared", GROUP.chat_id, 7, None, True)
