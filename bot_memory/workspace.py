"""The locked workspace: memory records, scopes and tombstones, changed only under its row lock.

Every change to memory happens inside `locked_workspace`, one transaction that holds the
workspace row FOR NO KEY UPDATE (so ingress inserts, whose foreign-key checks take FOR KEY
SHARE, are never blocked by it). Records are rows of a child table keyed by the workspace; the
transaction loads only what a decision needs, the pure functions of `state.py` decide, and on
the way out the scopes that changed get their derived recall row rewritten in the same
transaction.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from bot_memory.scopes import Scope
from bot_memory.search import record_vector
from bot_memory.state import (
    MemoryRecord,
    RecallEntry,
    RecallRow,
    ScopeIndex,
    ScopeState,
    SourceRef,
    build_recall_row,
    recall_entry,
)


class WorkspaceGone(RuntimeError):
    """The workspace does not exist (never created, or purged); this path may not create it."""


@dataclass(frozen=True)
class Limits:
    directory_max: int = 8
    max_records: int = 256
    inactive_days: int = 30
    consolidation_max_candidates: int = 48


RECALL_SUMMARY_CHARS = 240  # a directory entry's share of a record's summary
_RECORD_COLUMNS = (
    "r.id, r.scope_key, r.origin, r.title, r.summary, r.speaker_ids, r.thread_ids, r.cited,"
    " r.derived_from, r.created_at, r.last_used_at, r.valid, r.invalid_reason,"
    " r.available_until"
)
_SOURCES = (
    "coalesce((SELECT json_agg(json_build_object('message_id', s.message_id, 'hash', s.hash,"
    " 'speaker_id', s.speaker_id, 'thread_id', s.thread_id, 'role', s.role,"
    " 'inherited', s.inherited) ORDER BY s.message_id) FROM record_sources s"
    " WHERE s.workspace_id = r.workspace_id AND s.record_id = r.id), '[]') AS sources"
)
_SCOPE_COLUMNS = (
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
    )


def scope_from_row(workspace: str, row: asyncpg.Record) -> ScopeState:
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
        off_ranges=[tuple(r) for r in json.loads(row["off_ranges"])],
        extracted_through=row["extracted_through"],
        index=ScopeIndex(
            text=row["index_text"],
            memory_ids=list(row["index_ids"]),
            candidates=list(row["index_candidates"]),
            built_at=row["index_built_at"],
            pending=row["index_pending"],
        ),
    )


@dataclass
class WorkspaceView:
    """A consistent read of a workspace's memory, for operators, tests and the demo."""

    workspace: str
    scopes: dict[str, ScopeState]
    records: dict[str, MemoryRecord]
    tombstones: dict[str, set[int]]

    def valid_records(self, scope_key: str) -> list[MemoryRecord]:
        """Newest first."""
        found = [r for r in self.records.values() if r.scope_key == scope_key and r.valid]
        found.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return found


async def read_workspace(conn: asyncpg.Connection, workspace: str) -> WorkspaceView:
    async with conn.transaction(isolation="repeatable_read", readonly=True):
        scopes = {
            r["scope_key"]: scope_from_row(workspace, r)
            for r in await conn.fetch(
                f"SELECT {_SCOPE_COLUMNS} FROM memory_scopes WHERE workspace_id = $1", workspace
            )
        }
        records = {
            r["id"]: record_from_row(r)
            for r in await conn.fetch(
                f"SELECT {_RECORD_COLUMNS}, {_SOURCES} FROM memory_records r"
                " WHERE r.workspace_id = $1",
                workspace,
            )
        }
        tombstones: dict[str, set[int]] = {}
        for r in await conn.fetch(
            "SELECT scope_key, message_id FROM tombstones WHERE workspace_id = $1", workspace
        ):
            tombstones.setdefault(r["scope_key"], set()).add(r["message_id"])
    return WorkspaceView(workspace, scopes, records, tombstones)


@dataclass
class WorkspaceTx:
    """One workspace, locked, inside one transaction."""

    conn: asyncpg.Connection
    workspace: str
    version: int
    limits: Limits
    _scopes: dict[str, ScopeState] = field(default_factory=dict)
    _dirty: set[str] = field(default_factory=set)
    changed: bool = False
    # Recall rows as they were when the scope was loaded, and records added since, per scope:
    # a scope that only gained records gets its recall row derived without another query.
    _recall: dict[str, RecallRow] = field(default_factory=dict)
    _added: dict[str, list[RecallEntry]] = field(default_factory=dict)
    # Records removed or invalidated per scope (None: which ones is not known).
    _reshaped: dict[str, set[str] | None] = field(default_factory=dict)

    # --- scopes ---------------------------------------------------------------------------

    async def scope(self, scope: Scope) -> ScopeState:
        """The scope's state, a fresh default one if nothing is stored for it yet."""
        found = await self.scope_by_key(scope.key)
        if found is None:
            found = ScopeState(scope=scope)
            self._scopes[scope.key] = found
        return found

    async def scope_by_key(self, key: str) -> ScopeState | None:
        if key in self._scopes:
            return self._scopes[key]
        row = await self.conn.fetchrow(
            f"SELECT {_SCOPE_COLUMNS} FROM memory_scopes WHERE workspace_id = $1"
            " AND scope_key = $2",
            self.workspace,
            key,
        )
        if row is None:
            return None
        state = scope_from_row(self.workspace, row)
        self._scopes[key] = state
        return state

    async def scopes_of_chat(self, bot_id: int, chat_id: int) -> list[ScopeState]:
        rows = await self.conn.fetch(
            f"SELECT {_SCOPE_COLUMNS} FROM memory_scopes WHERE workspace_id = $1"
            " AND bot_id = $2 AND chat_id = $3 ORDER BY scope_key",
            self.workspace,
            bot_id,
            chat_id,
        )
        found = []
        for row in rows:
            key = row["scope_key"]
            if key not in self._scopes:
                self._scopes[key] = scope_from_row(self.workspace, row)
            found.append(self._scopes[key])
        return found

    def save(self, *states: ScopeState) -> None:
        """Mark scopes changed: their rows and recall rows are rewritten on the way out."""
        for state in states:
            self._scopes[state.key] = state
            self._dirty.add(state.key)

    def discard(self, *scope_keys: str) -> None:
        """Scopes whose rows were deleted: nothing of them is written back."""
        for key in scope_keys:
            self._scopes.pop(key, None)
            self._dirty.discard(key)
        self.changed = True

    async def touch(
        self, *scope_keys: str, added: bool = False, removed: Iterable[str] | None = None
    ) -> None:
        """A scope's records changed: its index is stale and its recall row is rewritten.
        `removed`: the IDs of records that went (or became invalid), when known."""
        gone = None if removed is None else set(removed)
        for key in scope_keys:
            state = await self.scope_by_key(key)
            if state is None:
                continue
            state.index.pending = True
            self._dirty.add(key)
            if added:
                continue
            if gone is None or self._reshaped.get(key, set()) is None:
                self._reshaped[key] = None
            else:
                self._reshaped[key] = self._reshaped.get(key, set()) | gone  # type: ignore[operator]

    # --- records --------------------------------------------------------------------------

    async def _records(self, where: str, *args: Any, sources: bool = True) -> list[MemoryRecord]:
        columns = _RECORD_COLUMNS + (", " + _SOURCES if sources else "")
        rows = await self.conn.fetch(
            f"SELECT {columns} FROM memory_records r WHERE r.workspace_id = $1 AND {where}",
            self.workspace,
            *args,
        )
        return [record_from_row(r) for r in rows]

    async def valid_records(
        self, scope_key: str, *, limit: int | None = None
    ) -> list[MemoryRecord]:
        """The scope's valid records, newest first."""
        return await self._records(
            "r.scope_key = $2 AND r.valid ORDER BY r.created_at DESC, r.id DESC LIMIT $3",
            scope_key,
            limit,
        )

    async def records(self, ids: Iterable[str]) -> list[MemoryRecord]:
        return await self._records("r.id = ANY($2::text[]) ORDER BY r.id", list(ids))

    async def all_records(self) -> list[MemoryRecord]:
        return await self._records("true ORDER BY r.id")

    async def dependents(self, message_ids: Iterable[int]) -> list[MemoryRecord]:
        """Every record of the workspace with a dependency among these messages."""
        rows = await self.conn.fetch(
            "SELECT DISTINCT record_id FROM record_sources WHERE workspace_id = $1"
            " AND message_id = ANY($2::bigint[])",
            self.workspace,
            list(message_ids),
        )
        return await self.records([r["record_id"] for r in rows]) if rows else []

    async def prunable(self, unused_since: datetime, now: datetime) -> list[MemoryRecord]:
        """Records unused since the cutoff, invalid, or whose sources' retention has passed."""
        return await self._records(
            "(r.last_used_at < $2 OR NOT r.valid OR r.available_until <= $3) ORDER BY r.id",
            unused_since,
            now,
        )

    async def add_record(self, record: MemoryRecord, now: datetime) -> list[tuple[str, str]]:
        """Store a record (its scope's index becomes stale) and, in the same statement, evict
        the least recently used records past the workspace's cap (inactivity is the worker's
        business). A record whose ID exists already is left as it is (a note is one per
        message). Returns the evicted (record ID, scope key) pairs."""
        rows = await self.conn.fetch(
            """
            WITH r AS (
                INSERT INTO memory_records (workspace_id, id, scope_key, origin, title, summary,
                    speaker_ids, thread_ids, cited, derived_from, created_at, last_used_at,
                    available_until, fingerprint, search)
                -- Available no longer than the earliest retention boundary of its sources.
                SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                    least($13::timestamptz, (SELECT min(m.retain_until) FROM messages m
                        WHERE m.workspace_id = $1 AND m.id IN (SELECT (x->>'message_id')::bigint
                        FROM jsonb_array_elements($14::jsonb) x))), $15, $17::tsvector
                ON CONFLICT (workspace_id, id) DO NOTHING
                RETURNING id, available_until
            ), s AS (
                INSERT INTO record_sources (workspace_id, record_id, message_id, hash,
                    speaker_id, thread_id, role, inherited)
                SELECT $1, r.id, s.message_id, s.hash, s.speaker_id, s.thread_id, s.role,
                    s.inherited
                FROM r, jsonb_to_recordset($14::jsonb) AS s(message_id bigint, hash text,
                    speaker_id bigint, thread_id bigint, role text, inherited boolean)
            ), over AS MATERIALIZED (
                -- The statement sees the records as they were before this one: past cap - 1.
                -- Materialized: computed once (a generic plan would rescan it per row).
                SELECT id FROM memory_records WHERE workspace_id = $1
                AND EXISTS (SELECT 1 FROM r)
                ORDER BY last_used_at DESC, created_at DESC, id DESC OFFSET $16
            ), gone AS (
                DELETE FROM memory_records m USING over
                WHERE m.workspace_id = $1 AND m.id = over.id
                RETURNING m.id, m.scope_key
            )
            SELECT id, NULL::text AS scope_key, available_until, true AS added FROM r
            UNION ALL SELECT id, scope_key, NULL, false FROM gone
            """,
            self.workspace,
            record.id,
            record.scope_key,
            record.origin,
            record.title,
            record.summary,
            record.speaker_ids,
            record.thread_ids,
            record.cited,
            record.derived_from,
            record.created_at,
            record.last_used_at,
            record.available_until,
            json.dumps([s.model_dump() for s in record.sources]),
            record.fingerprint,
            self.limits.max_records - 1,
            record_vector(record.title, record.summary),
        )
        evicted = [(r["id"], r["scope_key"]) for r in rows if not r["added"]]
        for r in rows:
            if r["added"]:
                record.available_until = r["available_until"]
                self._added.setdefault(record.scope_key, []).append(recall_entry(record))
        await self.touch(record.scope_key, added=True)
        for key in {key for _, key in evicted}:
            await self.touch(key, removed=[i for i, k in evicted if k == key])
        self.changed = True
        return evicted

    async def candidates(self, scope_key: str, limit: int) -> dict[str, str]:
        """A scope's newest valid records as consolidation pins them: ID -> fingerprint."""
        rows = await self.conn.fetch(
            "SELECT id, fingerprint FROM memory_records WHERE workspace_id = $1"
            " AND scope_key = $2 AND valid ORDER BY created_at DESC, id DESC LIMIT $3",
            self.workspace,
            scope_key,
            limit,
        )
        return {r["id"]: r["fingerprint"] for r in rows}

    async def invalidate(self, records: Iterable[MemoryRecord], reason: str) -> set[str]:
        """Make records unavailable (kept, content and all, until pruned); returns scopes."""
        valid = [r for r in records if r.valid]
        if not valid:
            return set()
        await self.conn.execute(
            "UPDATE memory_records SET valid = false, invalid_reason = $3"
            " WHERE workspace_id = $1 AND id = ANY($2::text[])",
            self.workspace,
            [r.id for r in valid],
            reason,
        )
        for record in valid:
            record.valid, record.invalid_reason = False, reason
        scopes = {r.scope_key for r in valid}
        await self.touch(*scopes)
        self.changed = True
        return scopes

    async def delete(self, records: Iterable[MemoryRecord]) -> set[str]:
        """Remove records, their text and their dependency rows; returns the scopes touched."""
        doomed = list(records)
        if not doomed:
            return set()
        await self.conn.execute(
            "DELETE FROM memory_records WHERE workspace_id = $1 AND id = ANY($2::text[])",
            self.workspace,
            [r.id for r in doomed],
        )
        scopes = {r.scope_key for r in doomed}
        await self.touch(*scopes)
        self.changed = True
        return scopes

    async def mark_used(self, ids: Iterable[str], now: datetime) -> None:
        """Being recalled or returned by a tool counts as use (retention and the cap)."""
        await self.conn.execute(
            "UPDATE memory_records SET last_used_at = $3 WHERE workspace_id = $1"
            " AND id = ANY($2::text[]) AND last_used_at < $3",
            self.workspace,
            list(ids),
            now,
        )

    # --- tombstones -------------------------------------------------------------------------

    async def tombstones(self, scope_key: str) -> set[int]:
        rows = await self.conn.fetch(
            "SELECT message_id FROM tombstones WHERE workspace_id = $1 AND scope_key = $2",
            self.workspace,
            scope_key,
        )
        return {r["message_id"] for r in rows}

    async def add_tombstones(self, scope_key: str, message_ids: Iterable[int]) -> int:
        """Content-free: only the IDs of what was forgotten, so extraction cannot restore it.
        A record still built on any of them becomes unavailable (it says what was forgotten)."""
        ids = sorted(set(message_ids))
        if not ids:
            return 0
        await self.invalidate(
            [r for r in await self.dependents(ids) if r.valid], "a source was forgotten"
        )
        result: str = await self.conn.execute(
            "INSERT INTO tombstones (workspace_id, scope_key, message_id)"
            " SELECT $1, $2, unnest($3::bigint[]) ON CONFLICT DO NOTHING",
            self.workspace,
            scope_key,
            ids,
        )
        self.changed = True
        return int(result.split()[-1])

    # --- writing back ---------------------------------------------------------------------

    async def flush(self) -> None:
        """Write changed scopes with their derived recall rows; bump the version if anything
        changed (with the last scope's row, in the same statement)."""
        if not (self._dirty or self.changed):
            return
        self.version += 1
        keys = sorted(self._dirty)
        for key in keys:
            state = self._scopes[key]
            row = self._derived_recall(state) or await self._recall_row(state)
            last = key == keys[-1]
            await _upsert_scope(self.conn, state, row, self.version if last else None)
        if not keys:
            await self.conn.execute(
                "UPDATE workspaces SET version = $2, updated_at = now() WHERE id = $1",
                self.workspace,
                self.version,
            )
        self._dirty.clear()
        self._added.clear()
        self._reshaped.clear()
        self.changed = False

    def _derived_recall(self, state: ScopeState) -> RecallRow | None:
        """The recall row of a scope that only gained records, from the row it had: the new
        ones lead the directory, the index (now pending) is unchanged."""
        before = self._recall.get(state.key)
        added = self._added.get(state.key)
        if before is None or not added:
            return None
        if state.key in self._reshaped:
            removed = self._reshaped[state.key]
            shown = {e.id for e in [*before.directory, *before.index_entries]}
            if removed is None or removed & (shown | set(state.index.candidates)):
                return None  # something it showed (or its index was built from) went
        newest = list(reversed(added))
        oldest_new = min(e.created_at for e in added if e.created_at is not None)
        if len(newest) > 1 or any(
            e.created_at is None or e.created_at > oldest_new for e in before.directory
        ):
            return None  # the order is not obvious: ask the database
        return before.model_copy(
            update={
                "enabled": state.enabled,
                "suspended": state.suspended,
                "pending": True,
                "directory": (newest + before.directory)[: self.limits.directory_max],
            }
        )

    async def _recall_row(self, state: ScopeState) -> RecallRow:
        # One query: the newest valid records (the directory) and the ones the index names,
        # each read by index; only their first characters leave the server.
        # Sources too: the host's read-grant hook is told them at recall.
        columns = _RECORD_COLUMNS.replace("r.summary", "left(r.summary, $5) AS summary")
        columns += ", " + _SOURCES
        left = (
            "(SELECT count(*) FROM memory_records c WHERE c.workspace_id = $1"
            " AND c.id = ANY($6::text[]) AND c.valid) AS candidates_left"
        )
        rows = await self.conn.fetch(
            f"(SELECT {columns}, true AS newest, {left} FROM memory_records r"
            " WHERE r.workspace_id = $1 AND r.scope_key = $2 AND r.valid"
            " ORDER BY r.created_at DESC, r.id DESC LIMIT $3)"
            f" UNION ALL (SELECT {columns}, false, {left} FROM memory_records r"
            " WHERE r.workspace_id = $1 AND r.id = ANY($4::text[]) AND r.valid)",
            self.workspace,
            state.key,
            self.limits.directory_max,
            state.index.memory_ids,
            RECALL_SUMMARY_CHARS,
            state.index.candidates,
        )
        newest = [record_from_row(r) for r in rows if r["newest"]]
        by_id = {r["id"]: record_from_row(r) for r in rows}
        indexed = [by_id[i] for i in state.index.memory_ids if i in by_id]
        candidates_left = rows[0]["candidates_left"] if rows else 0
        if len(indexed) != len(state.index.memory_ids) or candidates_left != len(
            set(state.index.candidates)
        ):
            # The index names a record that is gone, or was built from one (its text may
            # repeat any of them): its text must never be shown again.
            state.index = ScopeIndex(pending=bool(newest))
            indexed = []
        elif not newest:
            state.index.pending = False  # nothing left to consolidate
        return build_recall_row(state, newest, indexed, directory_max=self.limits.directory_max)


async def _upsert_scope(
    conn: asyncpg.Connection, state: ScopeState, recall: RecallRow, version: int | None
) -> None:
    s = state.scope
    await conn.execute(
        """
        WITH v AS (
            UPDATE workspaces SET version = $18, updated_at = now()
            WHERE id = $1 AND $18::bigint IS NOT NULL
        )
        INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id,
            topic_id, enabled, suspended, off_since, off_ranges, extracted_through, index_text,
            index_ids, index_built_at, index_pending, recall, due_at, index_candidates)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14, $15, $16,
            $17::jsonb, CASE WHEN $16 AND $8 AND NOT $9 THEN 'epoch'::timestamptz END, $19)
        ON CONFLICT (workspace_id, scope_key) DO UPDATE SET
            -- A pending index is due at once, whatever clock the planner runs on.
            due_at = CASE WHEN EXCLUDED.index_pending AND EXCLUDED.enabled
                AND NOT EXCLUDED.suspended THEN 'epoch'::timestamptz
                ELSE memory_scopes.due_at END,
            enabled = EXCLUDED.enabled, suspended = EXCLUDED.suspended,
            off_since = EXCLUDED.off_since, off_ranges = EXCLUDED.off_ranges,
            extracted_through = EXCLUDED.extracted_through, index_text = EXCLUDED.index_text,
            index_ids = EXCLUDED.index_ids, index_built_at = EXCLUDED.index_built_at,
            index_pending = EXCLUDED.index_pending, recall = EXCLUDED.recall,
            index_candidates = EXCLUDED.index_candidates
        """,
        s.workspace,
        s.key,
        s.kind,
        s.bot_id,
        s.chat_id,
        s.user_id,
        s.topic_id,
        state.enabled,
        state.suspended,
        state.off_since,
        json.dumps(state.off_ranges),
        state.extracted_through,
        state.index.text,
        state.index.memory_ids,
        state.index.built_at,
        state.index.pending,
        recall.model_dump_json(),
        version,
        state.index.candidates,
    )


async def lock_workspace(
    conn: asyncpg.Connection,
    workspace: str,
    *,
    limits: Limits,
    create: bool = False,
    scope_key: str | None = None,
) -> WorkspaceTx:
    """Lock the workspace row FOR NO KEY UPDATE, inside a transaction.

    Only ingress creates workspaces. Every other path (the worker, tools, control, host calls)
    refuses a missing one, so a workspace purged while a job or tool call was in flight is
    never brought back by its late commit.
    """
    query = (
        f"SELECT w.version, s.recall, {_SCOPE_COLUMNS.replace('scope_key', 's.scope_key')}"
        " FROM workspaces w"
        " LEFT JOIN memory_scopes s ON s.workspace_id = w.id AND s.scope_key = $2"
        " WHERE w.id = $1 FOR NO KEY UPDATE OF w"
    )
    row = await conn.fetchrow(query, workspace, scope_key)
    if row is None and create:
        await conn.execute(
            "INSERT INTO workspaces (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", workspace
        )
        row = await conn.fetchrow(query, workspace, scope_key)
    if row is None:
        raise WorkspaceGone(f"workspace {workspace!r} does not exist")
    tx = WorkspaceTx(conn=conn, workspace=workspace, version=row["version"], limits=limits)
    if row["scope_key"] is not None:  # the scope the caller will work on, in the same trip
        tx._scopes[row["scope_key"]] = scope_from_row(workspace, row)
        if row["recall"] is not None:
            tx._recall[row["scope_key"]] = RecallRow.model_validate_json(row["recall"])
    return tx


@asynccontextmanager
async def locked_workspace(
    pool: asyncpg.Pool,
    workspace: str,
    *,
    limits: Limits,
    create: bool = False,
    scope_key: str | None = None,
) -> AsyncIterator[WorkspaceTx]:
    async with pool.acquire() as conn, conn.transaction():
        tx = await lock_workspace(
            conn, workspace, limits=limits, create=create, scope_key=scope_key
        )
        yield tx
        await tx.flush()


async def rebuild_missing_recall(pool: asyncpg.Pool, limits: Limits) -> int:
    """Recall rows are derived: scopes with records but no row yet (migrated data) get one."""
    rows = await pool.fetch(
        "SELECT s.workspace_id, s.scope_key FROM memory_scopes s WHERE s.recall IS NULL"
        " AND EXISTS (SELECT 1 FROM memory_records r WHERE r.workspace_id = s.workspace_id"
        " AND r.scope_key = s.scope_key)"
    )
    for row in rows:
        async with locked_workspace(pool, row["workspace_id"], limits=limits) as tx:
            state = await tx.scope_by_key(row["scope_key"])
            if state is not None:
                tx.save(state)
    return len(rows)
