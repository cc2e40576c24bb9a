"""An upgrade from the previous release (0.2.0, schema version 18): a database it made keeps
every memory through the migrations, and a process still running it keeps working while the
new one starts (the functions it calls, superseded.sql's, answer as before)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from bot_memory.records import MemoryRecord, SourceRef, content_hash
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage.database import apply_migrations, migrations
from bot_memory.terms import record_vector
from tests.conftest import make_settings, with_database
from tests.support.fake_openai import FakeOpenAI

PREVIOUS_RELEASE = 18  # the last migration 0.2.0 shipped
SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=1001, user_id=1001)
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


@asynccontextmanager
async def database_at(pg_server_url: str, version: int) -> AsyncIterator[str]:
    """A database built by the migrations up to `version` as this tree has them, dropped after."""
    name = "bm_prev_" + uuid.uuid4().hex[:12]
    admin = await asyncpg.connect(pg_server_url)
    await admin.execute(f"CREATE DATABASE {name} TEMPLATE template0")
    url = with_database(pg_server_url, name)
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for migration in migrations():
            if migration.version <= version:
                async with conn.transaction():
                    await conn.execute(migration.sql())
                    await conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                        migration.version,
                        migration.name,
                    )
        await conn.execute("INSERT INTO workspaces (id) VALUES ('test')")
        yield url
    finally:
        await conn.close()
        await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        await admin.close()


@pytest.fixture
async def previous(pg_server_url: str) -> AsyncIterator[str]:
    """A database built by the previous release's migrations, dropped after."""
    async with database_at(pg_server_url, PREVIOUS_RELEASE) as url:
        yield url


async def said(conn: asyncpg.Connection, text: str) -> int:
    message_id: int = await conn.fetchval(
        "INSERT INTO messages (workspace_id, scope_key, bot_id, chat_id, speaker_id, role, text,"
        " content_hash) VALUES ('test', $1, 42, 1001, 1001, 'user', $2, $3) RETURNING id",
        SCOPE.key,
        text,
        content_hash(text),
    )
    return message_id


def note(message_id: int, text: str) -> MemoryRecord:
    return MemoryRecord(
        id=f"mem_n{message_id}",
        scope_key=SCOPE.key,
        origin="note",
        title=text,
        summary=text,
        speaker_ids=[1001],
        thread_ids=[0],
        sources=[
            SourceRef(
                message_id=message_id,
                hash=content_hash(text),
                speaker_id=1001,
                thread_id=0,
                role="user",
            )
        ],
        created_at=NOW,
        last_used_at=NOW,
    )


def scope_json() -> str:
    return json.dumps(
        {
            "scope_key": SCOPE.key,
            "kind": SCOPE.kind,
            "bot_id": SCOPE.bot_id,
            "chat_id": SCOPE.chat_id,
            "user_id": SCOPE.user_id,
            "topic_id": SCOPE.topic_id,
        }
    )


async def remember_as_before(conn: asyncpg.Connection, text: str) -> tuple[str, str]:
    """What 0.2.0's control._remember sends."""
    record = note(await said(conn, text), text)
    outcome = await conn.fetchval(
        "SELECT bm_remember($1, $2::jsonb, $3::jsonb, $4, $5::tsvector, $6, $7, $8)",
        "test",
        scope_json(),
        record.model_dump_json(),
        record.fingerprint,
        record_vector(record.title, record.summary),
        256,
        8,
        300,
    )
    return outcome, record.id


async def test_memories_of_the_previous_release_survive_the_upgrade_and_its_processes_work_on(
    previous: str, llm: FakeOpenAI
) -> None:
    conn = await asyncpg.connect(previous)
    try:
        assert await remember_as_before(conn, "my locker is 12") == ("remembered", "mem_n1")
        applied = await apply_migrations(conn)
        assert applied[0] == PREVIOUS_RELEASE + 1 and applied[-1] == migrations()[-1].version
        # A 0.2.0 process still running: a note, a record stored directly, the input check, a
        # forget at once, each through the function it calls.
        outcome, second = await remember_as_before(conn, "my bike is red")
        assert outcome == "remembered"
        third = note(await said(conn, "the gate code is 4471"), "the gate code is 4471")
        rows = await conn.fetch(
            "SELECT * FROM bm_add_record($1, $2::jsonb, $3, $4::tsvector, $5)",
            "test",
            third.model_dump_json(),
            third.fingerprint,
            record_vector(third.title, third.summary),
            256,
        )
        assert [(r["id"], r["added"]) for r in rows] == [(third.id, True)]
        sources = json.dumps([{"message_id": 1, "hash": content_hash("my locker is 12")}])
        problem = await conn.fetchrow(
            "SELECT * FROM bm_input_problem('test', $1, $2)", SCOPE.key, sources
        )
        assert tuple(problem) == (None, None)
        assert (
            await conn.fetchval("SELECT bm_source_problem('test', $1, $2)", SCOPE.key, sources)
            is None
        )
        forgot = await conn.fetchrow(
            "SELECT * FROM bm_forget_at_once('test', $1, $2::text[], NULL, 1001, $3, 8, 300)",
            SCOPE.key,
            [third.id],
            NOW,
        )
        assert (forgot["outcome"], list(forgot["removed"])) == ("forgotten", [third.id])
    finally:
        await conn.close()
    # The new release on the upgraded database: every memory kept, recalled, forgettable.
    memory = await Memory.open(
        make_settings(previous, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m")
    )
    try:
        view = await memory.store.view("test")
        assert sorted(view.records) == sorted(["mem_n1", second])
        recalled = await memory.recall(SCOPE, now=NOW + timedelta(minutes=1))
        assert "my locker is 12" in (recalled.text or "") and "my bike is red" in (
            recalled.text or ""
        )
    finally:
        await memory.close()


async def test_an_extraction_committed_by_the_previous_release_lands(
    previous: str, llm: FakeOpenAI
) -> None:
    conn = await asyncpg.connect(previous)
    await apply_migrations(conn)
    memory = await Memory.open(
        make_settings(previous, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m")
    )
    try:
        source = await memory.record(
            SCOPE, text="we moved stand-up to half past nine", speaker_id=1001, sent_at=NOW
        )
        assert source is not None
        await memory.begin(source)
        await memory.finish(source, status="succeeded", answer_text="noted", bot_id=42, now=NOW)
        from bot_memory.pipeline.discovery import plan_due

        await plan_due(memory.pipeline.ctx, NOW + timedelta(hours=1))
        job = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
        assert job is not None and job.phase == "extract"
        record = MemoryRecord(
            id="mem_old0release",
            scope_key=SCOPE.key,
            origin="extracted",
            title="stand-up",
            summary="Stand-up is at half past nine.",
            speaker_ids=[1001],
            thread_ids=[0],
            sources=[
                SourceRef(
                    message_id=s.message_id, hash=s.hash, speaker_id=s.speaker_id, role=s.role
                )
                for s in job.snapshot.sources
            ],
            created_at=NOW,
            last_used_at=NOW,
        )
        row = await conn.fetchrow(
            "SELECT * FROM bm_commit_extraction($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb,"
            " $8::text[], $9, $10::tsvector, $11, $12, $13, $14)",
            job.workspace,
            job.scope_key,
            job.id,
            job.token,
            json.dumps(
                [{"message_id": s.message_id, "hash": s.hash} for s in job.snapshot.sources]
            ),
            job.snapshot.through_request,
            record.model_dump_json(),
            [],
            record.fingerprint,
            record_vector(record.title, record.summary),
            NOW + timedelta(hours=1),
            256,
            8,
            300,
        )
        assert tuple(row) == ("done", None)
        view = await memory.store.view("test")
        assert [r.id for r in view.valid_records(SCOPE.key)] == ["mem_old0release"]
        assert await conn.fetchval("SELECT phase FROM memory_jobs WHERE id = $1", job.id) == "done"
    finally:
        await memory.close()
        await conn.close()


async def test_a_database_migrated_to_031_as_it_first_shipped_records_and_answers_after_the_upgrade(
    pg_server_url: str, llm: FakeOpenAI
) -> None:
    # 030 and 031 were changed after main first shipped them (bm_chat_keeps_until, which
    # recording calls; bm_close_abandoned settling): 032 brings such a database up to date.
    async with database_at(pg_server_url, 31) as url:
        conn = await asyncpg.connect(url)
        try:
            assert not await conn.fetchval(
                "SELECT EXISTS (SELECT 1 FROM pg_proc WHERE proname = 'bm_chat_keeps_until')"
            )
        finally:
            await conn.close()
        memory = await Memory.open(
            make_settings(url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m")
        )
        try:
            source = await memory.record(SCOPE, text="what is my locker?", speaker_id=1001)
            assert source is not None
            answer = await memory.agent.answer(memory.turn(source))
            assert await memory.finish(source, status="succeeded", answer_text=answer.text)
        finally:
            await memory.close()
