"""What the pipeline sends and keeps: batches that lose no history, dependencies carried over
from existing memories, checks before every model call, redaction before serialization,
checkpoints that end with their jobs."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot_memory.intents import recognize
from bot_memory.pipeline.discovery import plan_due
from bot_memory.pipeline.prompts import source_entries
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SnapshotSource
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI, default_responder
from tests.support.helpers import view
from tests.support.token_builders import crc32_token

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)


async def open_memory(db_url: str, llm: FakeOpenAI, **overrides: object) -> Memory:
    return await Memory.open(
        make_settings(
            db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m", **overrides
        )
    )


@pytest.fixture
async def memory(db_url: str, llm: FakeOpenAI) -> AsyncIterator[Memory]:
    mem = await open_memory(db_url, llm)  # failures back off an hour: jobs wait
    yield mem
    await mem.close()


async def exchange(memory: Memory, text: str, answer: str = "ok", msg_id: int | None = None) -> int:
    source = await memory.record(SCOPE, text=text, speaker_id=7, telegram_message_id=msg_id)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text=answer, bot_id=42)
    return source.message_id


def extraction(title: str, summary: str, sources: list[str], memories: list[str]) -> dict[str, str]:
    body = {"title": title, "summary": summary, "source_ids": sources, "memory_ids": memories}
    return {"role": "assistant", "content": json.dumps(body)}


async def test_batches_keep_older_history_and_skip_only_what_cannot_fit(
    db_url: str, llm: FakeOpenAI
) -> None:
    # A pair is about 320 bytes as the request carries it (texts, IDs, roles, speakers, dates).
    memory = await open_memory(db_url, llm, batch_max_bytes=700)
    try:
        ids = [await exchange(memory, f"fact number {i}: " + "x" * 100) for i in range(5)]
        huge = await exchange(memory, "y" * 700)  # the newest pair cannot fit on its own
        for _ in range(6):
            await memory.pipeline.tick()
        state = await view(memory)
        cited = {s.message_id for r in state.records.values() for s in r.sources}
        assert set(ids) <= cited  # every older pair was extracted, oldest first
        assert huge not in cited
        batches = [
            [s["id"] for s in json.loads(b["messages"][-1]["content"])["sources"]]
            for b in llm.requests_by_purpose("memory_extraction")
        ]
        assert len(batches) == 3 and batches[0][0] == f"m{ids[0]}"  # 2 + 2 + 1 pairs
        assert state.scopes[SCOPE.key].extracted_through > 0
    finally:
        await memory.close()


async def test_a_record_depends_on_the_memories_it_carried_facts_from(
    memory: Memory, llm: FakeOpenAI
) -> None:
    first = await exchange(memory, "my locker is number 12", msg_id=100)
    await memory.pipeline.tick()
    [old] = (await view(memory)).valid_records(SCOPE.key)
    second = await exchange(memory, "I moved it next to the gym")
    llm.script(extraction("Locker", "locker 12, now by the gym", [f"m{second}"], [old.id]))
    await memory.pipeline.tick()
    state = await view(memory)
    new = next(r for r in state.valid_records(SCOPE.key) if r.id != old.id)
    assert new.derived_from == [old.id]
    assert {s.message_id for s in new.sources if s.inherited} >= {first}
    # The carried fact's source is edited: both records become unavailable.
    await memory.record_edit(7, 100, "my locker is number 40", bot_id=42)
    assert (await view(memory)).valid_records(SCOPE.key) == []


async def test_forgetting_reaches_records_that_carried_the_forgotten_fact(
    memory: Memory, llm: FakeOpenAI
) -> None:
    await exchange(memory, "my cat is called Mochi")
    await memory.pipeline.tick()
    [cat] = (await view(memory)).valid_records(SCOPE.key)
    second = await exchange(memory, "she likes the window seat")
    llm.script(extraction("Pet", "Mochi likes the window seat", [f"m{second}"], [cat.id]))
    await memory.pipeline.tick()
    source = await memory.record(SCOPE, text="forget my cat", speaker_id=7)
    assert source is not None
    request = recognize("forget my cat")
    assert request is not None
    result = await memory.control(request, source)
    assert result.outcome == "forgotten" and len(result.memory_ids) == 2
    assert (await view(memory)).records == {}


async def test_tombstones_and_the_switch_are_checked_before_every_model_call(
    memory: Memory, llm: FakeOpenAI
) -> None:
    await exchange(memory, "my cat is called Mochi")
    llm.script(503)  # overloaded: not processed, the job waits in its backoff
    await memory.pipeline.tick()
    assert len(llm.requests_by_purpose("memory_extraction")) == 1
    # The source is forgotten while the job waits (directly, as a sweep or a forget would).
    [job] = await memory.store.pool.fetch("SELECT id, snapshot FROM memory_jobs")
    first = json.loads(job["snapshot"])["sources"][0]["message_id"]
    await memory.store.pool.execute(
        "INSERT INTO tombstones (workspace_id, scope_key, message_id) VALUES ('test', $1, $2)",
        SCOPE.key,
        first,
    )
    await memory.store.pool.execute("UPDATE memory_jobs SET next_attempt_at = now()")
    await memory.pipeline.tick()
    assert len(llm.requests_by_purpose("memory_extraction")) == 1  # nothing sent again
    phase, kind, checkpoint = await memory.store.pool.fetchrow(
        "SELECT phase, stop_kind, checkpoint::text FROM memory_jobs WHERE id = $1", job["id"]
    )
    assert (phase, kind, checkpoint) == ("stopped", "changed", "{}")

    # Memory turned off while a new job waits: nothing is sent either.
    await exchange(memory, "my dog is called Kuro")
    llm.script(503)
    await memory.pipeline.tick()
    sent = len(llm.requests_by_purpose("memory_extraction"))
    await memory.store.pool.execute("UPDATE memory_scopes SET enabled = false")
    await memory.store.pool.execute("UPDATE memory_jobs SET next_attempt_at = now()")
    await memory.pipeline.tick()
    assert len(llm.requests_by_purpose("memory_extraction")) == sent


async def test_forgetting_stops_a_waiting_job_and_holds_for_unextracted_messages(
    memory: Memory, llm: FakeOpenAI
) -> None:
    said = await exchange(memory, "btw my cat is called Mochi", answer="Your cat is called Mochi")
    llm.script(503)
    await memory.pipeline.tick()  # planned, failed once, waiting
    source = await memory.record(SCOPE, text="forget my cat", speaker_id=7)
    assert source is not None
    request = recognize("forget my cat")
    assert request is not None
    result = await memory.control(request, source)
    assert result.outcome == "forgotten" and result.memory_ids == []
    tombstoned = (await view(memory)).tombstones[SCOPE.key]
    # The user's message, the bot's answer that repeats it, and the forget request itself.
    assert tombstoned == {said, said + 1, source.message_id}
    await memory.store.pool.execute("UPDATE memory_jobs SET next_attempt_at = now()")
    for _ in range(2):
        await memory.pipeline.tick()
    assert len(llm.requests_by_purpose("memory_extraction")) == 1
    assert (await view(memory)).records == {}


async def test_each_text_is_redacted_before_the_document_is_serialized(
    memory: Memory, llm: FakeOpenAI
) -> None:
    secret = "Zx9Qw7Er5Ty3Ui1Op"
    await exchange(memory, f"the db password\t:{secret} for staging")
    await memory.pipeline.tick()
    [body] = llm.requests_by_purpose("memory_extraction")
    assert secret not in json.dumps(body)


async def test_a_key_split_over_two_messages_of_one_speaker_is_redacted(
    memory: Memory, llm: FakeOpenAI
) -> None:
    key = crc32_token(random.Random("split"), "gh" + "p_")
    halves = (f"here is the token {key[:14]}", f"{key[14:]} (second half)")
    first = await memory.record(SCOPE, text=halves[0], speaker_id=7)
    second = await memory.record(SCOPE, text=halves[1], speaker_id=7)
    assert first is not None and second is not None
    for source in (first, second):
        await memory.begin(source)
        await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)
    await memory.pipeline.tick()
    [body] = llm.requests_by_purpose("memory_extraction")
    sent = json.dumps(body)
    assert key[:14] not in sent and key[14:] not in sent
    assert "here is the token [REDACTED]" in sent and "[REDACTED] (second half)" in sent


def test_only_one_speakers_consecutive_messages_are_read_together() -> None:
    key = crc32_token(random.Random("speakers"), "gh" + "o_")
    now = datetime(2024, 5, 1, tzinfo=UTC)

    def source(n: int, role: str, speaker: int) -> SnapshotSource:
        return SnapshotSource.model_validate(
            {"id": f"m{n}", "message_id": n, "request_id": n, "hash": "h", "role": role,
             "speaker_id": speaker, "thread_id": 0, "created_at": now}
        )  # fmt: skip

    texts = {1: key[:20], 2: "ok", 3: key[20:], 4: key[:20], 5: "hi all", 6: key[20:]}
    sources = [source(1, "user", 7), source(2, "assistant", 42), source(3, "user", 7)]
    sources += [source(4, "user", 7), source(5, "user", 8), source(6, "user", 7)]
    out = [entry["text"] for entry in source_entries(sources, texts)]
    # 1 and 3 are one speaker's consecutive messages (the bot's answer between them does not
    # count): the key they form goes from both.  4 and 6 are not (another user spoke between):
    # each half alone has no shape and stays.
    assert out == ["[REDACTED]", "ok", "[REDACTED]", key[:20], "hi all", key[20:]]


async def test_consolidation_input_is_deterministic_and_claimed_at_most_three_times(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm, failure_backoff_seconds=0)
    try:
        await _consolidation_claims(memory, llm)
    finally:
        await memory.close()


async def _consolidation_claims(memory: Memory, llm: FakeOpenAI) -> None:
    await exchange(memory, "the deploy window is Tuesday")
    llm.script(
        {
            "role": "assistant",
            "content": json.dumps(
                {"title": "Deploy", "summary": "Tuesday", "source_ids": ["m1"], "memory_ids": []}
            ),
        },
        503,
        503,
        503,
    )
    await memory.pipeline.tick()  # backoff 0: three claims of the same consolidation input
    phases = await memory.store.pool.fetch(
        "SELECT phase, claims FROM memory_jobs WHERE snapshot->'candidates' <> '{}'::jsonb"
    )
    assert [(p["phase"], p["claims"]) for p in phases] == [("failed", 3)]
    # Planning the unchanged input again (a stale-index pass, a note elsewhere) is a no-op.
    async with memory.store.locked("test") as tx:
        from bot_memory.pipeline.consolidation import plan_consolidation

        again = await plan_consolidation(
            tx,
            scope_key=SCOPE.key,
            scope_kind="private",
            origin_request_id=None,
            provider=memory.model.provider,
            model=memory.model.model,
            reason="stale index",
        )
    assert again is None
    await memory.pipeline.tick()
    assert len(llm.requests_by_purpose("memory_consolidation")) == 3


async def test_checkpoints_are_cleared_when_jobs_end(memory: Memory) -> None:
    await exchange(memory, "we picked PostgreSQL for the queue")
    await memory.pipeline.tick()
    rows = await memory.store.pool.fetch("SELECT phase, checkpoint::text AS c FROM memory_jobs")
    assert rows and all(r["phase"] == "done" and r["c"] == "{}" for r in rows)
    # Finished rows themselves go after the retention setting.
    later = datetime(2100, 1, 1, tzinfo=UTC)
    await memory.pipeline.tick(now=later)
    assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_jobs") == 0


async def test_nothing_due_means_nothing_read(memory: Memory) -> None:
    await exchange(memory, "first")
    await memory.pipeline.tick()
    assert await plan_due(memory.pipeline.ctx, datetime.now(UTC)) == []
    due = await memory.store.pool.fetchval(
        "SELECT count(*) FROM memory_scopes WHERE due_at IS NOT NULL"
    )
    assert due == 0  # a stuck or finished scope is not looked at until new input arrives


async def test_a_boundary_passing_during_a_tick_is_checked_before_each_call_and_at_commit(
    memory: Memory, llm: FakeOpenAI
) -> None:
    # Two scopes, one job each, both planned at the tick's start: their messages are kept until
    # T0 + 30 s. The first call takes a minute (the injected clock moves on as it is answered):
    # the second job must not send its text, and the first must not keep what it got back.
    other = Scope(workspace="test", bot_id=42, kind="private", chat_id=8, user_id=8)
    await exchange(memory, "my locker code is 4412")
    source = await memory.record(other, text="my bike lock is 9931", speaker_id=8)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)
    t0 = datetime.now(UTC)
    clock = [t0]
    await memory.store.pool.execute(
        "UPDATE messages SET retain_until = $1", t0 + timedelta(seconds=30)
    )
    memory.pipeline.clock = lambda: clock[0]

    def slow_answer(body: dict[str, Any]) -> dict[str, Any]:
        clock[0] += timedelta(minutes=1)
        return default_responder(body)

    llm.responder = slow_answer
    await memory.pipeline.tick()
    sent = json.dumps(llm.requests_by_purpose("memory_extraction"))
    assert len(llm.requests_by_purpose("memory_extraction")) == 1
    assert ("4412" in sent) != ("9931" in sent)  # one text went out, before its boundary
    rows = await memory.store.pool.fetch("SELECT phase, last_error FROM memory_jobs")
    assert [r["phase"] for r in rows] == ["stopped", "stopped"], rows
    assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 0
