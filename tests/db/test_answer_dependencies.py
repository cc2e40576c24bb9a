"""An answer depends on the sources of every record it was given, through the records: an answer
adds one row, however many records and sources it was given (flattened, a long conversation's
rows grew with its square), and erasing a source still reaches every answer given a record
built on it, after the record itself is gone."""

from __future__ import annotations

from bot_memory.service import Memory
from tests.db.test_retention import NOW, SCOPE, exchange, said
from tests.support.helpers import view

DEPENDENCIES = (
    "SELECT (SELECT count(*) FROM message_deps) + (SELECT count(*) FROM answer_records)"
    " + (SELECT count(*) FROM given_sources)"
)


async def answered(memory: Memory, text: str, answer: str) -> int:
    """A question answered with every valid record given; the answer's message ID."""
    asking = await said(memory, text)
    await memory.turn(asking).start(now=NOW)
    await memory.finish(asking, status="succeeded", answer_text=answer, bot_id=42, now=NOW)
    row = await memory.store.pool.fetchrow(
        "SELECT answer_message_id, recall_memory_ids FROM requests WHERE id = $1",
        asking.request_id,
    )
    assert row["recall_memory_ids"], "the answer was given records"
    return int(row["answer_message_id"])


async def test_an_answer_adds_one_row_whatever_its_records_and_sources(memory: Memory) -> None:
    await exchange(memory, "my cat is called Mochi and she naps at noon", msg_id=1)
    await exchange(memory, "my cat Mochi is grey", msg_id=3)
    await memory.pipeline.tick(now=NOW)
    records = (await view(memory)).valid_records(SCOPE.key)
    sources = {m for r in records for m in r.message_ids}
    assert len(sources) > len(records), "a record has more than one source"
    await answered(memory, "tell me about my cat", "Mochi naps")
    after_first = await memory.store.pool.fetchval(DEPENDENCIES)
    for n in range(4):
        await answered(memory, f"and what colour is my cat? ({n})", "grey")
    added = await memory.store.pool.fetchval(DEPENDENCIES) - after_first
    assert added == 4


async def test_erasing_a_source_reaches_an_answer_after_its_record_is_gone(
    memory: Memory,
) -> None:
    first = await exchange(memory, "my cat is called Mochi", msg_id=1)
    await memory.pipeline.tick(now=NOW)
    answer = await answered(memory, "tell me about my cat", "Mochi naps at noon")
    # The record goes (replaced, evicted) while the answer given it stays.
    await memory.store.pool.execute("DELETE FROM memory_records")
    report = await memory.privacy_sweep(source_ids=[first.source_id])
    assert report["messages"] == 1 and report["answers"] == 1
    text = await memory.store.pool.fetchval("SELECT text FROM messages WHERE id = $1", answer)
    assert text is None
    for table in ("answer_records", "given_sources", "message_deps"):
        assert await memory.store.pool.fetchval(f"SELECT count(*) FROM {table}") == 0, table
