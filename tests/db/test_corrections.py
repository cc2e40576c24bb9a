"""Corrections replace: an extraction that names, in `replaces`, an existing record its batch
corrects makes that record replaced. A replaced record is no longer recalled (directory, index,
matches) or consolidated; query_memories finds it after the current records, marked, as
history, and the /memory screen shows it, marked, until pruned or forgotten. Forgetting the
newer record makes it current again. A correction retires only what it may: a record shown
whole, of what the correcting conversation's speakers said, and still there at the commit;
the facts of it that still hold are carried over. An answer that names a record it was not
given is refused."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta

import pytest

from bot_memory.access import Membership
from bot_memory.agent.tools import ToolContext
from bot_memory.control.actions import forget_record
from bot_memory.intents import recognize
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import view

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-100, topic_id=0)
OWNER = Membership(member=True, admin=True, reason="private-owner")
# Said in the past (the worker's leases are on the server's clock: it ticks now).
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(days=40)
LATER = T0 + timedelta(days=31)


async def exchange(
    memory: Memory, text: str, at: datetime, *, scope: Scope = SCOPE, speaker: int = 7
) -> int:
    source = await memory.record(scope, text=text, speaker_id=speaker, sent_at=at)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)
    return source.message_id


def extraction(
    title: str, summary: str, sources: list[str], replaces: list[str] | None = None
) -> dict[str, str]:
    body: dict[str, object] = {
        "title": title,
        "summary": summary,
        "source_ids": sources,
        "memory_ids": [],
    }
    if replaces is not None:
        body["replaces"] = replaces
    return {"role": "assistant", "content": json.dumps(body)}


async def lisbon_then_porto(memory: Memory, llm: FakeOpenAI) -> tuple[str, str]:
    """'I live in Lisbon', extracted; a month later 'I moved to Porto', extracted as replacing
    it. The IDs of the old record and the new."""
    first = await exchange(memory, "I live in Lisbon", T0)
    llm.script(extraction("Home city", "The user lives in Lisbon.", [f"m{first}"]))
    await memory.pipeline.tick()
    [old] = (await view(memory)).valid_records(SCOPE.key)
    second = await exchange(memory, "I moved to Porto", LATER)
    llm.script(extraction("Home city", "The user moved to Porto.", [f"m{second}"], [old.id]))
    await memory.pipeline.tick()
    [new] = [r for r in (await view(memory)).valid_records(SCOPE.key) if r.id != old.id]
    return old.id, new.id


async def noted(memory: Memory, scope: Scope, speaker: int, text: str, at: datetime) -> str:
    source = await memory.record(scope, text=text, speaker_id=speaker, sent_at=at)
    assert source is not None
    await memory.begin(source)
    request = recognize(text)
    assert request is not None
    result = await memory.control(request, source, who=OWNER, now=at)
    assert result.outcome == "remembered", result
    await memory.finish(
        source, status="succeeded", answer_text="Noted.", bot_id=42, kind="memory_control"
    )
    return result.memory_ids[0]


async def asked(memory: Memory, text: str) -> SourceMessage:
    source = await memory.record(SCOPE, text=text, speaker_id=7, sent_at=LATER)
    assert source is not None
    await memory.begin(source)
    return source


async def searched(memory: Memory, query: str, call_id: str) -> list[str]:
    source = await asked(memory, f"what about {query}?")
    found = await memory.tools.execute(
        "query_memories", json.dumps({"query": query}), ToolContext(source=source), call_id=call_id
    )
    return [str(r["id"]) for r in found["results"]]  # type: ignore[attr-defined]


async def test_a_correction_replaces_the_old_record_in_recall_and_search(
    memory: Memory, llm: FakeOpenAI
) -> None:
    before = datetime.now(UTC)
    old, new = await lisbon_then_porto(memory, llm)
    state = await view(memory)
    replaced = state.records[old]
    assert replaced.valid and replaced.replaced_by == new
    assert replaced.replaced_at is not None and before <= replaced.replaced_at <= datetime.now(UTC)
    assert state.records[new].replaced_by is None
    # The batch was given the old record, and the consolidation after it was not.
    [*_, sent] = llm.requests_by_purpose("memory_extraction")
    given = json.loads(sent["messages"][-1]["content"])["existing_memories"]
    assert [m["id"] for m in given] == [old]
    [*_, consolidated] = llm.requests_by_purpose("memory_consolidation")
    candidates = json.loads(consolidated["messages"][-1]["content"])["candidates"]
    assert [c["id"] for c in candidates] == [new]

    recalled = await memory.recall(SCOPE, now=datetime.now(UTC))
    assert recalled.text is not None
    assert "Porto" in recalled.text and "Lisbon" not in recalled.text
    assert old not in recalled.memory_ids
    # Nor is it matched for a message that names it; query_memories finds it as history.
    matched = await memory.recall(
        SCOPE, now=datetime.now(UTC), message="do you remember Lisbon, where I live?"
    )
    assert matched.text is not None and "Lisbon" not in matched.text
    assert await searched(memory, "Lisbon", "c1") == [old]
    assert await searched(memory, "user", "c2") == [new, old]
    # The screen's read still lists it, marked.
    _, listed = await memory.store.search.records(
        SCOPE,
        query=None,
        record_id=None,
        now=datetime.now(UTC),
        limit=10,
        while_off=True,
        replaced=True,
    )
    assert [(r.id, r.replaced_by) for r in listed] == [(new, None), (old, new)]


async def test_forgetting_the_newer_record_brings_the_replaced_one_back(
    memory: Memory, llm: FakeOpenAI
) -> None:
    old, new = await lisbon_then_porto(memory, llm)
    now = datetime.now(UTC)
    result = await forget_record(memory.store, SCOPE, new, actor_id=7, who=OWNER, now=now)
    assert result.outcome == "forgotten" and result.memory_ids == [new]
    state = await view(memory)
    assert set(state.records) == {old}  # it did not depend on the newer record's sources
    assert state.records[old].replaced_by is None and state.records[old].replaced_at is None
    recalled = await memory.recall(SCOPE, now=now, message="where do I live, Lisbon?")
    assert "Lisbon" in (recalled.text or "")
    assert await searched(memory, "Lisbon", "c1") == [old]
    # It can still be forgotten itself.
    gone = await forget_record(memory.store, SCOPE, old, actor_id=7, who=OWNER, now=now)
    assert gone.outcome == "forgotten"
    assert (await view(memory)).records == {}


async def test_query_memories_finds_the_replaced_record_as_history(
    memory: Memory, llm: FakeOpenAI
) -> None:
    old, new = await lisbon_then_porto(memory, llm)
    source = await asked(memory, "where did I live before Porto?")
    found = await memory.tools.execute(
        "query_memories",
        json.dumps({"query": "user lives"}),
        ToolContext(source=source),
        call_id="h1",
    )
    results = found["results"]  # type: ignore[index]
    assert [r["id"] for r in results] == [new, old]  # what holds first, then what held
    assert "replaced_by" not in results[0]
    assert results[1]["replaced_by"] == new and results[1]["replaced_at"]
    # Matches and the index stay current.
    matched = await memory.recall(SCOPE, now=datetime.now(UTC), message="Lisbon?")
    assert "Lisbon" not in (matched.text or "") and old not in matched.memory_ids


async def test_a_correction_keeps_the_facts_it_does_not_correct(db_url: str) -> None:
    """The offline model: a move replaces the record of where the user lived and carries the
    cat over; the cat is still recalled and matched."""
    memory = await Memory.open(make_settings(db_url))  # no model server: the offline model
    try:
        await exchange(memory, "I live in Lisbon", T0)
        await exchange(memory, "my cat is called Mochi", T0 + timedelta(minutes=1))
        await memory.pipeline.tick()
        [old] = (await view(memory)).valid_records(SCOPE.key)
        assert "Mochi" in old.summary
        await exchange(memory, "I moved to Porto", LATER)
        await memory.pipeline.tick()
        state = await view(memory)
        [new] = [r for r in state.valid_records(SCOPE.key) if r.id != old.id]
        assert state.records[old.id].replaced_by == new.id
        assert "Porto" in new.summary and "Mochi" in new.summary and "Lisbon" not in new.summary
        recalled = await memory.recall(SCOPE, now=datetime.now(UTC))
        assert "Mochi" in (recalled.text or "") and "Lisbon" not in (recalled.text or "")
        matched = await memory.recall(SCOPE, now=datetime.now(UTC), message="is Mochi fed?")
        assert new.id in matched.memory_ids
    finally:
        await memory.close()


async def test_a_member_cannot_retire_another_members_note(memory: Memory, llm: FakeOpenAI) -> None:
    note = await noted(memory, GROUP, 7, "remember that my cat is called Mochi", LATER)
    said = await exchange(
        memory,
        "actually her cat is called Kuro",
        LATER + timedelta(minutes=1),
        scope=GROUP,
        speaker=8,
    )
    llm.script(extraction("Cat", "Speaker 8 says the cat is Kuro.", [f"m{said}"], [note]))
    await memory.pipeline.tick()
    state = await view(memory)
    assert len(state.valid_records(GROUP.key)) == 2
    assert state.records[note].replaced_by is None  # the note is its author's to retire
    [sent] = llm.requests_by_purpose("memory_extraction")
    [given] = json.loads(sent["messages"][-1]["content"])["existing_memories"]
    assert given["id"] == note and given["speaker_ids"] == [7]


async def test_a_record_forgotten_during_the_call_stays_forgotten(
    memory: Memory, llm: FakeOpenAI
) -> None:
    first = await exchange(memory, "I live in Lisbon", T0)
    llm.script(extraction("Home city", "The user lives in Lisbon.", [f"m{first}"]))
    await memory.pipeline.tick()
    [old] = (await view(memory)).valid_records(SCOPE.key)
    second = await exchange(memory, "I moved to Porto", LATER)
    correcting = extraction(
        "Home city", "The user moved from Lisbon to Porto.", [f"m{second}"], [old.id]
    )
    llm.responder = lambda body: correcting
    llm.script("hold")
    tick = asyncio.create_task(memory.pipeline.tick())
    await llm.wait_for_requests(3)  # the correcting call is in flight (after two of the first)
    now = datetime.now(UTC)
    gone = await forget_record(memory.store, SCOPE, old.id, actor_id=7, who=OWNER, now=now)
    assert gone.outcome == "forgotten"
    llm.release()
    await asyncio.wait_for(tick, 30)
    state = await view(memory)
    assert old.id not in state.records
    assert all("Lisbon" not in r.summary for r in state.records.values())
    recalled = await memory.recall(SCOPE, now=datetime.now(UTC), message="Lisbon?")
    assert "Lisbon" not in (recalled.text or "")


async def test_an_answer_replacing_a_record_it_was_not_given_is_refused(
    memory: Memory, llm: FakeOpenAI
) -> None:
    first = await exchange(memory, "I live in Lisbon", T0)
    llm.script(extraction("Home city", "The user lives in Lisbon.", [f"m{first}"]))
    await memory.pipeline.tick()
    [old] = (await view(memory)).valid_records(SCOPE.key)
    second = await exchange(memory, "I moved to Porto", LATER)
    bad = extraction("Home city", "Porto now.", [f"m{second}"], [old.id, "mem_not_given"])
    llm.script(bad, bad, bad)  # however often it is asked
    await memory.pipeline.tick()
    state = await view(memory)
    assert [r.id for r in state.valid_records(SCOPE.key)] == [old.id]  # nothing written
    assert state.records[old.id].replaced_by is None
    assert len(llm.requests_by_purpose("memory_extraction")) >= 2  # the answer was refused


async def test_the_offline_model_replaces_lisbon_with_porto(db_url: str) -> None:
    memory = await Memory.open(make_settings(db_url))  # no model server: the offline model
    try:
        await exchange(memory, "I live in Lisbon", T0)
        await memory.pipeline.tick()
        [old] = (await view(memory)).valid_records(SCOPE.key)
        await exchange(memory, "I moved to Porto", LATER)
        await memory.pipeline.tick()
        state = await view(memory)
        [new] = [r for r in state.valid_records(SCOPE.key) if r.id != old.id]
        assert "Porto" in new.summary and state.records[old.id].replaced_by == new.id
        recalled = await memory.recall(SCOPE, now=datetime.now(UTC), message="where do I live?")
        assert "Porto" in (recalled.text or "") and "Lisbon" not in (recalled.text or "")
    finally:
        await memory.close()


async def test_a_consolidation_stopped_by_a_forget_during_its_call_is_no_warning(
    memory: Memory, llm: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    """A forget stops the scope's consolidation; the worker then finds the job no longer its
    own. That is the forget working, said at INFO, not a lost lease (a WARNING)."""
    first = await exchange(memory, "I live in Lisbon", LATER)
    llm.script(extraction("Home city", "The user lives in Lisbon.", [f"m{first}"]))
    await memory.pipeline.tick()
    [old] = (await view(memory)).valid_records(SCOPE.key)
    note = await noted(memory, SCOPE, 7, "remember that my cat is called Mochi", LATER)
    asked_before = len(llm.requests_by_purpose("memory_consolidation"))
    llm.script("hold")  # the note's consolidation
    with caplog.at_level(logging.INFO, logger="bot_memory"):
        tick = asyncio.create_task(memory.pipeline.tick())
        extractions = len(llm.requests_by_purpose("memory_extraction"))
        await llm.wait_for_requests(extractions + asked_before + 1)  # the call is in flight
        now = datetime.now(UTC)
        gone = await forget_record(memory.store, SCOPE, note, actor_id=7, who=OWNER, now=now)
        assert gone.outcome == "forgotten"
        llm.release()
        await asyncio.wait_for(tick, 30)
    events = {getattr(r, "event", ""): r.levelno for r in caplog.records}
    assert "pipeline.lost_ownership" not in events
    assert events.get("pipeline.job_stopped") == logging.INFO
    assert set((await view(memory)).records) == {old.id}
