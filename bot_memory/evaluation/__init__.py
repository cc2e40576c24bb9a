"""Memory quality, measured on an operator's own model: `bot-memory eval DATASET`.

A dataset's conversations are fed through the real pipeline (record, extraction, consolidation,
recall, tools, the reference agent) with the clock injected, its questions are asked as new
requests, and the answers are scored beside two baselines on the same model: no memory, and the
whole conversation in the prompt. `formats.py` reads LoCoMo, LongMemEval and our own JSON Lines;
`busy_group.py` puts two other conversations after each in its Topic (`--busy-group`);
`harness.py` runs; `baselines.py` asks without memory; `scoring.py` scores without a model and
`judge.py` with one; `results.py` sums up; `report.py` writes Markdown, JSON and a chart; `cli.py`
is the command. `data/sample.jsonl` is a small bilingual dataset of our own (`make eval`).
"""

from __future__ import annotations

from bot_memory.evaluation import cli

__all__ = ["cli"]  # what the command line uses; the rest is the harness's own
