"""`bot-memory <command>`: the operator's command line (also `python -m bot_memory`).

Same settings as the bot (BOT_MEMORY_*, DATABASE_URL, LLM_*); without DATABASE_URL the
embedded server in BOT_MEMORY_DATA_DIR is used, e.g. the one `make demo` leaves behind. Tables
for people, --json for scripts; exit status 0 when all is well, 1 when the command found a
problem (a trace, a missing ID), 2 for a usage or connection error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bot_memory.database import Database, DatabaseUnavailable
from bot_memory.logs import JsonFormatter
from bot_memory.settings import MemorySettings
from bot_memory.traces import find_traces

Command = Callable[[argparse.Namespace, Database], Awaitable[int]]


def configure_logging(level: str, *, as_json: bool = False) -> None:
    """The command line is an application: it configures logging (a library never does)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if as_json
        else logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    )
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain text table (no dependencies)."""
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    body = ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


def emit(args: argparse.Namespace, rows: list[dict[str, Any]], columns: Sequence[str]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(rows, ensure_ascii=False, default=str, indent=2))
    elif rows:
        print(table(rows, columns))
    else:
        print("(none)")


async def verify_forgotten(args: argparse.Namespace, db: Database) -> int:
    async with db.pool.acquire() as conn:
        traces = await find_traces(
            conn, args.workspace, texts=args.text, source_ids=args.source, after=args.after
        )
    rows = [t.as_dict() for t in traces]
    emit(args, rows, ["table", "column", "row", "needle", "expected"])
    unexpected = [t for t in traces if not t.expected]
    if not args.json:
        print(
            f"\n{len(unexpected)} unexpected trace(s), {len(traces) - len(unexpected)} expected",
            file=sys.stderr,
        )
    return 1 if unexpected else 0


async def run_worker() -> int:
    """The pipeline without Telegram: N bot processes and M workers can share one database
    (claims use SKIP LOCKED, so no job runs twice). SIGTERM / SIGINT stop it gracefully."""
    from bot_memory.service import Memory

    try:
        memory = await Memory.open(MemorySettings())
    except DatabaseUnavailable as exc:
        print(f"bot-memory: {exc}", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    memory.worker.start()
    try:
        await stop.wait()
    finally:
        await memory.close()  # lets a call in flight finish within the grace period
    return 0


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--log-level", default=None, help="debug, info, warning")
    common.add_argument(
        "--log-json", action="store_true", default=None, help="one JSON object per log line"
    )
    p = argparse.ArgumentParser(
        prog="bot-memory", description=__doc__.split("\n\n")[0], parents=[common]
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("run", parents=[common], help="the reference bot with long polling (BOT_TOKEN)")
    sub.add_parser("demo", parents=[common], help="the whole loop offline, step by step")
    sub.add_parser("worker", parents=[common], help="run the background pipeline only")
    verify = sub.add_parser(
        "verify-forgotten",
        parents=[common],
        help="report every place a text or source ID still appears in a workspace",
    )
    verify.add_argument("workspace")
    verify.add_argument("--text", action="append", default=[], help="a text to look for")
    verify.add_argument("--source", action="append", default=[], help="a source ID (m123)")
    verify.add_argument(
        "--after",
        choices=["forget", "erase"],
        default="erase",
        help="forget: original messages and tombstones may keep it; erase: nothing may",
    )
    verify.add_argument("--json", action="store_true")
    verify.set_defaults(handler=verify_forgotten)
    return p


async def _with_database(command: Command, args: argparse.Namespace) -> int:
    try:
        db = await Database.open(MemorySettings())
    except DatabaseUnavailable as exc:
        print(f"bot-memory: {exc}", file=sys.stderr)
        return 2
    try:
        return await command(args, db)
    finally:
        await db.close()


async def run_command(argv: list[str]) -> int:
    """A database command, for callers already inside an event loop (tests, scripts)."""
    args = parser().parse_args(argv)
    return await _with_database(args.handler, args)


def _json_logs(args: argparse.Namespace) -> bool:
    return bool(args.log_json) or os.environ.get("BOT_MEMORY_LOG_JSON", "") in ("1", "true")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "run":
        configure_logging(args.log_level or "info", as_json=_json_logs(args))
        from bot_memory_aiogram.app import main as run_main

        return run_main()
    if args.command == "demo":
        configure_logging(args.log_level or "warning", as_json=_json_logs(args))
        from bot_memory_aiogram.demo import main as demo_main

        return demo_main()
    if args.command == "worker":
        configure_logging(args.log_level or "info", as_json=_json_logs(args))
        return asyncio.run(run_worker())
    configure_logging(args.log_level or "warning", as_json=_json_logs(args))
    return asyncio.run(_with_database(args.handler, args))
