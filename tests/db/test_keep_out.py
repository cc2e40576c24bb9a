"""Requests not to remember ("don't remember that", "off the record: ..."): which exchange one
means, that it and the request reach no extraction input, chat history or later prompt, who may
ask, and what happens to a record already built on it. On a real database and the fake model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from bot_memory.access import Membership
from bot_memory.agent.tools import ToolContext
from bot_memory.intents import MemoryRequest, recognize
from bot_memory.pipeline.discovery import plan_due
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import view

PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-9, topic_id=0)
OWNER = Membership(member=True, admin=True, reason="private-owner")
MEMBER = Membership(member=True, admin=False, reason="status:member")
ADMIN = Membership(member=True, admin=True, reason="status:administrator")


@pytest.fixture
async def memory(db_url: str, llm: FakeOpenAI) -> AsyncIterator[Memory]:
    mem = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m")
    )
    yield mem
    await mem.close()


_telegram_ids = iter(range(1000, 100_000))


async def exchange(
    memory: Memory,
    text: str,
    *,
    scope: Scope = PRIVATE,
    speaker: int = 7,
    thread: int = 0,
    answer: str | None = None,
) -> SourceMessage:
    """A directed message and the bot's answer, both with Telegram IDs (as the adapter keeps)."""
    source = await memory.record(
        scope,
        text=text,
        speaker_id=speaker,
        thread_id=thread,
        telegram_message_id=next(_telegram_ids),
    )
    assert source is not None
    await memory.begin(source)
    await memory.finish(
        source,
        status="succeeded",
        answer_text=answer or f"noted: {text}",
        answer_telegram_id=next(_telegram_ids),
        bot_id=42,
    )
    return source


async def ask_not_to_remember(
    memory: Memory,
    text: str,
    *,
    scope: Scope = PRIVATE,
    speaker: int = 7,
    thread: int = 0,
    who: Membership = OWNER,
    replied_to: int | None = None,
) -> tuple[SourceMessage, str, list[str]]:
    """Say a request not to remember, carry it out and answer it, as the adapter does:
    (its source, the outcome, the records forgotten with it)."""
    request = recognize(text)
    assert request is not None and request.action == "keep_out", text
    source = await memory.record(
        scope,
        text=text,
        speaker_id=speaker,
        thread_id=thread,
        telegram_message_id=next(_telegram_ids),
    )
    assert source is not None
    await memory.begin(source, kind="memory_control")
    result = await memory.control(request, source, who=who, replied_to=replied_to)
    await memory.finish(
        source,
        status="succeeded",
        answer_text="Okay, that stays out of my memory.",
        answer_telegram_id=next(_telegram_ids),
        bot_id=42,
    )
    return source, result.outcome, result.memory_ids


def extraction_inputs(llm: FakeOpenAI) -> str:
    return json.dumps(llm.requests_by_purpose("memory_extraction"), ensure_ascii=False)


async def telegram_id_of_answer(memory: Memory, source: SourceMessage) -> int:
    found: int = await memory.store.pool.fetchval(
        "SELECT a.telegram_message_id FROM requests r JOIN messages a"
        " ON a.workspace_id = r.workspace_id AND a.id = r.answer_message_id"
        " WHERE r.workspace_id = 'test' AND r.id = $1",
        source.request_id,
    )
    return found


async def tombstoned(memory: Memory) -> set[int]:
    rows = await memory.store.pool.fetch("SELECT message_id FROM tombstones")
    return {r["message_id"] for r in rows}


async def test_the_previous_exchange_and_the_request_reach_no_extraction(
    memory: Memory, llm: FakeOpenAI
) -> None:
    secret = await exchange(memory, "my salary is 5000 a month", answer="5000, got it")
    source, outcome, forgotten = await ask_not_to_remember(memory, "don't remember that")
    assert (outcome, forgotten) == ("kept_out", [])
    await exchange(memory, "I like green tea")
    await memory.pipeline.tick()

    sent = extraction_inputs(llm)
    assert "green tea" in sent
    for text in ("5000", "salary", "don't remember that", "stays out of my memory"):
        assert text not in sent, text
    state = await view(memory)
    assert state.records and all("5000" not in r.summary for r in state.records.values())
    # The exchange and the request are tombstones, and so is the answer that repeated it.
    answer = await memory.store.pool.fetchval(
        "SELECT answer_message_id FROM requests WHERE id = $1", secret.request_id
    )
    assert {secret.message_id, answer, source.message_id} <= await tombstoned(memory)
    flagged = await memory.store.pool.fetch(
        "SELECT id FROM requests WHERE answer_forgotten ORDER BY id"
    )
    assert [r["id"] for r in flagged] == [secret.request_id, source.request_id]


async def test_a_later_prompt_and_the_chat_history_tool_never_show_them(memory: Memory) -> None:
    secret = await exchange(memory, "my bank pin hint is the dog", answer="the dog, noted")
    await ask_not_to_remember(memory, "please don't save that, it's private")
    await exchange(memory, "my bank is in Porto")
    later = await memory.record(PRIVATE, text="what did I say about my bank?", speaker_id=7)
    assert later is not None
    await memory.begin(later)

    history = await memory.store.history(
        PRIVATE, before_message_id=later.message_id, limit=20, now=datetime.now(UTC)
    )
    texts = [m.text for m in history]
    assert "my bank is in Porto" in texts
    assert not [t for t in texts if "dog" in t or "private" in t or "stays out" in t]
    found = await memory.tools.execute(
        "query_chat_history", json.dumps({"query": "bank"}), ToolContext(source=later), call_id="h"
    )
    shown = json.dumps(found)
    assert "Porto" in shown and "dog" not in shown and "private" not in shown
    assert f"m{secret.message_id}" not in shown


async def test_off_the_record_keeps_out_only_the_message_itself(
    memory: Memory, llm: FakeOpenAI
) -> None:
    await exchange(memory, "I moved to Porto in May")
    source, outcome, _ = await ask_not_to_remember(memory, "off the record: my salary is 5000")
    assert outcome == "kept_out"
    assert await tombstoned(memory) == {source.message_id}
    await memory.pipeline.tick()
    sent = extraction_inputs(llm)
    assert "Porto" in sent and "5000" not in sent and "off the record" not in sent


async def test_a_statement_is_an_ordinary_message_extracted_as_before(
    memory: Memory, llm: FakeOpenAI
) -> None:
    for text in ("I don't remember that", "я не помню это", "我不记得这个", "я не пам'ятаю це"):
        assert recognize(text) is None
        await exchange(memory, text)
    await memory.pipeline.tick()
    sent = extraction_inputs(llm)
    for text in ("I don't remember that", "я не помню это", "我不记得这个", "я не пам'ятаю це"):
        assert text in sent
    assert not await tombstoned(memory)


async def test_the_message_replied_to_is_meant_not_the_last_one(
    memory: Memory, llm: FakeOpenAI
) -> None:
    first = await exchange(memory, "my therapist is Dr. Ann")
    await exchange(memory, "I like green tea")
    # Replying to the bot's answer means that exchange too.
    answer_id = await telegram_id_of_answer(memory, first)
    _, outcome, _ = await ask_not_to_remember(memory, "не запоминай это", replied_to=answer_id)
    assert outcome == "kept_out"
    await memory.pipeline.tick()
    sent = extraction_inputs(llm)
    assert "green tea" in sent and "Dr. Ann" not in sent and "не запоминай" not in sent


async def test_a_reply_to_nothing_memory_holds_keeps_out_the_request_alone(
    memory: Memory, llm: FakeOpenAI
) -> None:
    await exchange(memory, "I like green tea")
    source, outcome, _ = await ask_not_to_remember(memory, "别记这个", replied_to=999_999_999)
    assert outcome == "kept_out"
    assert await tombstoned(memory) == {source.message_id}


async def test_the_previous_message_is_the_one_in_the_same_topic(
    memory: Memory, llm: FakeOpenAI
) -> None:
    # A private scope spans the chat's Topics: "the previous message" is that Topic's.
    await exchange(memory, "I collect old maps", thread=11)
    secret = await exchange(memory, "my salary is 5000", thread=12)
    await exchange(memory, "I like green tea", thread=11)
    source, _, _ = await ask_not_to_remember(memory, "не запам'ятовуй це", thread=12)
    assert secret.message_id in await tombstoned(memory)
    await memory.pipeline.tick()
    sent = extraction_inputs(llm)
    assert "old maps" in sent and "green tea" in sent and "5000" not in sent
    assert source.message_id in await tombstoned(memory)


async def test_in_a_group_only_the_speaker_or_an_admin_keeps_an_exchange_out(
    memory: Memory,
) -> None:
    theirs = await exchange(memory, "@bot I'm interviewing at Acme", scope=GROUP, speaker=1)
    reply = theirs.telegram_message_id
    _, outcome, _ = await ask_not_to_remember(
        memory, "@bot don't remember that", scope=GROUP, speaker=2, who=MEMBER, replied_to=reply
    )
    assert outcome == "not_allowed"
    assert not await tombstoned(memory)  # nothing changed, not even the request

    _, outcome, _ = await ask_not_to_remember(
        memory, "@bot don't remember that", scope=GROUP, speaker=1, who=MEMBER, replied_to=reply
    )
    assert outcome == "kept_out"
    assert theirs.message_id in await tombstoned(memory)

    other = await exchange(memory, "@bot my phone is 555-0100", scope=GROUP, speaker=3)
    _, outcome, _ = await ask_not_to_remember(
        memory,
        "@bot off the record",
        scope=GROUP,
        speaker=2,
        who=ADMIN,
        replied_to=other.telegram_message_id,
    )
    assert outcome == "kept_out"  # an admin may, as an admin may forget it
    assert other.message_id in await tombstoned(memory)


async def test_a_message_extracted_before_is_forgotten_with_its_record(
    memory: Memory, llm: FakeOpenAI
) -> None:
    secret = await exchange(memory, "my salary is 5000 a month")
    await memory.pipeline.tick()
    [record] = (await view(memory)).valid_records(PRIVATE.key)
    assert "5000" in record.summary

    _, outcome, forgotten = await ask_not_to_remember(
        memory, "don't remember that", replied_to=secret.telegram_message_id
    )
    assert (outcome, forgotten) == ("kept_out", [record.id])
    state = await view(memory)
    assert record.id not in state.records
    assert secret.message_id in await tombstoned(memory)
    exported = json.dumps(
        [r.model_dump(mode="json") for r in state.records.values()], ensure_ascii=False
    )
    assert "5000" not in exported


async def test_a_group_record_with_someone_elses_words_is_not_taken_by_a_member(
    memory: Memory, llm: FakeOpenAI
) -> None:
    mine = await exchange(memory, "@bot we ship on Friday", scope=GROUP, speaker=1)
    await exchange(memory, "@bot and I'll write the notes", scope=GROUP, speaker=2)
    await memory.pipeline.tick()
    [record] = (await view(memory)).valid_records(GROUP.key)
    assert set(record.speaker_ids) == {1, 2}

    _, outcome, ids = await ask_not_to_remember(
        memory,
        "@bot don't remember that",
        scope=GROUP,
        speaker=1,
        who=MEMBER,
        replied_to=mine.telegram_message_id,
    )
    assert (outcome, ids) == ("cascade_not_allowed", [record.id])
    assert record.id in (await view(memory)).records and not await tombstoned(memory)


async def test_an_extraction_planned_before_the_request_is_stopped_and_planned_again(
    memory: Memory, llm: FakeOpenAI
) -> None:
    await exchange(memory, "I like green tea")
    await exchange(memory, "my salary is 5000")
    assert await plan_due(memory.pipeline.ctx, datetime.now(UTC))  # planned, not run yet
    await ask_not_to_remember(memory, "don't remember that")
    # Stopped, and (as a forget does) its row holding the message is scrubbed.
    assert not await memory.store.pool.fetch("SELECT 1 FROM memory_jobs")
    await memory.pipeline.tick()
    sent = extraction_inputs(llm)
    assert "green tea" in sent and "5000" not in sent


async def test_memory_control_is_what_the_adapter_calls(memory: Memory) -> None:
    # The core entry point with the request as recognized: a subject means the message itself.
    source = await memory.record(PRIVATE, text="off the record: I'm pregnant", speaker_id=7)
    assert source is not None
    await exchange(memory, "unrelated")  # newer than the request: never "the previous one"
    result = await memory.control(
        MemoryRequest("keep_out", "en", "I'm pregnant"), source, who=OWNER
    )
    assert result.outcome == "kept_out" and result.changed
    assert await tombstoned(memory) == {source.message_id}
