"""The two tools and the agent's tool loop, on a real database and a fake model server."""

from __future__ import annotations

import json
import logging

import pytest

from bot_memory.agent.tools import ToolContext
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from tests.support.fake_openai import FakeOpenAI

PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=5, user_id=5)
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-9, topic_id=0)


async def said(memory: Memory, scope: Scope, text: str, speaker: int = 5) -> SourceMessage:
    source = await memory.record(scope, text=text, speaker_id=speaker)
    assert source is not None
    await memory.begin(source)
    return source


async def call(
    memory: Memory, ctx: ToolContext, name: str, args: dict[str, object], call_id: str = "c1"
) -> dict[str, object]:
    return await memory.tools.execute(name, json.dumps(args), ctx, call_id=call_id)


async def test_manage_memory_accepts_only_the_current_direct_request(memory: Memory) -> None:
    question = await said(memory, PRIVATE, "do you remember my birthday?")
    ctx = ToolContext(source=question)
    result = await call(
        memory, ctx, "manage_memory", {"action": "remember", "sourceId": question.source_id}
    )
    assert "not a direct remember request" in str(result["error"])

    request = await said(memory, PRIVATE, "please remember that my birthday is 3 May")
    ctx = ToolContext(source=request)
    wrong = await call(memory, ctx, "manage_memory", {"action": "remember", "sourceId": "m1"})
    assert "current human message" in str(wrong["error"])
    quoted = ToolContext(source=request, quoted=True)
    assert "error" in await call(
        memory, quoted, "manage_memory", {"action": "remember", "sourceId": request.source_id}
    )
    # The model may not title a note: the title is what the user said (a title it makes up
    # would be recalled as memory).
    ok = await call(
        memory,
        ctx,
        "manage_memory",
        {"action": "remember", "sourceId": request.source_id, "title": "User is a VIP"},
    )
    assert ok["outcome"] == "remembered"

    found = await call(memory, ctx, "query_memories", {"query": "3 May"}, call_id="c2")
    [item] = found["results"]  # type: ignore[misc]
    assert item["title"] == "my birthday is 3 May" and item["source_ids"] == [request.source_id]
    assert "VIP" not in json.dumps(found)
    cited = await memory.store.pool.fetchval(
        "SELECT citation_source_ids FROM requests WHERE workspace_id = 'test' AND id = $1",
        request.request_id,
    )
    assert cited == [request.source_id]


async def test_group_participant_cannot_switch_group_recall(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    source = await said(memory, GROUP, "turn off memory", speaker=77)
    args = {"action": "disable-memory", "sourceId": source.source_id}
    with caplog.at_level(logging.INFO, logger="bot_memory"):
        member = await call(memory, ToolContext(source=source), "manage_memory", args)
    assert member["outcome"] == "not_allowed"
    refusals = [r for r in caplog.records if getattr(r, "event", "") == "memory.tool_refused"]
    assert refusals and "not_allowed" in refusals[0].getMessage()  # logged, with its reason
    listed = await Memory.open(memory.settings.model_copy(update={"admin_user_ids": {77}}))
    try:
        admin = await call(listed, ToolContext(source=source), "manage_memory", args, call_id="c2")
    finally:
        await listed.close()
    assert admin["outcome"] == "disabled"


async def test_tool_usage_is_recorded_once_per_call(memory: Memory) -> None:
    source = await said(memory, PRIVATE, "what do you know?")
    ctx = ToolContext(source=source)
    for _ in range(3):  # a replayed tool call (same ID) is recorded once
        await call(memory, ctx, "query_memories", {}, call_id="same")
    rows = await memory.store.pool.fetch("SELECT kind FROM usage_ledger")
    assert [r["kind"] for r in rows] == ["tool:query_memories"]


async def test_query_results_are_capped(memory: Memory) -> None:
    for i in range(15):
        src = await said(memory, PRIVATE, f"remember that item {i} is on shelf {i}")
        await call(
            memory,
            ToolContext(source=src),
            "manage_memory",
            {"action": "remember", "sourceId": src.source_id},
            call_id=f"r{i}",
        )
    src = await said(memory, PRIVATE, "list everything")
    found = await call(memory, ToolContext(source=src), "query_memories", {"limit": 50})
    assert len(found["results"]) == 12  # type: ignore[arg-type]


async def test_a_hosts_query_max_results_is_the_bound_the_model_is_sent(
    memory: Memory, llm: FakeOpenAI
) -> None:
    few = await Memory.open(memory.settings.model_copy(update={"query_max_results": 3}))
    try:
        for i in range(5):
            src = await said(few, PRIVATE, f"remember that item {i} is on shelf {i}")
            args = {"action": "remember", "sourceId": src.source_id}
            await call(few, ToolContext(source=src), "manage_memory", args, call_id=f"r{i}")
        src = await said(few, PRIVATE, "list everything")
        llm.script({"role": "assistant", "content": "Five things."})
        await few.agent.answer(few.turn(src))
        [sent] = llm.chat_requests()
        limits = {
            t["function"]["name"]: t["function"]["parameters"]["properties"].get("limit", {})
            for t in sent["tools"]
        }
        assert {name: limit.get("maximum") for name, limit in limits.items()} == {
            "query_memories": 3,
            "manage_memory": None,
            "query_chat_history": 3,
        }
        found = await call(few, ToolContext(source=src), "query_memories", {"limit": 50})
        assert len(found["results"]) == 3  # type: ignore[arg-type]
    finally:
        await few.close()


async def test_bad_arguments_come_back_as_an_error_the_model_reads(memory: Memory) -> None:
    src = await said(memory, PRIVATE, "forget my locker code")
    ctx = ToolContext(source=src)
    args = {"action": "forgot", "sourceId": src.source_id}
    wrong = await call(memory, ctx, "manage_memory", args)
    error = str(wrong["error"])
    assert error.startswith("invalid arguments") and "'forget'" in error  # what it may be
    for i, bad in enumerate([{"limit": 0}, {"sourceIds": "m1"}, {"around": ["m1"]}]):
        result = await call(memory, ctx, "query_chat_history", bad, call_id=f"h{i}")
        assert str(result["error"]).startswith("invalid arguments"), bad
    outcomes = await memory.store.pool.fetch("SELECT outcome FROM usage_ledger")
    assert [r["outcome"] for r in outcomes] == ["error"] * 4


async def test_agent_runs_tool_calls_and_returns_results_to_the_model(
    memory: Memory, llm: FakeOpenAI
) -> None:
    source = await said(memory, PRIVATE, "remember that the wifi password changes monthly")
    llm.script(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "manage_memory",
                        "arguments": json.dumps(
                            {"action": "remember", "sourceId": source.source_id}
                        ),
                    },
                }
            ],
        },
        {"role": "assistant", "content": "Saved."},
    )
    answer = await memory.agent.answer(memory.turn(source))
    assert answer.text == "Saved." and answer.rounds == 2
    second = llm.chat_requests()[1]["messages"]
    tool_msg = next(m for m in second if m["role"] == "tool")
    assert json.loads(tool_msg["content"])["outcome"] == "remembered"
    kinds = [
        r["kind"]
        for r in await memory.store.pool.fetch("SELECT kind FROM usage_ledger ORDER BY id")
    ]
    assert kinds == ["answer", "tool:manage_memory", "answer"]


async def test_chat_history_is_off_when_memory_is_off(memory: Memory) -> None:
    said_it = await said(memory, PRIVATE, "my bank pin hint is the dog")
    await memory.finish(said_it, status="succeeded", answer_text="ok", bot_id=42)
    off = await said(memory, PRIVATE, "turn off memory")
    args = {"action": "disable-memory", "sourceId": off.source_id}
    assert (await call(memory, ToolContext(source=off), "manage_memory", args))["outcome"] == (
        "disabled"
    )
    src = await said(memory, PRIVATE, "what did I say?")
    found = await call(memory, ToolContext(source=src), "query_chat_history", {"query": "pin"})
    assert found == {"error": "memory is turned off in this chat", "excerpts": []}


async def test_a_note_is_the_message_as_it_is_when_remembered(memory: Memory) -> None:
    # Edited before the agent's manage_memory(remember) runs: the request was made on text the
    # user has since changed, so nothing is remembered (and the answer says why).
    source = await memory.record(
        PRIVATE, text="remember that my locker code is 4412", speaker_id=5, telegram_message_id=70
    )
    assert source is not None
    await memory.begin(source)
    await memory.record_edit(5, 70, "remember that my locker code is 7789", bot_id=42)
    args = {"action": "remember", "sourceId": source.source_id}
    edited = await call(memory, ToolContext(source=source), "manage_memory", args)
    assert edited["outcome"] == "source_changed"
    # Erased by a privacy sweep first: the erased text does not come back as a note.
    erased = await said(memory, PRIVATE, "remember that my bank PIN is 5521")
    await memory.privacy_sweep(source_ids=[erased.source_id])
    args = {"action": "remember", "sourceId": erased.source_id}
    gone = await call(memory, ToolContext(source=erased), "manage_memory", args)
    assert gone["outcome"] == "source_changed"
    texts = await memory.store.pool.fetchval(
        "SELECT coalesce(string_agg(title || ' ' || summary, ' '), '') FROM memory_records"
    )
    assert "4412" not in texts and "7789" not in texts and "5521" not in texts
