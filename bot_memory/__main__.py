"""`python -m bot_memory run|demo`: the entry points (the only core module that wires aiogram)."""

from __future__ import annotations

import argparse
import logging
import sys

import structlog


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), format="%(message)s", stream=sys.stderr)
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bot_memory", description=__doc__)
    parser.add_argument("command", choices=["run", "demo"])
    parser.add_argument(
        "--log-level",
        default=None,
        help="debug, info, warning (default: info for run, warning for demo)",
    )
    args = parser.parse_args(argv)
    if args.command == "run":
        configure_logging(args.log_level or "info")
        from bot_memory_aiogram.app import main as run_main

        return run_main()
    configure_logging(args.log_level or "warning")
    from bot_memory_aiogram.demo import main as demo_main

    return demo_main()


if __name__ == "__main__":
    sys.exit(main())
