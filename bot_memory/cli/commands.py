"""`bot-memory <command>`: the operator's command line (also `python -m bot_memory`).

Same settings as the bot (BOT_MEMORY_*, DATABASE_URL, LLM_*, and the settings file that
BOT_MEMORY_SETTINGS or `--settings PATH` names); without DATABASE_URL the embedded server in
BOT_MEMORY_DATA_DIR is used, e.g. the one `make demo` leaves behind. Tables
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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot_memory.cli import operations
from bot_memory.evaluation import cli as evaluation
from bot_memory.logs import JsonFormatter
from bot_memory.pipeline import Pin, live_window
from bot_memory.retention import find_traces
from bot_memory.settings import MemorySettings
from bot_memory.settings_file import SETTINGS_FILE_VARIABLE, SettingsFileError
from bot_memory.storage import (
    Database,
    DatabaseUnavailable,
    EmbeddedPostgres,
    Limits,
    SchemaBehind,
    Store,
    latest_version,
    migrate,
)

Command = Callable[[argparse.Namespace, Database], Awaitable[int]]
Entry = Callable[[argparse.Namespace], int]  # a command the adapter runs: its exit status
# The adapter's /metrics and /healthz server for `bot-memory worker` (BOT_MEMORY_METRICS_PORT):
# serve(memory) -> stop(), or None when the port is not set.
ServeMetrics = Callable[[Any], Awaitable[Callable[[], Awaitable[None]] | None]]


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
    traces = await find_traces(
        _store(db), args.workspace, texts=args.text, source_ids=args.source, after=args.after
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


async def run_worker(serve_metrics: ServeMetrics | None = None) -> int:
    """The pipeline without Telegram: N bot processes and M workers can share one database
    (claims use SKIP LOCKED, so no job runs twice). SIGTERM / SIGINT stop it gracefully.
    With BOT_MEMORY_METRICS_PORT set, /metrics and /healthz are served (`serve_metrics`, the
    adapter's aiohttp server, wired by `bot_memory.__main__`)."""
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
    stop_serving = None
    if memory.settings.metrics_port is not None:
        if serve_metrics is None:
            print("bot-memory: serving metrics needs the aiogram adapter", file=sys.stderr)
        else:
            stop_serving = await serve_metrics(memory)
    memory.worker.start()
    try:
        await stop.wait()
    finally:
        if stop_serving is not None:
            await stop_serving()
        await memory.close()  # lets a call in flight finish within the grace period
    return 0


async def run_migrate(args: argparse.Namespace) -> int:
    """Apply pending migrations (at BOT_MEMORY_MIGRATION_DATABASE_URL when set, else
    DATABASE_URL or the embedded server) and say which; --check only says whether any are."""
    settings = MemorySettings()
    check = bool(getattr(args, "check", False))
    embedded = None
    try:
        url = settings.database_url or settings.migration_database_url
        if not url:
            embedded = EmbeddedPostgres(settings.data_dir)
            url = await embedded.start()
        applied = await migrate(settings, url, allowed=not check)
    except DatabaseUnavailable as exc:
        print(f"bot-memory: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, SchemaBehind) else 2
    finally:
        if embedded is not None:
            await embedded.stop()
    latest = latest_version()
    if applied:
        names = ", ".join(f"{v:03d}" for v in applied)
        print(f"applied {len(applied)} migration(s): {names}; the schema is at {latest}")
    else:
        print(f"the schema is current (at {latest}): nothing to apply")
    return 0


def _money(value: Any) -> str:
    return f"${float(value):.4f}"


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "-"


async def show_status(args: argparse.Namespace, db: Database) -> int:
    # A worker that missed a few ticks is likely stopped (or stuck): say so, not just when.
    settings = MemorySettings()
    quiet = live_window(settings.tick_interval_seconds)
    cap = (settings.workspace_max_records, settings.scope_max_share)
    report = await operations.status(_store(db), limit=args.limit, live_within=quiet, cap=cap)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, default=str, indent=2))
        return 0
    budget = settings.workspace_budget_usd
    totals = report["totals"]
    spaces, records = totals.get("workspaces", 0), totals.get("records", 0)
    print(
        f"{spaces} workspace{'' if spaces == 1 else 's'},"
        f" {records} memor{'y' if records == 1 else 'ies'}\n"
    )
    rows = [
        {
            "workspace": w["workspace"],
            "records": w["records"],
            "scopes": w["scopes"],
            "jobs": " ".join(f"{k}:{v}" for k, v in sorted(w["jobs"].items())) or "-",
            "spent": f"{_money(w['spent_usd'])} of ${budget:.2f}",
            "last served": _when(w["last_served_at"]),
        }
        for w in report["workspaces"]
    ]
    emit(args, rows, ["workspace", "records", "scopes", "jobs", "spent", "last served"])
    if report["at_share"]:
        print(
            f"\nAt or over their fair share ({report['at_share'][0]['share']} records of a cap"
            f" of {settings.workspace_max_records}, BOT_MEMORY_SCOPE_MAX_SHARE) while others"
            " hold memories too: past the cap, their least used records go first:"
        )
        emit(args, report["at_share"], ["workspace", "holder", "who", "held"])
    if report["problems"]:
        print("\nJobs that need an operator (failed, or stopped on an unknown outcome or budget):")
        problems = [
            {**p, "at": _when(p["at"]), "reason": (p["reason"] or "")[:90]}
            for p in report["problems"]
        ]
        emit(args, problems, ["job", "workspace", "phase", "stop_kind", "claims", "at", "reason"])
    print("\nWorkers:")
    workers = [
        {
            **w,
            "calls": str(Pin(w["provider"], w["model"])) if w["provider"] else "-",
            "last tick": _when(w["last_tick_at"]),
            "state": "ticking" if w["live"] else "silent",
        }
        for w in report["workers"]
    ]
    emit(args, workers, ["worker", "calls", "last tick", "state"])
    if report["waiting"]:
        print(
            "\nJobs waiting for a model no live worker calls (they run under the model the bot"
            " answered with; give a worker the bot's settings: --settings or BOT_MEMORY_SETTINGS):"
        )
        for group in report["waiting"]:
            wanted = Pin(group["provider"], group["model"])
            print(f"  {group['jobs']} job(s) since {_when(group['since'])} want {wanted}")
            for w in group["lacking"]:
                print(f"    worker {w['worker']} lacks {w['lacks']}")
            if not group["lacking"]:
                print("    no worker is running (bot-memory worker, or BOT_MEMORY_RUN_WORKER=true)")
    if report["disagreements"]:
        print(
            "\nWorkers running with other settings than the bot (they plan its conversations"
            " by theirs; give a worker the bot's settings: --settings or BOT_MEMORY_SETTINGS):"
        )
        for d in report["disagreements"]:
            print(
                f"  worker {d['worker']}: {d['setting']} = {d['worker_value']}"
                f" (bot {d['bot_id']}: {d['bot_value']})"
            )
    return 0


async def show_inspect(args: argparse.Namespace, db: Database) -> int:
    records = await operations.inspect(_store(db), args.workspace, args.scope)
    if args.json:
        print(json.dumps(records, ensure_ascii=False, indent=2))
        return 0
    rows = [
        {
            "id": r["id"],
            "scope": r["scope_key"],
            "origin": r["origin"],
            "valid": "yes" if r["valid"] else f"no ({r['invalid_reason']})",
            "created": r["created_at"][:16],
            "used": r["last_used_at"][:16],
            "until": (r["available_until"] or "-")[:16],
            "speakers": ",".join(map(str, r["speaker_ids"])),
            "sources": " ".join(
                f"{s['source_id']}:{s['hash'][:8]}{'*' if s['inherited'] else ''}"
                for s in r["sources"][:4]
            )
            + (f" +{len(r['sources']) - 4}" if len(r["sources"]) > 4 else ""),
            "title": r["title"][:40],
        }
        for r in records
    ]
    emit(
        args,
        rows,
        [
            "id",
            "scope",
            "origin",
            "valid",
            "created",
            "used",
            "until",
            "speakers",
            "sources",
            "title",
        ],
    )
    print("\n(* an inherited source: carried over from a record this one was built with)")
    return 0


async def run_export(args: argparse.Namespace, db: Database) -> int:
    records = await operations.export(_store(db), user_id=args.user, scope_key=args.scope)
    for record in records:
        print(json.dumps(record, ensure_ascii=False))
    return 0


async def run_forget(args: argparse.Namespace, db: Database) -> int:
    result = await operations.forget(_store(db), args.memory_id)
    payload = {"outcome": result.outcome, "forgotten": result.memory_ids}
    print(
        json.dumps(payload)
        if args.json
        else f"{result.outcome}: {', '.join(result.memory_ids) or '-'}"
    )
    return 0 if result.outcome == "forgotten" else 1


async def run_consolidate(args: argparse.Namespace, db: Database) -> int:
    from bot_memory.models import build_model

    model = build_model(MemorySettings())
    try:
        job = await operations.consolidate(
            _store(db), args.scope, provider=model.provider, model=model.model
        )
    finally:
        await model.aclose()
    print(json.dumps({"job": job}) if args.json else f"consolidation queued: job {job}")
    return 0


async def run_retry(args: argparse.Namespace, db: Database) -> int:
    job = await operations.retry(_store(db), args.job_id)
    print(json.dumps(job) if args.json else f"job {job['id']} re-armed ({job['phase']})")
    return 0


def _store(db: Database) -> Store:
    """A store on the main pool, with the settings' limits (what the operator's commands read
    and change through)."""
    return db.store(Limits.from_settings(MemorySettings()))


def parser() -> argparse.ArgumentParser:
    # SUPPRESS: an option given before the command is not reset by the command's own parser.
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    common.add_argument("--log-level", help="debug, info, warning")
    common.add_argument("--log-json", action="store_true", help="one JSON object per log line")
    common.add_argument(
        "--settings",
        metavar="PATH",
        help="a settings file (.env lines or .toml), as BOT_MEMORY_SETTINGS: the bot's own",
    )
    p = argparse.ArgumentParser(
        prog="bot-memory", description=__doc__.split("\n\n")[0], parents=[common]
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("run", parents=[common], help="the reference bot with long polling (BOT_TOKEN)")
    demo = sub.add_parser("demo", parents=[common], help="the whole loop offline, step by step")
    demo.add_argument(
        "--serve", action="store_true", help="keep the emulator and the Mini App up (Ctrl-C)"
    )
    demo.add_argument("--port", type=int, default=None, help="the Mini App's local port")
    sub.add_parser("worker", parents=[common], help="run the background pipeline only")
    mig = sub.add_parser(
        "migrate",
        parents=[common],
        help="apply pending schema migrations (at deploy; BOT_MEMORY_MIGRATION_DATABASE_URL)",
    )
    mig.add_argument(
        "--check", action="store_true", help="apply nothing: exit 1 if the schema is behind"
    )
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

    def command(name: str, help_: str, handler: Command) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, parents=[common], help=help_)
        sp.add_argument("--json", action="store_true", help="JSON for scripts")
        sp.set_defaults(handler=handler)
        return sp

    st = command("status", "workspaces, jobs that need an operator, workers", show_status)
    st.add_argument("--limit", type=int, default=50, help="workspaces to list (newest first)")
    ins = command("inspect", "a workspace's records with their provenance", show_inspect)
    ins.add_argument("workspace")
    ins.add_argument("--scope", help="one scope key")
    exp = command("export", "JSON Lines of the records a person may take with them", run_export)
    who = exp.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", type=int, help="a Telegram user ID")
    who.add_argument("--scope", help="one scope key")
    fg = command("forget", "forget one memory (and what overlaps it), as an admin", run_forget)
    fg.add_argument("memory_id")
    co = command("consolidate", "queue a consolidation of a scope now", run_consolidate)
    co.add_argument("scope")
    rt = command(
        "retry", "re-arm a job stopped on an unknown outcome (check the bill first)", run_retry
    )
    rt.add_argument("job_id", type=int)
    evaluation.add_parser(sub, parents=[common])
    return p


async def _with_database(command: Command, args: argparse.Namespace) -> int:
    try:
        db = await Database.open(MemorySettings())
    except DatabaseUnavailable as exc:
        print(f"bot-memory: {exc}", file=sys.stderr)
        return 2
    try:
        return await command(args, db)
    except operations.NotFound as exc:
        print(f"bot-memory: {exc}", file=sys.stderr)
        return 1
    finally:
        await db.close()


async def run_command(argv: list[str]) -> int:
    """A database command, for callers already inside an event loop (tests, scripts)."""
    args = _parse(argv)
    return await _with_database(args.handler, args)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    args = parser().parse_args(argv)
    args.log_level = getattr(args, "log_level", None)
    args.log_json = getattr(args, "log_json", False)
    if getattr(args, "settings", None):
        # Through the environment, so every MemorySettings() of this process (the worker's,
        # the reference bot's) reads it, exactly as the bot does with BOT_MEMORY_SETTINGS.
        os.environ[SETTINGS_FILE_VARIABLE] = str(Path(args.settings).expanduser().resolve())
    return args


def _json_logs(args: argparse.Namespace) -> bool:
    return bool(args.log_json) or os.environ.get("BOT_MEMORY_LOG_JSON", "") in ("1", "true")


def _settings_errors(
    exc: ValidationError | SettingsFileError, *, file_flag: bool = False
) -> list[str]:
    """One line per bad setting, named as the environment names it (a settings file as the
    user gave it: `--settings` when it came from the command line)."""
    if isinstance(exc, SettingsFileError):
        return [f"--settings: {exc.detail}" if file_flag else str(exc)]
    lines = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"])
        field = MemorySettings.model_fields.get(name)
        if field is not None and field.validation_alias is None:
            name = f"BOT_MEMORY_{name}"
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"{name.upper()}: {message}" if name else message)
    return lines


def main(
    argv: list[str] | None = None,
    adapter: Mapping[str, Entry] | None = None,
    serve_metrics: ServeMetrics | None = None,
) -> int:
    """The command line; `adapter` gives the commands that need Telegram (`run`, `demo`),
    wired by `bot_memory.__main__` so the core never imports the adapter."""
    args = _parse(argv)
    try:
        MemorySettings()  # every command reads them: a bad one is a line, not a traceback
    except (ValidationError, SettingsFileError) as exc:
        for line in _settings_errors(exc, file_flag=bool(getattr(args, "settings", None))):
            print(f"bot-memory: {line}", file=sys.stderr)
        return 2
    if args.command in ("run", "demo"):
        entry = (adapter or {}).get(args.command)
        if entry is None:  # the core alone has no Telegram side: `python -m bot_memory` wires it
            print(f"bot-memory: {args.command} needs the aiogram adapter", file=sys.stderr)
            return 2
        default = "info" if args.command == "run" else "warning"
        configure_logging(args.log_level or default, as_json=_json_logs(args))
        return entry(args)
    if args.command == "eval":
        configure_logging(args.log_level or "warning", as_json=_json_logs(args))
        code: int = asyncio.run(args.eval_handler(args))
        return code
    if args.command == "migrate":
        configure_logging(args.log_level or "warning", as_json=_json_logs(args))
        return asyncio.run(run_migrate(args))
    if args.command == "worker":
        configure_logging(args.log_level or "info", as_json=_json_logs(args))
        return asyncio.run(run_worker(serve_metrics))
    configure_logging(args.log_level or "warning", as_json=_json_logs(args))
    return asyncio.run(_with_database(args.handler, args))
