"""Bad inputs and broken neighbours: clear errors, logged skips, nothing stored is lost."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot_memory.models.base import ModelError
from bot_memory.models.openai_compat import OpenAICompatibleModel
from bot_memory.pipeline.prompts import ExtractionOutput
from bot_memory.retention.verify import find_traces
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage.database import Database, DatabaseUnavailable
from bot_memory.storage.store import UsageEntry
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    server = FakeOpenAI(api_key="test-key")
    await server.start()
    yield server
    await server.stop()


async def open_memory(db_url: str, llm: FakeOpenAI, **overrides: object) -> Memory:
    settings = make_settings(
        db_url,
        llm_base_url=llm.base_url,
        llm_api_key="test-key",
        llm_model="fake-model",
        llm_timeout_seconds=1,
        **overrides,
    )
    return await Memory.open(settings)


async def finished_exchange(memory: Memory, text: str) -> None:
    source = await memory.record(SCOPE, text=text, speaker_id=7)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)


async def jobs_of(memory: Memory) -> list[dict[str, object]]:
    rows = await memory.store.pool.fetch(
        "SELECT phase, claims, last_error, checkpoint::text AS checkpoint FROM memory_jobs"
        " ORDER BY id"
    )
    return [dict(r) for r in rows]


async def test_unreachable_database_is_a_clear_error() -> None:
    settings = MemorySettings(database_url="postgresql://nobody@127.0.0.1:1/none")
    with pytest.raises(
        DatabaseUnavailable, match=r"cannot connect to PostgreSQL at .*127\.0\.0\.1"
    ):
        await Database.open(settings)


async def test_model_server_down_is_an_error_not_unknown() -> None:
    model = OpenAICompatibleModel(base_url="http://127.0.0.1:1/v1", api_key=None, model="m")
    with pytest.raises(ModelError) as caught:
        await model.complete([{"role": "user", "content": "hi"}])
    assert caught.value.outcome == "error"
    await model.aclose()


async def test_invalid_structured_output_backs_off_then_fails(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm, failure_backoff_seconds=0)
    try:
        await finished_exchange(memory, "we agreed to use PostgreSQL")
        bad = {"role": "assistant", "content": "{not json"}
        llm.script(bad, bad, bad)
        await memory.pipeline.tick()  # backoff 0: the same tick claims it again, three times
        [job] = await jobs_of(memory)
        assert job["phase"] == "failed" and job["claims"] == 3
        assert "memory_extraction: output failed validation" in str(job["last_error"])
        assert len(llm.requests_by_purpose("memory_extraction")) == 3
        await memory.pipeline.tick()  # an unchanged input is not claimed a fourth time
        assert len(llm.requests_by_purpose("memory_extraction")) == 3
        outcomes = await memory.store.pool.fetch("SELECT outcome FROM usage_ledger")
        assert [o["outcome"] for o in outcomes] == ["error"] * 3
        assert await memory.store.pool.fetchval("SELECT count(*) FROM messages") == 2
    finally:
        await memory.close()


async def test_output_citing_unknown_sources_is_rejected(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await finished_exchange(memory, "the deploy window is Tuesday")
        bogus = ExtractionOutput(title="t", summary="s", source_ids=["m999999"])
        llm.script({"role": "assistant", "content": bogus.model_dump_json()})
        await memory.pipeline.tick()
        [job] = await jobs_of(memory)
        assert job["phase"] == "extract" and "outside the snapshot" in str(job["last_error"])
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 0
    finally:
        await memory.close()


async def test_timeout_is_an_unknown_outcome_and_stops_replay(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await finished_exchange(memory, "remind the team about the audit")
        llm.script("hang")
        await memory.pipeline.tick()
        [job] = await jobs_of(memory)
        assert job["phase"] == "stopped" and "unknown provider outcome" in str(job["last_error"])
        [usage] = await memory.store.pool.fetch("SELECT outcome FROM usage_ledger")
        assert usage["outcome"] == "unknown"
    finally:
        await memory.close()


async def test_budget_exhausted_stops_background_work(db_url: str, llm: FakeOpenAI) -> None:
    memory = await open_memory(
        db_url, llm, request_budget_usd=0.0000001, llm_input_usd_per_mtok=1000.0
    )
    try:
        source = await memory.record(SCOPE, text="a long discussion " * 50, speaker_id=7)
        assert source is not None
        await memory.begin(source)
        await memory.store.record_usage(
            UsageEntry(
                workspace="test",
                request_id=source.request_id,
                kind="answer",
                provider="p",
                model="m",
                cost_usd=0.01,
            )
        )
        await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)
        await memory.pipeline.tick()
        [job] = await jobs_of(memory)
        assert job["phase"] == "stopped" and "budget exhausted" in str(job["last_error"])
        assert llm.requests_by_purpose("memory_extraction") == []
    finally:
        await memory.close()


async def test_checkpoint_resumes_without_calling_the_model_again(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await finished_exchange(memory, "the launch moved to March")
        # Extraction succeeds and commits; consolidation fails once.
        llm.script(
            {
                "role": "assistant",
                "content": '{"title":"Launch","summary":"moved to March","source_ids":["m1"],'
                '"memory_ids":[]}',
            },
            503,  # overloaded: certainly not processed, so it backs off
        )
        await memory.pipeline.tick()
        extract, consolidate = await jobs_of(memory)
        assert extract["phase"] == "done" and extract["checkpoint"] == "{}"  # ended: no content
        assert consolidate["phase"] == "consolidate" and consolidate["claims"] == 1
        assert (await memory.recall(SCOPE)).mode == "directory"  # consolidation pending
        await memory.pipeline.tick()  # backing off: nothing happens
        assert len(llm.requests_by_purpose("memory_consolidation")) == 1
        await memory.store.pool.execute("UPDATE memory_jobs SET next_attempt_at = now()")
        await memory.pipeline.tick()  # only consolidation runs again: no second extraction
        assert len(llm.requests_by_purpose("memory_extraction")) == 1
        assert (await memory.recall(SCOPE)).mode == "index"
    finally:
        await memory.close()


async def test_a_configuration_change_stops_stale_work_and_plans_again_at_once(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await open_memory(db_url, llm)
    try:
        await finished_exchange(memory, "use the blue theme")
        from datetime import UTC, datetime

        from bot_memory.pipeline.discovery import plan_due

        [job_id] = await plan_due(memory.pipeline.ctx, datetime.now(UTC))
        # Planned under a model that has since been replaced (a restart with new LLM_*).
        await memory.store.pool.execute(
            "UPDATE memory_jobs SET provider = 'old', model = 'old-model'"
        )
        await memory.pipeline.tick()
        jobs = await memory.store.pool.fetch(
            "SELECT id, phase, stop_kind, provider, model FROM memory_jobs ORDER BY id"
        )
        # Stopped for the stale configuration, then planned again (the same input: the same
        # job, revived) under the model configured now, and run in the same tick.
        first = next(j for j in jobs if j["id"] == job_id)
        assert (first["phase"], first["provider"], first["model"]) == (
            "done",
            memory.model.provider,
            "fake-model",
        )
        assert len(llm.requests_by_purpose("memory_extraction")) == 1
        assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 1
    finally:
        await memory.close()


def test_a_call_deadline_must_be_shorter_than_the_lease() -> None:
    from pydantic import ValidationError

    from bot_memory.settings import MemorySettings

    with pytest.raises(ValidationError, match="shorter than BOT_MEMORY_LEASE_SECONDS"):
        MemorySettings(llm_call_deadline_seconds=120, lease_seconds=120)
    assert MemorySettings(llm_call_deadline_seconds=60, lease_seconds=120).lease_seconds == 120


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (400, "error"),
        (401, "error"),
        (403, "error"),
        (404, "error"),
        (422, "error"),
        (429, "error"),
        (503, "error"),
        (529, "error"),
        (408, "unknown"),
        (500, "unknown"),
        (502, "unknown"),
        (504, "unknown"),
    ],
)
def test_each_status_is_classified_as_the_provider_may_have_acted(
    status: int, outcome: str
) -> None:
    from bot_memory.models.openai_compat import outcome_of_status

    assert outcome_of_status(status) == outcome


def test_a_model_is_priced_only_when_both_prices_are_known() -> None:
    from bot_memory.models import build_model
    from bot_memory.settings import MemorySettings

    def priced(**prices: float) -> bool:
        settings = MemorySettings(llm_base_url="http://127.0.0.1:9", llm_model="my-own", **prices)
        return bool(getattr(build_model(settings), "price_known", False))

    assert not priced(llm_input_usd_per_mtok=1.0)
    assert priced(llm_input_usd_per_mtok=1.0, llm_output_usd_per_mtok=2.0)


async def test_a_providers_error_text_is_never_stored(db_url: str, llm: FakeOpenAI) -> None:
    """A content-filter refusal quotes what was said: only its type and code are kept."""
    memory = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="test-key", llm_model="m")
    )
    try:
        source = await memory.record(SCOPE, text="my secret plan is Zebra", speaker_id=7)
        assert source is not None
        await memory.begin(source)
        await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)
        llm.script((400, "Your prompt 'my secret plan is Zebra' was flagged"))
        await memory.pipeline.tick()
        found = await find_traces(memory.store, "test", texts=["Zebra"])
        # Only the chat message itself: its text and the words a search finds it by.
        assert {(t.table, t.column) for t in found} == {
            ("messages", "text"),
            ("messages", "search"),
        }
        error = await memory.store.pool.fetchval("SELECT last_error FROM memory_jobs")
        assert "invalid_request_error" in error and "Zebra" not in error
    finally:
        await memory.close()


def test_a_connection_cut_mid_operation_counts_as_the_database_away() -> None:
    """asyncpg leaves a connection cut by a server shutdown in a state it cannot leave: a paid
    answer's record is retried on another connection rather than given up at once."""
    import asyncpg

    from bot_memory.storage.database import is_connection_error

    assert is_connection_error(
        asyncpg.InternalClientError(
            "cannot switch to state 15; another operation (2) is in progress"
        )
    )
    assert not is_connection_error(ValueError("a bad query"))
