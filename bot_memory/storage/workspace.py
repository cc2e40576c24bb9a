"""The locked workspace: memory records, scopes and tombstones, changed only under its row lock.

Every change to memory happens inside `locked_workspace`, one transaction that holds the
workspace row FOR NO KEY UPDATE (so ingress inserts, whose foreign-key checks take FOR KEY
SHARE, are never blocked by it). Records are rows of a child table keyed by the workspace; the
transaction loads only what a decision needs, the pure functions of `records.py` decide, and on
the way out the scopes that changed are written back with their recall rows derived anew, in
one statement. The steps of a commit are server-side functions (migration 015), so a commit is a
few statements, not one round trip per step; the frequent commits (a note, a forget by ID, an
erasure, an extraction) are each one function, called from their modules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from bot_memory.errors import BotMemoryError
from bot_memory.records import (
    MemoryRecord,
    ScopeState,
    content_hash,
)
from bot_memory.scopes import Scope
from bot_memory.storage.documents import dumps, record_document
from bot_memory.storage.forgetting import Forgetting
from bot_memory.storage.handle import Handle, connection
from bot_memory.storage.jobs import Jobs
from bot_memory.storage.limits import Limits, limits_document
from bot_memory.storage.planning import Planning
from bot_memory.storage.rows import (
    RECORD_COLUMNS,
    RECORD_SOURCES,
    SCOPE_COLUMNS,
    record_from_row,
    scope_from_row,
)
from bot_memory.storage.search import Search
from bot_memory.terms import text_vector


class WorkspaceGone(BotMemoryError, RuntimeError):
    """The workspace does not exist (never created, or purged); this path may not create it."""


class _Undo(Exception):
    """Raised inside the transaction to roll it back (see WorkspaceTx.undo)."""


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
                f"SELECT {SCOPE_COLUMNS} FROM memory_scopes WHERE workspace_id = $1", workspace
            )
        }
        records = {
            r["id"]: record_from_row(r)
            for r in await conn.fetch(
                f"SELECT {RECORD_COLUMNS}, {RECORD_SOURCES} FROM memory_records r"
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
    limits: Limits
    _scopes: dict[str, ScopeState] = field(default_factory=dict)
    _dirty: set[str] = field(default_factory=set)
    # Scopes whose records changed but whose state was not read: their indexes go stale at
    # write-back, on the server (or as soon as their state is read here).
    _touched: set[str] = field(default_factory=set)
    changed: bool = False
    undone: bool = False

    @property
    def jobs(self) -> Jobs:
        """The job rows, inside this transaction (after the workspace row: the lock order)."""
        return Jobs(self.conn)

    @property
    def search(self) -> Search:
        """What the read tools find, read under the lock (erasure sees their citations)."""
        return Search(self.conn)

    @property
    def forgetting(self) -> Forgetting:
        """A forget's reach and the forget itself, in this transaction."""
        return Forgetting(self)

    @property
    def planning(self) -> Planning:
        """The planner's reads and the scopes' wake-ups, inside this transaction."""
        return Planning(self.conn)

    async def lock(self, *, create: bool = False, scope_key: str | None = None) -> None:
        """Lock the workspace row FOR NO KEY UPDATE and read `scope_key`'s state in the same
        trip (after the lock: whatever the previous holder wrote is seen).

        Only ingress creates workspaces. Every other path (the worker, tools, control, host
        calls) refuses a missing one, so a workspace purged while a job or tool call was in
        flight is never brought back by its late commit.
        """
        row = await self.conn.fetchrow(
            "SELECT * FROM bm_lock($1, $2, $3)", self.workspace, scope_key, create
        )
        if row is None:
            raise WorkspaceGone(f"workspace {self.workspace!r} does not exist")
        if row["scope_key"] is not None:
            self._loaded(scope_from_row(self.workspace, row))

    # --- scopes ---------------------------------------------------------------------------

    async def scope(self, scope: Scope) -> ScopeState:
        """The scope's state, a fresh default one if nothing is stored for it yet."""
        found = await self.scope_by_key(scope.key)
        if found is None:
            found = ScopeState(scope=scope)
            self._scopes[scope.key] = found
            self._touched.discard(scope.key)  # nothing was stored to go stale
        return found

    async def scope_by_key(self, key: str) -> ScopeState | None:
        if key in self._scopes:
            return self._scopes[key]
        row = await self.conn.fetchrow(
            f"SELECT {SCOPE_COLUMNS} FROM memory_scopes WHERE workspace_id = $1 AND scope_key = $2",
            self.workspace,
            key,
        )
        if row is None:
            return None
        return self._loaded(scope_from_row(self.workspace, row))

    async def scopes_of_chat(self, bot_id: int, chat_id: int) -> list[ScopeState]:
        rows = await self.conn.fetch(
            f"SELECT {SCOPE_COLUMNS} FROM memory_scopes WHERE workspace_id = $1"
            " AND bot_id = $2 AND chat_id = $3 ORDER BY scope_key",
            self.workspace,
            bot_id,
            chat_id,
        )
        found = []
        for row in rows:
            key = row["scope_key"]
            found.append(self._scopes.get(key) or self._loaded(scope_from_row(self.workspace, row)))
        return found

    def _loaded(self, state: ScopeState) -> ScopeState:
        self._scopes[state.key] = state
        if state.key in self._touched:  # its records changed before it was read
            self._touched.discard(state.key)
            self.touch(state.key)
        return state

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
            self._touched.discard(key)
        self.changed = True

    def touch(self, *scope_keys: str) -> None:
        """A scope's records changed: its index is stale and its recall row is rewritten (a
        scope with nothing stored is left alone)."""
        for key in scope_keys:
            state = self._scopes.get(key)
            if state is None:
                self._touched.add(key)
                continue
            state.index.pending = True
            self._dirty.add(key)

    def undo(self) -> None:
        """Roll the transaction back on the way out: what it did changes nothing after all."""
        self.undone = True

    async def drop_empty_scopes(self, scope_keys: Iterable[str]) -> int:
        """Scopes with nothing stored (no records, tombstones or retained messages) and default
        switches are dropped, so the per-scope rows of a workspace stay bounded."""
        keys = sorted(scope_keys)
        if not keys:
            return 0
        dropped: list[str] = await self.conn.fetchval(
            "SELECT bm_drop_empty_scopes($1, $2::text[])", self.workspace, keys
        )
        self.discard(*dropped)
        return len(dropped)

    # --- records --------------------------------------------------------------------------

    async def _records(self, where: str, *args: Any, sources: bool = True) -> list[MemoryRecord]:
        columns = RECORD_COLUMNS + (", " + RECORD_SOURCES if sources else "")
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

    async def dependents(self, message_ids: Iterable[int]) -> list[MemoryRecord]:
        """Every record of the workspace with a dependency among these messages."""
        return await self._records(
            "r.id IN (SELECT s.record_id FROM record_sources s WHERE s.workspace_id = $1"
            " AND s.message_id = ANY($2::bigint[])) ORDER BY r.id",
            list(message_ids),
        )

    async def prunable(self, unused_since: datetime, now: datetime) -> list[MemoryRecord]:
        """Records unused since the cutoff, invalid, or whose sources' retention has passed."""
        return await self._records(
            "(r.last_used_at < $2 OR NOT r.valid OR r.available_until <= $3) ORDER BY r.id",
            unused_since,
            now,
        )

    async def add_record(self, record: MemoryRecord, now: datetime) -> list[tuple[str, str]]:
        """Store a record (its scope's index becomes stale) and evict the least recently used
        records past the workspace's cap (inactivity is the worker's business). A record whose
        ID exists already is left as it is (a note is one per message). Returns the evicted
        (record ID, scope key) pairs."""
        rows = await self.conn.fetch(
            "SELECT * FROM bm_record_store($1::jsonb)",
            dumps(record_document(self.workspace, record, self.limits)),
        )
        evicted = [(r["id"], r["scope_key"]) for r in rows if not r["added"]]
        for r in rows:
            if r["added"]:
                record.available_until = r["available_until"]
        self.touch(record.scope_key, *{key for _, key in evicted})
        self.changed = True
        return evicted

    async def candidates(self, scope_key: str, limit: int) -> dict[str, str]:
        """A scope's newest valid records as consolidation pins them: ID -> fingerprint (a
        replaced record is not a candidate)."""
        rows = await self.conn.fetch(
            "SELECT id, fingerprint FROM memory_records WHERE workspace_id = $1"
            " AND scope_key = $2 AND valid AND replaced_by IS NULL"
            " ORDER BY created_at DESC, id DESC LIMIT $3",
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
        self.touch(*scopes)
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
        self.touch(*scopes)
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
        row = await self.conn.fetchrow(
            "SELECT * FROM bm_tombstone($1, $2, $3::bigint[])", self.workspace, scope_key, ids
        )
        assert row is not None
        self.touch(*row["scopes"])
        self.changed = True
        return int(row["added"])

    # --- messages: edits and retention boundaries (retention/sweeps.py decides) -------------

    async def edit_message(
        self, *, bot_id: int, chat_id: int, telegram_message_id: int, text: str
    ) -> tuple[int, str] | None:
        """Keep a recorded message's new text (its hash and search terms with it), if it still
        has a text and that changed: (message ID, scope key), or None."""
        row = await self.conn.fetchrow(
            "UPDATE messages SET text = $5, content_hash = $6, edited_at = now(),"
            " search = $7::tsvector WHERE workspace_id = $1 AND bot_id = $2"
            " AND chat_id = $3"
            " AND telegram_message_id = $4 AND text IS NOT NULL AND content_hash <> $6"
            " RETURNING id, scope_key",
            self.workspace,
            bot_id,
            chat_id,
            telegram_message_id,
            text,
            content_hash(text),
            text_vector(text),
        )
        return None if row is None else (row["id"], row["scope_key"])

    async def derived_closure(self, message_ids: set[int]) -> set[int]:
        """These messages and every answer derived from them, and from those, to a fixed point."""
        # Answers derived from records built on answers: a record's sources include answers, and
        # an answer's dependencies are the sources of the records it was given.
        reached: list[int] = await self.conn.fetchval(
            "SELECT bm_derived_closure($1, $2::bigint[])", self.workspace, sorted(message_ids)
        )
        return set(reached)

    async def shorten_retention(self, message_ids: Iterable[int], until: datetime) -> None:
        """These messages are kept no longer than `until` (never longer than they were)."""
        await self.conn.execute(
            "UPDATE messages SET retain_until = least(retain_until, $3) WHERE workspace_id = $1"
            " AND id = ANY($2::bigint[])",
            self.workspace,
            sorted(message_ids),
            until,
        )

    async def shorten_availability(self, record_ids: Iterable[str], until: datetime) -> None:
        """These records are available no longer than `until` (never longer than they were)."""
        await self.conn.execute(
            "UPDATE memory_records SET available_until = least(available_until, $3)"
            " WHERE workspace_id = $1 AND id = ANY($2::text[])",
            self.workspace,
            list(record_ids),
            until,
        )

    # --- writing back ---------------------------------------------------------------------

    def write_back(self) -> dict[str, Any]:
        """What the next statement writes back with it, taken, as a commit's document carries
        it: the changed scopes' states, the keys of scopes whose records changed, and the
        limits their recall rows are derived with (a server-side commit, bm_forget_commit for
        one, writes them back itself)."""
        states = [_scope_json(self._scopes[k]) for k in sorted(self._dirty)]
        touched = sorted(self._touched)
        self._dirty.clear()
        self._touched.clear()
        self.changed = False
        return {
            "workspace": self.workspace,
            "states": states,
            "touched": touched,
            "limits": limits_document(self.limits),
        }

    async def flush(self) -> None:
        """Write changed scopes with their derived recall rows, and bump the version if
        anything changed, in one statement."""
        if not (self._dirty or self._touched or self.changed):
            return
        await self.conn.execute("SELECT bm_write_back($1::jsonb)", dumps(self.write_back()))


def _scope_json(state: ScopeState) -> dict[str, Any]:
    s, index = state.scope, state.index
    return {
        "scope_key": s.key,
        "kind": s.kind,
        "bot_id": s.bot_id,
        "chat_id": s.chat_id,
        "user_id": s.user_id,
        "topic_id": s.topic_id,
        "enabled": state.enabled,
        "suspended": state.suspended,
        "off_since": state.off_since,
        "off_ranges": state.off_ranges,
        "extracted_through": state.extracted_through,
        "index_text": index.text,
        "index_ids": index.memory_ids,
        "index_built_at": None if index.built_at is None else index.built_at.isoformat(),
        "index_pending": index.pending,
        "index_candidates": index.candidates,
    }


async def lock_workspace(
    conn: asyncpg.Connection,
    workspace: str,
    *,
    limits: Limits,
    create: bool = False,
    scope_key: str | None = None,
) -> WorkspaceTx:
    """Lock the workspace row inside the caller's transaction (see `WorkspaceTx.lock`)."""
    tx = WorkspaceTx(conn=conn, workspace=workspace, limits=limits)
    await tx.lock(create=create, scope_key=scope_key)
    return tx


@asynccontextmanager
async def locked_workspace(
    pool: Handle,
    workspace: str,
    *,
    limits: Limits,
    create: bool = False,
    scope_key: str | None = None,
) -> AsyncIterator[WorkspaceTx]:
    async with _transaction(pool, workspace, limits) as tx:
        await tx.lock(create=create, scope_key=scope_key)
        yield tx


@asynccontextmanager
async def workspace_transaction(
    pool: Handle, workspace: str, *, limits: Limits
) -> AsyncIterator[WorkspaceTx]:
    """A workspace transaction whose first statement takes the lock itself: a server-side
    function of migration 015 that begins with it (one round trip fewer than
    `locked_workspace`). Nothing may be read or written before it."""
    async with _transaction(pool, workspace, limits) as tx:
        yield tx


@asynccontextmanager
async def _transaction(pool: Handle, workspace: str, limits: Limits) -> AsyncIterator[WorkspaceTx]:
    async with connection(pool) as conn:
        try:
            async with conn.transaction():
                tx = WorkspaceTx(conn=conn, workspace=workspace, limits=limits)
                yield tx
                if tx.undone:
                    raise _Undo
                await tx.flush()
        except _Undo:
            pass


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
