"""Conversations kept whole whatever the worker's lag, and a byte ceiling that holds.

A conversation ends where the idle window passes between an answer and the next message. A
worker that was down while several conversations happened must make the records a punctual
worker made, one per conversation; and an extraction request is never more than the ceiling
plus its fixed prompt, however short and many the messages.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from bot_memory.models.base import dumps
from bot_memory.pipeline.batching import Exchange, Pair, first_conversation, next_batch
from bot_memory.pipeline.prompts import (
    planned_entry_bytes,
    source_entries,
    source_entry,
    source_entry_bytes,
    utf8_len,
)
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SnapshotSource
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import view
from tests.support.token_builders import crc32_token

IDLE = timedelta(minutes=30)
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CONVERSATIONS = [
    ["I bought a boat", "it is called Aurora", "it sleeps four"],
    ["my sister Ana visits in May", "she likes green tea"],
    ["we picked Lisbon for the offsite", "the budget is 4,000 euros", "Ana will book it"],
]


def test_a_conversation_ends_at_an_idle_gap() -> None:
    at = [
        T0,
        T0 + timedelta(minutes=10),
        T0 + timedelta(hours=3),
        T0 + timedelta(hours=3, minutes=5),
    ]
    exchanges = [Exchange(i, t, t + timedelta(seconds=5)) for i, t in enumerate(at)]
    assert first_conversation(exchanges, IDLE) == 2
    assert first_conversation(exchanges[2:], IDLE) == 2  # the rest is one conversation
    # Exactly the idle window apart ends it too; a zero window never splits.
    edge = [Exchange(1, T0, T0), Exchange(2, T0 + IDLE, T0 + IDLE)]
    assert first_conversation(edge, IDLE) == 1
    assert first_conversation(exchanges, timedelta(0)) == 4


@pytest.fixture
async def memory(db_url: str, llm: FakeOpenAI) -> AsyncIterator[Memory]:
    mem = await Memory.open(
        make_settings(
            db_url,
            llm_base_url=llm.base_url,
            llm_api_key="k",
            llm_model="m",
            idle_window_seconds=IDLE.total_seconds(),
        )
    )
    yield mem
    await mem.close()


async def play(memory: Memory, scope: Scope, *, punctual: bool) -> datetime:
    """The three conversations, hours apart, on an injected clock; a punctual worker ticks once
    each conversation has been idle for the window, a late one only at the end."""
    clock = T0
    for texts in CONVERSATIONS:
        for text in texts:
            source = await memory.record(scope, text=text, speaker_id=7, sent_at=clock)
            assert source is not None
            await memory.begin(source)
            clock += timedelta(seconds=5)
            await memory.finish(
                source, status="succeeded", answer_text=f"noted: {text}", bot_id=42, now=clock
            )
            clock += timedelta(minutes=2)
        if punctual:
            await settle(memory, clock + IDLE)
        clock += timedelta(hours=5)
    await settle(memory, clock)
    return clock


async def settle(memory: Memory, now: datetime) -> None:
    for _ in range(20):
        report = await memory.pipeline.tick(now=now)
        if not report.planned and not report.finished:
            return


async def records_of(memory: Memory, scope: Scope) -> list[tuple[str, str, list[str]]]:
    """Each record as (title, summary, texts of the messages it cites), oldest first."""
    records = sorted(
        (await view(memory)).valid_records(scope.key), key=lambda r: (r.created_at, r.id)
    )
    texts = dict(
        await memory.store.pool.fetch(
            "SELECT 'm' || id, text FROM messages WHERE scope_key = $1", scope.key
        )
    )
    return [(r.title, r.summary, [texts[c] for c in r.cited]) for r in records]


async def test_a_late_worker_makes_the_records_a_punctual_one_makes(
    memory: Memory, llm: FakeOpenAI
) -> None:
    punctual = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
    late = Scope(workspace="test", bot_id=42, kind="private", chat_id=8, user_id=8)
    await play(memory, punctual, punctual=True)
    await play(memory, late, punctual=False)
    on_time, behind = await records_of(memory, punctual), await records_of(memory, late)
    assert len(on_time) == len(CONVERSATIONS)  # one record per conversation
    assert behind == on_time
    # The late worker's requests each held one conversation, oldest first.
    batches = [
        {s["text"] for s in json.loads(r["messages"][-1]["content"])["sources"]}
        for r in llm.requests_by_purpose("memory_extraction")
    ]
    late_batches = batches[len(CONVERSATIONS) :]
    assert [b & set(CONVERSATIONS[i]) for i, b in enumerate(late_batches)] == [
        set(c) for c in CONVERSATIONS
    ]


async def test_an_open_request_holds_only_what_comes_after_it(memory: Memory) -> None:
    scope = Scope(workspace="test", bot_id=42, kind="private", chat_id=9, user_id=9)
    for text in CONVERSATIONS[0]:
        source = await memory.record(scope, text=text, speaker_id=9, sent_at=T0)
        assert source is not None
        await memory.begin(source)
        await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42, now=T0)
    later = T0 + timedelta(hours=2)
    still = await memory.record(scope, text="and one more thing", speaker_id=9, sent_at=later)
    assert still is not None
    await memory.begin(still)  # being answered: the conversation it opens is not finished
    await settle(memory, later + timedelta(minutes=1))
    [record] = (await view(memory)).valid_records(scope.key)
    assert "Aurora" in record.summary and "one more thing" not in record.summary


async def test_the_byte_ceiling_counts_everything_a_source_carries(
    db_url: str, llm: FakeOpenAI
) -> None:
    ceiling = 6_000
    memory = await Memory.open(
        make_settings(
            db_url,
            llm_base_url=llm.base_url,
            llm_api_key="k",
            llm_model="m",
            batch_max_bytes=ceiling,
        )
    )
    scope = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-5, topic_id=3)
    try:
        for i in range(300):  # short messages: their IDs, roles and dates outweigh their text
            source = await memory.record(scope, text=f"ok {i}", speaker_id=100 + i % 7, thread_id=3)
            assert source is not None
            await memory.begin(source)
            await memory.finish(source, status="succeeded", answer_text="👍", bot_id=42)
        for _ in range(40):
            report = await memory.pipeline.tick()
            if not report.planned and not report.finished:
                break
        requests = llm.requests_by_purpose("memory_extraction")
        assert len(requests) > 1
        extracted = 0
        for body in requests:
            content = body["messages"][-1]["content"]
            document = json.loads(content)
            fixed = utf8_len(dumps({**document, "sources": [], "existing_memories": []}))
            assert utf8_len(content) <= ceiling + fixed
            extracted += len(document["sources"])
        assert extracted == 600  # nothing lost to the ceiling: every pair in some batch
        assert any(json.loads(b["messages"][-1]["content"])["existing_memories"] for b in requests)
    finally:
        await memory.close()


def side(i: int, role: str) -> SnapshotSource:
    return SnapshotSource(
        id=f"m{i}",
        message_id=i,
        request_id=i // 2,
        hash="h",
        role=role,  # type: ignore[arg-type]
        speaker_id=1,
        thread_id=0,
        created_at=T0,
    )


def test_a_batch_holds_no_more_sources_than_an_answer_may_cite() -> None:
    pairs = [Pair(side(2 * i, "user"), side(2 * i + 1, "assistant"), "k", "") for i in range(150)]
    batch = next_batch(pairs, max_bytes=10**9, max_sources=200)
    assert len(batch.pairs) == 100 and batch.remaining == 50


GITHUB_KEY = crc32_token(random.Random("tail"), "gh" + "p_")
# A speaker's consecutive messages are redacted together; a short value the message before
# labelled becomes a longer marker, so such a text is larger sent than read alone.
LABEL_THEN_VALUE = [
    ("мой пароль:", "q1w2e3 вот"),
    ('<add key="Password"', ' value="p4ss" />'),
    ("curl -u", "bob:pw1 https://example.com"),
    (f"the key is {GITHUB_KEY[:-1]}", GITHUB_KEY[-1]),  # a key's last character
]


@pytest.mark.parametrize(("label", "value"), LABEL_THEN_VALUE)
def test_no_source_is_sent_larger_than_the_planner_counted(label: str, value: str) -> None:
    texts = {0: label, 1: "ok", 2: value, 3: "ok"}
    sources = [side(0, "user"), side(1, "assistant"), side(2, "user"), side(3, "assistant")]
    entries = source_entries(sources, texts)
    assert entries[2]["text"] != source_entry(sources[2], value)["text"]  # read together
    assert source_entry_bytes(entries[2]) > source_entry_bytes(source_entry(sources[2], value))
    for source, entry in zip(sources, entries, strict=True):
        assert source_entry_bytes(entry) <= planned_entry_bytes(source, texts[source.message_id])


@pytest.mark.parametrize(("label", "value"), LABEL_THEN_VALUE)
def test_a_batch_of_messages_redacted_together_stays_under_the_ceiling(
    label: str, value: str
) -> None:
    pairs = [
        Pair(side(0, "user"), side(1, "assistant"), label, "ok"),
        Pair(side(2, "user"), side(3, "assistant"), value, "ok"),
    ]
    texts = {0: label, 1: "ok", 2: value, 3: "ok"}
    # the ceiling is what both pairs take with each text read alone
    ceiling = sum(
        source_entry_bytes(source_entry(s, texts[s.message_id])) for p in pairs for s in p.sources
    )
    batch = next_batch(pairs, max_bytes=ceiling)
    sent = source_entries([s for p in batch.pairs for s in p.sources], texts)
    assert sum(source_entry_bytes(e) for e in sent) <= ceiling
    assert [p.request_id for p in batch.pairs + batch.skipped] == [0]  # the second waits


async def test_a_request_finished_while_its_scope_is_planned_is_not_lost(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planner reads the scope, then settles when to look again; a request that finishes in
    between (on another connection, as ingress does) must keep the wake-up it scheduled."""
    from bot_memory.pipeline import discovery

    scope = Scope(workspace="test", bot_id=42, kind="private", chat_id=11, user_id=11)
    first = await memory.record(scope, text="I bought a boat", speaker_id=11, sent_at=T0)
    assert first is not None
    await memory.begin(first)
    await memory.finish(first, status="succeeded", answer_text="ok", bot_id=42, now=T0)
    second = await memory.record(scope, text="it is called Aurora", speaker_id=11, sent_at=T0)
    assert second is not None
    await memory.begin(second)  # open while the planner looks: it holds the conversation
    planned = discovery._plan_batch

    async def finishing_meanwhile(*args: object, **kwargs: object) -> int | None:
        found = await planned(*args, **kwargs)  # type: ignore[arg-type]
        await memory.finish(second, status="succeeded", answer_text="ok", bot_id=42, now=T0)
        return found

    monkeypatch.setattr(discovery, "_plan_batch", finishing_meanwhile)
    await settle(memory, T0 + IDLE)
    monkeypatch.setattr(discovery, "_plan_batch", planned)
    await settle(memory, T0 + IDLE)
    [record] = (await view(memory)).valid_records(scope.key)
    assert "Aurora" in record.summary  # the wake-up survived: both exchanges extracted
