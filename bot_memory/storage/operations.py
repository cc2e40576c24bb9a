"""What the operator's command line reads and changes outside the bot's own paths
(`Store.operations`): every workspace's figures, the workers' ticks, the jobs that need an
operator, the workspaces a scope's or a person's export reads, a job re-armed. Shown and decided
in `bot_memory.cli.operations`; what goes through the bot's own paths (the workspace lock, the
forget cascade, the planner) is not here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from bot_memory.scopes import Scope
from bot_memory.storage.handle import Handle, connection
from bot_memory.storage.rows import _json, scope_from_row
from bot_memory.storage.workspace import WorkspaceView, read_workspace


@dataclass(frozen=True)
class OperatorStatus:
    """What `bot-memory status` (and the Mini App's workspace figures) read, row by row."""

    totals: dict[str, Any]  # workspaces, valid records: of the whole database
    workspaces: list[dict[str, Any]]  # each with its job counts by phase (`jobs`)
    problems: list[dict[str, Any]]  # jobs failed, or stopped on an unknown outcome or budget
    at_share: list[dict[str, Any]]  # scopes and speakers at or over their fair share
    workers: list[dict[str, Any]]  # the latest ticks, each `live` or not, with its settings
    pinned: list[dict[str, Any]]  # waiting jobs counted by the model they are pinned to
    bots: list[dict[str, Any]]  # each bot's settings as it pinned them


class Operations:
    """The operator's reads and writes, on the pool (`Store.operations`)."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def status(
        self,
        *,
        limit: int,
        workspace: str | None,
        live_within: timedelta,
        cap: tuple[int, float] | None,
    ) -> OperatorStatus:
        """Every workspace's figures (or one workspace's); the latest ticks, each live when
        within `live_within`; waiting jobs by pinned model; with `cap` (workspace_max_records,
        scope_max_share), the scopes of the workspaces shown holding at least their fair share
        of it, and the speakers whose notes do, while others in the workspace hold memories."""
        workspaces = await self._on.fetch(
            """
            SELECT w.id AS workspace, w.spent_usd, w.reserved_usd, w.last_served_at,
                (SELECT count(*) FROM memory_records r WHERE r.workspace_id = w.id AND r.valid)
                    AS records,
                (SELECT count(*) FROM memory_scopes s WHERE s.workspace_id = w.id) AS scopes,
                (SELECT coalesce(jsonb_object_agg(phase, n), '{}'::jsonb) FROM (
                    SELECT phase, count(*) AS n FROM memory_jobs j WHERE j.workspace_id = w.id
                    GROUP BY phase) p) AS jobs
            FROM workspaces w WHERE $2::text IS NULL OR w.id = $2
            ORDER BY w.updated_at DESC LIMIT $1
            """,
            limit,
            workspace,
        )
        problems = await self._on.fetch(
            "SELECT id AS job, workspace_id AS workspace, scope_key AS scope, phase, stop_kind,"
            " claims, last_error AS reason, coalesce(finished_at, updated_at) AS at"
            " FROM memory_jobs WHERE (phase = 'failed'"
            " OR (phase = 'stopped' AND stop_kind IN ('unknown', 'budget')))"
            " AND ($2::text IS NULL OR workspace_id = $2) ORDER BY updated_at DESC LIMIT $1",
            limit,
            workspace,
        )
        ticks = await self._on.fetch(
            "SELECT worker_id AS worker, started_at, last_tick_at, provider, model, settings,"
            " last_tick_at > now() - $1::interval AS live FROM worker_ticks"
            " ORDER BY last_tick_at DESC LIMIT 20",
            live_within,
        )
        pinned = await self._on.fetch(
            "SELECT provider, model, count(*) AS jobs, min(created_at) AS since FROM memory_jobs"
            " WHERE phase IN ('extract', 'consolidate') AND ($1::text IS NULL OR workspace_id = $1)"
            " GROUP BY provider, model ORDER BY min(created_at)",
            workspace,
        )
        bots = await self._on.fetch("SELECT bot_id, settings FROM bot_models ORDER BY bot_id")
        shown = [w["workspace"] for w in workspaces]
        max_records, max_share = cap or (0, 1.0)
        # At or over the share while others in the workspace hold memories too (alone, a scope's
        # or a speaker's share changes nothing).
        at_share = await self._on.fetch(
            "WITH c AS (SELECT bm_fair_share($2, $3) AS share),"
            " n AS (SELECT workspace_id, count(*) AS total FROM memory_records"
            " WHERE workspace_id = ANY($1::text[]) GROUP BY workspace_id)"
            " SELECT * FROM ("
            " SELECT workspace_id AS workspace, 'scope' AS holder, scope_key AS who,"
            " count(*) AS held, min(c.share) AS share FROM memory_records, c"
            " WHERE workspace_id = ANY($1::text[])"
            " GROUP BY workspace_id, scope_key HAVING count(*) >= min(c.share)"
            " UNION ALL SELECT workspace_id, 'speaker', s::text, count(*), min(c.share)"
            " FROM memory_records, unnest(speaker_ids) s, c WHERE workspace_id = ANY($1::text[])"
            " AND origin = 'note' GROUP BY workspace_id, s HAVING count(*) >= min(c.share)"
            " ) a JOIN n ON n.workspace_id = a.workspace WHERE n.total > a.held"
            " ORDER BY 1, 2, 4 DESC, 3",
            shown if cap is not None else [],
            max_records,
            max_share,
        )
        totals = await self._on.fetchrow(
            "SELECT (SELECT count(*) FROM workspaces) AS workspaces,"
            " (SELECT count(*) FROM memory_records WHERE valid) AS records"
        )
        return OperatorStatus(
            totals=dict(totals) if totals else {},
            workspaces=[{**dict(r), "jobs": _json(r["jobs"])} for r in workspaces],
            problems=[dict(r) for r in problems],
            at_share=[dict(r) for r in at_share],
            workers=[{**dict(r), "settings": _json(r["settings"])} for r in ticks],
            pinned=[dict(r) for r in pinned],
            bots=[{**dict(r), "settings": _json(r["settings"])} for r in bots],
        )

    async def inspect(
        self, workspace: str, scope_key: str | None
    ) -> WorkspaceView | Literal["workspace", "scope"]:
        """The workspace's records and scopes, read on one connection after checking the
        workspace (and the scope, when one is named) exists; else which of the two does not."""
        async with connection(self._on) as conn:
            exists = await conn.fetchval("SELECT 1 FROM workspaces WHERE id = $1", workspace)
            if not exists:
                return "workspace"
            if scope_key is not None and not await conn.fetchval(
                "SELECT 1 FROM memory_scopes WHERE workspace_id = $1 AND scope_key = $2",
                workspace,
                scope_key,
            ):
                return "scope"
            return await read_workspace(conn, workspace)

    async def export_workspaces(
        self, *, user_id: int | None = None, scope_key: str | None = None
    ) -> list[str] | None:
        """The workspaces holding records of one scope (None: no such scope), or those holding
        records of a person's private chats or made only of their statements."""
        if scope_key is not None:
            if not await self._on.fetchval(
                "SELECT 1 FROM memory_scopes WHERE scope_key = $1", scope_key
            ):
                return None
            rows = await self._on.fetch(
                "SELECT DISTINCT workspace_id FROM memory_records WHERE scope_key = $1", scope_key
            )
        else:
            rows = await self._on.fetch(
                "SELECT DISTINCT r.workspace_id FROM memory_records r LEFT JOIN memory_scopes s"
                " ON s.workspace_id = r.workspace_id AND s.scope_key = r.scope_key"
                " WHERE s.user_id = $1 OR r.speaker_ids = ARRAY[$1::bigint]",
                user_id,
            )
        return [r["workspace_id"] for r in rows]

    async def views(self, workspaces: list[str]) -> AsyncIterator[tuple[str, WorkspaceView]]:
        """Each workspace's records and scopes in turn, read on one connection."""
        async with connection(self._on) as conn:
            for workspace in workspaces:
                yield workspace, await read_workspace(conn, workspace)

    async def scope_of_record(self, memory_id: str) -> Scope | None:
        """The scope a memory is in, wherever it is (None: no such memory)."""
        row = await self._on.fetchrow(
            "SELECT r.workspace_id, s.scope_key, s.kind, s.bot_id, s.chat_id, s.user_id,"
            " s.topic_id, s.enabled, s.suspended, s.off_since, s.off_ranges, s.extracted_through,"
            " s.index_text, s.index_ids, s.index_built_at, s.index_pending, s.index_candidates"
            " FROM memory_records r"
            " JOIN memory_scopes s ON s.workspace_id = r.workspace_id AND s.scope_key = r.scope_key"
            " WHERE r.id = $1 LIMIT 1",
            memory_id,
        )
        return None if row is None else scope_from_row(row["workspace_id"], row).scope

    async def workspace_of_scope(self, scope_key: str) -> str | None:
        """The workspace a scope is in (a host's workspace names may hold "/": the scope is
        looked up rather than its key split)."""
        found: str | None = await self._on.fetchval(
            "SELECT workspace_id FROM memory_scopes WHERE scope_key = $1 LIMIT 1", scope_key
        )
        return found

    async def rearm(self, job_id: int) -> dict[str, Any] | None:
        """Re-arm a job stopped on an unknown provider outcome (or failed for good): it runs
        again from scratch, claims reset. Its ID, workspace, scope and phase; None when no such
        job is stopped so or failed (`job_phase` says what it is)."""
        row = await self._on.fetchrow(
            "UPDATE memory_jobs SET phase = CASE WHEN snapshot->'candidates' <> '{}'::jsonb"
            " THEN 'consolidate' ELSE 'extract' END, stop_kind = NULL, claims = 0,"
            " checkpoint = '{}'::jsonb, next_attempt_at = now(), finished_at = NULL,"
            " ownership_token = NULL, lease_until = NULL,"
            " last_error = 're-armed by an operator; was: ' || coalesce(last_error, ''),"
            " updated_at = now() WHERE id = $1 AND (phase = 'failed' OR (phase = 'stopped'"
            " AND stop_kind = 'unknown')) RETURNING id, workspace_id, scope_key, phase",
            job_id,
        )
        return None if row is None else dict(row)

    async def job_phase(self, job_id: int) -> tuple[str, str | None] | None:
        """A job's phase and stop kind (None: no such job)."""
        row = await self._on.fetchrow(
            "SELECT phase, stop_kind FROM memory_jobs WHERE id = $1", job_id
        )
        return None if row is None else (row["phase"], row["stop_kind"])
