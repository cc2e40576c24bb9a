"""Defects found by reading the code against the rules, each pinned by a test that failed
before its fix: what the model is shown between tool rounds, what the read-grant hook is told
at recall, tool reads that an erasure must see, an index that outlives a forgotten record,
redaction before JSON in the tool path, and records on forgotten sources."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from bot_memory.access.gate import ItemView, Requester
from bot_memory.agent.tools import ToolContext
from bot_memory.records import MemoryRecord, SourceRef
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from tests.conftest import make_settings
from tests.support.e2e import wait_until
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import ADMIN, act, view

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=5, user_id=5)


async def said(memory: Memory, text: str, answer: str | None = "ok") -> SourceMessage:
    source = await memory.record(SCOPE, text=text, speaker_id=5)
    assert source is not None
    await memory.begin(source)
    if answer is not None:
        await memory.finish(source, status="succeeded", answer_text=answer, bot_id=42)
    return source


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


async def test_a_forget_in_one_tool_round_is_not_shown_in_the_next(
    memory: Memory, llm: FakeOpenAI
) -> None:
    await said(memory, "by the way my cat is called Mochi", answer="Cute name!")
    request = await said(memory, "forget my cat", answer=None)  # a host's model handles it
    llm.script(
        tool_call("manage_memory", {"action": "forget", "sourceId": request.source_id}),
        {"role": "assistant", "content": "Done."},
    )
    await memory.agent.answer(memory.turn(request))
    second = json.dumps(llm.chat_requests()[1]["messages"], ensure_ascii=False)
    assert "Mochi" not in second  # the history the second round got was read again


async def test_the_read_grant_hook_gets_a_records_sources_at_recall(
    db_url: str, llm: FakeOpenAI
) -> None:
    shown: list[ItemView] = []

    def can_read(requester: Requester, item: ItemView) -> bool:
        shown.append(item)
        return not any(s == hidden_source for s in item.source_ids)

    memory = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m"),
        can_read=can_read,
    )
    try:
        note = await said(memory, "remember that the vault code is 4471", answer=None)
        await act(memory, note)
        hidden_source = note.source_id
        asker = await said(memory, "what do you know?", answer=None)
        gate = memory.tools.gate_for(ToolContext(source=asker))
        recall = await memory.recall(SCOPE, gate=gate)
        assert recall.memory_ids == []  # the hook hid it by its source, as the tools would
        assert any(item.kind == "record" and item.source_ids for item in shown)
    finally:
        await memory.close()


async def test_an_erasure_during_a_tool_read_reaches_the_answer(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = await said(memory, "remember that the vault code is 4471", answer=None)
    await act(memory, note)
    asker = await said(memory, "what is the vault code?", answer=None)
    sweep: list[asyncio.Task[Any]] = []
    readable = memory.access.readable

    async def erased_meanwhile(requester: Requester | None, item: ItemView) -> bool:
        # Between the tool's read and its citation, the source is swept (another process).
        if not sweep:
            sweep.append(asyncio.create_task(memory.privacy_sweep(source_ids=[note.source_id])))
            await wait_until(sweep_waits)  # on what the tool's read holds
        return await readable(requester, item)

    async def sweep_waits() -> bool:
        return bool(
            await memory.store.pool.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock'"
            )
        )

    monkeypatch.setattr(memory.access, "readable", erased_meanwhile)
    found = await memory.tools.execute(
        "query_memories", json.dumps({"query": "vault"}), ToolContext(source=asker), call_id="q"
    )
    await sweep[0]
    await memory.finish(asker, status="succeeded", answer_text="The vault code is 4471.", bot_id=42)
    kept = await memory.store.pool.fetchval(
        "SELECT m.text FROM requests r JOIN messages m ON m.id = r.answer_message_id"
        " WHERE r.id = $1",
        asker.request_id,
    )
    assert kept is None, found  # the answer given what was erased is stored content-free


async def test_an_index_loses_what_it_took_from_a_forgotten_record(
    memory: Memory, llm: FakeOpenAI
) -> None:
    first = await said(memory, "my sister Ana lives in Porto")
    second = await said(memory, "my cat is called Mochi")
    await memory.pipeline.tick()  # one record of both; nothing more to say
    [record] = (await view(memory)).valid_records(SCOPE.key)
    del first, second
    # A second record, and an index that names only the first but repeats the other's words.
    note = await said(memory, "remember that my bike is blue", answer=None)
    await act(memory, note)
    llm.script(
        {
            "role": "assistant",
            "content": json.dumps(
                {"index": f"- {record.id}: Ana in Porto; the blue bike", "memory_ids": [record.id]}
            ),
        }
    )
    await memory.pipeline.tick()
    state = (await view(memory)).scopes[SCOPE.key]
    assert "blue bike" in state.index.text
    await act(memory, await said(memory, "turn off memory", answer=None))
    forget = await said(memory, "forget what I said about my bike", answer=None)
    assert (await act(memory, forget)).outcome == "forgotten"
    state = (await view(memory)).scopes[SCOPE.key]
    assert "bike" not in state.index.text  # not kept while memory is off, or ever
    row = await memory.store.pool.fetchval("SELECT recall::text FROM memory_scopes")
    assert "bike" not in row


async def test_tool_results_are_redacted_before_they_become_json(
    memory: Memory, llm: FakeOpenAI
) -> None:
    secret = "Zx9Qw7Er5Ty3Ui1Op"
    await said(memory, f"the db password\t:{secret} for staging")
    asker = await said(memory, "what was the staging password?", answer=None)
    llm.script(
        tool_call("query_chat_history", {"query": "staging password"}),
        {"role": "assistant", "content": "I will not say."},
    )
    await memory.agent.answer(memory.turn(asker))
    assert secret not in json.dumps(llm.chat_requests()[1], ensure_ascii=False)


async def test_a_record_on_a_forgotten_source_is_unavailable(memory: Memory) -> None:
    source = await said(memory, "my cat is called Mochi")
    now = datetime.now(UTC)
    record = MemoryRecord(
        id="mem_pet",
        scope_key=SCOPE.key,
        origin="extracted",
        title="A pet",
        summary="They have a pet",
        speaker_ids=[5],
        thread_ids=[0],
        sources=[SourceRef(message_id=source.message_id, hash="h", speaker_id=5)],
        created_at=now,
        last_used_at=now,
    )
    async with memory.store.locked("test", scope_key=SCOPE.key) as tx:
        await tx.scope(SCOPE)
        await tx.add_record(record, now)
    async with memory.store.locked("test", scope_key=SCOPE.key) as tx:
        await tx.add_tombstones(SCOPE.key, [source.message_id])
    assert (await view(memory)).valid_records(SCOPE.key) == []


@pytest.fixture
async def memory(db_url: str, llm: FakeOpenAI) -> AsyncIterator[Memory]:
    mem = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m")
    )
    yield mem
    await mem.close()


del ADMIN
