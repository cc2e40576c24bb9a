"""How a record and a scope are read from their rows: the columns, and the models built from
them (every read of records selects RECORD_COLUMNS, with RECORD_SOURCES when it needs them)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import asyncpg

from bot_memory.records import MemoryRecord, ScopeIndex, ScopeState, SourceRef, source_id
from bot_memory.scopes import Scope

# A record as `record_from_row` reads it, from `memory_records r`: its columns, and its sources
# as JSON (its own first, then those inherited, each in message order; bm_records_json reads
# the same on the server, and a test holds the two to each other).
RECORD_COLUMNS = (
    "r.id, r.scope_key, r.origin, r.title, r.summary, r.speaker_ids, r.thread_ids, r.cited,"
    " r.derived_from, r.created_at, r.last_used_at, r.valid, r.invalid_reason,"
    " r.available_until, r.replaced_by, r.replaced_at"
)
RECORD_SOURCES = (
    "coalesce((SELECT json_agg(json_build_object('message_id', s.message_id, 'hash', s.hash,"
    " 'speaker_id', s.speaker_id, 'thread_id', s.thread_id, 'role', s.role,"
    " 'inherited', s.inherited) ORDER BY s.inherited, s.message_id) FROM record_sources s"
    " WHERE s.workspace_id = r.workspace_id AND s.record_id = r.id), '[]') AS sources"
)
SCOPE_COLUMNS = (
    "scope_key, kind, bot_id, chat_id, user_id, topic_id, enabled, suspended, off_since,"
    " off_ranges, extracted_through, index_text, index_ids, index_built_at, index_pending,"
    " index_candidates"
)


def record_from_row(row: asyncpg.Record) -> MemoryRecord:
    sources = row.get("sources")
    return MemoryRecord(
        id=row["id"],
        scope_key=row["scope_key"],
        origin=row["origin"],
        title=row["title"],
        summary=row["summary"],
        speaker_ids=list(row["speaker_ids"]),
        thread_ids=list(row["thread_ids"]),
        sources=[SourceRef.model_validate(s) for s in json.loads(sources)] if sources else [],
        cited=list(row["cited"]),
        derived_from=list(row["derived_from"]),
        created_at=row["created_at"],
        last_used_at=row["last_used_at"],
        valid=row["valid"],
        invalid_reason=row["invalid_reason"],
        available_until=row["available_until"],
        replaced_by=row["replaced_by"],
        replaced_at=row["replaced_at"],
    )


def scope_from_row(workspace: str, row: Mapping[str, Any]) -> ScopeState:
    """A scope's state from its row (or the row as JSON: ranges as a list, times as text)."""
    scope = Scope(
        workspace=workspace,
        bot_id=row["bot_id"],
        kind=row["kind"],
        chat_id=row["chat_id"],
        user_id=row["user_id"],
        topic_id=row["topic_id"],
    )
    return ScopeState(
        scope=scope,
        enabled=row["enabled"],
        suspended=row["suspended"],
        off_since=row["off_since"],
        off_ranges=[tuple(r) for r in _json(row["off_ranges"])],
        extracted_through=row["extracted_through"],
        index=ScopeIndex(
            text=row["index_text"],
            memory_ids=list(row["index_ids"]),
            candidates=list(row["index_candidates"]),
            built_at=row["index_built_at"],
            pending=row["index_pending"],
        ),
    )


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


@dataclass(frozen=True)
class HistoryMessage:
    message_id: int
    role: Literal["user", "assistant"]
    speaker_id: int
    thread_id: int
    text: str
    created_at: datetime

    @property
    def source_id(self) -> str:
        return source_id(self.message_id)


def history_of(rows: list[asyncpg.Record]) -> list[HistoryMessage]:
    """HISTORY's rows (newest first) as the conversation they tell, oldest first."""
    return [_history(r) for r in reversed(rows)]


def _history(r: asyncpg.Record) -> HistoryMessage:
    return HistoryMessage(
        message_id=r["id"],
        role=r["role"],
        speaker_id=r["speaker_id"],
        thread_id=r["thread_id"],
        text=r["text"],
        created_at=r["sent_at"],
    )
