"""The documents commits take (`c jsonb`): a record as it is stored, and the JSON they are
sent as (dates as ISO text, which PostgreSQL reads as timestamptz)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from bot_memory.records import MemoryRecord
from bot_memory.storage.limits import Limits, limits_document
from bot_memory.terms import record_vector


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, ensure_ascii=False, default=_value)


def _value(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON: {type(value).__name__}")


def record_document(workspace: str, record: MemoryRecord, limits: Limits) -> dict[str, Any]:
    """A record to store (bm_record_store): the record, its fingerprint and search terms, and
    the cap it is stored under."""
    return {
        "workspace": workspace,
        "record": record.model_dump(mode="json"),
        "fingerprint": record.fingerprint,
        "search": record_vector(record.title, record.summary),
        "limits": limits_document(limits),
    }
