"""The per-workspace memory record (JSONB) and the pure changes made to it.

Everything here is plain functions over pydantic models: no I/O. The store loads the record
under its row lock, these functions change it, and the store writes it back in the same
transaction together with the recall rows derived from it.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RecordOrigin = Literal["extracted", "note"]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def new_memory_id() -> str:
    return "mem_" + uuid.uuid4().hex[:12]


def source_id(message_id: int) -> str:
    """Public ID of a stored message; the model and the tools cite sources by it."""
    return f"m{message_id}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceRef(_Strict):
    id: str
    hash: str
    speaker_id: int
    thread_id: int = 0
    role: Literal["user", "assistant"] = "user"


class MemoryRecord(_Strict):
    id: str
    scope_key: str
    origin: RecordOrigin
    title: str
    summary: str
    speaker_ids: list[int]
    thread_ids: list[int]
    sources: list[SourceRef]  # every dependency: retention and invalidation follow these
    cited: list[str] = Field(default_factory=list)  # the subset the summary cites
    created_at: datetime
    last_used_at: datetime
    valid: bool = True
    invalid_reason: str | None = None

    @property
    def source_ids(self) -> list[str]:
        return [s.id for s in self.sources]

    @property
    def fingerprint(self) -> str:
        """What a consolidation snapshot pins: changes when the record's content changes."""
        return content_hash(f"{self.title}\0{self.summary}\0{self.valid}")


class ScopeIndex(_Strict):
    text: str = ""
    memory_ids: list[str] = Field(default_factory=list)
    built_at: datetime | None = None
    pending: bool = False  # a record changed since the index was built


class ScopeMemory(_Strict):
    enabled: bool = True
    index: ScopeIndex = Field(default_factory=ScopeIndex)
    extracted_through: int = 0  # newest request ID whose sources were handed to extraction
    tombstones: list[str] = Field(default_factory=list)  # content-free source IDs, forgotten
    off_since: int | None = None  # the request that turned memory off, while it is off
    # (off request, on request) pairs: what was said in between is never extracted later.
    off_ranges: list[tuple[int, int]] = Field(default_factory=list)

    def was_off(self, request_id: int) -> bool:
        return any(lo < request_id < hi for lo, hi in self.off_ranges)

    def set_enabled(self, enabled: bool, request_id: int) -> None:
        if enabled and not self.enabled and self.off_since is not None:
            self.off_ranges.append((self.off_since, request_id))
            self.off_since = None
        elif not enabled and self.enabled:
            self.off_since = request_id
        self.enabled = enabled

    def advance(self, through_request: int) -> None:
        """Move the extraction watermark; off ranges wholly behind it are no longer needed."""
        self.extracted_through = max(self.extracted_through, through_request)
        self.off_ranges = [r for r in self.off_ranges if r[1] > self.extracted_through]


class WorkspaceState(_Strict):
    schema_version: int = 1
    scopes: dict[str, ScopeMemory] = Field(default_factory=dict)
    records: dict[str, MemoryRecord] = Field(default_factory=dict)

    def scope(self, scope_key: str) -> ScopeMemory:
        return self.scopes.setdefault(scope_key, ScopeMemory())

    def valid_records(self, scope_key: str) -> list[MemoryRecord]:
        """Newest first."""
        found = [r for r in self.records.values() if r.scope_key == scope_key and r.valid]
        found.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return found


# --- pure changes -------------------------------------------------------------------------------


def add_record(state: WorkspaceState, record: MemoryRecord) -> None:
    state.records[record.id] = record
    state.scope(record.scope_key).index.pending = True


def invalidate_sources(state: WorkspaceState, source_ids: set[str], reason: str) -> set[str]:
    """Make every record depending on these sources unavailable; return the scopes touched."""
    touched: set[str] = set()
    for record in state.records.values():
        if record.valid and source_ids.intersection(record.source_ids):
            record.valid = False
            record.invalid_reason = reason
            touched.add(record.scope_key)
    for scope_key in touched:
        _drop_invalid_from_index(state, scope_key)
    return touched


def forget(state: WorkspaceState, memory_ids: set[str]) -> tuple[set[str], set[str]]:
    """Remove the selected records and every record sharing a source with them.

    Leaves content-free source-ID tombstones so that automatic extraction cannot restore what
    was forgotten. Returns (removed record IDs, scopes touched).
    """
    selected = [state.records[i] for i in memory_ids if i in state.records]
    doomed_sources: set[str] = set()
    for record in selected:
        doomed_sources.update(record.source_ids)
    removed: set[str] = {r.id for r in selected}
    for record in state.records.values():
        if doomed_sources.intersection(record.source_ids):
            removed.add(record.id)
            doomed_sources.update(record.source_ids)
    touched: set[str] = set()
    for record_id in removed:
        record = state.records.pop(record_id)
        touched.add(record.scope_key)
        scope = state.scope(record.scope_key)
        for sid in record.source_ids:
            if sid not in scope.tombstones:
                scope.tombstones.append(sid)
    for scope_key in touched:
        _drop_invalid_from_index(state, scope_key)
    return removed, touched


def _drop_invalid_from_index(state: WorkspaceState, scope_key: str) -> None:
    """An index that mentions a removed record must not be shown again: rebuild is pending."""
    scope = state.scope(scope_key)
    alive = {r.id for r in state.valid_records(scope_key)}
    if any(mid not in alive for mid in scope.index.memory_ids):
        scope.index = ScopeIndex(pending=bool(alive))
    elif alive:
        scope.index.pending = True


def set_index(
    state: WorkspaceState, scope_key: str, text: str, memory_ids: list[str], now: datetime
) -> None:
    state.scope(scope_key).index = ScopeIndex(
        text=text, memory_ids=memory_ids, built_at=now, pending=False
    )


def mark_used(state: WorkspaceState, memory_ids: list[str], now: datetime) -> None:
    for mid in memory_ids:
        record = state.records.get(mid)
        if record is not None:
            record.last_used_at = now


def prune(
    state: WorkspaceState, now: datetime, *, inactive_days: int, max_records: int
) -> set[str]:
    """Drop records unused for inactive_days, then the least recently used beyond the cap."""
    cutoff = now - timedelta(days=inactive_days)
    stale = {r.id for r in state.records.values() if r.last_used_at < cutoff or not r.valid}
    keep = sorted(
        (r for r in state.records.values() if r.id not in stale),
        key=lambda r: (r.last_used_at, r.created_at),
        reverse=True,
    )
    stale.update(r.id for r in keep[max_records:])
    touched: set[str] = set()
    for record_id in stale:
        touched.add(state.records.pop(record_id).scope_key)
    for scope_key in touched:
        _drop_invalid_from_index(state, scope_key)
    return touched


# --- what recall reads --------------------------------------------------------------------------


class DirectoryEntry(_Strict):
    id: str
    title: str
    summary: str
    speaker_ids: list[int]


class RecallRow(_Strict):
    """Derived from the state for one scope; written in the same transaction as the state."""

    enabled: bool
    pending: bool
    index_text: str
    memory_ids: list[str]
    directory: list[DirectoryEntry]


def build_recall_row(
    state: WorkspaceState, scope_key: str, *, directory_max: int, summary_chars: int = 240
) -> RecallRow:
    scope = state.scope(scope_key)
    records = state.valid_records(scope_key)
    directory = [
        DirectoryEntry(
            id=r.id, title=r.title, summary=r.summary[:summary_chars], speaker_ids=r.speaker_ids
        )
        for r in records[:directory_max]
    ]
    return RecallRow(
        enabled=scope.enabled,
        pending=scope.index.pending or not scope.index.text,
        index_text=scope.index.text,
        memory_ids=list(scope.index.memory_ids),
        directory=directory,
    )
