"""Logging like a library: stdlib loggers under `bot_memory.*` and `bot_memory_aiogram.*`,
nothing configured globally, so the host's logging configuration decides what is shown.

Events are short names with key=value fields, `log.info("memory.opened", provider="offline")`,
logged as the message "memory.opened provider=offline" with the event and fields also on the
record (`record.event`, `record.fields`) for structured output: `JsonFormatter` below writes one
JSON object per line. No user text is logged: fields carry IDs, counts, outcomes and reasons.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any


def _text(value: Any) -> str:
    text = str(value)
    return json.dumps(text, ensure_ascii=False) if (" " in text or not text) else text


class EventLogger:
    """A stdlib logger that takes an event name and fields."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def _log(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if not self.logger.isEnabledFor(level):
            return
        exc_info = bool(fields.pop("exc_info", False))
        message = " ".join([event, *(f"{k}={_text(v)}" for k, v in fields.items())])
        self.logger.log(
            level,
            message,
            exc_info=exc_info,
            extra={"event": event, "fields": fields},
            stacklevel=3,
        )

    def debug(self, event: str, **fields: Any) -> None:
        self._log(logging.DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log(logging.INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log(logging.WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, fields)

    def exception(self, event: str, **fields: Any) -> None:
        self._log(logging.ERROR, event, {**fields, "exc_info": True})


def get_logger(name: str) -> EventLogger:
    return EventLogger(logging.getLogger(name))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, event and its fields.

    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    logging.getLogger("bot_memory").addHandler(handler)
    """

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": getattr(record, "event", record.getMessage()),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, ensure_ascii=False, default=str)
