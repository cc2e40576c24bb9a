"""The evaluation's dataset readers, on small files written here (no downloads)."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot_memory.evaluation import formats
from bot_memory.evaluation.formats import NOT_MENTIONED, TURN_SECONDS, DatasetError

SAMPLE = Path(formats.__file__).parent / "data" / "sample.jsonl"

LOCOMO = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group."},
                {
                    "speaker": "Melanie",
                    "dia_id": "D1:2",
                    "text": "Look at this!",
                    "img_url": ["https://example.invalid/x.jpg"],
                    "blip_caption": "a photo of a lake",
                },
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [{"speaker": "Melanie", "dia_id": "D2:1", "text": "I painted a sunrise."}],
        },
        "qa": [
            {
                "question": "When did Caroline go to the support group?",
                "answer": "7 May 2023",
                "evidence": ["D1:1"],
                "category": 2,
            },
            {
                "question": "What did Melanie paint?",
                "answer": "a sunrise",
                "evidence": ["D2:1; D1:2"],
                "category": 4,
            },
            {
                "question": "What did Caroline paint?",
                "adversarial_answer": "a sunrise",
                "evidence": ["D2:1"],
                "category": 5,
            },
            {"question": "Which year?", "answer": 2022, "evidence": ["D9:9"], "category": 1},
        ],
    }
]

LONGMEMEVAL = [
    {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "What is my cat's name?",
        "answer": "Mochi",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ["s_b", "s_a"],
        "haystack_dates": ["2023/05/21 (Sun) 09:00", "2023/05/20 (Sat) 02:21"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "My cat is Mochi.", "has_answer": True},
                {"role": "assistant", "content": "Cute!"},
                {"role": "assistant", "content": "Anything else?"},
            ],
            [
                {"role": "assistant", "content": "Hello, how can I help?"},
                {"role": "user", "content": "Hi"},
                {"role": "user", "content": "Recommend a book"},
                {"role": "assistant", "content": "Dune."},
            ],
        ],
        "answer_session_ids": ["s_b"],
    },
    {
        "question_id": "q2_abs",
        "question_type": "temporal-reasoning",
        "question": "When did I sell my boat?",
        "answer": "You did not mention selling a boat.",
        "haystack_session_ids": ["only"],
        "haystack_dates": ["2023/01/02 (Mon) 08:00"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "I like sailing."},
                {"role": "assistant", "content": "Nice."},
            ]
        ],
        "answer_session_ids": ["only"],
    },
]


def write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    if isinstance(data, list) and name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in data) + "\n")
    else:
        path.write_text(json.dumps(data, ensure_ascii=False))
    return path


def test_locomo_is_a_group_with_a_speaker_per_person_and_dated_sessions(tmp_path: Path) -> None:
    dataset = formats.load(write(tmp_path, "locomo10.json", LOCOMO))
    assert dataset.format == "locomo" and dataset.name == "locomo10"
    [conv] = dataset.conversations
    assert conv.kind == "shared" and conv.speakers == ("Caroline", "Melanie")
    first, photo, later = conv.turns
    assert first.at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert photo.at == first.at + timedelta(seconds=TURN_SECONDS)
    assert photo.text == "Look at this! [shares a photo: a photo of a lake]"
    assert later.at == datetime(2023, 6, 27, 10, 37, tzinfo=UTC) and later.session == "session_2"
    assert all(t.answer is None for t in conv.turns)  # acknowledged by the harness
    temporal, single, adversarial, unknown = conv.questions
    assert (temporal.category, temporal.answers, temporal.evidence) == (
        "temporal",
        ("7 May 2023",),
        (("D1:1",),),
    )
    assert single.category == "single-hop" and single.evidence == (("D2:1",), ("D1:2",))
    assert adversarial.abstain and adversarial.answers == (NOT_MENTIONED,)
    assert adversarial.category == "adversarial"
    assert unknown.answers == ("2022",) and unknown.evidence == ()  # D9:9 is not a turn
    # locomo10.json puts a long qa list before the conversation: still told apart.
    first = {"qa": LOCOMO[0]["qa"] * 200} | {k: v for k, v in LOCOMO[0].items() if k != "qa"}
    assert len(json.dumps(first).split('"speaker_a"')[0]) > 20_000
    assert formats.load(write(tmp_path, "qa_first.json", [first])).format == "locomo"


def test_locomo_one_file_per_conversation_a_folder_or_a_zip(tmp_path: Path) -> None:
    second = {**LOCOMO[0], "sample_id": "conv-2"}
    folder = tmp_path / "locomo"
    folder.mkdir()
    write(folder, "conv-2.json", second)  # one sample per file, not a list
    write(folder, "conv-1.json", LOCOMO[0])
    (folder / "notes.txt").write_text("not a conversation")
    dataset = formats.load(folder)
    assert dataset.format == "locomo" and dataset.name == "locomo"
    assert [c.id for c in dataset.conversations] == ["conv-1", "conv-2"]  # by file name
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("locomo10/conv-1.json", json.dumps(LOCOMO[0]))
        z.writestr("locomo10/conv-2.json", json.dumps(second))
    assert [c.id for c in formats.load(archive).conversations] == ["conv-1", "conv-2"]
    assert [c.id for c in formats.load(folder / "conv-2.json").conversations] == ["conv-2"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DatasetError, match="no LoCoMo"):
        formats.load(empty)


def test_locomo_files_with_the_conversation_at_the_top_are_named_by_file(
    tmp_path: Path,
) -> None:
    """The per-conversation files LoCoMo publishes (locomo10_v2): no `conversation` object and
    no sample_id."""
    flat = {
        "speaker_a": "Gina",
        "speaker_b": "Jon",
        "session_1_date_time": "4:04 pm on 20 January, 2023",
        "session_1": [{"speaker": "Jon", "dia_id": "D1:1", "text": "I lost my job."}],
        "session_2_date_time": "2:32 pm on 29 January, 2023",
        "qa": [{"question": "When?", "answer": "19 January", "evidence": ["D1:1"], "category": 2}],
    }
    folder = tmp_path / "dev"
    folder.mkdir()
    (folder / "30.json").write_text(json.dumps(flat))
    (folder / "26.json").write_text(json.dumps(flat | {"speaker_a": "Caroline"}))
    dataset = formats.load(folder)
    assert [c.id for c in dataset.conversations] == ["26", "30"]
    assert dataset.conversations[1].speakers == ("Gina", "Jon")
    assert [t.id for t in dataset.conversations[1].turns] == ["D1:1"]
    assert formats.load(folder / "30.json").conversations[0].id == "30"


def test_locomo_categories_by_number_as_peers_select_them(tmp_path: Path) -> None:
    dataset = formats.load(write(tmp_path, "locomo10.json", LOCOMO))
    peers = formats.limit(dataset, categories=["1,2,3,4"])
    assert {q.category for q in peers.conversations[0].questions} == {
        "temporal",
        "single-hop",
        "multi-hop",
    }  # no adversarial
    named = formats.limit(dataset, categories=["temporal", "5"])
    assert {q.category for q in named.conversations[0].questions} == {"temporal", "adversarial"}


def test_longmemeval_pairs_user_turns_with_the_assistant_turns_after_them(tmp_path: Path) -> None:
    dataset = formats.load(write(tmp_path, "longmemeval_s.json", LONGMEMEVAL))
    assert dataset.format == "longmemeval"
    first, second = dataset.conversations
    assert first.kind == "private" and first.speakers == ("user",)
    # Sessions in time order: s_a (20 May) before s_b (21 May); the greeting before the
    # first user turn is dropped, a user turn with no reply gets none (acknowledged later).
    hi, book, cat = first.turns
    assert (hi.id, hi.session, hi.answer) == ("s_a:1", "s_a", None)
    assert (book.answer, book.answer_ids) == ("Dune.", ("s_a:3",))
    assert cat.answer == "Cute!\n\nAnything else?" and cat.answer_ids == ("s_b:1", "s_b:2")
    assert hi.at == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert cat.at == datetime(2023, 5, 21, 9, 0, tzinfo=UTC)
    [question] = first.questions
    assert question.evidence == (("s_b:0",),)  # the has_answer turn
    assert question.asked_at == datetime(2023, 6, 1, 10, 0, tzinfo=UTC)
    assert question.category == "single-session-user" and not question.abstain
    [abstention] = second.questions
    assert abstention.abstain and abstention.category == "abstention"
    assert abstention.evidence == (("only:0", "only:1"),)  # the whole answer session


JSONL = [
    {"type": "conversation", "id": "c1", "language": "en"},
    {"type": "session", "conversation": "c1", "date": "2024-03-01T09:00:00"},
    {"type": "turn", "conversation": "c1", "id": "t1", "speaker": "Mia", "text": "Code 7316."},
    {
        "type": "turn",
        "conversation": "c1",
        "id": "t2",
        "speaker": "Mia",
        "text": "Dog: Biscuit.",
        "answer": "Cute!",
    },
    {"type": "session", "conversation": "c1"},
    {
        "type": "turn",
        "conversation": "c1",
        "id": "t3",
        "speaker": "Mia",
        "text": "Later.",
        "at": "2024-03-05T12:00:00+00:00",
    },
    {"type": "forget", "conversation": "c1", "id": "f1", "text": "forget my code"},
    {
        "type": "question",
        "conversation": "c1",
        "id": "q1",
        "text": "Dog?",
        "answer": ["Biscuit", "a dog called Biscuit"],
        "evidence": ["t2"],
    },
    {
        "type": "question",
        "conversation": "c1",
        "id": "q2",
        "text": "Code?",
        "answer": "7316",
        "evidence": ["t1"],
        "forget": "f1",
    },
    {"type": "conversation", "id": "g", "speakers": ["Bob", "Alice"]},
    {"type": "session", "conversation": "g", "date": "2024-05-01T10:00:00+02:00"},
    {"type": "turn", "conversation": "g", "id": "a", "speaker": "Alice", "text": "Hi"},
]


def test_our_jsonl(tmp_path: Path) -> None:
    dataset = formats.load(write(tmp_path, "mine.jsonl", JSONL))
    mine, group = dataset.conversations
    assert mine.kind == "private" and mine.language == "en" and mine.speakers == ("Mia",)
    t1, t2, t3 = mine.turns
    assert t1.at == datetime(2024, 3, 1, 9, 0, tzinfo=UTC)  # no offset: UTC
    assert t2.at == t1.at + timedelta(seconds=TURN_SECONDS) and t2.answer == "Cute!"
    assert t3.at == datetime(2024, 3, 5, 12, 0, tzinfo=UTC) and t3.session == "session_2"
    q1, q2 = mine.questions
    assert q1.answers == ("Biscuit", "a dog called Biscuit") and q1.category == "general"
    assert q2.forget == "f1" and q2.category == "forget" and q2.evidence == (("t1",),)
    assert mine.forgets[0].text == "forget my code"
    assert group.kind == "shared" and group.speakers == ("Bob", "Alice")
    assert group.turns[0].at == datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"type": "turn", "conversation": "x", "id": "t", "speaker": "a", "text": "b"}], "header"),
        (
            [
                {"type": "conversation", "id": "x"},
                {"type": "turn", "conversation": "x", "id": "t", "speaker": "a", "text": "b"},
            ],
            "before the conversation's first session",
        ),
        (
            [
                {"type": "conversation", "id": "x"},
                {
                    "type": "question",
                    "conversation": "x",
                    "id": "q",
                    "text": "?",
                    "answer": "a",
                    "evidence": ["nope"],
                },
            ],
            "unknown turns",
        ),
        ([{"type": "conversation", "id": "x"}, {"type": "chat", "conversation": "x"}], "unknown"),
        ([{"type": "conversation", "id": "x", "kind": "channel"}], "kind"),
    ],
)
def test_jsonl_errors_say_where(tmp_path: Path, lines: list[object], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        formats.load(write(tmp_path, "bad.jsonl", lines))


def test_unknown_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="--format"):
        formats.load(write(tmp_path, "other.json", {"hello": "world"}))
    with pytest.raises(DatasetError, match="cannot read"):
        formats.load(tmp_path / "missing.jsonl")


def test_the_shipped_sample() -> None:
    dataset = formats.load(SAMPLE)
    assert dataset.format == "jsonl" and 50 <= dataset.question_count <= 70
    kinds = {(c.kind, c.language) for c in dataset.conversations}
    assert kinds == {("private", "en"), ("private", "zh"), ("shared", "en"), ("shared", "zh")}
    categories = {q.category for c in dataset.conversations for q in c.questions}
    assert categories == {
        "single-fact",
        "preference-update",
        "decision-vs-proposal",
        "attribution",
        "temporal-order",
        "forget",
    }
    for conv in dataset.conversations:
        assert conv.forgets
        for forget in conv.forgets:
            assert [q for q in conv.questions if q.forget == forget.id]


def test_limit_keeps_forget_checks() -> None:
    dataset = formats.limit(formats.load(SAMPLE), conversations=1, questions=2)
    [conv] = dataset.conversations
    assert [q.id for q in conv.questions if not q.forget] == ["mq1", "mq2"]
    assert {q.forget for q in conv.questions if q.forget} == {f.id for f in conv.forgets}
    only = formats.limit(formats.load(SAMPLE), categories=["attribution"])
    assert {q.category for c in only.conversations for q in c.questions} == {
        "attribution",
        "forget",
    }
