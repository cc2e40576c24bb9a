"""The busy group's arrangement (--busy-group), a pure function over a tiny dataset: the
conversation asked about, then two others talked after it in the same Topic, then its
questions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot_memory.evaluation import busy_group, formats
from bot_memory.evaluation.busy_group import CHATTER_SESSION_GAP
from bot_memory.evaluation.formats import TURN_SECONDS, DatasetError
from bot_memory.settings import MemorySettings


def turn(conv: str, id: str, speaker: str, text: str) -> dict[str, str]:  # noqa: A002
    return {"type": "turn", "conversation": conv, "id": id, "speaker": speaker, "text": text}


def session(conv: str, date: str) -> dict[str, str]:
    return {"type": "session", "conversation": conv, "date": date}


LINES = [
    {"type": "conversation", "id": "pets", "kind": "shared"},
    session("pets", "2024-03-01T09:00:00+00:00"),
    turn("pets", "t1", "Ann", "My parrot Kiwi speaks Portuguese."),
    turn("pets", "t2", "Ben", "Nice!"),
    session("pets", "2024-03-05T09:00:00+00:00"),
    turn("pets", "t3", "Ann", "Kiwi learned a new word: obrigado."),
    {
        "type": "question",
        "conversation": "pets",
        "id": "q1",
        "text": "Which word did Kiwi learn?",
        "answer": "obrigado",
        "evidence": ["t1", "t3"],
    },
    # Talked earlier than pets, and with an Ann of its own: moved after pets, renamed.
    {"type": "conversation", "id": "chess", "kind": "shared"},
    session("chess", "2023-01-01T18:00:00+00:00"),
    turn("chess", "t1", "Cleo", "I play the Sicilian."),
    turn("chess", "t2", "Ann", "I prefer the French."),
    {
        "type": "question",
        "conversation": "chess",
        "id": "q1",
        "text": "Which opening does Cleo play?",
        "answer": "the Sicilian",
        "evidence": ["t1"],
    },
    {"type": "conversation", "id": "garden", "kind": "shared"},
    session("garden", "2025-06-01T07:00:00+00:00"),
    turn("garden", "g1", "Eve", "The tomatoes are in."),
    session("garden", "2025-06-10T07:00:00+00:00"),
    turn("garden", "g2", "Finn", "The basil is up."),
]


@pytest.fixture
def dataset(tmp_path: Path) -> formats.Dataset:
    path = tmp_path / "three.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in LINES) + "\n")
    return formats.load(path)


def test_two_other_conversations_follow_in_the_same_topic_before_the_questions(
    dataset: formats.Dataset,
) -> None:
    pets, chess, garden = busy_group.arrange(dataset).conversations
    assert (pets.id, pets.kind, pets.talked_after) == ("pets", "shared", ("chess", "garden"))
    assert chess.talked_after == ("garden", "pets") and garden.talked_after == ("pets", "chess")
    # Only the first conversation's questions (and its turn IDs as evidence).
    assert [q.id for q in pets.questions] == ["q1"] and pets.questions[0].evidence == (
        ("t1",),
        ("t3",),
    )
    assert [t.id for t in pets.turns] == [
        "t1",
        "t2",
        "t3",
        "chess/t1",
        "chess/t2",
        "garden/g1",
        "garden/g2",
    ]
    assert [t.chatter for t in pets.turns] == [None] * 3 + ["chess"] * 2 + ["garden"] * 2
    # Other people: a name already in the Topic is another person, so another speaker.
    assert pets.speakers == ("Ann", "Ben", "Cleo", "Ann (chess)", "Eve", "Finn")
    assert [t.speaker for t in pets.turns[3:5]] == ["Cleo", "Ann (chess)"]
    # After it in time: each chatter session an hour after what came before, its turns
    # keeping their spacing, so the first conversation lies under newer talk.
    t3, c1, c2, g1, g2 = pets.turns[2:]
    assert t3.at == datetime(2024, 3, 5, 9, 0, tzinfo=UTC)
    assert c1.at == t3.at + CHATTER_SESSION_GAP
    assert c2.at == c1.at + timedelta(seconds=TURN_SECONDS)
    assert g1.at == c2.at + CHATTER_SESSION_GAP and g2.at == g1.at + CHATTER_SESSION_GAP
    # Past the bot's idle window: each chatter session is extracted on its own.
    idle = MemorySettings.model_fields["idle_window_seconds"].default
    assert timedelta(seconds=idle) < CHATTER_SESSION_GAP
    assert pets.session_dates["garden/session_2"] == g2.at


def test_a_busy_group_needs_another_conversation(dataset: formats.Dataset) -> None:
    alone = formats.limit(dataset, conversations=1)
    with pytest.raises(DatasetError, match="--busy-group"):
        busy_group.arrange(alone)
    # The chatter may come from the whole dataset when only some conversations are asked about.
    [pets] = busy_group.arrange(alone, pool=dataset.conversations).conversations
    assert pets.talked_after == ("chess", "garden")
