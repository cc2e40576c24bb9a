"""`bot-memory eval DATASET`: how well memory answers, on your model, against two baselines.

    python -m bot_memory.evaluation.cli bot_memory/evaluation/data/sample.jsonl --out eval-out
    LLM_BASE_URL=... LLM_API_KEY=... LLM_MODEL=... bot-memory eval locomo10.json --judge
    bot-memory eval LOCOMO_FOLDER --category 1,2,3,4 --no-baselines --coverage [--busy-group]

Same settings as the bot (DATABASE_URL or the embedded server in BOT_MEMORY_DATA_DIR; LLM_*;
BOT_MEMORY_*); with no model configured the offline built-in model answers, which is the floor.
Prints the Markdown report and writes report.md, eval-<run>.json and chart.png to --out.
Exit status: 0 when the run finished and forgetting held, 1 when a forgotten fact was answered
or left a trace, 2 for a usage, dataset, database or judge configuration error.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot_memory.evaluation import busy_group, formats, report
from bot_memory.evaluation.baselines import DEFAULT_CONTEXT_BYTES
from bot_memory.evaluation.formats import DatasetError
from bot_memory.evaluation.harness import Options, SharedDatabase, evaluate
from bot_memory.evaluation.judge import Judge, JudgeUnavailable
from bot_memory.settings import MemorySettings
from bot_memory.storage import DatabaseUnavailable

DEFAULT_OUT = "eval-out"
HELP = "evaluate memory on a dataset (LoCoMo, LongMemEval or JSON Lines) against baselines"


def configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The eval command's arguments (shared by `bot-memory eval` and this module's main)."""
    p.add_argument("dataset", type=Path, help="a LoCoMo or LongMemEval .json, or our .jsonl")
    p.add_argument(
        "--format",
        choices=["auto", "locomo", "longmemeval", "jsonl"],
        default="auto",
        help="the dataset's format (default: told from the file)",
    )
    p.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), help="where reports go")
    p.add_argument(
        "--judge",
        action="store_true",
        help="grade answers with a model (EVAL_JUDGE_BASE_URL / _API_KEY / _MODEL, else LLM_*)",
    )
    p.add_argument("--judge-base-url", default=None, help="the judge's OpenAI-compatible URL")
    p.add_argument("--judge-model", default=None, help="the judge's model name")
    p.add_argument(
        "--full-context-bytes",
        type=int,
        default=int(os.environ.get("EVAL_FULL_CONTEXT_BYTES") or DEFAULT_CONTEXT_BYTES),
        help="the full-context baseline's limit (EVAL_FULL_CONTEXT_BYTES; default 100000)",
    )
    p.add_argument("--no-baselines", action="store_true", help="memory only")
    p.add_argument("--limit", type=int, default=None, help="the first N conversations only")
    p.add_argument(
        "--questions", type=int, default=None, help="the first N questions of each conversation"
    )
    p.add_argument(
        "--category",
        action="append",
        default=[],
        help="only these question categories: names or LoCoMo's numbers, e.g. 1,2,3,4 (what"
        " published LoCoMo figures use); repeatable",
    )
    p.add_argument(
        "--no-prune",
        action="store_true",
        help="no inactivity pruning during the replay (default: the bot's, on its own clock)",
    )
    p.add_argument(
        "--late-worker",
        action="store_true",
        help="run the worker only after each conversation's last turn (a worker that was down)",
    )
    p.add_argument(
        "--busy-group",
        action="store_true",
        help="play each conversation asked about in a group Topic, then two other conversations"
        " of the dataset after it (other speakers), and only then ask its questions",
    )
    p.add_argument(
        "--coverage",
        action="store_true",
        help="print only the model-free part (evidence coverage, records per conversation);"
        " report.md still has everything",
    )
    p.add_argument("--keep", action="store_true", help="keep the eval workspaces (no purge)")
    p.add_argument(
        "--run-id", type=_run_id, default=None, help="name the run (default: time and random)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def add_parser(subparsers: Any, **kwargs: Any) -> None:
    """Register `eval` on a command line's subparsers (kwargs go to add_parser, e.g.
    parents=[...]). Run what it parses with `asyncio.run(run_args(args))` (also set as
    `args.eval_handler`)."""
    kwargs.setdefault("help", HELP)
    kwargs.setdefault("description", __doc__.split("\n\n")[0] if __doc__ else HELP)
    p = configure(subparsers.add_parser("eval", **kwargs))
    p.set_defaults(eval_handler=run_args)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bot-memory eval", description=__doc__.split("\n\n")[0] if __doc__ else HELP
    )
    p.add_argument("--log-level", default="warning", help="debug, info, warning")
    return configure(p)


async def run_args(args: argparse.Namespace, *, settings: MemorySettings | None = None) -> int:
    """Run a parsed `eval` command; `settings` replaces the environment's (tests)."""
    fail = _printer(sys.stderr)
    say = (lambda _: None) if args.quiet else fail
    try:
        dataset = formats.load(args.dataset, None if args.format == "auto" else args.format)
    except DatasetError as exc:
        fail(f"bot-memory eval: {exc}")
        return 2
    whole = dataset
    dataset = formats.limit(
        dataset, conversations=args.limit, questions=args.questions, categories=args.category
    )
    if args.busy_group:
        try:
            dataset = busy_group.arrange(dataset, pool=whole.conversations)
        except DatasetError as exc:
            fail(f"bot-memory eval: {exc}")
            return 2
    settings = settings or MemorySettings()
    judge = None
    if args.judge:
        try:
            judge = Judge.configured(settings, base_url=args.judge_base_url, model=args.judge_model)
        except JudgeUnavailable as exc:
            fail(f"bot-memory eval: {exc}")
            return 2
    options = Options(
        full_context_bytes=args.full_context_bytes,
        baselines=not args.no_baselines,
        keep=args.keep,
        run_id=args.run_id,
        prune=not args.no_prune,
        late_worker=args.late_worker,
    )
    say(
        f"{dataset.name}: {len(dataset.conversations)} conversation(s),"
        f" {dataset.question_count} question(s)"
    )
    try:
        run = await evaluate(dataset, settings, options=options, judge=judge, progress=say)
    except (DatabaseUnavailable, SharedDatabase) as exc:
        fail(f"bot-memory eval: {exc}")
        return 2
    finally:
        if judge is not None:
            await judge.aclose()
    written = report.write(run, args.out)
    print("\n".join(report.coverage_lines(run)) if args.coverage else report.markdown(run))
    print(f"wrote {written['report']} and {written['json']}")
    if written["chart"] is None:
        print("chart skipped: matplotlib is not installed (pip install 'bot-memory[eval]')")
    else:
        print(f"wrote {written['chart']}")
    if args.keep:
        print("kept workspaces: " + ", ".join(c.workspace for c in run.conversations))
    return 1 if run.failed else 0


async def run_eval(argv: list[str], *, settings: MemorySettings | None = None) -> int:
    """The command from an event loop (tests, scripts): argv as after `bot-memory eval`."""
    return await run_args(parser().parse_args(argv), settings=settings)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    return asyncio.run(run_args(args))


def _run_id(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", value):
        raise argparse.ArgumentTypeError("letters, digits, '.', '_' and '-' only (40 at most)")
    return value


def _printer(stream: Any) -> Callable[[str], None]:
    def say(line: str) -> None:
        print(line, file=stream, flush=True)

    return say


if __name__ == "__main__":
    sys.exit(main())
