"""The evaluation's model-free scores, summaries and report, as plain functions."""

from __future__ import annotations

import builtins
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot_memory.evaluation import report, scoring
from bot_memory.evaluation.baselines import full_context
from bot_memory.evaluation.formats import Conversation, Turn
from bot_memory.evaluation.results import (
    FULL_CONTEXT,
    MEMORY,
    NO_MEMORY,
    Answer,
    ConversationRun,
    Cost,
    ForgetCheck,
    RunResult,
    category_rows,
    comparison,
    evidence_rows,
    system_rows,
)


def test_normalization_like_squad_and_chinese_by_character() -> None:
    assert scoring.normalize("The Beagle, named  Biscuit!") == "beagle named biscuit"
    assert scoring.tokens("我养了一只橘猫。") == ["我", "养", "了", "一", "只", "橘", "猫"]
    assert scoring.tokens("在 Northwind Labs 工作") == ["在", "northwind", "labs", "工", "作"]
    assert scoring.normalize("ＱＸ－９０２７") == "qx 9027"  # full-width folded


def test_exact_match_and_f1() -> None:
    assert scoring.exact_match("Biscuit.", ["biscuit"]) == 1.0
    assert scoring.exact_match("It is Biscuit", ["biscuit"]) == 0.0
    assert scoring.f1("a beagle puppy", ["beagle"]) == pytest.approx(2 / 3)
    assert scoring.f1("Seville", ["Lisbon"]) == 0.0
    assert scoring.f1("the new job", ["Northwind Labs", "the new job"]) == 1.0  # best answer
    assert scoring.f1("乌龙茶", ["乌龙茶"]) == 1.0
    assert scoring.f1("我喝乌龙", ["乌龙茶"]) == pytest.approx(
        2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3)
    )
    assert scoring.f1("", ["x"]) == 0.0


def test_abstention_and_containment() -> None:
    for text in (
        "I don't know.",
        "I do not remember that.",
        "I have nothing about that in memory.",
        "That was not mentioned.",
        "我没有找到相关的记忆。",
        "我不知道。",
        "",
    ):
        assert scoring.abstained(text), text
    assert not scoring.abstained("Your locker code is 7316.")
    assert scoring.contains("Your code is 7316.", ["7316"])
    assert not scoring.contains("Your code is 73160.", ["7316"])  # whole tokens
    assert scoring.contains("口令是 QX-9027。", ["QX-9027"])
    # A question whose right answer is not to know.
    assert scoring.score("I don't know", ["Not mentioned."], abstain=True) == (1.0, 1.0)
    assert scoring.score("It was Bob", ["Not mentioned."], abstain=True) == (0.0, 0.0)


def test_evidence_coverage_and_sizes() -> None:
    messages = {"t1": [11], "t2": [12], "a2": [13]}
    assert scoring.coverage([("t1",), ("t2", "a2")], messages, {11, 13}) == (True, True)
    assert scoring.coverage([("t1",), ("t2",)], messages, {11}) == (False, True)
    assert scoring.coverage([("t1",)], messages, set()) == (False, False)
    assert scoring.coverage([], messages, {11}) is None
    # Held by one record: each record's messages on its own, not their union.
    assert scoring.held_by_one([("t1",), ("t2", "a2")], messages, [{11}, {13}]) is False
    assert scoring.held_by_one([("t1",), ("t2", "a2")], messages, [{12}, {11, 13}]) is True
    assert scoring.held_by_one([("t1",)], messages, []) is False
    assert scoring.held_by_one([], messages, [{11}]) is None
    assert scoring.estimate_tokens("abcdefgh") == 2
    assert scoring.estimate_tokens("乌龙茶 tea") == 3 + 1
    assert scoring.utf8_bytes("乌") == 3


def test_full_context_keeps_the_newest_part_within_the_limit() -> None:
    turns = tuple(
        Turn(
            id=f"t{i}",
            speaker="Alice",
            text=f"message number {i}",
            at=datetime(2024, 1, 1, tzinfo=UTC),
            session="s1",
            answer="ok" if i % 2 else None,
        )
        for i in range(50)
    )
    conv = Conversation(id="c", kind="shared", speakers=("Alice",), turns=turns, questions=())
    whole, cut = full_context(conv, 100_000)
    assert not cut and "Alice: message number 0" in whole and "assistant: ok" in whole
    part, cut = full_context(conv, 600)
    assert cut and len(part.encode()) <= 600
    assert "message number 49" in part and "message number 0\n" not in part


def answer(system: str, category: str, f1: float, **kw: Any) -> Answer:
    return Answer(
        conversation="c",
        question_id=f"{category}-{f1}",
        category=category,
        system=system,
        question="?",
        gold=["x"],
        response="x" if f1 else "no",
        exact=1.0 if f1 == 1 else 0.0,
        f1=f1,
        **kw,
    )


def a_run() -> RunResult:
    run = RunResult(
        run_id="r1",
        dataset="tiny",
        format="jsonl",
        started_at="2024-01-01T00:00:00+00:00",
        provider="fake",
        model="m",
        settings={},
    )
    run.conversations.append(
        ConversationRun(
            id="c",
            workspace="eval-r1-c",
            kind="private",
            turns=3,
            questions=2,
            ingest=Cost(calls=2, prompt_tokens=1000, completion_tokens=100, cost_usd=0.01),
        )
    )
    mem = Cost(calls=1, prompt_tokens=300, completion_tokens=10, cost_usd=0.001, seconds=1)
    run.answers += [
        answer(
            MEMORY,
            "fact",
            1.0,
            injected_tokens=100,
            cost=mem,
            evidence_all=True,
            evidence_any=True,
            evidence_one=True,
            cited_all=True,
            cited_any=True,
            recall_all=False,
            recall_any=True,
            recall_one=False,
            listed_one=False,
            found_all=True,
            found_any=True,
            found_one=True,
        ),
        answer(
            MEMORY,
            "order",
            0.5,
            injected_tokens=50,
            cost=mem,
            evidence_all=False,
            evidence_any=True,
            evidence_one=False,
            cited_all=False,
            cited_any=False,
            recall_all=False,
            recall_any=False,
            recall_one=False,
            listed_one=False,
            found_all=False,
            found_any=True,
            found_one=False,
        ),
        # LoCoMo's adversarial category: its own row, out of the scores and of "overall".
        answer(MEMORY, "adversarial", 0.0, cost=mem, evidence_all=False, evidence_any=False),
        answer(NO_MEMORY, "fact", 0.0, cost=Cost(calls=1, prompt_tokens=20)),
        answer(NO_MEMORY, "order", 0.0, cost=Cost(calls=1, prompt_tokens=20)),
        answer(
            FULL_CONTEXT,
            "fact",
            1.0,
            injected_tokens=1000,
            cost=Cost(calls=1, prompt_tokens=2000, cost_usd=0.02),
        ),
        answer(
            FULL_CONTEXT,
            "order",
            1.0,
            injected_tokens=1000,
            cost=Cost(calls=1, prompt_tokens=2000, cost_usd=0.02),
        ),
        answer(MEMORY, "forget", 0.0, phase="after forget"),
    ]
    run.forgets.append(
        ForgetCheck(
            conversation="c", forget_id="f1", text="forget x", outcome="forgotten", questions=["q"]
        )
    )
    return run


def test_summaries_per_system_category_and_evidence() -> None:
    run = a_run()
    rows = {r["system"]: r for r in system_rows(run)}
    assert rows[MEMORY]["questions"] == 2  # after-forget and adversarial answers are apart
    assert rows[MEMORY]["f1"] == 0.75 and rows[MEMORY]["exact"] == 0.5
    assert rows[MEMORY]["calls"] == 2 + 3  # building memory, then answering (all three)
    assert rows[MEMORY]["prompt_tokens"] == 1900
    assert rows[MEMORY]["injected_tokens"] == 50  # per answer given: 150 / 3
    assert rows[MEMORY]["prompt_tokens_per_answer"] == 300  # the whole prompt, not the block
    assert rows[FULL_CONTEXT]["cost_usd"] == pytest.approx(0.04)
    compared = comparison(run)
    assert compared[NO_MEMORY]["f1_difference"] == 0.75
    assert compared[FULL_CONTEXT]["f1_difference"] == -0.25
    assert compared[FULL_CONTEXT]["injected_tokens_ratio"] == 0.05
    assert compared[FULL_CONTEXT]["cost_ratio"] == pytest.approx(0.013 / 0.04)
    assert compared[NO_MEMORY]["injected_tokens_ratio"] is None  # nothing to divide by
    by_category = {r["category"]: r for r in category_rows(run)}
    assert by_category["order"]["memory f1"] == 0.5 and by_category["overall"]["questions"] == 2
    assert by_category["adversarial"]["questions"] == 1
    evidence = {r["category"]: r for r in evidence_rows(run)}
    assert evidence["overall"] == {
        "category": "overall",
        "questions": 2,
        "records_one": 0.5,
        "records_all": 0.5,
        "records_any": 1.0,
        "cited_all": 0.5,
        "cited_any": 0.5,
        "recall_one": 0.0,
        "listed_one": 0.0,
        "recall_all": 0.0,
        "recall_any": 0.5,
        "retrieval_one": 0.5,
        "retrieval_all": 0.5,
        "retrieval_any": 1.0,
        "block_mean_bytes": 0.0,  # these answers carried no block
        "block_max_bytes": 0,
    }
    assert evidence["adversarial"]["questions"] == 1
    assert not run.failed
    run.forgets[0].leaked.append("q")
    assert run.failed


def test_report_markdown_json_and_chart(tmp_path: Path) -> None:
    run = a_run()
    text = report.markdown(run)
    assert "| system | questions | EM | F1 | injected bytes/q | est. tokens/q |" in text
    assert "| prompt tokens/answer | $/answer |" in text
    # One record holding all the evidence, then (in brackets) all of it over several records.
    assert "| overall | 2 | 50% (50%) | 0% (0%) | 0% | 50% (50%) | 50% | 0 / 0 |" in text
    assert "| c | 3 | 2 | 0 | 0 | 0 | 0 |" in text  # records per conversation
    assert "talked after it" not in text  # not a busy group
    assert "| memory | 2 | 0.500 | 0.750 |" in text
    assert "Memory vs full context: F1 -0.250" in text
    assert "| c | f1 | forgotten | 1 | 0 | 0 | 0 | pass |" in text
    written = report.write(run, tmp_path / "out")
    assert written["report"] == tmp_path / "out" / "report.md"
    data = json.loads((tmp_path / "out" / "eval-r1.json").read_text())
    assert data["summary"]["systems"][0]["system"] == MEMORY and data["failed"] is False
    chart = written["chart"]
    assert chart is not None and chart.read_bytes().startswith(b"\x89PNG")


def test_the_chart_is_skipped_without_matplotlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert report.chart(a_run(), tmp_path / "chart.png") is None
    assert not (tmp_path / "chart.png").exists()
