"""Retention and forgetting that hold: boundaries, expiry and removal that erase everything
derived, privacy sweeps, purges, and traces checked in every table. The clock is injected."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot_memory.access.gate import Membership
from bot_memory.access.tenancy import default_workspace
from bot_memory.agent.tools import ToolContext
from bot_memory.cli import commands as cli
from bot_memory.control.actions import forget_record
from bot_memory.intents import recognize
from bot_memory.pipeline.discovery import plan_due
from bot_memory.retention.verify import find_traces
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from tests.conftest import make_settings
from tests.support.e2e import running, wait_until
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import act, view

CHAT = 7
SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=CHAT, user_id=CHAT)
NOW = datetime.now(UTC)
OWNER = Membership(member=True, admin=True, reason="private-owner")


async def said(
    memory: Memory, text: str, msg_id: int | None = None, scope: Scope = SCOPE
) -> SourceMessage:
    source = await memory.record(
        scope, text=text, speaker_id=scope.user_id or 1, telegram_message_id=msg_id, sent_at=NOW
    )
    assert source is not None
    await memory.begin(source)
    return source


async def exchange(
    memory: Memory, text: str, msg_id: int | None = None, answer: str = "ok", scope: Scope = SCOPE
) -> SourceMessage:
    source = await said(memory, text, msg_id, scope)
    await memory.finish(source, status="succeeded", answer_text=answer, bot_id=42, now=NOW)
    return source


async def unexpected(memory: Memory, workspace: str = "test", **kwargs: Any) -> list[Any]:
    return [t for t in await find_traces(memory.store, workspace, **kwargs) if not t.expected]


async def test_boundaries_come_from_the_chat_the_setting_and_the_host(
    db_url: str, llm: FakeOpenAI
) -> None:
    memory = await Memory.open(make_settings(db_url, message_retention_days=30))
    try:
        await memory.store.save_chat(
            bot_id=42,
            chat_id=CHAT,
            workspace="test",
            chat_type="private",
            auto_delete_seconds=86_400,
            auto_delete_known=True,
        )
        first = await said(memory, "the timer is a day", msg_id=1)
        await memory.chats.auto_delete_changed(
            bot_id=42, chat_id=CHAT, chat_type="private", workspace="test", seconds=0
        )
        second = await said(memory, "no timer now", msg_id=2)
        rows = dict(await memory.store.pool.fetch("SELECT id, retain_until FROM messages"))
        assert rows[first.message_id] == NOW + timedelta(days=1)  # the earliest boundary
        assert rows[second.message_id] == NOW + timedelta(days=30)
        # A host call shortens, never extends.
        await memory.set_retention(CHAT, [2], NOW + timedelta(days=2), bot_id=42, now=NOW)
        await memory.set_retention(CHAT, [2], NOW + timedelta(days=90), bot_id=42, now=NOW)
        after = await memory.store.pool.fetchval(
            "SELECT retain_until FROM messages WHERE id = $1", second.message_id
        )
        assert after == NOW + timedelta(days=2)
    finally:
        await memory.close()


async def test_expiry_erases_the_message_and_everything_derived_within_one_tick(
    memory: Memory,
) -> None:
    marker = "zebra-umbrella-42"
    await exchange(memory, f"my locker code word is {marker}", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    [record] = (await view(memory)).valid_records(SCOPE.key)
    # A later answer is given that record: it inherits the earliest boundary of its sources.
    asking = await said(memory, "what is my code word?", msg_id=3)
    turn = memory.turn(asking)
    assert record.id in (await turn.start(now=NOW)).memory_ids
    await memory.finish(asking, status="succeeded", answer_text=f"it is {marker}", now=NOW)
    until = NOW + timedelta(hours=1)
    await memory.set_retention(CHAT, [1], until, bot_id=42, now=NOW)
    answer_until = await memory.store.pool.fetchval(
        "SELECT retain_until FROM messages WHERE text = $1", f"it is {marker}"
    )
    assert answer_until == until
    assert (await memory.recall(SCOPE, now=until + timedelta(seconds=1))).mode != "index"

    report = await memory.pipeline.tick(now=until + timedelta(seconds=1))
    # The original and the answer that inherited its boundary, in the same pass.
    assert report.expired["messages"] + report.expired["answers"] == 2
    assert report.expired["records"] == 1
    assert (await view(memory)).records == {}
    assert await unexpected(memory, texts=[marker], source_ids=["m1"]) == []
    texts = await memory.store.pool.fetch("SELECT text FROM messages WHERE text LIKE '%zebra%'")
    assert texts == []


async def test_a_boundary_passing_during_extraction_and_during_consolidation(
    memory: Memory,
) -> None:
    source = await exchange(memory, "the staging password hint is blue", msg_id=1)
    [job_id] = await plan_due(memory.pipeline.ctx, NOW)
    job = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    assert job is not None and job.id == job_id
    await memory.remove_messages(CHAT, [1], bot_id=42)  # during the extraction call
    assert await memory.pipeline.run_job(job, NOW) == "stopped"
    assert (await view(memory)).records == {}
    checkpoint = await memory.store.pool.fetchval("SELECT count(*) FROM memory_jobs")
    assert checkpoint == 0  # the stopped job's snapshot named an erased source: gone too
    assert source.message_id

    await exchange(memory, "the deploy window is Tuesday", msg_id=3)
    await memory.pipeline.tick(now=NOW)  # extracted and consolidated
    await exchange(memory, "the release is v2", msg_id=5)
    [extract] = await plan_due(memory.pipeline.ctx, NOW)
    await memory.pipeline.run_job(
        await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3),  # type: ignore[arg-type]
        NOW,
    )
    await plan_due(memory.pipeline.ctx, NOW)  # the new record's consolidation
    consolidation = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    assert consolidation is not None and consolidation.phase == "consolidate"
    await memory.remove_messages(CHAT, [3], bot_id=42)  # a candidate's source goes mid-call
    await memory.pipeline.run_job(consolidation, NOW)
    state = await view(memory)
    assert [r.summary for r in state.valid_records(SCOPE.key)] == ["the release is v2 ok"]
    assert "Tuesday" not in json.dumps(state.scopes[SCOPE.key].model_dump(mode="json"))
    assert extract


async def test_removal_while_a_request_holds_a_frozen_index(memory: Memory) -> None:
    await exchange(memory, "my bike lock code is 4711", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    asking = await said(memory, "what is my lock code?", msg_id=3)
    turn = memory.turn(asking)
    [record] = (await view(memory)).records
    assert record in json.dumps(await turn.context_messages())
    report = await memory.remove_messages(CHAT, [1], bot_id=42)
    assert report.messages == 1 and report.records == 1
    assert record not in json.dumps(await turn.context_messages())
    found = await turn.execute(
        {"id": "c", "function": {"name": "query_memories", "arguments": "{}"}}
    )
    history = await turn.execute(
        {"id": "d", "function": {"name": "query_chat_history", "arguments": '{"query": "4711"}'}}
    )
    assert "4711" not in found["content"] and "4711" not in history["content"]


async def test_a_sweep_follows_message_record_answer_record_in_one_call(
    memory: Memory, llm: FakeOpenAI
) -> None:
    first = await exchange(memory, "my cat is called Mochi", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    [r1] = (await view(memory)).valid_records(SCOPE.key)
    asking = await said(memory, "tell me about my cat", msg_id=3)
    await memory.turn(asking).start(now=NOW)  # given r1
    await memory.finish(asking, status="succeeded", answer_text="Mochi naps at noon", now=NOW)
    await memory.pipeline.tick(now=NOW)  # extracts the pair with that answer: r3
    state = await view(memory)
    [r3] = [r for r in state.valid_records(SCOPE.key) if r.id != r1.id]
    answer_id = asking.message_id + 1
    assert answer_id in r3.message_ids
    untouched = await exchange(memory, "I like hiking", msg_id=5)
    report = await memory.privacy_sweep(source_ids=[first.source_id])
    assert report == {"messages": 1, "answers": 1, "records": 2, "checkpoints": 0, "tombstones": 0}
    assert (await view(memory)).records == {}
    kept = await memory.store.pool.fetchval(
        "SELECT text FROM messages WHERE id = $1", untouched.message_id
    )
    assert kept == "I like hiking"
    assert await unexpected(memory, texts=["Mochi"]) == []


async def test_sweeps_by_user_and_by_chat(memory: Memory) -> None:
    other = Scope(workspace="test", bot_id=42, kind="private", chat_id=8, user_id=8)
    await exchange(memory, "my name is Ada", msg_id=1)
    await exchange(memory, "my name is Bo", msg_id=1, scope=other)
    await memory.pipeline.tick(now=NOW)
    by_user = await memory.privacy_sweep(user_id=CHAT)
    assert by_user["messages"] == 2 and by_user["records"] == 1  # their message, the answer
    assert await unexpected(memory, texts=["Ada"]) == []
    assert len((await view(memory)).valid_records(other.key)) == 1
    by_chat = await memory.privacy_sweep(chat_id=8)
    assert by_chat["records"] == 1 and (await view(memory)).records == {}


async def test_purge_leaves_another_workspace_byte_for_byte(memory: Memory) -> None:
    other = Scope(workspace="other", bot_id=42, kind="private", chat_id=8, user_id=8)
    await exchange(memory, "alpha secret plans", msg_id=1)
    await exchange(memory, "beta notes", msg_id=1, scope=other)
    await memory.pipeline.tick(now=NOW)

    async def dump(workspace: str) -> str:
        tables = [
            r["table_name"]
            for r in await memory.store.pool.fetch(
                "SELECT table_name FROM information_schema.columns WHERE table_schema ="
                " current_schema() AND column_name = 'workspace_id' ORDER BY table_name"
            )
        ]
        out = {}
        for t in tables:
            rows = await memory.store.pool.fetch(
                f"SELECT to_jsonb(x)::text AS j FROM {t} x WHERE workspace_id = $1 ORDER BY 1",
                workspace,
            )
            out[t] = [r["j"] for r in rows]
        ws = await memory.store.pool.fetchval(
            "SELECT to_jsonb(w)::text FROM workspaces w WHERE id = $1", workspace
        )
        return json.dumps([out, ws])

    before = await dump("other")
    assert await memory.purge_workspace("test")
    assert not await memory.purge_workspace("test")  # idempotent
    assert await dump("other") == before
    assert await unexpected(memory, texts=["alpha"], source_ids=["m1"]) == []
    ledger = await memory.store.pool.fetch(
        "SELECT prompt_tokens, detail FROM usage_ledger WHERE workspace_id = 'test'"
    )
    assert ledger and all(r["detail"] is None for r in ledger)  # amounts kept, no text


async def test_purge_wins_against_a_tick_and_a_tool_call_in_flight(memory: Memory) -> None:
    await exchange(memory, "we chose Kafka", msg_id=1)
    [job_id] = await plan_due(memory.pipeline.ctx, NOW)
    job = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    asking = await said(memory, "what did we choose?", msg_id=3)
    assert job is not None and job.id == job_id
    await memory.purge_workspace("test")
    assert await memory.pipeline.run_job(job, NOW) == "stopped"
    result = await memory.tools.execute(
        "query_memories", "{}", ToolContext(source=asking), call_id="x"
    )
    assert "deleted" in str(result["error"])
    assert await memory.store.pool.fetchval("SELECT count(*) FROM workspaces") == 0
    await memory.pipeline.tick(now=NOW)
    assert await memory.store.pool.fetchval("SELECT count(*) FROM workspaces") == 0


async def test_forgetting_leaves_traces_only_in_chat_messages_and_tombstones(
    memory: Memory,
) -> None:
    note = await said(memory, "remember that my passport number is X1234567")
    request = recognize(note.text)
    assert request is not None
    await memory.control(request, note)
    await memory.pipeline.tick(now=NOW)
    forget = await said(memory, "forget my passport")
    forget_request = recognize(forget.text)
    assert forget_request is not None
    assert (await memory.control(forget_request, forget)).outcome == "forgotten"
    assert (
        await unexpected(memory, texts=["X1234567"], source_ids=[note.source_id], after="forget")
        == []
    )
    assert (await memory.control(forget_request, forget)).outcome == "nothing_to_forget"


async def test_tombstones_go_with_their_originals_and_empty_scopes_are_dropped(
    memory: Memory,
) -> None:
    note = await said(memory, "remember that my pin hint is the cat", msg_id=1)
    request = recognize(note.text)
    assert request is not None
    await memory.control(request, note)
    forget = await said(memory, "forget my pin hint", msg_id=2)
    forget_request = recognize(forget.text)
    assert forget_request is not None
    await memory.control(forget_request, forget)
    await memory.finish(note, status="succeeded", answer_text="noted", now=NOW)
    await memory.finish(forget, status="succeeded", answer_text="done", now=NOW)
    assert (await view(memory)).tombstones[SCOPE.key]
    report = await memory.remove_messages(CHAT, [1, 2], bot_id=42)
    assert report.tombstones >= 1
    state = await view(memory)
    assert SCOPE.key not in state.tombstones
    # Only the answers' text remains in the scope; erase them too and the scope row goes.
    await memory.privacy_sweep(chat_id=CHAT)
    assert SCOPE.key not in (await view(memory)).scopes


async def test_caption_edits_invalidate(memory: Memory) -> None:
    await exchange(memory, "photo caption: the whiteboard plan", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    assert await memory.record_edit(CHAT, 1, "photo caption: a new plan", bot_id=42)
    assert (await view(memory)).valid_records(SCOPE.key) == []


async def test_verify_forgotten_command(
    memory: Memory, db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    await exchange(memory, "the vault code is 9-9-1", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    monkeypatch.setenv("DATABASE_URL", db_url)
    assert await cli.run_command(["verify-forgotten", "test", "--text", "9-9-1", "--json"]) == 1
    out = capsys.readouterr().out
    places = {(t["table"], t["column"]) for t in json.loads(out[out.index("[\n") :])}
    assert ("memory_records", "summary") in places and ("messages", "text") in places
    await memory.remove_messages(CHAT, [1], bot_id=42)
    assert await cli.run_command(["verify-forgotten", "test", "--text", "9-9-1"]) == 0


async def test_an_auto_deleting_group_keeps_no_trace_of_a_message_over_http(db_url: str) -> None:
    marker = "marker-" + "q8w7e6r5"
    group = -100321
    async with running(db_url, workspace_setting=None) as env:
        env.emu.set_auto_delete(group, 60)
        env.emu.push_message(
            chat_type="supergroup",
            chat_id=group,
            user_id=1001,
            text=f"@memory_test_bot the launch word is {marker}",
        )
        await env.emu.wait_for_sent(1)

        async def extracted() -> bool:
            rows = await env.rows("SELECT 1 FROM memory_records")
            return bool(rows)

        await wait_until(extracted)
        await env.memory.pipeline.tick(now=datetime.now(UTC) + timedelta(seconds=61))
        # Every table of the database, not only the ones we expect.
        tables = [
            r["table_name"]
            for r in await env.rows(
                "SELECT table_name FROM information_schema.tables WHERE table_schema ="
                " current_schema() AND table_type = 'BASE TABLE'"
            )
        ]
        hits = []
        for name in tables:
            rows = await env.rows(
                f"SELECT 1 FROM {name} x WHERE strpos(to_jsonb(x)::text, $1) > 0", marker
            )
            if rows:
                hits.append(name)
        assert hits == []


async def test_forget_holds_over_http(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        await env.say(1, chat_id=1001, user_id=1001, text="remember that my cat is called Mochi")
        env.llm.script({"role": "assistant", "content": "Your cat is called Mochi."})
        await env.say(2, chat_id=1001, user_id=1001, text="what is my cat called?")
        sent = await env.say(3, chat_id=1001, user_id=1001, text="forget my cat")
        assert sent["text"].startswith("Done")
        await env.memory.pipeline.tick()  # the idle window passes: extraction runs
        await env.say(4, chat_id=1001, user_id=1001, text="what is my cat called?")
        prompt = json.dumps(env.llm.chat_requests()[-1]["messages"], ensure_ascii=False)
        assert "Mochi" not in prompt, prompt
        records = await env.rows("SELECT summary FROM memory_records")
        assert all("Mochi" not in r["summary"] for r in records)


async def test_a_forget_during_extraction_or_consolidation_is_not_undone_by_the_commit(
    memory: Memory,
) -> None:
    await exchange(memory, "my cat is called Mochi", msg_id=1)
    [job_id] = await plan_due(memory.pipeline.ctx, NOW)
    job = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    assert job is not None and job.id == job_id
    forget = await said(memory, "forget my cat", msg_id=3)
    request = recognize(forget.text)
    assert request is not None
    assert (await memory.control(request, forget)).outcome == "forgotten"  # mid-extraction
    await memory.pipeline.run_job(job, NOW)
    assert (await view(memory)).records == {}

    note = await said(memory, "remember that my dog is called Kuro", msg_id=5)
    note_request = recognize(note.text)
    assert note_request is not None
    await memory.control(note_request, note)
    await plan_due(memory.pipeline.ctx, NOW)  # the note's consolidation
    consolidation = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
    assert consolidation is not None and consolidation.phase == "consolidate"
    forget_dog = await said(memory, "forget my dog", msg_id=7)
    dog_request = recognize(forget_dog.text)
    assert dog_request is not None
    assert (await memory.control(dog_request, forget_dog)).outcome == "forgotten"
    await memory.pipeline.run_job(consolidation, NOW)  # mid-consolidation
    state = await view(memory)
    assert state.records == {} and "Kuro" not in state.scopes[SCOPE.key].index.text


async def test_being_recalled_counts_as_use_and_pruning_queues_consolidation(
    memory: Memory,
) -> None:
    await exchange(memory, "the wiki lives at wiki.example.org", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    await exchange(memory, "the tracker lives at bugs.example.org", msg_id=3)
    await memory.pipeline.tick(now=NOW)
    [newer, older] = (await view(memory)).valid_records(SCOPE.key)
    later = NOW + timedelta(days=20)
    assert (await memory.recall(SCOPE, now=later)).mode == "index"
    used = (await view(memory)).records[older.id].last_used_at
    assert used == later  # both were in the index the request was given
    await memory.store.pool.execute(
        "UPDATE memory_records SET last_used_at = $2 WHERE id = $1", newer.id, NOW
    )
    await memory.pipeline.tick(now=NOW + timedelta(days=35))  # newer unused for 35 days
    state = await view(memory)
    assert list(state.records) == [older.id]
    assert (await memory.recall(SCOPE, now=NOW + timedelta(days=35))).memory_ids == [older.id]


async def test_a_forget_while_another_answer_is_written_keeps_that_users_own_words(
    memory: Memory, llm: FakeOpenAI
) -> None:
    moving = await said(memory, "I moved to Lisbon last spring", msg_id=1)  # being answered
    asking = await said(memory, "what is my cat called?", msg_id=2)  # being answered
    forget = await said(memory, "forget my cat", msg_id=3)
    await act(memory, forget)
    await memory.finish(forget, status="succeeded", answer_text="Done", bot_id=42, now=NOW)
    # Both answers land after the forget: either may repeat what was forgotten.
    await memory.finish(
        moving, status="succeeded", answer_text="Lisbon, and Mochi came too", bot_id=42, now=NOW
    )
    await memory.finish(
        asking, status="succeeded", answer_text="Your cat is Mochi", bot_id=42, now=NOW
    )
    await memory.pipeline.tick(now=NOW)
    [extraction] = llm.requests_by_purpose("memory_extraction")
    sent = json.dumps(extraction, ensure_ascii=False)
    assert "I moved to Lisbon last spring" in sent  # not lost with the answer
    assert "Mochi" not in sent and "what is my cat called" not in sent
    assert await unexpected(memory, texts=["Mochi"], after="forget") == []


async def test_an_answer_written_after_its_source_was_removed_is_kept_content_free(
    memory: Memory,
) -> None:
    await exchange(memory, "my bike lock code is 4711", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    asking = await said(memory, "what is my lock code?", msg_id=3)
    turn = memory.turn(asking)
    await turn.context_messages()  # the frozen index holds the code's record
    got = await turn.execute({"id": "q", "function": {"name": "query_memories", "arguments": "{}"}})
    assert "4711" in got["content"]
    await memory.remove_messages(CHAT, [1], bot_id=42)
    # The model saw the code before the removal and repeats it after.
    await memory.finish(
        asking, status="succeeded", answer_text="Your lock code is 4711", bot_id=42, now=NOW
    )
    await memory.pipeline.tick(now=NOW)
    assert await unexpected(memory, texts=["4711"]) == []
    answer = await memory.store.pool.fetchrow(
        "SELECT text, content_hash FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1"
    )
    assert answer["text"] is None and answer["content_hash"]


async def test_traces_are_not_found_by_chance_in_digests_and_record_ids(memory: Memory) -> None:
    await exchange(memory, "we met at the cafe", msg_id=1)
    await exchange(memory, "lunch is at noon", msg_id=3)
    await memory.pipeline.tick(now=NOW)
    pool = memory.store.pool
    # Hex that happens to spell a word: in digests, in a snapshot's source hashes, in IDs.
    await pool.execute("UPDATE memory_jobs SET input_hash = 'cafe' || input_hash")
    await pool.execute(
        "UPDATE memory_jobs SET snapshot = jsonb_set(snapshot, '{sources,0,hash}', '\"0cafe0\"')"
    )
    await pool.execute("UPDATE messages SET content_hash = 'cafe' WHERE text LIKE 'lunch%'")
    await pool.execute("UPDATE requests SET recall_memory_ids = ARRAY['mem_cafe01']")
    await pool.execute("UPDATE memory_records SET fingerprint = 'cafe' || fingerprint")
    await pool.execute(
        "UPDATE usage_ledger SET idempotency_key = idempotency_key || ':0cafe000-0000-0000-0000'"
        "'-000000000000'"
    )
    found = {t.table + "." + t.column for t in await unexpected(memory, texts=["cafe"])}
    assert "messages.text" in found  # the words themselves are found, where they are
    chance = {
        "memory_jobs.input_hash",
        "memory_jobs.snapshot",
        "messages.content_hash",
        "memory_records.fingerprint",
        "usage_ledger.idempotency_key",
    }
    assert not found & (chance | {"requests.recall_memory_ids"})


async def test_forgetting_a_note_by_id_reaches_answers_and_records_built_on_it(
    memory: Memory,
) -> None:
    note = await said(memory, "remember that my cat is called Mochi", msg_id=1)
    made = await act(memory, note)
    await memory.finish(
        note, status="succeeded", answer_text="Noted", bot_id=42, now=NOW, kind="memory_control"
    )
    asking = await said(memory, "what is my pet called?", msg_id=3)
    await memory.turn(asking).start(now=NOW)  # given the note
    await memory.finish(
        asking, status="succeeded", answer_text="Your cat is called Mochi.", bot_id=42, now=NOW
    )
    await memory.pipeline.tick(now=NOW)  # a record built on that answer
    # An unrelated exchange, also given the note (recall shows the whole index).
    moving = await said(memory, "I moved to Lisbon last spring", msg_id=5)
    await memory.turn(moving).start(now=NOW)
    await memory.finish(moving, status="succeeded", answer_text="Nice city!", bot_id=42, now=NOW)
    await memory.pipeline.tick(now=NOW)  # and one on this one
    records = (await view(memory)).valid_records(SCOPE.key)
    assert len(records) >= 2 and any("Lisbon" in r.summary for r in records)
    # Forgotten by ID (the screen's button, the CLI): nothing names the subject.
    result = await forget_record(
        memory.store, SCOPE, made.memory_ids[0], actor_id=CHAT, who=OWNER, now=NOW
    )
    assert result.outcome == "forgotten"
    left = (await view(memory)).valid_records(SCOPE.key)
    assert [r for r in left if "Mochi" in r.summary] == []
    assert any("Lisbon" in r.summary for r in left)  # the unrelated exchange stays
    assert await unexpected(memory, texts=["Mochi"], after="forget") == []
    assert await unexpected(memory, source_ids=[note.source_id], after="forget") == []
    await memory.pipeline.tick(now=NOW)  # and nothing brings it back
    left = (await view(memory)).valid_records(SCOPE.key)
    assert [r for r in left if "Mochi" in r.summary] == []


async def test_after_a_purge_the_chats_auto_delete_timer_still_holds(db_url: str) -> None:
    group = -100321
    async with running(db_url, workspace_setting=None) as env:
        env.emu.set_auto_delete(group, 60)
        env.emu.push_message(
            chat_type="supergroup", chat_id=group, user_id=1001, text="@memory_test_bot first"
        )
        await env.emu.wait_for_sent(1)
        assert await env.memory.purge_workspace(default_workspace(42, group))
        env.emu.push_message(
            chat_type="supergroup", chat_id=group, user_id=1001, text="@memory_test_bot again"
        )
        await env.emu.wait_for_sent(2)
        rows = await env.rows("SELECT retain_until FROM messages")
        assert rows and all(r["retain_until"] is not None for r in rows)
