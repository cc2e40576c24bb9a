"""Conversation rows, usage and charges, and what memory knows of each chat; the requests
table's statements are in `requests.py` (`Store.requests`).

Ingress writes here in one short statement. Memory itself (records, scopes, tombstones) changes
only inside `Store.locked`, the workspace transaction of `workspace.py`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

import asyncpg

from bot_memory.records import MemoryRecord, RecallRow, content_hash
from bot_memory.scopes import Scope
from bot_memory.storage.commits import Commits
from bot_memory.storage.erasure import Erasure
from bot_memory.storage.handle import Handle, connection, transaction
from bot_memory.storage.jobs import Jobs
from bot_memory.storage.ledger import Ledger
from bot_memory.storage.limits import Limits
from bot_memory.storage.operations import Operations
from bot_memory.storage.planning import Planning
from bot_memory.storage.requests import Requests, SourceMessage
from bot_memory.storage.rows import RECORD_COLUMNS, HistoryMessage, history_of, record_from_row
from bot_memory.storage.search import Search
from bot_memory.storage.statements import (
    GIVEN,
    GIVEN_AND_NOTED,
    HISTORY,
    LEDGER_INSERT,
    RECORD,
    ledger_values,
)
from bot_memory.storage.tenancy import Tenancy
from bot_memory.storage.tickets import Tickets
from bot_memory.storage.traces import Traces
from bot_memory.storage.watch import Watch
from bot_memory.storage.workers import Workers
from bot_memory.storage.workspace import (
    WorkspaceTx,
    WorkspaceView,
    locked_workspace,
    read_workspace,
    rebuild_missing_recall,
    workspace_transaction,
)
from bot_memory.terms import record_vector, text_vector


@dataclass(frozen=True)
class UsageEntry:
    workspace: str
    request_id: int | None
    kind: str
    provider: str | None
    model: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    outcome: Literal["ok", "error", "unknown"] = "ok"
    detail: str | None = None
    job_id: int | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class ScopeSummary:
    """What the /memory screen's status line says about a scope."""

    records: int
    enabled: bool
    suspended: bool
    pending: bool  # a consolidation is due or running
    last_run: datetime | None  # when memory last extracted or consolidated here
    spent_usd: float  # the workspace's
    reserved_usd: float
    held: int = 0  # every record of the scope the workspace's cap counts
    share: int = 0  # the cap's fair share: past the cap, a scope holding more gives first
    others: int = 0  # the workspace's records in its other scopes

    @property
    def at_share(self) -> bool:
        """At or over its share while other scopes hold memories (alone in its workspace, the
        share changes nothing)."""
        return self.share > 0 and self.held >= self.share and self.others > 0


@dataclass(frozen=True)
class Switches:
    enabled: bool  # memory on in the scope
    suspended: bool  # the bot left the chat


@dataclass(frozen=True)
class ChatInfo:
    bot_id: int
    chat_id: int
    workspace: str
    chat_type: str
    bot_active: bool
    auto_delete_seconds: int | None
    auto_delete_known: bool


class Store:
    """Every statement outside the workspace lock, on the pool; `atomic()` gives one bound to a
    connection inside a transaction (a statement of each area then commits with the others)."""

    def __init__(self, pool: Handle, *, limits: Limits | None = None) -> None:
        self.pool = pool
        self.limits = limits or Limits()
        self._known_workspaces: set[str] = set()  # exist (as far as this process knows)

    # --- the areas, each on what this store runs on -----------------------------------------

    @property
    def jobs(self) -> Jobs:
        return Jobs(self.pool)

    @property
    def ledger(self) -> Ledger:
        return Ledger(self.pool)

    @property
    def erasure(self) -> Erasure:
        return Erasure(self.pool, self.limits)

    @property
    def tenancy(self) -> Tenancy:
        return Tenancy(self.pool, self.limits)

    @property
    def traces(self) -> Traces:
        return Traces(self.pool)

    @property
    def commits(self) -> Commits:
        return Commits(self.pool, self.limits)

    @property
    def requests(self) -> Requests:
        return Requests(self.pool)

    @property
    def planning(self) -> Planning:
        return Planning(self.pool)

    @property
    def search(self) -> Search:
        return Search(self.pool)

    @property
    def tickets(self) -> Tickets:
        return Tickets(self.pool)

    @property
    def workers(self) -> Workers:
        return Workers(self.pool)

    @property
    def operations(self) -> Operations:
        return Operations(self.pool)

    @property
    def watch(self) -> Watch:
        return Watch(self.pool)

    async def _ensure_workspace(self, workspace: str) -> None:
        """Ingress creates workspaces (nothing else does): once per workspace and process."""
        await self.pool.execute(
            "INSERT INTO workspaces (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", workspace
        )
        self._known_workspaces.add(workspace)

    @asynccontextmanager
    async def atomic(self) -> AsyncIterator[Store]:
        """One transaction, no workspace lock: a store whose statements all run in it."""
        async with transaction(self.pool) as conn:
            store = Store(conn, limits=self.limits)
            store._known_workspaces = self._known_workspaces
            yield store

    # --- the workspace lock -------------------------------------------------------------------

    @asynccontextmanager
    async def locked(
        self, workspace: str, *, create: bool = False, scope_key: str | None = None
    ) -> AsyncIterator[WorkspaceTx]:
        """The workspace, locked; `scope_key` loads that scope's state in the same trip."""
        async with locked_workspace(
            self.pool, workspace, limits=self.limits, create=create, scope_key=scope_key
        ) as tx:
            yield tx

    @asynccontextmanager
    async def transaction(self, workspace: str) -> AsyncIterator[WorkspaceTx]:
        """A workspace transaction whose first statement takes the lock itself (see
        `workspace_transaction`)."""
        async with workspace_transaction(self.pool, workspace, limits=self.limits) as tx:
            yield tx

    async def view(self, workspace: str) -> WorkspaceView:
        async with connection(self.pool) as conn:
            return await read_workspace(conn, workspace)

    async def ping(self) -> None:
        """The database answers (the health check)."""
        await self.pool.fetchval("SELECT 1")

    async def rebuild_missing_recall(self) -> int:
        """Recall rows are derived: scopes with records but no row yet (migrated data) get one."""
        return await rebuild_missing_recall(self.pool, self.limits)

    # --- chats ------------------------------------------------------------------------------

    async def set_bot_active(self, bot_id: int, chat_id: int, active: bool) -> None:
        """The bot is in the chat (added back), or not (it left or was removed)."""
        await self.pool.execute(
            "UPDATE chats SET bot_active = $3, updated_at = now() WHERE bot_id = $1"
            " AND chat_id = $2",
            bot_id,
            chat_id,
            active,
        )

    async def chat_migrated(self, bot_id: int, old_chat_id: int, new_chat_id: int) -> None:
        """A group became a supergroup: its old ID points at the new one."""
        await self.pool.execute(
            "UPDATE chats SET migrated_to = $3 WHERE bot_id = $1 AND chat_id = $2",
            bot_id,
            old_chat_id,
            new_chat_id,
        )

    async def chat(self, bot_id: int, chat_id: int) -> ChatInfo | None:
        row = await self.pool.fetchrow(
            "SELECT * FROM chats WHERE bot_id = $1 AND chat_id = $2", bot_id, chat_id
        )
        return None if row is None else _chat_info(row)

    async def save_chat(
        self,
        *,
        bot_id: int,
        chat_id: int,
        workspace: str,
        chat_type: str,
        auto_delete_seconds: int | None = None,
        auto_delete_known: bool = False,
    ) -> ChatInfo:
        """Record what memory knows of a chat; a known auto-delete timer is only replaced by
        another known one."""
        row = await self.pool.fetchrow(
            """
            INSERT INTO chats (bot_id, chat_id, workspace_id, chat_type, auto_delete_seconds,
                auto_delete_known)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (bot_id, chat_id) DO UPDATE SET
                workspace_id = EXCLUDED.workspace_id, chat_type = EXCLUDED.chat_type,
                auto_delete_seconds = CASE WHEN EXCLUDED.auto_delete_known
                    THEN EXCLUDED.auto_delete_seconds ELSE chats.auto_delete_seconds END,
                auto_delete_known = chats.auto_delete_known OR EXCLUDED.auto_delete_known,
                updated_at = now()
            RETURNING *
            """,
            bot_id,
            chat_id,
            workspace,
            chat_type,
            auto_delete_seconds,
            auto_delete_known,
        )
        assert row is not None
        return _chat_info(row)

    # --- ingress ----------------------------------------------------------------------------------

    async def record_directed(
        self,
        scope: Scope,
        *,
        thread_id: int,
        telegram_message_id: int | None,
        speaker_id: int,
        text: str,
        language: str | None,
        budget_usd: float,
        sent_at: datetime,
        retain_until: datetime | None,
    ) -> SourceMessage | None:
        """One statement: the message and the queued request it opens (and, the first time, the
        workspace).

        The message's retention boundary is the earliest of `retain_until` and the chat's
        auto-delete timer. None when this Telegram message was recorded already (a retry).
        """
        args = (
            scope.workspace,
            scope.key,
            scope.bot_id,
            scope.chat_id,
            thread_id,
            telegram_message_id,
            speaker_id,
            text,
            content_hash(text),
            language,
            sent_at,
            retain_until,
            scope.model_dump_json(),
            Decimal(str(budget_usd)),
            text_vector(text),
        )
        if scope.workspace not in self._known_workspaces:
            await self._ensure_workspace(scope.workspace)
        try:
            row = await self.pool.fetchrow(RECORD, *args)
        except asyncpg.ForeignKeyViolationError:  # purged meanwhile: a new message starts over
            await self._ensure_workspace(scope.workspace)
            row = await self.pool.fetchrow(RECORD, *args)
        if row is None:
            return None
        return SourceMessage(
            message_id=row["user_message_id"],
            request_id=row["id"],
            scope=scope,
            text=text,
            speaker_id=speaker_id,
            thread_id=thread_id,
            telegram_message_id=telegram_message_id,
        )

    async def find_messages(
        self, bot_id: int, chat_id: int, telegram_message_ids: list[int]
    ) -> dict[str, list[int]]:
        """Stored message IDs of these Telegram messages, by workspace."""
        rows = await self.pool.fetch(
            "SELECT workspace_id, id FROM messages WHERE bot_id = $1 AND chat_id = $2"
            " AND telegram_message_id = ANY($3::bigint[])",
            bot_id,
            chat_id,
            telegram_message_ids,
        )
        found: dict[str, list[int]] = {}
        for r in rows:
            found.setdefault(r["workspace_id"], []).append(r["id"])
        return found

    # --- requests ---------------------------------------------------------------------------------

    async def add_citations(
        self,
        source: SourceMessage,
        source_ids: list[str],
        memory_ids: list[str],
        *,
        within: WorkspaceTx | None = None,
    ) -> None:
        """Returned sources enter the request's citation set; returned records count as given."""
        await (within.conn if within else self.pool).execute(
            "UPDATE requests SET citation_source_ids = ARRAY(SELECT DISTINCT unnest("
            "citation_source_ids || $3::text[])), recall_memory_ids = ARRAY(SELECT DISTINCT"
            " unnest(recall_memory_ids || $4::text[])) WHERE workspace_id = $1 AND id = $2",
            source.scope.workspace,
            source.request_id,
            source_ids,
            memory_ids,
        )

    async def history(
        self, scope: Scope, *, before_message_id: int, limit: int, now: datetime
    ) -> list[HistoryMessage]:
        """The scope's latest retained messages before this one, oldest first; forgotten ones
        (tombstoned) are left out, so the next prompt does not bring back what was forgotten."""
        rows = await self.pool.fetch(
            HISTORY.format(ws="$1", scope="$2", before="$3", limit="$4", now="$5"),
            scope.workspace,
            scope.key,
            before_message_id,
            limit,
            now,
        )
        return history_of(rows)

    async def source_texts(
        self, workspace: str, message_ids: list[int], *, at: datetime
    ) -> dict[int, str]:
        """Texts of messages that still have them at `at` (not erased, their retention boundary
        not passed by then)."""
        rows = await self.pool.fetch(
            "SELECT id, text FROM messages WHERE workspace_id = $1 AND id = ANY($2::bigint[])"
            " AND text IS NOT NULL AND (retain_until IS NULL OR retain_until > $3)",
            workspace,
            message_ids,
            at,
        )
        return {r["id"]: r["text"] for r in rows}

    async def telegram_ids(self, workspace: str, message_ids: list[int]) -> dict[int, int]:
        """Telegram's message IDs of stored messages (to link to them), where known."""
        rows = await self.pool.fetch(
            "SELECT id, telegram_message_id FROM messages WHERE workspace_id = $1"
            " AND id = ANY($2::bigint[]) AND telegram_message_id IS NOT NULL",
            workspace,
            message_ids,
        )
        return {r["id"]: r["telegram_message_id"] for r in rows}

    async def tool_result(self, source: SourceMessage, call_id: str) -> dict[str, Any] | None:
        """What a tool call of this request returned the first time (None: not made yet)."""
        raw = await self.pool.fetchval(
            "SELECT result FROM tool_calls WHERE workspace_id = $1 AND request_id = $2"
            " AND call_id = $3",
            source.scope.workspace,
            source.request_id,
            call_id,
        )
        return None if raw is None else dict(json.loads(raw))

    async def keep_tool_result(
        self, source: SourceMessage, call_id: str, name: str, result: dict[str, Any]
    ) -> None:
        """The first result of a tool call, returned again when the call is replayed."""
        await self.pool.execute(
            "INSERT INTO tool_calls (workspace_id, request_id, call_id, name, result)"
            " VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT DO NOTHING",
            source.scope.workspace,
            source.request_id,
            call_id,
            name,
            json.dumps(result),
        )

    # --- usage and budgets --------------------------------------------------------------------

    async def record_usage(self, entry: UsageEntry, *, within: WorkspaceTx | None = None) -> bool:
        """Append to the ledger and charge the request and workspace; False if a replay.
        (Billed model calls go through ledger.py's attempts; this is for tool calls and
        a host's own calls, recorded after the fact.)"""
        insert = LEDGER_INSERT.format(*range(3, 13)) + " RETURNING id"
        args = (entry.workspace, entry.request_id, *ledger_values(entry))

        async def write(c: asyncpg.Connection) -> bool:
            if not entry.cost_usd:  # nothing to charge: one statement
                return await c.fetchval(insert, *args) is not None
            async with c.transaction():
                if await c.fetchval(insert, *args) is None:
                    return False
                cost = Decimal(str(entry.cost_usd))
                if entry.request_id is not None:
                    await c.execute(
                        "UPDATE requests SET charged_usd = charged_usd + $3"
                        " WHERE workspace_id = $1 AND id = $2",
                        entry.workspace,
                        entry.request_id,
                        cost,
                    )
                await c.execute(
                    "UPDATE workspaces SET spent_usd = spent_usd + $2 WHERE id = $1",
                    entry.workspace,
                    cost,
                )
                return True

        if within is not None:
            return await write(within.conn)
        async with connection(self.pool) as c:
            return await write(c)

    # --- reading records -------------------------------------------------------------------

    async def summary(self, scope: Scope, now: datetime) -> ScopeSummary:
        row = await self.pool.fetchrow(
            "SELECT n.records, n.held, n.others, bm_fair_share($4, $5) AS share,"
            " coalesce(s.enabled, true) AS enabled, coalesce(s.suspended, false) AS suspended,"
            " coalesce(s.index_pending, false) AS pending,"
            " (SELECT max(finished_at) FROM memory_jobs j WHERE j.workspace_id = $1"
            " AND j.scope_key = $2 AND j.phase = 'done') AS last_run,"
            " coalesce(w.spent_usd, 0) AS spent, coalesce(w.reserved_usd, 0) AS reserved"
            # The workspace's records read once: the scope's available ones (the count shown),
            # all of the scope's and the other scopes' (what the cap's share counts).
            " FROM (SELECT count(*) FILTER (WHERE r.scope_key = $2 AND r.valid"
            " AND (r.available_until IS NULL OR r.available_until > $3)) AS records,"
            " count(*) FILTER (WHERE r.scope_key = $2) AS held,"
            " count(*) FILTER (WHERE r.scope_key <> $2) AS others"
            " FROM memory_records r WHERE r.workspace_id = $1) n"
            " LEFT JOIN memory_scopes s ON s.workspace_id = $1"
            " AND s.scope_key = $2 LEFT JOIN workspaces w ON w.id = $1",
            scope.workspace,
            scope.key,
            now,
            self.limits.max_records,
            self.limits.max_share,
        )
        assert row is not None
        return ScopeSummary(
            records=row["records"],
            enabled=row["enabled"],
            suspended=row["suspended"],
            pending=row["pending"],
            last_run=row["last_run"],
            spent_usd=float(row["spent"]),
            reserved_usd=float(row["reserved"]),
            held=row["held"],
            share=row["share"],
            others=row["others"],
        )

    async def given(
        self,
        source: SourceMessage,
        memory_ids: list[str],
        source_ids: list[str],
        now: datetime,
        *,
        within: WorkspaceTx | None = None,
        usage: UsageEntry | None = None,
    ) -> None:
        """Records a tool returned: they count as used (retention), as given to the request,
        and their sources enter its citation set (in the transaction that read them, when
        `within`: an erasure then sees the citation, or the read does not see the record).
        `usage`: the tool call's line in the ledger (nothing charged), in the same statement."""
        args: tuple[object, ...] = (
            source.scope.workspace,
            source.request_id,
            memory_ids,
            source_ids,
            now,
        )
        statement = GIVEN
        if usage is not None:
            if usage.cost_usd or (usage.workspace, usage.request_id) != args[:2]:
                raise ValueError("only an uncharged line of this request rides along")
            statement = GIVEN_AND_NOTED
            args += ledger_values(usage)
        await (within.conn if within else self.pool).execute(statement, *args)

    async def prunable_workspaces(
        self, unused_since: datetime, now: datetime, *, limit: int = 200
    ) -> list[str]:
        """Workspaces holding a record unused since the cutoff, invalid, or past its sources'
        retention (what `WorkspaceTx.prunable` finds)."""
        rows = await self.pool.fetch(
            "SELECT DISTINCT workspace_id FROM memory_records WHERE last_used_at < $1 OR NOT valid"
            " OR available_until <= $2 LIMIT $3",
            unused_since,
            now,
            limit,
        )
        return [r["workspace_id"] for r in rows]

    async def fill_search_terms(self, batch: int) -> int:
        """Search terms for up to `batch` records and `batch` messages stored without them; how
        many rows got theirs. The terms are written only while the text they were cut from is
        still the row's (an edit or an erasure meanwhile wins)."""
        filled = 0
        records = await self.pool.fetch(
            "SELECT workspace_id, id, title, summary FROM memory_records WHERE search IS NULL"
            " LIMIT $1",
            batch,
        )
        if records:
            await self.pool.executemany(
                "UPDATE memory_records SET search = $3::tsvector WHERE workspace_id = $1"
                " AND id = $2 AND search IS NULL",
                [
                    (r["workspace_id"], r["id"], record_vector(r["title"], r["summary"]))
                    for r in records
                ],
            )
            filled += len(records)
        messages = await self.pool.fetch(
            "SELECT id, text, content_hash FROM messages WHERE search IS NULL AND text IS NOT NULL"
            " LIMIT $1",
            batch,
        )
        if messages:
            await self.pool.executemany(
                "UPDATE messages SET search = $2::tsvector WHERE id = $1 AND search IS NULL"
                " AND text IS NOT NULL AND content_hash = $3",
                [(m["id"], text_vector(m["text"]), m["content_hash"]) for m in messages],
            )
            filled += len(messages)
        return filled

    async def current_records(
        self, workspace: str, scope_key: str, at: datetime, *, limit: int
    ) -> list[MemoryRecord]:
        """A scope's records that hold at `at` (valid, available, not replaced), newest first,
        without their sources."""
        rows = await self.pool.fetch(
            f"SELECT {RECORD_COLUMNS} FROM memory_records r WHERE r.workspace_id = $1"
            " AND r.scope_key = $2"
            " AND r.valid AND r.replaced_by IS NULL"
            " AND (r.available_until IS NULL OR r.available_until > $3)"
            " ORDER BY r.created_at DESC, r.id DESC LIMIT $4",
            workspace,
            scope_key,
            at,
            limit,
        )
        return [record_from_row(r) for r in rows]

    async def available_of(self, workspace: str, ids: list[str], at: datetime) -> set[str]:
        """Which of these records are valid and retained at `at` (for in-flight rechecks)."""
        rows = await self.pool.fetch(
            "SELECT id FROM memory_records WHERE workspace_id = $1 AND id = ANY($2::text[])"
            " AND valid AND (available_until IS NULL OR available_until > $3)",
            workspace,
            ids,
            at,
        )
        return {r["id"] for r in rows}

    async def current_of(self, workspace: str, ids: list[str], at: datetime) -> list[MemoryRecord]:
        """Those of these records that hold at `at` (valid, available, not replaced), newest
        first, without their sources."""
        rows = await self.pool.fetch(
            f"SELECT {RECORD_COLUMNS} FROM memory_records r"
            " WHERE r.workspace_id = $1 AND r.id = ANY($2::text[]) AND r.valid"
            " AND (r.available_until IS NULL OR r.available_until > $3)"
            " AND r.replaced_by IS NULL ORDER BY r.created_at DESC, r.id DESC",
            workspace,
            ids,
            at,
        )
        return [record_from_row(r) for r in rows]

    async def switches(self, scope: Scope) -> Switches | None:
        """The scope's switches (None: nothing stored for it yet)."""
        row = await self.pool.fetchrow(
            "SELECT enabled, suspended FROM memory_scopes WHERE workspace_id = $1"
            " AND scope_key = $2",
            scope.workspace,
            scope.key,
        )
        return None if row is None else Switches(row["enabled"], row["suspended"])

    # --- recall -------------------------------------------------------------------------------

    async def recall_row(self, scope: Scope) -> RecallRow | None:
        raw = await self.pool.fetchval(
            "SELECT recall FROM memory_scopes WHERE workspace_id = $1 AND scope_key = $2",
            scope.workspace,
            scope.key,
        )
        return None if raw is None else RecallRow.model_validate_json(raw)


def _chat_info(row: asyncpg.Record) -> ChatInfo:
    return ChatInfo(
        bot_id=row["bot_id"],
        chat_id=row["chat_id"],
        workspace=row["workspace_id"],
        chat_type=row["chat_type"],
        bot_active=row["bot_active"],
        auto_delete_seconds=row["auto_delete_seconds"],
        auto_delete_known=row["auto_delete_known"],
    )


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
