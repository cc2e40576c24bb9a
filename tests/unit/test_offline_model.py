"""The offline model (demo and eval default): what it keeps from a conversation."""

from __future__ import annotations

import json

from bot_memory.models.base import EXTRACTION, StructuredOutput
from bot_memory.models.offline import OfflineModel
from bot_memory.pipeline.prompts import extraction_messages


async def extract(texts: list[str], existing: list[str] | None = None) -> dict[str, object]:
    sources = [
        {"id": f"m{i}", "role": "user", "speaker_id": 7, "text": t} for i, t in enumerate(texts)
    ]
    briefs = [
        {"id": f"mem_{i}", "title": t, "summary": f"- [m{i}] speaker 7: {t}"}
        for i, t in enumerate(existing or [])
    ]
    messages = extraction_messages(scope_kind="private", sources=sources, existing=briefs)
    done = await OfflineModel().complete(
        messages, output=StructuredOutput(name=EXTRACTION, schema_={})
    )
    result: dict[str, object] = json.loads(done.content or "{}")
    return result


async def test_questions_are_not_kept_as_memories() -> None:
    asked = await extract(["What do you remember about my trip?", "你记得我的行程吗？"])
    assert asked == {"title": "", "summary": "", "source_ids": []}
    mixed = await extract(["What is the plan?", "we ship v2 on Friday"])
    assert mixed["title"] == "we ship v2 on Friday" and mixed["source_ids"] == ["m1"]


async def replaced(text: str, existing: list[str]) -> object:
    return (await extract([text], existing))["replaces"]


async def test_plain_corrections_replace_the_memory_about_the_same_thing() -> None:
    home = ["I live in Lisbon", "my cat is called Mochi"]
    assert await replaced("I moved to Porto", home) == ["mem_0"]
    assert await replaced("Actually my cat is called Kuro", home) == ["mem_1"]
    assert await replaced("I don't drink coffee anymore", ["I drink coffee daily"]) == ["mem_0"]
    assert await replaced("I no longer drink coffee", ["I drink coffee daily"]) == ["mem_0"]
    assert await replaced("我搬到上海了", ["我住在北京"]) == ["mem_0"]
    assert await replaced("我不再喝咖啡了", ["我每天喝咖啡"]) == ["mem_0"]
    assert await replaced("其实我的猫叫小黑", ["我的猫叫咪咪"]) == ["mem_0"]
    assert await replaced("Я переехал в Порту", ["Я живу в Лиссабоне"]) == ["mem_0"]
    assert await replaced("Я больше не пью кофе", ["Я пью кофе утром"]) == ["mem_0"]
    assert await replaced("На самом деле машина синяя", ["Моя машина красная"]) == ["mem_0"]
    assert await replaced("Я переїхав до Порту", ["Я живу в Лісабоні"]) == ["mem_0"]
    assert await replaced("Я більше не п'ю каву", ["Я п'ю каву зранку"]) == ["mem_0"]
    assert await replaced("Насправді машина синя", ["Моя машина червона"]) == ["mem_0"]


async def test_two_true_facts_are_both_kept() -> None:
    home = ["I live in Lisbon", "my cat is called Mochi"]
    assert await replaced("I also have a dog called Kuro", home) == []  # no correction said
    assert await replaced("my cat likes the window seat", home) == []
    assert await replaced("Actually the meeting is on Friday", home) == []  # another subject
    assert await replaced("I moved the meeting to Friday", home) == []  # not a move home
    assert await replaced("我其实喜欢茶", ["我住在北京"]) == []
    assert await replaced("I moved to Porto", []) == []


async def extract_against(
    text: str, memory: dict[str, object], speaker: int = 7
) -> dict[str, object]:
    sources = [{"id": "m9", "role": "user", "speaker_id": speaker, "text": text}]
    messages = extraction_messages(scope_kind="group", sources=sources, existing=[memory])
    done = await OfflineModel().complete(
        messages, output=StructuredOutput(name=EXTRACTION, schema_={})
    )
    result: dict[str, object] = json.loads(done.content or "{}")
    return result


HOME_AND_PET = {
    "id": "mem_a",
    "title": "I live in Lisbon",
    "summary": "- [m1] speaker 7: I live in Lisbon\n- [m2] speaker 7: my cat is called Mochi",
    "speaker_ids": [7],
}


async def test_a_move_carries_the_other_facts_over() -> None:
    out = await extract_against("I moved to Porto", HOME_AND_PET)
    assert out["replaces"] == ["mem_a"] and out["memory_ids"] == ["mem_a"]
    summary = str(out["summary"])
    assert "Porto" in summary and "Mochi" in summary and "Lisbon" not in summary


async def test_only_the_same_speakers_plain_corrections_replace() -> None:
    # A name both hold is not the same subject.
    caroline = {
        "id": "mem_c",
        "title": "painting",
        "summary": "- [m1] speaker 7: Caroline and I love painting sunsets",
        "speaker_ids": [7],
    }
    assert (await extract_against("Actually Caroline went hiking", caroline))["replaces"] == []
    # Another speaker's fact is theirs to correct.
    assert (await extract_against("I moved to Porto", HOME_AND_PET, speaker=8))["replaces"] == []
    # A memory shown in part cannot be carried over whole.
    partial = HOME_AND_PET | {"shown_in_part": True}
    assert (await extract_against("I moved to Porto", partial))["replaces"] == []
    # Common words are no subject.
    busy = HOME_AND_PET | {"summary": "- [m1] speaker 7: I think today was a good day"}
    assert (await extract_against("Actually I think today is fine", busy))["replaces"] == []
