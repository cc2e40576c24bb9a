"""The evaluation end to end: a small dataset through the real pipeline, a real database and a
fake OpenAI-compatible server whose answers are right for some questions and wrong for others,
so the scores the harness computes can be checked by hand."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot_memory.evaluation.cli import add_parser, run_args, run_eval
from bot_memory.evaluation.results import FULL_CONTEXT, MEMORY, NO_MEMORY
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI, default_responder

DATASET = [
    {"type": "conversation", "id": "mia", "kind": "private", "language": "en"},
    {"type": "session", "conversation": "mia", "date": "2024-03-04T09:00:00+00:00"},
    {
        "type": "turn",
        "conversation": "mia",
        "id": "t1",
        "speaker": "Mia",
        "text": "My gym locker code is 7316.",
        "answer": "Got it.",
    },
    {
        "type": "turn",
        "conversation": "mia",
        "id": "t2",
        "speaker": "Mia",
        "text": "I adopted a beagle puppy named Biscuit.",
    },
    {"type": "session", "conversation": "mia", "date": "2024-03-08T19:30:00+00:00"},
    {
        "type": "turn",
        "conversation": "mia",
        "id": "t3",
        "speaker": "Mia",
        "text": "We thought about Seville but booked Lisbon.",
    },
    {"type": "forget", "conversation": "mia", "id": "f1", "text": "forget my gym locker code"},
    {
        "type": "question",
        "conversation": "mia",
        "id": "q1",
        "text": "What is my dog's name?",
        "answer": "Biscuit",
        "category": "fact",
        "evidence": ["t2"],
    },
    {
        "type": "question",
        "conversation": "mia",
        "id": "q2",
        "text": "What breed is my dog?",
        "answer": "beagle",
        "category": "fact",
        "evidence": ["t2"],
    },
    {
        "type": "question",
        "conversation": "mia",
        "id": "q3",
        "text": "Which city did we book?",
        "answer": "Lisbon",
        "category": "decision",
        "evidence": ["t3"],
    },
    {
        "type": "question",
        "conversation": "mia",
        "id": "q4",
        "text": "What is my gym locker code?",
        "answer": "7316",
        "evidence": ["t1"],
        "forget": "f1",
    },
    {"type": "conversation", "id": "team", "kind": "shared", "language": "en"},
    {"type": "session", "conversation": "team", "date": "2024-05-06T09:00:00+00:00"},
    {
        "type": "turn",
        "conversation": "team",
        "id": "g1",
        "speaker": "Alice",
        "text": "I propose we launch on June 3.",
    },
    {
        "type": "turn",
        "conversation": "team",
        "id": "g2",
        "speaker": "Bob",
        "text": "Let's launch on June 10 instead.",
    },
    {
        "type": "question",
        "conversation": "team",
        "id": "gq1",
        "text": "Who proposed launching on June 3?",
        "answer": "Alice",
        "category": "attribution",
        "evidence": ["g1"],
    },
]

GOLD = {
    "What is my dog's name?": "Biscuit",
    "What breed is my dog?": "beagle",
    "Which city did we book?": "Lisbon",
    "What is my gym locker code?": "7316",
    "Who proposed launching on June 3?": "Alice",
}
# What "memory" (the reference agent) answers: right, partly right (F1 2/3), wrong.
MEMORY_SAYS = {
    "What is my dog's name?": "Biscuit",
    "What breed is my dog?": "a beagle puppy",
    "Which city did we book?": "Seville",
    "What is my gym locker code?": "7316",
    "Who proposed launching on June 3?": "Alice",
}


class Model:
    """The fake's answers: memory as above, no memory never knows, full context always does;
    after the forget, the locker code is given again only if `leak`."""

    def __init__(self, *, leak: bool) -> None:
        self.leak = leak
        self.asked: dict[str, int] = {}

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        if "response_format" in body:  # extraction and consolidation
            return default_responder(body)
        messages = body["messages"]
        if messages[0]["content"].startswith("You grade"):
            text = messages[-1]["content"]
            gold = re.search(r"Gold answer: (.*)", text)
            response = text.split("Response: ", 1)[1]
            assert gold is not None
            right = gold.group(1).lower() in response.lower()
            return {"role": "assistant", "content": "CORRECT" if right else "INCORRECT"}
        question = re.sub(r"^\[speaker \d+\] ", "", messages[-1]["content"])
        if body.get("tools"):  # the reference agent
            self.asked[question] = self.asked.get(question, 0) + 1
            if question == "What is my gym locker code?" and self.asked[question] > 1:
                return {"role": "assistant", "content": "7316" if self.leak else "I don't know."}
            return {"role": "assistant", "content": MEMORY_SAYS[question]}
        if any("<conversation>" in str(m["content"]) for m in messages[1:-1]):
            return {"role": "assistant", "content": GOLD[question]}
        return {"role": "assistant", "content": "I don't know."}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in DATASET) + "\n")
    return path


def settings_for(db_url: str, llm: FakeOpenAI) -> MemorySettings:
    return make_settings(
        db_url,
        llm_base_url=llm.base_url,
        llm_api_key="k",
        llm_model="m",
        idle_window_seconds=1800,
    )


async def evaluate(
    db_url: str, llm: FakeOpenAI, dataset: Path, out: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    code = await run_eval(
        [str(dataset), "--out", str(out), "--quiet", "--run-id", "t", *extra],
        settings=settings_for(db_url, llm),
    )
    return code, json.loads((out / "eval-t.json").read_text())


async def test_scores_costs_and_coverage_come_from_the_real_pipeline(
    db_url: str,
    llm: FakeOpenAI,
    dataset: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("EVAL_JUDGE_BASE_URL", "EVAL_JUDGE_API_KEY", "EVAL_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    model = Model(leak=False)
    llm.responder = model
    code, run = await evaluate(db_url, llm, dataset, tmp_path / "out", "--judge")
    assert code == 0
    printed = capsys.readouterr().out
    assert "| system | questions | EM | F1 | judge |" in printed
    assert (tmp_path / "out" / "report.md").read_text() in printed
    assert (tmp_path / "out" / "chart.png").read_bytes().startswith(b"\x89PNG")

    # Extraction ran through the model once per idle session (two in Mia's chat, one in the
    # group), and the group's turns reached it with the speakers' names.
    extractions = llm.requests_by_purpose("memory_extraction")
    assert len(extractions) == 3
    assert "Alice: I propose we launch on June 3." in json.dumps(extractions[-1])
    assert llm.requests_by_purpose("memory_consolidation")

    main = {(a["system"], a["question_id"]): a for a in run["answers"] if a["phase"] == "main"}
    assert len(main) == 3 * 5
    f1 = {q: main[(MEMORY, q)]["f1"] for q in ("q1", "q2", "q3", "q4", "gq1")}
    assert f1 == pytest.approx({"q1": 1.0, "q2": 2 / 3, "q3": 0.0, "q4": 1.0, "gq1": 1.0})
    assert [main[(MEMORY, q)]["exact"] for q in ("q1", "q2", "q3")] == [1.0, 0.0, 0.0]
    assert [main[(MEMORY, q)]["judged"] for q in ("q1", "q2", "q3")] == [True, True, False]
    systems = {r["system"]: r for r in run["summary"]["systems"]}
    assert systems[MEMORY]["f1"] == pytest.approx((3 + 2 / 3) / 5)
    assert systems[MEMORY]["exact"] == pytest.approx(3 / 5)
    assert systems[NO_MEMORY]["f1"] == 0.0 and systems[NO_MEMORY]["judge"] == 0.0
    assert systems[FULL_CONTEXT]["f1"] == 1.0 and systems[FULL_CONTEXT]["judge"] == 1.0
    assert run["summary"]["comparison"][NO_MEMORY]["f1_difference"] == pytest.approx(
        (3 + 2 / 3) / 5
    )

    # Every memory answer was given the recall block, and every call the fake saw is counted
    # once: memory's (ledger), the forget phase's (ledger), the baselines' and the judge's.
    memory_answers = [main[(MEMORY, q)] for q in ("q1", "q2", "q3", "q4", "gq1")]
    assert all(a["recall_mode"] == "index" and a["injected_bytes"] > 0 for a in memory_answers)
    assert all(a["cost"]["calls"] == 1 and a["cost"]["prompt_tokens"] > 0 for a in memory_answers)
    forget_calls = sum(c["forget"]["calls"] for c in run["conversations"])
    counted = sum(r["calls"] for r in run["summary"]["systems"]) + forget_calls
    assert counted + run["judge_cost"]["calls"] == len(llm.requests)
    assert run["judge_version"] == "bot-memory-judge-1"

    # The fake's extraction cites the whole batch: all evidence is in records, cited and
    # recalled. A keyword search finds four of five: "breed dog" names nothing stored ("a
    # beagle puppy named Biscuit"), while "dog name" finds "named".
    evidence = {r["category"]: r for r in run["summary"]["evidence"]}
    assert evidence["overall"]["questions"] == 5
    overall = evidence["overall"]
    assert (overall["records_all"], overall["cited_all"], overall["recall_all"]) == (1, 1, 1)
    assert overall["retrieval_all"] == 0.8
    assert [main[(MEMORY, q)]["found_all"] for q in ("q1", "q2", "q3")] == [True, False, True]
    assert "| overall | 5 | 100% (100%) | 100% (100%) | 100% | 80% (80%) | 100% |" in printed
    assert run["settings"]["pruning"] is True and "Inactivity pruning was on" in printed
    # The probes are not memory's tool calls, and left nothing behind (erased like questions).
    assert all(main[(MEMORY, q)]["tool_calls"] == 0 for q in ("q1", "q2", "q3"))

    # The forget went through the request path, the fact is no longer answered, and nothing
    # but the chat message and tombstones keeps it.
    [check] = run["forgets"]
    assert check["outcome"] == "forgotten" and check["memory_ids"]
    assert check["known_before"] == ["q4"] and check["leaked"] == []
    assert check["unexpected_traces"] == [] and check["expected_traces"] > 0
    [after] = [a for a in run["answers"] if a["phase"] == "after forget"]
    assert after["response"] == "I don't know." and after["judged"] is False

    # The workspaces are gone; the ledger keeps amounts.
    memory = await Memory.open(settings_for(db_url, llm))
    try:
        assert await memory.store.pool.fetchval("SELECT count(*) FROM workspaces") == 0
        assert await memory.store.pool.fetchval("SELECT count(*) FROM usage_ledger") > 0
    finally:
        await memory.close()


async def test_a_forgotten_fact_answered_fails_the_run(
    db_url: str, llm: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    llm.responder = Model(leak=True)
    code, run = await evaluate(db_url, llm, dataset, tmp_path / "out", "--no-baselines")
    assert code == 1 and run["failed"] is True
    [check] = run["forgets"]
    assert check["outcome"] == "forgotten" and check["leaked"] == ["q4"]
    assert (
        "| mia | f1 | forgotten | 1 | 1 | 1 | 0 | FAIL |"
        in (tmp_path / "out" / "report.md").read_text()
    )
    assert {a["system"] for a in run["answers"]} == {MEMORY}  # --no-baselines


async def test_pruning_follows_the_bot_unless_turned_off_and_a_late_worker_matches(
    db_url: str, llm: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    llm.responder = Model(leak=False)
    code, on_time = await evaluate(db_url, llm, dataset, tmp_path / "a", "--no-baselines")
    assert code == 0 and on_time["settings"]["inactive_prune_days"] == 30
    code, late = await evaluate(
        db_url, llm, dataset, tmp_path / "b", "--no-baselines", "--no-prune", "--late-worker"
    )
    assert code == 0 and late["settings"]["inactive_prune_days"] == 36_500
    assert late["settings"]["late_worker"] is True
    assert "pruning was off" in (tmp_path / "b" / "report.md").read_text()
    # A worker that only ran at the end made as many records, with the same coverage.
    assert [c["records"] for c in late["conversations"]] == [
        c["records"] for c in on_time["conversations"]
    ]
    assert late["summary"]["evidence"] == on_time["summary"]["evidence"]


async def test_judge_without_an_endpoint_is_a_usage_error(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("EVAL_JUDGE_BASE_URL", "EVAL_JUDGE_API_KEY", "EVAL_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    offline = MemorySettings(
        database_url="postgresql://unused", llm_base_url=None, llm_api_key=None
    )
    code = await run_eval([str(dataset), "--judge", "--out", str(tmp_path)], settings=offline)
    assert code == 2
    assert await run_eval([str(tmp_path / "none.jsonl")], settings=offline) == 2


def test_the_eval_subcommand_registers_on_a_command_line() -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--log-level")
    parser = argparse.ArgumentParser(prog="bot-memory")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub, parents=[common])
    args = parser.parse_args(["eval", "locomo10.json", "--judge", "--out", "o", "--limit", "2"])
    assert args.command == "eval" and args.eval_handler is run_args
    assert (args.dataset, args.judge, args.out, args.limit) == (
        Path("locomo10.json"),
        True,
        Path("o"),
        2,
    )
    assert args.full_context_bytes == 100_000 and args.format == "auto"


async def test_a_database_with_another_bots_pending_work_is_refused(
    db_url: str, llm: FakeOpenAI, dataset: Path, tmp_path: Path
) -> None:
    memory = await Memory.open(settings_for(db_url, llm))
    try:
        await memory.store.pool.execute("INSERT INTO workspaces (id) VALUES ('live')")
        await memory.store.pool.execute(
            "INSERT INTO memory_jobs (workspace_id, scope_key, phase, input_hash, snapshot,"
            " provider, model) VALUES ('live', 'k', 'extract', 'h', '{}', 'p', 'm')"
        )
    finally:
        await memory.close()
    code = await run_eval(
        [str(dataset), "--out", str(tmp_path)], settings=settings_for(db_url, llm)
    )
    assert code == 2 and not llm.requests


async def test_the_shipped_sample_reports_coverage_and_retrieval_offline(
    db_url: str, tmp_path: Path
) -> None:
    """What `make eval` prints on a fresh clone (the offline model): every column model-free."""
    sample = Path(__file__).parents[2] / "bot_memory" / "evaluation" / "data" / "sample.jsonl"
    offline = make_settings(db_url, idle_window_seconds=1800, llm_api_key=None)
    code = await run_eval(
        [str(sample), "--out", str(tmp_path), "--quiet", "--run-id", "s", "--no-baselines"],
        settings=offline,
    )
    run = json.loads((tmp_path / "eval-s.json").read_text())
    assert code == 0 and len(run["forgets"]) == 6 and not run["failed"]
    overall = next(r for r in run["summary"]["evidence"] if r["category"] == "overall")
    assert overall["questions"] == 58
    assert (overall["records_all"], overall["cited_all"], overall["recall_all"]) == (1, 1, 1)
    assert overall["retrieval_all"] >= 0.9  # key words through query_memories
    text = (tmp_path / "report.md").read_text()
    assert "| category | n | in records | presented | index | retrieval | cited | block" in text


def said(conv: str, id: str, speaker: str, text: str) -> dict[str, str]:  # noqa: A002
    return {"type": "turn", "conversation": conv, "id": id, "speaker": speaker, "text": text}


def day(conv: str, date: str) -> dict[str, str]:
    return {"type": "session", "conversation": conv, "date": f"{date}T09:00:00+00:00"}


BUSY = [
    {"type": "conversation", "id": "pets", "kind": "shared"},
    day("pets", "2024-03-01"),
    said("pets", "t1", "Ann", "My parrot Kiwi speaks Portuguese."),
    said("pets", "t2", "Ben", "Nice parrot!"),
    day("pets", "2024-03-05"),
    said("pets", "t3", "Ann", "Kiwi learned a new word: obrigado."),
    {
        "type": "question",
        "conversation": "pets",
        "id": "q1",
        "text": "What language does Kiwi speak?",
        "answer": "Portuguese",
        "evidence": ["t1"],
    },
    {
        "type": "question",
        "conversation": "pets",
        "id": "q2",
        "text": "Which word did Kiwi learn, beside speaking Portuguese?",
        "answer": "obrigado",
        "evidence": ["t1", "t3"],  # two sessions: two records
    },
    {"type": "conversation", "id": "chess", "kind": "shared"},
    day("chess", "2023-01-01"),
    said("chess", "c1", "Cleo", "I play the Sicilian."),
    said("chess", "c2", "Ann", "I prefer the French."),  # another Ann
    {"type": "conversation", "id": "garden", "kind": "shared"},
    day("garden", "2025-06-01"),
    said("garden", "g1", "Eve", "The tomatoes are in."),
    day("garden", "2025-06-10"),
    said("garden", "g2", "Finn", "The basil is up."),
]


def newest_only(body: dict[str, Any]) -> dict[str, Any]:
    """The fake's answers, with an index that names one record (the newest candidate): what a
    busy Topic's index does to an older conversation."""
    message = default_responder(body)
    if "response_format" in body and '"index"' in message["content"]:
        out = json.loads(message["content"])
        out = {"index": out["index"].split("\n")[0], "memory_ids": out["memory_ids"][:1]}
        message = {"role": "assistant", "content": json.dumps(out)}
    return message


async def test_a_busy_group_asks_under_newer_chatter_and_scores_one_record(
    db_url: str, llm: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "busy.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in BUSY) + "\n")
    llm.responder = newest_only
    code, run = await evaluate(
        db_url, llm, path, tmp_path / "out", "--busy-group", "--limit", "1", "--no-baselines"
    )
    assert code == 0 and run["settings"]["busy_group"] is True
    printed = capsys.readouterr().out
    # Pets, then the two others in the same Topic: one record per session, each its own batch.
    [pets] = run["conversations"]
    assert pets["talked_after"] == ["chess", "garden"] and pets["turns"] == 7
    assert (pets["records"], pets["own_records"], pets["index_ids"]) == (5, 2, 1)
    assert "| pets | 7 | 2 | 5 | 0 | 0 | 1 | 2 | chess, garden |" in printed
    extracted = [json.dumps(r) for r in llm.requests_by_purpose("memory_extraction")]
    assert len(extracted) == 5  # a batch per session: 2 + 1 + 2
    assert "Ann: My parrot Kiwi" in extracted[0] and "Ann (chess): I prefer" in extracted[2]
    people = [
        {int(i) for i in re.findall(r'speaker_id\\"\s*:\s*(\d+)', e)} - {1} for e in extracted
    ]
    assert len(people[0]) == len(people[2]) == 2 and not people[0] & people[2]  # the bot is 1
    # Under the chatter the index names garden's last record only: browsing the block finds
    # nothing of pets, its matches carry the record holding q1's evidence.
    main = {a["question_id"]: a for a in run["answers"] if a["phase"] == "main"}
    q1, q2 = main["q1"], main["q2"]
    assert (q1["listed_one"], q1["recall_one"], q1["found_one"]) == (False, True, True)
    # q2's evidence is in two records: found together, never by one of them alone.
    assert (q2["found_all"], q2["found_one"]) == (True, False)
    assert (q2["recall_all"], q2["recall_one"]) == (True, False)
    overall = next(r for r in run["summary"]["evidence"] if r["category"] == "overall")
    assert (overall["retrieval_one"], overall["retrieval_all"]) == (0.5, 1.0)
    assert "| overall | 2 | 50% (100%) | 50% (100%) | 0% | 50% (100%) |" in printed
