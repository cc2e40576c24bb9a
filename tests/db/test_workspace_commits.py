"""The workspace transaction in a few statements (migration 015): how many each commit sends,
counted on the real connections; what a commit reads after waiting for the workspace lock;
recall rows derived on the server exactly as the application's rule says."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from bot_memory.access.gate import Membership
from bot_memory.agent.tools import ToolContext
from bot_memory.control.actions import forget_record, note_id, switch
from bot_memory.intents import recognize
from bot_memory.pipeline.discovery import plan_due
from bot_memory.pipeline.prompts import ExtractionOutput
from bot_memory.records import MemoryRecord, RecallEntry, RecallRow
from bot_memory.retention.sweeps import expire_due, shorten
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage import Job, SourceMessage
from tests.support.helpers import view
from tests.support.statement_log import CountingPool

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
OWNER = Membership(member=True, admin=True, reason="private-owner")
NOW = datetime.now(UTC)


@pytest.fixture
async def memory(settings: MemorySettings) -> AsyncIterator[Memory]:
    mem = await Memory.open(settings)
    yield mem
    await mem.close()


@pytest.fixture
def counted(memory: Memory) -> CountingPool:
    """The store's pool, its statements noted (the worker's pool is left as it is)."""
    counting = CountingPool(memory.store.pool)
    memory.store.pool = counting  # type: ignore[assignment]
    return counting


async def said(memory: Memory, text: str, *, answer: str | None = "ok") -> SourceMessage:
    source = await memory.record(SCOPE, text=text, speaker_id=7, sent_at=NOW)
    assert source is not None
    await memory.begin(source)
    if answer is not None:
        await memory.finish(source, status="succeeded", answer_text=answer, bot_id=42, now=NOW)
    return source


async def noted(memory: Memory, text: str, at: datetime = NOW) -> str:
    source = await said(memory, text, answer=None)
    request = recognize(text)
    assert request is not None
    result = await memory.control(request, source, who=OWNER, now=at)
    assert result.outcome == "remembered"
    await memory.finish(
        source, status="succeeded", answer_text="Noted.", bot_id=42, kind="memory_control"
    )
    return result.memory_ids[0]


# --- statements per commit -----------------------------------------------------------------
# Before migration 015, in these same cases: a remember sent 5 statements (6 when its recall
# row had to be read again), a forget by ID 18, an extraction 14, an expiry pass 22 and a
# switch 7, BEGIN and COMMIT among them.


async def test_a_remember_is_one_statement(memory: Memory, counted: CountingPool) -> None:
    await noted(memory, "remember that the bike is blue")  # the scope exists from here on
    source = await said(memory, "remember that the car is red", answer=None)
    await counted.taken()
    request = recognize(source.text)
    assert request is not None
    result = await memory.control(request, source, who=OWNER, now=NOW)
    assert await counted.taken() == ["bm_note_commit"]
    assert result.outcome == "remembered"
    stored = await view(memory)
    assert note_id(source.message_id) in stored.records
    assert stored.scopes[SCOPE.key].index.pending  # due for consolidation


async def test_a_forget_by_id_is_one_statement_when_nothing_is_left_to_decide(
    memory: Memory, counted: CountingPool
) -> None:
    kept = await noted(memory, "remember that the bike is blue")
    gone = await noted(memory, "remember that the car is red")
    await counted.taken()
    result = await forget_record(memory.store, SCOPE, gone, actor_id=7, who=OWNER, now=NOW)
    assert await counted.taken() == ["bm_forget_at_once_commit"]
    assert (result.outcome, result.memory_ids) == ("forgotten", [gone])
    stored = await view(memory)
    assert list(stored.records) == [kept]
    [tombstone] = stored.tombstones[SCOPE.key]  # the note's message, so nothing brings it back
    assert note_id(tombstone) == gone
    recalled = await memory.recall(SCOPE)
    assert recalled.memory_ids == [kept] and "car" not in recalled.text


async def test_a_forget_that_must_read_what_was_said_takes_the_longer_way(
    memory: Memory, counted: CountingPool
) -> None:
    gone = await noted(memory, "remember that the spare key is under the mat")
    mention = await said(memory, "so the spare key is under the mat, right?")  # not extracted
    await said(memory, "lunch is at noon")
    await counted.taken()
    result = await forget_record(memory.store, SCOPE, gone, actor_id=7, who=OWNER, now=NOW)
    assert await counted.taken() == [
        "bm_forget_at_once_commit",  # read what is not extracted yet: rolled back, nothing changed
        "BEGIN",
        "bm_forget_reach",
        "bm_forget_commit",
        "COMMIT",
    ]
    assert result.outcome == "forgotten"
    stored = await view(memory)
    # The message that says it is tombstoned (extraction cannot bring it back); lunch is not.
    assert stored.tombstones[SCOPE.key] == {mention.message_id, gone_message(gone)}


async def checkpointed(memory: Memory) -> tuple[SourceMessage, Job]:
    """A finished pair, planned and claimed as an extraction job whose model answer is
    checkpointed: what runs from here is the commit."""
    ctx = memory.pipeline.ctx
    source = await said(memory, "we moved stand-up to half past nine")
    await plan_due(ctx, NOW + timedelta(hours=1))
    job = await ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    assert job is not None and job.phase == "extract"
    answer = ExtractionOutput(
        title="stand-up",
        summary="Stand-up is at half past nine.",
        source_ids=[s.id for s in job.snapshot.sources],
    )
    await ctx.store.jobs.save_checkpoint(job, "extract", answer.model_dump())
    return source, job


def gone_message(record_id: str) -> int:
    return int(record_id.removeprefix("mem_n"))


async def test_an_extraction_commit_is_one_statement(memory: Memory) -> None:
    ctx = memory.pipeline.ctx
    counting = CountingPool(ctx.store.pool)
    ctx.store.pool = counting  # type: ignore[assignment]
    _, job = await checkpointed(memory)
    await counting.taken()
    assert await memory.pipeline.run_job(job, NOW + timedelta(hours=1)) == "done"
    # Calls of the job cut off by a crash become unknown in the same statement (nothing is sent
    # from a checkpoint; a job that calls the model checks the ledger before the call).
    assert await counting.taken() == ["bm_extraction_commit"]
    [record] = (await view(memory)).valid_records(SCOPE.key)
    assert record.title == "stand-up"
    assert await memory.store.recall_row(SCOPE) == without_index([shown(record)])


async def test_a_checkpointed_extraction_with_a_call_cut_off_stops_for_an_operator(
    memory: Memory,
) -> None:
    """An attempt of the job still pending when it resumes from its checkpoint was cut off by a
    process that died: the commit makes it unknown, charged its reservation, and the job stops
    instead of committing."""
    pool = memory.store.pool
    source, job = await checkpointed(memory)
    request_id = await pool.fetchval(
        "SELECT id FROM requests WHERE user_message_id = $1", source.message_id
    )
    attempt = await memory.store.ledger.open_attempt(
        workspace=SCOPE.workspace,
        request_id=request_id,
        job_id=job.id,
        kind="memory_extract",
        key="job:cut",
        provider="p",
        model="m",
        worst_usd=0.25,
        workspace_budget_usd=10.0,
    )
    assert await memory.pipeline.run_job(job, NOW + timedelta(hours=1)) == "stopped"
    outcome, cost, reserved = await pool.fetchrow(
        "SELECT outcome, cost_usd, reserved_usd FROM usage_ledger WHERE id = $1",
        attempt.ledger_id,
    )
    assert (outcome, cost, reserved) == ("unknown", Decimal("0.25"), 0)
    phase, kind, error, checkpoint = await pool.fetchrow(
        "SELECT phase, stop_kind, last_error, checkpoint FROM memory_jobs WHERE id = $1", job.id
    )
    assert (phase, kind) == ("stopped", "unknown") and "cut off" in error
    assert checkpoint == "{}"
    assert tuple(
        await pool.fetchrow(
            "SELECT spent_usd, reserved_usd FROM workspaces WHERE id = $1", SCOPE.workspace
        )
    ) == (Decimal("0.25"), 0)
    assert tuple(
        await pool.fetchrow(
            "SELECT charged_usd, reserved_usd FROM requests WHERE id = $1", request_id
        )
    ) == (Decimal("0.25"), 0)
    assert (await view(memory)).valid_records(SCOPE.key) == []
    watermark = await pool.fetchval(
        "SELECT extracted_through FROM memory_scopes WHERE scope_key = $1", SCOPE.key
    )
    assert watermark == 0  # nothing committed


async def test_an_expiry_pass_is_two_statements(memory: Memory, counted: CountingPool) -> None:
    kept = await noted(memory, "remember that the bike is blue")
    gone = await noted(memory, "remember that the car is red")
    await counted.execute(
        "UPDATE messages SET retain_until = $2 WHERE id = $1", gone_message(gone), NOW
    )
    await counted.taken()
    report = await expire_due(memory.store, NOW + timedelta(seconds=1))
    assert await counted.taken() == ["SELECT workspace_id,", "bm_erase"]
    assert (report.messages, report.records) == (1, 1)
    assert list((await view(memory)).records) == [kept]


async def test_a_locked_transaction_writes_back_in_one_statement(
    memory: Memory, counted: CountingPool
) -> None:
    await noted(memory, "remember that the bike is blue")
    await counted.taken()
    result = await switch(memory.store, SCOPE, False, actor_id=7, who=OWNER, now=NOW)
    assert result.outcome == "disabled"
    assert await counted.taken() == [
        "BEGIN",
        "bm_lock",  # the lock and the scope, read after it
        "SELECT coalesce(max(id),",  # a button: what was said up to now is on this side
        "bm_stop_jobs_touching",
        "bm_write_back",  # the scope, its recall row and the version
        "COMMIT",
    ]
    assert (await memory.recall(SCOPE)).mode == "off"


# --- after waiting for the lock --------------------------------------------------------------


async def waiting_for_the_lock(memory: Memory) -> None:
    for _ in range(1000):
        waiting = await memory.store.pool.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock'"
        )
        if waiting:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("nothing waited for the workspace lock")


async def test_a_note_waiting_for_the_lock_sees_memory_turned_off_meanwhile(
    memory: Memory,
) -> None:
    await noted(memory, "remember that the bike is blue")
    source = await said(memory, "remember that the car is red", answer=None)
    request = recognize(source.text)
    assert request is not None
    async with memory.store.locked("test", scope_key=SCOPE.key) as tx:
        state = await tx.scope(SCOPE)
        state.set_enabled(False, source.request_id)  # as a button pressed just before
        tx.save(state)
        remembering = asyncio.create_task(memory.control(request, source, who=OWNER, now=NOW))
        await waiting_for_the_lock(memory)
    assert (await remembering).outcome == "memory_off"
    stored = await view(memory)
    assert not stored.scopes[SCOPE.key].enabled  # not switched back on by a stale read
    assert note_id(source.message_id) not in stored.records


async def test_a_switch_waiting_for_the_lock_keeps_the_index_written_meanwhile(
    memory: Memory,
) -> None:
    record = await noted(memory, "remember that the bike is blue")
    async with memory.store.locked("test", scope_key=SCOPE.key) as tx:
        state = await tx.scope(SCOPE)  # as a consolidation commits
        state.index.text = f"- {record}: the bike is blue"
        state.index.memory_ids = state.index.candidates = [record]
        state.index.built_at, state.index.pending = NOW, False
        tx.save(state)
        switching = asyncio.create_task(
            switch(memory.store, SCOPE, False, actor_id=7, who=OWNER, now=NOW)
        )
        await waiting_for_the_lock(memory)
    assert (await switching).outcome == "disabled"
    scope = (await view(memory)).scopes[SCOPE.key]
    assert not scope.enabled
    assert scope.index.text == f"- {record}: the bike is blue"  # not overwritten by a stale read


# --- recall rows ------------------------------------------------------------------------------


def shown(record: MemoryRecord) -> RecallEntry:
    """What a recall entry shows of a record, written out: the first 240 characters of its
    summary, its retention boundary, and its sources' IDs in message order."""
    return RecallEntry(
        id=record.id,
        title=record.title,
        summary=record.summary[:240],
        speaker_ids=record.speaker_ids,
        thread_ids=record.thread_ids,
        until=record.available_until,
        created_at=record.created_at,
        source_ids=sorted(record.source_ids, key=lambda s: int(s[1:])),
    )


def without_index(directory: list[RecallEntry]) -> RecallRow:
    """A scope's recall row while it has no index: pending, its directory in its stead."""
    return RecallRow(
        enabled=True,
        suspended=False,
        pending=True,
        index_text="",
        memory_ids=[],
        index_entries=[],
        directory=directory,
    )


async def test_recall_rows_are_derived_on_the_server_as_the_rule_says(memory: Memory) -> None:
    # Long summaries in several scripts (cut at 240 characters, not bytes), more records than
    # the directory holds.
    ids = [
        await noted(
            memory,
            f"remember that shelf {i} holds {'пиріг 🍰 ' * 40} and box {i}",
            NOW + timedelta(seconds=i),
        )
        for i in range(10)
    ]
    records = (await view(memory)).records
    row = await memory.store.recall_row(SCOPE)
    assert row == without_index([shown(records[i]) for i in ids[::-1][:8]])
    assert all(len(e.summary) == 240 for e in row.directory)
    assert row.directory[0].source_ids == [f"m{gone_message(ids[9])}"]
    # Two at the same moment: their IDs decide the order.
    ids += [
        await noted(memory, f"remember that bin {i} is grey", NOW + timedelta(seconds=20))
        for i in range(2)
    ]
    records = (await view(memory)).records
    newest = [*sorted(ids[10:], reverse=True), *ids[9:3:-1]]
    assert await memory.store.recall_row(SCOPE) == without_index(
        [shown(records[i]) for i in newest]
    )
    async with memory.store.locked("test", scope_key=SCOPE.key) as tx:
        state = await tx.scope(SCOPE)  # an index naming two records, built from three
        state.index.text = "- shelves 1 and 2"
        state.index.memory_ids = [ids[1], ids[2]]
        state.index.candidates = [ids[1], ids[2], ids[3]]
        state.index.built_at, state.index.pending = NOW, False
        tx.save(state)
    indexed = RecallRow(
        enabled=True,
        suspended=False,
        pending=False,
        index_text="- shelves 1 and 2",
        memory_ids=[ids[1], ids[2]],
        index_entries=[shown(records[ids[1]]), shown(records[ids[2]])],
        directory=[shown(records[i]) for i in newest],
    )
    assert await memory.store.recall_row(SCOPE) == indexed
    # A shorter retention reaches the entries that show the records (as a host's call does).
    async with memory.store.locked("test") as tx:
        await shorten(tx, {gone_message(ids[9]), gone_message(ids[2])}, NOW + timedelta(days=2))
    shortened = {i: shown(records[i]) for i in (ids[9], ids[2])}
    for entry in shortened.values():
        entry.until = NOW + timedelta(days=2)
    indexed.index_entries[1] = shortened[ids[2]]
    indexed.directory[2] = shortened[ids[9]]
    assert await memory.store.recall_row(SCOPE) == indexed
    # A candidate the index was built from goes: the index goes with it (its text may repeat it).
    await forget_record(memory.store, SCOPE, ids[3], actor_id=7, who=OWNER, now=NOW)
    assert await memory.store.recall_row(SCOPE) == without_index(indexed.directory)
    # Everything goes: nothing left to consolidate.
    for record in ids[:3] + ids[4:]:
        await forget_record(memory.store, SCOPE, record, actor_id=7, who=OWNER, now=NOW)
    assert await memory.store.recall_row(SCOPE) == without_index([])
    assert not (await view(memory)).scopes[SCOPE.key].index.pending


async def test_an_index_naming_a_gone_record_is_dropped_from_the_recall_row(
    memory: Memory,
) -> None:
    """The index goes with its text (it may repeat what is gone) and the scope is pending; the
    directory stands in. (A Python twin of this rule, records.build_recall_row, kept the index
    with an entry missing: removed, this test failed on it.)"""
    a = await noted(memory, "remember that the bike is blue", NOW)
    b = await noted(memory, "remember that the car is red", NOW + timedelta(seconds=1))
    await memory.store.pool.execute("DELETE FROM memory_records WHERE id = $1", a)
    async with memory.store.locked("test", scope_key=SCOPE.key) as tx:
        state = await tx.scope(SCOPE)  # an index naming both, saved as it is
        state.index.text = f"- {a}: the bike\n- {b}: the car"
        state.index.memory_ids = state.index.candidates = [a, b]
        state.index.built_at, state.index.pending = NOW, False
        tx.save(state)
    records = (await view(memory)).records
    assert await memory.store.recall_row(SCOPE) == without_index([shown(records[b])])
    assert (await view(memory)).scopes[SCOPE.key].index.pending


async def test_a_memory_query_commits_once_with_its_ledger_line(
    memory: Memory, counted: CountingPool
) -> None:
    """An agent turn makes several query_memories calls: the read, its citations and the
    tool's line in the ledger are one transaction (the line had a statement and a commit of its
    own)."""
    await noted(memory, "remember that the boat is called Aurora")
    source = await said(memory, "what is the boat called?", answer=None)
    await counted.taken()
    result = await memory.tools.execute(
        "query_memories", json.dumps({"query": "boat"}), ToolContext(source=source), call_id="q1"
    )
    assert [r["title"] for r in result["results"]], result
    taken = await counted.taken()
    # the read, then what it gave with the tool's ledger line in one statement
    assert taken == ["BEGIN", "bm_lock", "WITH sw", "WITH used", "COMMIT"], taken
    kinds = await memory.store.pool.fetch("SELECT kind, outcome FROM usage_ledger")
    assert [(k["kind"], k["outcome"]) for k in kinds] == [("tool:query_memories", "ok")]


# --- the cap -------------------------------------------------------------------------------


async def test_a_record_past_the_cap_evicts_the_least_recently_used(
    settings: MemorySettings,
) -> None:
    """Migration 017 finds what is past the cap by the LRU index: the least recently used
    records go (by last use, then creation, then ID), never the one just added, and all of them
    when the cap was lowered."""
    memory = await Memory.open(settings.model_copy(update={"workspace_max_records": 3}))
    try:
        first = await noted(memory, "remember that the bike is blue", NOW)
        second = await noted(memory, "remember that the car is red", NOW + timedelta(seconds=1))
        third = await noted(memory, "remember that the van is green", NOW + timedelta(seconds=2))
        await memory.store.pool.execute(  # the first was used since: the second is the LRU
            "UPDATE memory_records SET last_used_at = $2 WHERE id = $1",
            first,
            NOW + timedelta(seconds=5),
        )
        fourth = await noted(memory, "remember that the boat is white", NOW + timedelta(seconds=3))
        assert second not in (await view(memory)).records
        assert set((await view(memory)).records) == {first, third, fourth}
        # Lowered: everything but the new one goes.
        memory.store.limits = dataclasses.replace(memory.store.limits, max_records=1)
        fifth = await noted(memory, "remember that the kite is pink", NOW - timedelta(days=1))
        assert set((await view(memory)).records) == {fifth}
    finally:
        await memory.close()


async def test_an_extraction_whose_source_changed_during_the_call_stops_at_commit(
    memory: Memory,
) -> None:
    """Migration 017 ends the job as done while checking its ownership; a commit that finds its
    input changed writes the stop over that, leaving the job as a stop always did."""
    pool = memory.store.pool
    source, job = await checkpointed(memory)
    await pool.execute(  # edited while the answer was being written (nothing stopped the job)
        "UPDATE messages SET content_hash = 'changed' WHERE id = $1", source.message_id
    )
    assert await memory.pipeline.run_job(job, NOW + timedelta(hours=1)) == "stopped"
    row = await pool.fetchrow(
        "SELECT phase, stop_kind, last_error, checkpoint::text, ownership_token, lease_until,"
        " claims, finished_at IS NOT NULL AS finished FROM memory_jobs WHERE id = $1",
        job.id,
    )
    assert (row["phase"], row["stop_kind"]) == ("stopped", "changed")
    assert row["last_error"] == f"source m{source.message_id} was edited during extraction"
    assert (row["checkpoint"], row["ownership_token"], row["lease_until"]) == ("{}", None, None)
    assert row["claims"] == job.claims and row["finished"]
    assert (await view(memory)).valid_records(SCOPE.key) == []


# --- one home per rule: what the server decides, the application does not decide again ------


async def test_the_worker_prunes_the_inactive_and_the_unavailable(settings: MemorySettings) -> None:
    """What a prune drops: records unused for the inactivity window, invalid ones and those
    whose sources' retention passed; not the least recently used past a lowered cap, which is
    kept when a record is added (bm_add_record). (A Python twin, records.prune_plan, applied
    the cap: removed, a test comparing it with this prune failed.)"""
    from bot_memory.pipeline.maintenance import prune_due

    memory = await Memory.open(settings)
    try:
        ids = [
            await noted(memory, f"remember that box {i} is red", NOW - timedelta(minutes=i))
            for i in range(5)
        ]
        await memory.store.pool.execute(
            "UPDATE memory_records SET last_used_at = $2 WHERE id = $1",
            ids[0],
            NOW - timedelta(days=31),
        )
        await memory.store.pool.execute(
            "UPDATE memory_records SET available_until = $2 WHERE id = $1", ids[1], NOW
        )
        await memory.store.pool.execute(
            "UPDATE memory_records SET valid = false WHERE id = $1", ids[2]
        )
        memory.store.limits = dataclasses.replace(memory.store.limits, max_records=1)
        assert await prune_due(memory.pipeline.ctx, NOW) == 3
        assert set((await view(memory)).records) == {ids[3], ids[4]}
    finally:
        await memory.close()


async def test_every_read_of_a_record_gives_the_same_record(memory: Memory) -> None:
    """The application reads a record by workspace.RECORD_COLUMNS and RECORD_SOURCES (the
    workspace's reads and find_records), the server by bm_records_json: the same record, its
    own sources first. (find_records had its own columns, its sources in another order than
    the workspace's reads: this test failed on them.)"""
    from bot_memory.records import MemoryRecord, SourceRef

    await said(memory, "hello")  # the workspace and its scope
    record = MemoryRecord(
        id="mem_carried",
        scope_key=SCOPE.key,
        origin="extracted",
        title="boats",
        summary="the boat is called Aurora",
        speaker_ids=[7],
        thread_ids=[0],
        sources=[
            SourceRef(message_id=50, hash="h50", speaker_id=7),
            SourceRef(message_id=51, hash="h51", speaker_id=7, role="assistant"),
            SourceRef(message_id=3, hash="h3", speaker_id=7, inherited=True),
        ],
        cited=["m50"],
        derived_from=["mem_old"],
        created_at=NOW,
        last_used_at=NOW,
    )
    async with memory.store.locked("test") as tx:
        await tx.add_record(record, NOW)
    by_workspace = (await view(memory)).records[record.id]
    _, found = await memory.store.search.records(
        SCOPE, query=None, record_id=record.id, now=NOW, limit=1
    )
    raw = await memory.store.pool.fetchval("SELECT bm_records_json('test', ARRAY[$1])", record.id)
    by_server = MemoryRecord.model_validate(json.loads(raw)[0])
    assert by_workspace == found[0] == by_server
    assert by_workspace.source_ids == ["m50", "m51", "m3"]  # its own first, as it was built


async def test_the_recall_row_has_the_shape_the_application_reads(memory: Memory) -> None:
    """The keys of a recall row and of its entries, as the server writes them, are the fields
    of records.RecallRow and RecallEntry (every one of them: a default would hide one missing),
    and summaries are cut at records.RECALL_SUMMARY_CHARS, passed by the application."""
    from bot_memory.records import RECALL_SUMMARY_CHARS

    first = await noted(memory, f"remember that the shelf holds {'jam ' * 100}", NOW)
    async with memory.store.locked("test", scope_key=SCOPE.key) as tx:
        state = await tx.scope(SCOPE)
        state.index.text = f"- {first}: the shelf"
        state.index.memory_ids = state.index.candidates = [first]
        state.index.built_at, state.index.pending = NOW, False
        tx.save(state)
    await noted(memory, "remember that the van is green", NOW + timedelta(seconds=1))  # prepended
    raw = json.loads(
        await memory.store.pool.fetchval(
            "SELECT recall FROM memory_scopes WHERE scope_key = $1", SCOPE.key
        )
    )
    assert set(raw) == set(RecallRow.model_fields)
    entries = raw["directory"] + raw["index_entries"]
    assert len(entries) == 3
    assert all(set(e) == set(RecallEntry.model_fields) for e in entries)
    assert max(len(e["summary"]) for e in entries) == RECALL_SUMMARY_CHARS


async def test_ingress_inserts_are_not_blocked_while_the_workspace_lock_is_held(
    memory: Memory,
) -> None:
    # The lock is FOR NO KEY UPDATE: a child row's foreign-key check (FOR KEY SHARE) does not
    # wait for it. FOR UPDATE would make every incoming message wait for every commit.
    await said(memory, "the workspace exists from here on")
    async with memory.store.locked("test"):
        source = await asyncio.wait_for(
            memory.record(SCOPE, text="a message while a commit holds the lock", speaker_id=7),
            timeout=5,
        )
        assert source is not None
        request = await asyncio.wait_for(
            memory.store.pool.fetchval(
                "SELECT status FROM requests WHERE workspace_id = 'test' AND id = $1",
                source.request_id,
            ),
            timeout=5,
        )
        assert request == "queued"


async def test_an_answered_message_writes_its_request_once_per_step(
    memory: Memory, counted: CountingPool
) -> None:
    """The request path's writes, each one statement: the turn's start (running, pinned, and
    what recall froze; the same statement reads the conversation before it), the billed call's
    attempt and its settling, and the closing with the answer (kept, its dependencies, the
    scope scheduled)."""
    await noted(memory, "remember that the bike is blue")
    source = await memory.record(SCOPE, text="what colour is the bike?", speaker_id=7, sent_at=NOW)
    assert source is not None
    await counted.taken()
    answer = await memory.agent.answer(memory.turn(source))
    taken = await counted.taken()
    # (Being recalled marks the note used, at most hourly: a write of memory_records.)
    writes = [t for t in taken if t in ("UPDATE requests", "WITH started") or "attempt" in t]
    calls = ["bm_open_attempt", "bm_close_attempt"] * answer.rounds
    assert writes == ["WITH started", *calls], taken
    alone = [a for a, b in itertools.pairwise(taken) if "attempt" in b]
    assert "BEGIN" not in alone, taken  # each its own statement, no transaction around it
    await memory.finish(source, status="succeeded", answer_text=answer.text, now=NOW)
    assert await counted.taken() == ["bm_finish_answered"]
