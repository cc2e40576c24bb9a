"""What the operator's command line reads and changes (see commands.py for how it is shown).

Reads are plain queries; changes go through the same code paths as the bot (the workspace lock,
the forget cascade, the planner), as an operator acting with admin rights.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from bot_memory.access import Membership
from bot_memory.control import ControlResult, forget_record
from bot_memory.pipeline import Pin, disagreements, lacks, live_window, plan_pending
from bot_memory.records import MemoryRecord
from bot_memory.scopes import Scope
from bot_memory.storage import Store, WorkspaceGone, read_workspace, scope_from_row

OPERATOR = Membership(member=True, admin=True, reason="operator")


class NotFound(LookupError):
    """A memory, job, workspace or scope that does not exist (said plainly, no traceback)."""


async def status(
    pool: asyncpg.Pool,
    *,
    limit: int = 50,
    workspace: str | None = None,
    live_within: timedelta | None = None,
    cap: tuple[int, float] | None = None,
) -> dict[str, Any]:
    """Every workspace's figures (or one workspace's, for its admins in the Mini App); each
    worker and what it calls; jobs waiting for a model no worker that ticked within
    `live_within` calls (default: three default ticks and a minute), with what each live
    worker lacks for them. With `cap` (workspace_max_records, scope_max_share), the scopes of
    these workspaces holding at least their fair share of it, and the speakers whose notes
    do: past the cap, their least used records are the first to go."""
    live_within = live_within or live_window(60.0)
    workspaces = await pool.fetch(
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
    problems = await pool.fetch(
        "SELECT id AS job, workspace_id AS workspace, scope_key AS scope, phase, stop_kind,"
        " claims, last_error AS reason, coalesce(finished_at, updated_at) AS at FROM memory_jobs"
        " WHERE (phase = 'failed' OR (phase = 'stopped' AND stop_kind IN ('unknown', 'budget')))"
        " AND ($2::text IS NULL OR workspace_id = $2) ORDER BY updated_at DESC LIMIT $1",
        limit,
        workspace,
    )
    ticks = await pool.fetch(
        "SELECT worker_id AS worker, started_at, last_tick_at, provider, model, settings,"
        " last_tick_at > now() - $1::interval AS live FROM worker_ticks"
        " ORDER BY last_tick_at DESC LIMIT 20",
        live_within,
    )
    pinned = await pool.fetch(
        "SELECT provider, model, count(*) AS jobs, min(created_at) AS since FROM memory_jobs"
        " WHERE phase IN ('extract', 'consolidate') AND ($1::text IS NULL OR workspace_id = $1)"
        " GROUP BY provider, model ORDER BY min(created_at)",
        workspace,
    )
    bots = await pool.fetch("SELECT bot_id, settings FROM bot_models ORDER BY bot_id")
    shown = [w["workspace"] for w in workspaces]
    max_records, max_share = cap or (0, 1.0)
    # At or over the share while others in the workspace hold memories too (alone, a scope's
    # or a speaker's share changes nothing).
    at_share = await pool.fetch(
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
    totals = await pool.fetchrow(
        "SELECT (SELECT count(*) FROM workspaces) AS workspaces,"
        " (SELECT count(*) FROM memory_records WHERE valid) AS records"
    )
    return {
        "totals": dict(totals) if totals else {},
        "workspaces": [{**dict(r), "jobs": _json(r["jobs"])} for r in workspaces],
        "problems": [dict(r) for r in problems],
        "at_share": [
            {k: r[k] for k in ("workspace", "holder", "who", "held", "share")} for r in at_share
        ],
        "workers": [{**dict(r), "settings": _json(r["settings"])} for r in ticks],
        "waiting": waiting_for_models(
            [dict(r) for r in pinned], [dict(r) for r in ticks if r["live"]]
        ),
        # Settings a live worker runs with differently from a bot (not its model: above).
        "disagreements": disagreements(
            [{**dict(r), "settings": _json(r["settings"])} for r in bots],
            [{**dict(r), "settings": _json(r["settings"])} for r in ticks if r["live"]],
        ),
    }


def waiting_for_models(
    pinned: list[dict[str, Any]], live: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Job counts by pinned model that no live worker calls, each with what every live worker
    lacks for it (a worker that has not ticked yet, or ticked with no model, says nothing)."""
    calls = {Pin(w["provider"], w["model"]) for w in live if w["provider"] is not None}
    waiting = []
    for group in pinned:
        wanted = Pin(group["provider"], group["model"])
        if wanted in calls:
            continue
        lacking = [
            {
                "worker": w["worker"],
                "provider": w["provider"],
                "model": w["model"],
                "lacks": lacks(Pin(w["provider"], w["model"]), wanted),
            }
            for w in live
            if w["provider"] is not None
        ]
        waiting.append({**group, "lacking": lacking})
    return waiting


async def inspect(
    pool: asyncpg.Pool, workspace: str, scope_key: str | None
) -> list[dict[str, Any]]:
    async with pool.acquire() as conn:
        exists = await conn.fetchval("SELECT 1 FROM workspaces WHERE id = $1", workspace)
        if not exists:
            raise NotFound(f"no workspace {workspace!r}")
        if scope_key is not None and not await conn.fetchval(
            "SELECT 1 FROM memory_scopes WHERE workspace_id = $1 AND scope_key = $2",
            workspace,
            scope_key,
        ):
            raise NotFound(f"no scope {scope_key!r} in workspace {workspace!r}")
        view = await read_workspace(conn, workspace)
    records = [r for r in view.records.values() if scope_key is None or r.scope_key == scope_key]
    records.sort(key=lambda r: (r.scope_key, r.created_at, r.id), reverse=True)
    return [_provenance(r.model_dump(mode="json")) for r in records]


async def export(
    pool: asyncpg.Pool, *, user_id: int | None = None, scope_key: str | None = None
) -> list[dict[str, Any]]:
    """The records a person may take with them: those of their private chats and, in groups,
    those whose statements are all theirs; or every record of one scope."""
    if scope_key is not None:
        if not await pool.fetchval("SELECT 1 FROM memory_scopes WHERE scope_key = $1", scope_key):
            raise NotFound(f"no scope {scope_key!r}")
        rows = await pool.fetch(
            "SELECT DISTINCT workspace_id FROM memory_records WHERE scope_key = $1", scope_key
        )
    else:
        rows = await pool.fetch(
            "SELECT DISTINCT r.workspace_id FROM memory_records r LEFT JOIN memory_scopes s"
            " ON s.workspace_id = r.workspace_id AND s.scope_key = r.scope_key"
            " WHERE s.user_id = $1 OR r.speaker_ids = ARRAY[$1::bigint]",
            user_id,
        )
    out: list[dict[str, Any]] = []
    async with pool.acquire() as conn:
        for row in rows:
            view = await read_workspace(conn, row["workspace_id"])
            for record in view.records.values():
                if not record.valid:
                    continue
                scope = view.scopes.get(record.scope_key)
                if scope_key is not None:
                    keep = record.scope_key == scope_key
                else:
                    keep = may_take(record, scope.scope if scope else None, user_id)
                if keep:
                    out.append(export_line(row["workspace_id"], record))
    out.sort(key=lambda r: (r["scope_key"], r["created_at"]))
    return out


def may_take(record: MemoryRecord, scope: Scope | None, user_id: int | None) -> bool:
    """Whether a person may take a record with them: all of their private chat's, and in
    groups those made only of their own statements."""
    if scope is not None and scope.is_private:
        return scope.user_id == user_id
    return record.speaker_ids == [user_id]


def export_line(workspace: str, record: MemoryRecord) -> dict[str, Any]:
    """One line of an export (the CLI's and the Mini App's): the record with its provenance."""
    return {"workspace": workspace, **_provenance(record.model_dump(mode="json"))}


async def forget(store: Store, memory_id: str) -> ControlResult:
    row = await store.pool.fetchrow(
        "SELECT r.workspace_id, s.scope_key, s.kind, s.bot_id, s.chat_id, s.user_id, s.topic_id,"
        " s.enabled, s.suspended, s.off_since, s.off_ranges, s.extracted_through, s.index_text,"
        " s.index_ids, s.index_built_at, s.index_pending, s.index_candidates"
        " FROM memory_records r"
        " JOIN memory_scopes s ON s.workspace_id = r.workspace_id AND s.scope_key = r.scope_key"
        " WHERE r.id = $1 LIMIT 1",
        memory_id,
    )
    if row is None:
        raise NotFound(f"no memory {memory_id!r}")
    scope = scope_from_row(row["workspace_id"], row).scope
    return await forget_record(
        store, scope, memory_id, actor_id=0, who=OPERATOR, now=datetime.now(UTC)
    )


async def consolidate(store: Store, scope_key: str, *, provider: str, model: str) -> int:
    # A host's workspace names may hold "/": look the scope up rather than split its key.
    workspace = await store.pool.fetchval(
        "SELECT workspace_id FROM memory_scopes WHERE scope_key = $1 LIMIT 1", scope_key
    )
    if workspace is None:
        raise NotFound(f"no scope {scope_key!r} (bot-memory inspect WORKSPACE lists them)")
    try:
        async with store.locked(workspace) as tx:
            state = await tx.scope_by_key(scope_key)
            if state is None:
                raise NotFound(f"no scope {scope_key!r}")
            state.index.pending = True
            tx.save(state)
            job = await plan_pending(tx, state, provider=provider, model=model, force=True)
    except WorkspaceGone as exc:
        raise NotFound(f"no scope {scope_key!r}: its workspace is gone") from exc
    if job is None:
        raise NotFound(
            f"nothing to consolidate in {scope_key!r}: no records, or this exact input is"
            " already waiting or stopped on an unknown outcome (bot-memory retry)"
        )
    return job


async def retry(pool: asyncpg.Pool, job_id: int) -> dict[str, Any]:
    """Re-arm a job stopped on an unknown provider outcome (or failed for good), after an
    operator has checked the provider's bill: it runs again from scratch, claims reset."""
    row = await pool.fetchrow(
        "UPDATE memory_jobs SET phase = CASE WHEN snapshot->'candidates' <> '{}'::jsonb"
        " THEN 'consolidate' ELSE 'extract' END, stop_kind = NULL, claims = 0,"
        " checkpoint = '{}'::jsonb, next_attempt_at = now(), finished_at = NULL,"
        " ownership_token = NULL, lease_until = NULL,"
        " last_error = 're-armed by an operator; was: ' || coalesce(last_error, ''),"
        " updated_at = now() WHERE id = $1 AND (phase = 'failed' OR (phase = 'stopped'"
        " AND stop_kind = 'unknown')) RETURNING id, workspace_id, scope_key, phase",
        job_id,
    )
    if row is None:
        known = await pool.fetchrow(
            "SELECT phase, stop_kind FROM memory_jobs WHERE id = $1", job_id
        )
        if known is None:
            raise NotFound(f"no job {job_id}")
        raise NotFound(
            f"job {job_id} is {known['phase']}"
            + (f" ({known['stop_kind']})" if known["stop_kind"] else "")
            + ": only a job stopped on an unknown outcome, or failed, is re-armed"
        )
    return dict(row)


def _provenance(record: dict[str, Any]) -> dict[str, Any]:
    """A record with its sources spelled out: ID, hash, speaker, role, inherited."""
    record["sources"] = [
        {
            "source_id": f"m{s['message_id']}",
            "hash": s["hash"],
            "speaker_id": s["speaker_id"],
            "role": s["role"],
            "inherited": s["inherited"],
        }
        for s in record["sources"]
    ]
    return record


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value
