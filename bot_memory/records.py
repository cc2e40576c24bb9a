"""Memory records and scope state, and the pure decisions made over them.

Everything here is plain functions over pydantic models: no I/O. The workspace transaction
(`workspace.py`) loads what a decision needs under the workspace row lock, these functions
decide, and the transaction writes the result back together with the recall rows derived from it.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bot_memory.scopes import Scope

RecordOrigin = Literal["extracted", "note"]
Role = Literal["user", "assistant"]


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def fingerprint(title: str, summary: str) -> str:
    """Changes when a record's content does (the migration computes the same in SQL)."""
    return content_hash(f"{title}\x1f{summary}")


def new_memory_id() -> str:
    return "mem_" + uuid.uuid4().hex[:12]


def source_id(message_id: int) -> str:
    """Public ID of a stored message; the model and the tools cite sources by it."""
    return f"m{message_id}"


def message_id_of(source: str) -> int | None:
    """The stored message a public source ID names, or None if it is not one."""
    if len(source) > 1 and source[0] == "m" and source[1:].isdigit():
        return int(source[1:])
    return None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceRef(_Strict):
    message_id: int
    hash: str
    speaker_id: int
    thread_id: int = 0
    role: Role = "user"
    inherited: bool = False  # a dependency carried over from a record this one was built with

    @property
    def id(self) -> str:
        return source_id(self.message_id)


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
    derived_from: list[str] = Field(default_factory=list)  # records it was built with
    created_at: datetime
    last_used_at: datetime
    valid: bool = True
    invalid_reason: str | None = None
    available_until: datetime | None = None  # earliest retention boundary of its sources
    # A later record of its scope that corrected it or made it obsolete, and when: a replaced
    # record is kept (and shown as replaced) but no longer recalled, searched or consolidated.
    replaced_by: str | None = None
    replaced_at: datetime | None = None

    @property
    def replaced(self) -> bool:
        return self.replaced_by is not None

    @property
    def source_ids(self) -> list[str]:
        return [s.id for s in self.sources]

    @property
    def message_ids(self) -> set[int]:
        return {s.message_id for s in self.sources}

    @property
    def fingerprint(self) -> str:
        """What a consolidation snapshot pins: changes when the record's content changes."""
        return fingerprint(self.title, self.summary)

    def available(self, now: datetime) -> bool:
        return self.valid and (self.available_until is None or self.available_until > now)


class ScopeIndex(_Strict):
    text: str = ""
    memory_ids: list[str] = Field(default_factory=list)
    # Every record it was built from: its text may repeat any of them, so it goes with them.
    candidates: list[str] = Field(default_factory=list)
    built_at: datetime | None = None
    pending: bool = False  # a record changed since the index was built


class ScopeState(_Strict):
    """One scope's switches, watermark and index (a row of memory_scopes)."""

    scope: Scope
    enabled: bool = True
    suspended: bool = False  # the bot left the chat: stored, but neither read nor generated
    index: ScopeIndex = Field(default_factory=ScopeIndex)
    extracted_through: int = 0  # newest request ID whose sources were handed to extraction
    off_since: int | None = None  # the request that turned memory off, while it is off
    # (off request, on request) pairs: what was said in between is never extracted later.
    off_ranges: list[tuple[int, int]] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return self.scope.key

    @property
    def active(self) -> bool:
        """Memory is read and generated here."""
        return self.enabled and not self.suspended

    def was_off(self, request_id: int) -> bool:
        if self.off_since is not None and request_id > self.off_since:
            return True
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


# --- pure decisions -----------------------------------------------------------------------------


def depending_on(records: Iterable[MemoryRecord], message_ids: set[int]) -> list[MemoryRecord]:
    """Records with any dependency (direct or inherited) among these messages."""
    return [r for r in records if not message_ids.isdisjoint(r.message_ids)]


def forget_closure(records: Iterable[MemoryRecord], selected: set[str]) -> list[MemoryRecord]:
    """The selected records and every record whose dependencies overlap theirs.

    Direct overlap only, not a transitive walk: a record that overlaps a cascaded record but
    none of the selected ones stays. Dependencies include inherited ones, so a record built with
    a selected record is always reached. The result does not depend on the order of `records`.
    """
    pool = list(records)
    chosen = [r for r in pool if r.id in selected]
    doomed: set[int] = set()
    for record in chosen:
        doomed |= record.message_ids
    reached = {r.id for r in chosen} | {r.id for r in depending_on(pool, doomed)}
    return sorted((r for r in pool if r.id in reached), key=lambda r: r.id)


# --- what recall reads --------------------------------------------------------------------------
# Recall rows are derived on the server (bm_derive and bm_prepend in storage/schema.sql, from
# the scope's row and its records); these are their shapes as the application reads them.

RECALL_SUMMARY_CHARS = 240  # an entry's share of a record's summary (passed to the server)


class RecallEntry(_Strict):
    id: str
    title: str
    summary: str
    speaker_ids: list[int]
    thread_ids: list[int] = Field(default_factory=list)
    until: datetime | None = None  # the record is unavailable from this moment
    created_at: datetime | None = None
    source_ids: list[str] = Field(default_factory=list)  # for the host's read grants


class RecallRow(_Strict):
    """Derived from a scope and its records; written in the same transaction as they are."""

    enabled: bool
    suspended: bool = False
    pending: bool
    index_text: str
    memory_ids: list[str]
    index_entries: list[RecallEntry] = Field(default_factory=list)  # the records it names
    directory: list[RecallEntry]
