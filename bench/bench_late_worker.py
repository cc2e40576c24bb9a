"""What a late worker costs memory: evidence coverage, punctual against late, in one run.

A long, LoCoMo-like conversation (two people in a group Topic, many sessions days apart, one
fact per turn and a question on some of them) is written here, then played twice through the
evaluation harness with the offline model: once with the worker ticking whenever a session has
been idle for the window (punctual), once with the worker running only after the last turn
(late, as a worker that was down). Model-free columns only: the share of questions whose
evidence turn is among an available record's sources, among what records cite, and among what
`query_memories` shows for the question's key words. The two rows should match.

Run: ``.venv/bin/python bench/bench_late_worker.py`` (an embedded PostgreSQL in a temp folder)
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot_memory.evaluation import formats
from bot_memory.evaluation.harness import Options, evaluate
from bot_memory.evaluation.results import evidence_rows
from bot_memory.settings import MemorySettings

SESSIONS = 16
TURNS_PER_SESSION = 24
THINGS = [
    ("boat", "Aurora"),
    ("cat", "Mochi"),
    ("car", "a red Fiat"),
    ("sister", "Ana"),
    ("gym", "Iron Temple"),
    ("bakery", "Pão Quente"),
    ("dentist", "Dr Okafor"),
    ("band", "The Lanterns"),
    ("bike", "a blue Brompton"),
    ("plant", "Ferdinand"),
    ("laptop", "a ThinkPad X1"),
    ("neighbour", "Mr Ruiz"),
    ("coffee", "a flat white"),
    ("book club", "Tuesdays"),
    ("guitar", "a Martin D-28"),
    ("dog", "Biscuit"),
]


def long_conversation(seed: int = 7) -> list[dict[str, Any]]:
    """Our JSON Lines: sessions two days apart, each turn a fact of its own."""
    rng = random.Random(seed)
    lines: list[dict[str, Any]] = [
        {
            "type": "conversation",
            "id": "long",
            "kind": "shared",
            "language": "en",
            "speakers": ["Caroline", "Melanie"],
        },
    ]
    start = datetime(2024, 1, 1, 9, tzinfo=UTC)
    questions = []
    for s in range(SESSIONS):
        lines.append(
            {
                "type": "session",
                "conversation": "long",
                "date": (start + timedelta(days=2 * s)).isoformat(),
            }
        )
        for t in range(TURNS_PER_SESSION):
            who = "Caroline" if t % 2 == 0 else "Melanie"
            thing, name = rng.choice(THINGS)
            detail = f"{name} #{s}-{t}"
            turn_id = f"s{s}t{t}"
            lines.append(
                {
                    "type": "turn",
                    "conversation": "long",
                    "id": turn_id,
                    "speaker": who,
                    "text": f"By the way, the {thing} I told you about is now {detail},"
                    f" and I mean it this time, session {s}.",
                    "answer": "Good to know.",
                }
            )
            if t % 6 == 0:
                questions.append(
                    {
                        "type": "question",
                        "conversation": "long",
                        "id": f"q{s}-{t}",
                        "text": f"What did {who} say the {thing} was in session {s}?",
                        "answer": detail,
                        "category": "single-fact",
                        "evidence": [turn_id],
                    }
                )
    return lines + questions


async def measure(path: Path, late: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bm-bench-late-") as data:
        settings = MemorySettings(data_dir=Path(data), llm_base_url=None, llm_api_key=None)
        dataset = formats.load(path)
        run = await evaluate(dataset, settings, options=Options(baselines=False, late_worker=late))
    overall = next(r for r in evidence_rows(run) if r["category"] == "overall")
    return {"records": sum(c.records for c in run.conversations), **overall}


def run() -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "long.jsonl"
        path.write_text("\n".join(json.dumps(x) for x in long_conversation()) + "\n")
        return {
            "punctual": asyncio.run(measure(path, late=False)),
            "late": asyncio.run(measure(path, late=True)),
        }


def report(found: dict[str, dict[str, Any]]) -> None:
    for name, row in found.items():
        print(
            f"{name:>8} worker: {row['records']} records; evidence in records"
            f" {row['records_all']:.0%}, cited {row['cited_all']:.0%}, in the recall index"
            f" {row['recall_all']:.0%}, retrieval {row['retrieval_all']:.0%}"
            f" ({row['questions']} questions)"
        )
    ratio = found["late"]["cited_all"] / (found["punctual"]["cited_all"] or 1)
    print(f"cited coverage, late / punctual: {ratio:.2f} (goal 1.00)")


if __name__ == "__main__":
    report(run())
