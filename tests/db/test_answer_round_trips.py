"""What answering one directed message sends to PostgreSQL, statement by statement, with a
model that answers at once: every statement is a round trip on the bot's path, and on a busy
machine each wakes a server process the bot then waits behind."""

from __future__ import annotations

from datetime import UTC, datetime

from bot_memory.scopes import Scope
from bot_memory.service import Memory
from tests.support.fake_openai import FakeOpenAI
from tests.support.statement_log import CountingPool

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
NOW = datetime.now(UTC)


async def test_an_answer_in_one_round_is_five_statements_after_the_record(
    memory: Memory, llm: FakeOpenAI
) -> None:
    # Something to recall (a note), used once already so recall does not mark it again.
    note = await memory.record(SCOPE, text="remember that the bike is blue", speaker_id=7)
    assert note is not None
    await memory.agent.answer(memory.turn(note))
    await memory.finish(note, status="succeeded", answer_text="Noted.", now=NOW)
    counted = CountingPool(memory.store.pool)
    memory.store.pool = counted  # type: ignore[assignment]
    source = await memory.record(SCOPE, text="what colour is the bike?", speaker_id=7)
    assert source is not None
    await counted.taken()
    answer = await memory.agent.answer(memory.turn(source))
    assert answer.rounds == 1
    await memory.finish(source, status="succeeded", answer_text=answer.text, now=NOW)
    assert await counted.taken() == [
        "SELECT recall",  # the scope's memory block
        "WITH started",  # running, pinned, given what recall froze; the conversation before
        "bm_open_attempt",
        "bm_close_attempt",
        "bm_finish_answered",  # the answer, what it depends on, the scope's wake-up
    ]


async def test_a_turn_someone_else_started_is_answered_with_the_agents_own_history(
    memory: Memory, llm: FakeOpenAI
) -> None:
    # A host that started the turn with a window of its own: the agent reads its own.
    for text in ("my bike is blue", "my car is red", "my boat is green"):
        said = await memory.record(SCOPE, text=text, speaker_id=7)
        assert said is not None
        await memory.finish(said, status="succeeded", answer_text="ok", now=NOW)
    source = await memory.record(SCOPE, text="what colour is the bike?", speaker_id=7)
    assert source is not None
    turn = memory.turn(source)
    await turn.start(history=1)
    assert [m.text for m in turn.history_at_start or []] == ["ok"]
    await memory.agent.answer(turn)
    sent = [m["content"] for m in llm.requests[-1]["messages"]]
    assert any("my bike is blue" in c for c in sent), sent
