"""Corrections replace: an extraction that names, in `replaces`, an existing
record its batch corrects makes that record replaced. A replaced record is no longer recalled
(directory, index, matches), searched (query_memories) or consolidated; it stays, marked, on
the /memory screen until pruned or forgotten, and forgetting the newer record does not bring
it back. An answer that names a record it was not given is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot_memory.access import Membership
from bot_memory.agent.tools import ToolContext
from bot_memory.control.actions import forget_record
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage.store import SourceMessage
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import view

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
OWNER = Membership(member=True, admin=True, reason="private-owner")
# Said in the past (the worker's leases are on the server's clock: it ticks now).
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(days=40)
LATER = T0 + timedelta(days=31)


async def exchange(memory: Memory, text: str, at: datetime) -> int:
    source = await memory.record(SCOPE, text=text, speaker_id=7, sent_at=at)
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
    # Nor is it matched for a message that names it, or found by query_memories.
    matched = await memory.recall(
        SCOPE, now=datetime.now(UTC), message="do you remember Lisbon, where I live?"
    )
    assert matched.text is not None and "Lisbon" not in matched.text
    assert await searched(memory, "Lisbon", "c1") == []
    assert await searched(memory, "user", "c2") == [new]
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


async def test_forgetting_the_newer_record_does_not_bring_the_replaced_one_back(
    memory: Memory, llm: FakeOpenAI
) -> None:
    old, new = await lisbon_then_porto(memory, llm)
    now = datetime.now(UTC)
    result = await forget_record(memory.store, SCOPE, new, actor_id=7, who=OWNER, now=now)
    assert result.outcome == "forgotten" and result.memory_ids == [new]
    state = await view(memory)
    assert set(state.records) == {old}  # it did not depend on the newer record's sources
    assert state.records[old].replaced_by == new  # still replaced, by a record now forgotten
    recalled = await memory.recall(SCOPE, now=now, message="where do I live, Lisbon?")
    assert "Lisbon" not in (recalled.text or "")
    assert await searched(memory, "Lisbon", "c1") == []
    # It can still be forgotten itself.
    gone = await forget_record(memory.store, SCOPE, old, actor_id=7, who=OWNER, now=now)
    assert gone.outcome == "forgotten"
    assert (await view(memory)).records == {}


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
