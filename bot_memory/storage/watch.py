"""What the demo, the test kit and the evaluation read to follow memory at work from outside
(`Store.watch`): requests still open, the rows a conversation left, the ledger's lines, jobs by
phase. No serving path reads these; what they show and decide stays with them.
"""

from __future__ import annotations

from typing import Any

from bot_memory.storage.handle import Handle


class Watch:
    """Reads that watch memory from outside, on the pool (`Store.watch`)."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    # --- requests ---------------------------------------------------------------------------------

    async def open_requests(self, *, counting_kept: bool = True) -> int:
        """How many requests are still queued or running, in every workspace; with
        `counting_kept=False`, not those a handler keeps open."""
        statement = "SELECT count(*) FROM requests WHERE status IN ('queued', 'running')"
        if not counting_kept:
            statement += " AND NOT keep_open"
        count: int = await self._on.fetchval(statement)
        return count

    async def open_requests_of(self, chat_id: int, telegram_message_id: int) -> int:
        """How many requests opened by this Telegram message are still queued or running (not
        counting those a handler keeps open)."""
        count: int = await self._on.fetchval(
            "SELECT count(*) FROM requests r JOIN messages m ON m.workspace_id ="
            " r.workspace_id AND m.id = r.user_message_id WHERE m.chat_id = $1"
            " AND m.telegram_message_id = $2 AND r.status IN ('queued', 'running')"
            " AND NOT r.keep_open",
            chat_id,
            telegram_message_id,
        )
        return count

    async def answer_messages(self, workspace: str, request_ids: list[int]) -> dict[int, int]:
        """The stored answer message of each of these requests that has one, by request ID."""
        rows = await self._on.fetch(
            "SELECT id, answer_message_id FROM requests WHERE workspace_id = $1"
            " AND id = ANY($2::bigint[]) AND answer_message_id IS NOT NULL",
            workspace,
            request_ids,
        )
        return {r["id"]: r["answer_message_id"] for r in rows}

    # --- messages and records ---------------------------------------------------------------------

    async def message_heads(self, workspace: str) -> list[tuple[int, str, str | None]]:
        """A workspace's messages in order: ID, role and the first 60 characters of the text."""
        rows = await self._on.fetch(
            "SELECT id, role, left(text, 60) AS text FROM messages WHERE workspace_id = $1"
            " ORDER BY id",
            workspace,
        )
        return [(r["id"], r["role"], r["text"]) for r in rows]

    async def user_messages(self, chat_id: int) -> int:
        """How many user messages of a chat are stored (in any workspace)."""
        count: int = await self._on.fetchval(
            "SELECT count(*) FROM messages WHERE chat_id = $1 AND role = 'user'", chat_id
        )
        return count

    async def memories(self, workspace: str | None = None) -> list[tuple[str, str]]:
        """The title and summary of each valid record (of one workspace, or of all), oldest
        first."""
        rows = await self._on.fetch(
            "SELECT title, summary FROM memory_records WHERE valid"
            " AND ($1::text IS NULL OR workspace_id = $1) ORDER BY created_at",
            workspace,
        )
        return [(r["title"], r["summary"]) for r in rows]

    # --- the ledger -------------------------------------------------------------------------------

    async def last_ledger_id(self, workspace: str) -> int:
        """The ID of the workspace's latest ledger line (0: none yet)."""
        mark = await self._on.fetchval(
            "SELECT coalesce(max(id), 0) FROM usage_ledger WHERE workspace_id = $1", workspace
        )
        return int(mark)

    async def ledger_lines(
        self, workspace: str, after: int, through: int | None
    ) -> list[dict[str, Any]]:
        """The workspace's ledger lines (amounts and tokens, no text), by ID range."""
        rows = await self._on.fetch(
            "SELECT id, request_id, kind, outcome, prompt_tokens, completion_tokens, cost_usd"
            " FROM usage_ledger WHERE workspace_id = $1 AND id > $2"
            " AND ($3::bigint IS NULL OR id <= $3) ORDER BY id",
            workspace,
            after,
            through,
        )
        return [dict(r) for r in rows]

    async def usage_by_kind(self, workspaces: list[str]) -> list[dict[str, Any]]:
        """The ledger of these workspaces by kind of call: `kind`, calls (`n`), prompt
        `tokens`."""
        rows = await self._on.fetch(
            "SELECT kind, count(*) AS n, sum(prompt_tokens) AS tokens FROM usage_ledger"
            " WHERE workspace_id = ANY($1::text[]) GROUP BY kind ORDER BY kind",
            workspaces,
        )
        return [dict(r) for r in rows]

    # --- jobs -------------------------------------------------------------------------------------

    async def jobs_by_phase(self, workspace: str) -> list[dict[str, Any]]:
        """The workspace's jobs by phase: `phase`, how many (`n`), one of their last errors."""
        rows = await self._on.fetch(
            "SELECT phase, count(*) AS n, max(last_error) AS error FROM memory_jobs"
            " WHERE workspace_id = $1 GROUP BY phase",
            workspace,
        )
        return [dict(r) for r in rows]

    async def waiting_elsewhere(self) -> int:
        """How many workspaces other than the evaluation's (`eval-...`) have memory jobs
        waiting to run."""
        busy: int = await self._on.fetchval(
            "SELECT count(DISTINCT workspace_id) FROM memory_jobs"
            " WHERE phase IN ('extract', 'consolidate') AND workspace_id NOT LIKE 'eval-%'"
        )
        return busy
