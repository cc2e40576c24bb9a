"""The documented defaults and promises that no other test pinned: each as a setting's default
and as what the bot does with it, on a real database and the fake model server."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot_memory.agent.tools import ToolContext
from bot_memory.pipeline.prompts import (
    ConsolidationOutput,
    ExtractionOutput,
    validate_consolidation,
    validate_extraction,
)
from bot_memory.pipeline.worker import TickReport
from bot_memory.records import MemoryRecord, SourceRef
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage import SourceMessage
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI, default_responder
from tests.support.helpers import view

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
T0 = datetime(2026, 4, 6, 10, 0, tzinfo=UTC)


def test_the_spec_defaults() -> None:
    s = MemorySettings(database_url="postgresql://unused")
    assert s.idle_window_seconds == 30 * 60
    assert s.batch_max_bytes == 24_000
    assert s.summary_max_bytes == 4_000
    assert (s.consolidation_max_candidates, s.index_max_bytes, s.index_max_ids) == (48, 4_500, 12)
    assert (s.query_max_results, s.query_max_source_ids) == (12, 20)
    assert s.lease_seconds == 120 and s.tick_interval_seconds == 60


async def open_memory(db_url: str, llm: FakeOpenAI, **overrides: object) -> Memory:
    return await Memory.open(
        make_settings(
            db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m", **overrides
        )
    )


async def exchange(memory: Memory, text: str, at: datetime) -> SourceMessage:
    source = await memory.record(SCOPE, text=text, speaker_id=7, sent_at=at)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42, now=at)
    return source


async def test_a_conversation_qualifies_after_thirty_idle_minutes(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(
        db_url, llm, idle_window_seconds=MemorySettings.model_fields["idle_window_seconds"].default
    )
    try:
        await exchange(memory, "we moved the standup to ten", T0)
        await memory.pipeline.tick(now=T0 + timedelta(minutes=29, seconds=59))
        assert llm.requests_by_purpose("memory_extraction") == []  # still a live conversation
        await memory.pipeline.tick(now=T0 + timedelta(minutes=30))
        assert len(llm.requests_by_purpose("memory_extraction")) == 1
    finally:
        await memory.close()


async def test_the_default_batch_ceiling_splits_a_long_conversation(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)  # the 24,000-byte default
    try:
        for i in range(4):  # about 7 KB each as the request carries them
            await exchange(memory, f"part {i}: " + "lorem ipsum " * 580, T0)
        for _ in range(6):
            await memory.pipeline.tick()
        batches = [
            json.loads(r["messages"][-1]["content"])["sources"]
            for r in llm.requests_by_purpose("memory_extraction")
        ]
        assert [len(b) // 2 for b in batches] == [3, 1]  # 3 pairs fit under 24,000 bytes
        for batch in batches:
            assert sum(len(json.dumps(s, ensure_ascii=False)) for s in batch) <= 24_000
    finally:
        await memory.close()


def test_a_summary_over_four_thousand_bytes_is_refused_and_empty_is_a_no_op() -> None:
    allowed = {"m1"}
    fits = ExtractionOutput(title="t", summary="x" * 4_000, source_ids=["m1"])
    assert validate_extraction(fits, allowed_sources=allowed, max_bytes=4_000) is fits
    over = ExtractionOutput(title="t", summary="é" * 2_001, source_ids=["m1"])  # 4,002 bytes
    with pytest.raises(ValueError, match="over 4000"):
        validate_extraction(over, allowed_sources=allowed, max_bytes=4_000)
    empty = ExtractionOutput(title="", summary="  ", source_ids=["m1"])
    assert validate_extraction(empty, allowed_sources=allowed, max_bytes=4_000).is_empty


async def test_empty_output_makes_no_record_and_moves_on(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory, "ok thanks", T0)
        empty = {"title": "", "summary": "", "source_ids": [], "memory_ids": []}
        llm.script({"role": "assistant", "content": json.dumps(empty)})
        await memory.pipeline.tick()
        state = await view(memory)
        assert state.records == {} and state.scopes[SCOPE.key].extracted_through > 0
        phases = await memory.store.pool.fetch("SELECT phase FROM memory_jobs")
        assert [p["phase"] for p in phases] == ["done"]
    finally:
        await memory.close()


async def test_what_the_model_writes_is_redacted_before_it_is_stored(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    try:
        source = await exchange(memory, "the deploy key is in the vault", T0)
        leaked = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
        out = {
            "title": "Deploy key",
            "summary": f"The deploy key is {leaked}",
            "source_ids": [source.source_id],
            "memory_ids": [],
        }
        llm.script({"role": "assistant", "content": json.dumps(out)})
        await memory.pipeline.tick()
        [record] = (await view(memory)).valid_records(SCOPE.key)
        assert leaked not in record.summary and "[REDACTED]" in record.summary
    finally:
        await memory.close()


def test_an_index_over_its_limits_is_refused() -> None:
    candidates = {f"mem_{i}" for i in range(48)}
    ok = ConsolidationOutput(index="x" * 4_500, memory_ids=sorted(candidates)[:12])
    assert validate_consolidation(ok, candidates=candidates, max_bytes=4_500, max_ids=12) is ok
    with pytest.raises(ValueError, match="over 4500"):
        validate_consolidation(
            ConsolidationOutput(index="x" * 4_501, memory_ids=[]),
            candidates=candidates,
            max_bytes=4_500,
            max_ids=12,
        )
    with pytest.raises(ValueError, match="over 12"):
        validate_consolidation(
            ConsolidationOutput(index="", memory_ids=sorted(candidates)[:13]),
            candidates=candidates,
            max_bytes=4_500,
            max_ids=12,
        )


async def test_consolidation_sees_at_most_48_candidates(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        now = datetime.now(UTC)
        async with memory.store.locked("test", create=True) as tx:
            await tx.scope(SCOPE)
            for i in range(60):
                await tx.add_record(record(f"mem_{i:03d}", now + timedelta(seconds=i)), now)
        await memory.pipeline.tick()
        [request] = llm.requests_by_purpose("memory_consolidation")
        document = json.loads(request["messages"][-1]["content"])
        ids = [c["id"] for c in document["candidates"]]
        assert len(ids) == 48 and ids[0] == "mem_059"  # the newest 48
    finally:
        await memory.close()


def record(record_id: str, at: datetime, sources: int = 1) -> MemoryRecord:
    return MemoryRecord(
        id=record_id,
        scope_key=SCOPE.key,
        origin="extracted",
        title=f"title {record_id}",
        summary=f"summary of {record_id}",
        speaker_ids=[7],
        thread_ids=[0],
        sources=[SourceRef(message_id=n + 1, hash="h", speaker_id=7) for n in range(sources)],
        created_at=at,
        last_used_at=at,
    )


async def test_a_record_shows_twenty_sources_and_says_there_are_more(memory: Memory) -> None:
    now = datetime.now(UTC)
    async with memory.store.locked("test", create=True) as tx:
        await tx.scope(SCOPE)
        await tx.add_record(record("mem_many", now, sources=25), now)
    asker = await memory.record(SCOPE, text="what do you know?", speaker_id=7)
    assert asker is not None
    await memory.begin(asker)
    found = await memory.tools.execute(
        "query_memories", "{}", ToolContext(source=asker), call_id="q"
    )
    [item] = found["results"]  # type: ignore[index]
    assert len(item["source_ids"]) == 20 and item["sources_truncated"] is True
    cited = await memory.store.pool.fetchval(
        "SELECT citation_source_ids FROM requests WHERE id = $1", asker.request_id
    )
    assert sorted(cited) == sorted(item["source_ids"])  # what was shown, nothing more


async def test_the_lease_is_renewed_while_a_call_runs(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm, lease_seconds=1.5, llm_call_deadline_seconds=1.4)
    try:
        await exchange(memory, "we picked Lisbon", T0)
        llm.script("delay:1.2")  # longer than a third of the lease
        tick = asyncio.create_task(memory.pipeline.tick())
        await llm.wait_for_requests(1)
        first = await memory.store.pool.fetchval("SELECT lease_until FROM memory_jobs")
        for _ in range(100):  # a beat every lease/3 = 0.5 s
            renewed = await memory.store.pool.fetchval("SELECT lease_until FROM memory_jobs")
            if renewed > first:
                break
            await asyncio.sleep(0.05)
        assert renewed > first and not tick.done()  # renewed while the call was running
        await tick
    finally:
        await memory.close()


async def test_ingress_is_not_blocked_by_a_job_in_flight(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory, "we picked Lisbon", T0)
        llm.script("hang")  # the extraction call never answers
        tick = asyncio.create_task(memory.pipeline.tick())
        await llm.wait_for_requests(1)
        for i in range(5):  # the job holds its claim and lease; messages still record
            await exchange(memory, f"and another thing, {i}", T0 + timedelta(minutes=i))
        assert not tick.done()
        assert await memory.store.pool.fetchval("SELECT count(*) FROM requests") == 6
        tick.cancel()
        with pytest.raises(asyncio.CancelledError):
            await tick
    finally:
        await memory.close()


async def test_a_change_is_durable_even_if_the_answer_then_fails(
    memory: Memory, llm: FakeOpenAI
) -> None:
    source = await memory.record(SCOPE, text="remember that my locker is 12", speaker_id=7)
    assert source is not None
    call = {
        "id": "c1",
        "type": "function",
        "function": {
            "name": "manage_memory",
            "arguments": json.dumps({"action": "remember", "sourceId": source.source_id}),
        },
    }
    llm.script({"role": "assistant", "content": None, "tool_calls": [call]}, 500)
    with pytest.raises(Exception, match="500"):
        await memory.agent.answer(memory.turn(source))
    await memory.finish(source, status="failed", error="ModelError")
    [note] = (await view(memory)).valid_records(SCOPE.key)
    assert "locker is 12" in note.summary  # the note stands though the answer failed


@pytest.fixture
async def memory(db_url: str, llm: FakeOpenAI) -> AsyncIterator[Memory]:
    mem = await open_memory(db_url, llm)
    yield mem
    await mem.close()


def _purpose(body: dict[str, Any]) -> str | None:
    return body.get("response_format", {}).get("json_schema", {}).get("name")


async def test_the_pipeline_refuses_a_summary_over_four_thousand_bytes(
    db_url: str, llm: FakeOpenAI
) -> None:
    # The validator's limit as the worker applies it: a model answering 4,002 bytes keeps
    # nothing, and the job backs off with the reason.
    memory = await open_memory(db_url, llm)
    try:
        source = await exchange(memory, "we moved the standup to 9:30", T0)
        over = {
            "title": "Standup",
            "summary": "é" * 2_001,
            "source_ids": [source.source_id],
            "memory_ids": [],
        }
        llm.script({"role": "assistant", "content": json.dumps(over)})
        await memory.pipeline.tick()
        assert (await view(memory)).records == {}
        phase, error = await memory.store.pool.fetchrow("SELECT phase, last_error FROM memory_jobs")
        assert phase == "extract" and "4002 bytes, over 4000" in error
        assert await memory.store.pool.fetchval("SELECT extracted_through FROM memory_scopes") == 0
    finally:
        await memory.close()


def _index_answer(case: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def answer(body: dict[str, Any]) -> dict[str, Any]:
        made = default_responder(body)
        if _purpose(body) != "memory_consolidation":
            return made
        ids = json.loads(made["content"])["memory_ids"]
        out = {
            "over_4500": {"index": "x" * 4_501, "memory_ids": ids},
            "unknown": {"index": "- the boat", "memory_ids": [*ids, "mem_not_a_candidate"]},
            "duplicate": {"index": "- the boat", "memory_ids": [ids[0], ids[0]]},
        }[case]
        return {"role": "assistant", "content": json.dumps(out)}

    return answer


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("over_4500", "4501 bytes, over 4500"),
        ("unknown", "not candidates: ['mem_not_a_candidate']"),
        ("duplicate", "names a memory twice"),
    ],
)
async def test_the_pipeline_refuses_an_index_over_its_limit_or_naming_the_unknown(
    db_url: str, llm: FakeOpenAI, case: str, reason: str
) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await exchange(memory, "my boat is called Aurora", T0)
        llm.responder = _index_answer(case)
        await memory.pipeline.tick()  # the extraction commits; its consolidation is refused
        assert len(llm.requests_by_purpose("memory_consolidation")) == 1
        state = (await view(memory)).scopes[SCOPE.key]
        assert state.index.text == "" and state.index.memory_ids == [] and state.index.pending
        phase, error = await memory.store.pool.fetchrow(
            "SELECT phase, last_error FROM memory_jobs WHERE phase <> 'done'"
        )
        assert phase == "consolidate" and reason in error, error
    finally:
        await memory.close()


def test_a_tick_has_ninety_seconds() -> None:
    assert MemorySettings(database_url="postgresql://unused").tick_deadline_seconds == 90


async def test_the_worker_gives_each_tick_its_deadline_and_a_tick_keeps_to_it(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm, tick_deadline_seconds=90)
    try:
        # The worker's loop: each tick is handed the deadline, 90 s from its start.
        given: list[float] = []
        real_tick = memory.pipeline.tick

        async def recorded(now: datetime | None = None, *, deadline: float | None = None) -> Any:
            assert deadline is not None
            given.append(deadline - time.monotonic())
            memory.worker._stopping.set()
            return TickReport()

        memory.pipeline.tick = recorded  # type: ignore[method-assign]
        memory.worker.start()
        for _ in range(200):
            if given:
                break
            await asyncio.sleep(0.01)
        await memory.worker.stop()
        memory.pipeline.tick = real_tick  # type: ignore[method-assign]
        assert len(given) == 1 and 89 < given[0] <= 90
        # The tick: no job is claimed whose worst-case call (60 s) would not fit before it.
        await exchange(memory, "the offsite is in Porto", T0)
        short = await memory.pipeline.tick(deadline=time.monotonic() + 59)
        assert short.left_over and not short.finished and llm.requests == []
        enough = await memory.pipeline.tick(deadline=time.monotonic() + 90)
        assert not enough.left_over and "done" in enough.finished.values()
    finally:
        await memory.close()
