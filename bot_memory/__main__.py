"""`python -m bot_memory <command>` and the installed `bot-memory` script.

The one place the core meets the aiogram adapter: `run` and `demo` are the adapter's, and so is
the worker's /metrics server (aiohttp); the rest of the command line is the core's
(`bot_memory.cli`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from bot_memory.cli import main as command_line


def _run(args: argparse.Namespace) -> int:
    from bot_memory_aiogram.app import main as run

    return run()


def _demo(args: argparse.Namespace) -> int:
    from bot_memory_aiogram.demo import main as demo

    return demo(serve=args.serve, port=args.port)


async def _serve_metrics(memory: Any) -> Callable[[], Awaitable[None]] | None:
    from bot_memory_aiogram.metrics import serve_configured

    runner = await serve_configured(memory)
    return None if runner is None else runner.cleanup


def main(argv: list[str] | None = None) -> int:
    return command_line(argv, adapter={"run": _run, "demo": _demo}, serve_metrics=_serve_metrics)


if __name__ == "__main__":
    sys.exit(main())
