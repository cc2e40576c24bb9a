"""Find idle, finished conversations and plan one extraction job per new source snapshot."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

import asyncpg
import structlog

from bot_memory.pipeline import jobs
from bot_memory.pipeline.batching import Pair, ScopeActivity, build_batch, is_due
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.jobs import Snapshot, SnapshotSource
from bot_memory.state import ScopeMemory, WorkspaceState, source_id
from bot_memory.store import lock_workspace, write_workspace

log = structlog.get_logger(__name__)

# Requests left open this long (a host that never reported an outcome) stop holding a scope.
STALE_OPEN_REQUEST = timedelta(hours=6)


async def discover(ctx: PipelineContext, workspace: str, now: datetime) -> list[int]:
    """Plan extraction jobs for every due scope of a workspace; returns new job IDs."""
    pool = ctx.pool
    await pool.execute(
        "UPDATE requests SET status = 'failed', error = 'abandoned: no outcome reported',"
        " finished_at = now() WHERE workspace_id = $1"
        " AND status IN ('queued', 'running') AND updated_at < $2",
        workspace,
        now - STALE_OPEN_REQUEST,
    )
    rows = await pool.fetch(
        """
        SELECT scope_key,
               (array_agg(scope->>'kind' ORDER BY id DESC))[1] AS scope_kind,
               max(id) FILTER (WHERE status = 'succeeded' AND kind = 'chat') AS newest_ok,
               max(coalesce(finished_at, updated_at)) AS last_activity,
               bool_or(status IN ('queued', 'running', 'awaiting_approval')) AS busy
        FROM requests WHERE workspace_id = $1
        GROUP BY scope_key
        """,
        workspace,
    )
    if not rows:
        return []
    async with pool.acquire() as conn:
        raw = await conn.fetchval("SELECT state FROM workspaces WHERE id = $1", workspace)
    state = WorkspaceState.model_validate_json(raw or "{}")
    idle = timedelta(seconds=ctx.settings.idle_window_seconds)
    created: list[int] = []
    for row in rows:
        activity = ScopeActivity(
            scope_key=row["scope_key"],
            scope_kind=row["scope_kind"],
            newest_succeeded=row["newest_ok"],
            last_activity=row["last_activity"],
            busy=row["busy"],
        )
        scope = state.scopes.get(activity.scope_key) or ScopeMemory()
        if not is_due(
            activity,
            enabled=scope.enabled,
            extracted_through=scope.extracted_through,
            now=now,
            idle_window=idle,
        ):
            continue
        job_id = await _plan(ctx, workspace, activity, scope)
        if job_id is not None:
            created.append(job_id)
    return created


async def _plan(
    ctx: PipelineContext,
    workspace: str,
    activity: ScopeActivity,
    scope: ScopeMemory,
) -> int | None:
    """Snapshot the scope's new, retained pairs (not forgotten, not said while memory was off)."""
    pool = ctx.pool
    watermark = scope.extracted_through
    tombstones = set(scope.tombstones)
    rows = await pool.fetch(
        """
        SELECT r.id AS request_id, r.provider, r.model,
               u.id AS u_id, u.content_hash AS u_hash, u.speaker_id AS u_speaker,
               u.thread_id AS u_thread, u.text AS u_text, u.created_at AS u_at,
               a.id AS a_id, a.content_hash AS a_hash, a.speaker_id AS a_speaker,
               a.thread_id AS a_thread, a.text AS a_text, a.created_at AS a_at
        FROM requests r
        JOIN messages u ON u.id = r.user_message_id
        JOIN messages a ON a.id = r.answer_message_id
        WHERE r.workspace_id = $1 AND r.scope_key = $2 AND r.id > $3 AND r.id <= $4
          AND r.status = 'succeeded' AND r.kind = 'chat'
          AND u.deleted_at IS NULL AND a.deleted_at IS NULL
          AND (u.retain_until IS NULL OR u.retain_until > now())
          AND (a.retain_until IS NULL OR a.retain_until > now())
        ORDER BY r.id
        """,
        workspace,
        activity.scope_key,
        watermark,
        activity.newest_succeeded,
    )
    pairs = [
        Pair(
            user=_source(r, "u", "user"),
            assistant=_source(r, "a", "assistant"),
            user_text=r["u_text"],
            assistant_text=r["a_text"],
        )
        for r in rows
        if source_id(r["u_id"]) not in tombstones and not scope.was_off(r["request_id"])
    ]
    pinned = {r["request_id"]: (r["provider"], r["model"]) for r in rows}
    through = activity.newest_succeeded or watermark
    batch = build_batch(pairs, max_bytes=ctx.settings.batch_max_bytes)
    if not batch:
        # Nothing fits (or nothing retained): move past these requests instead of retrying.
        log.info(
            "pipeline.batch_skipped",
            scope=activity.scope_key,
            pairs=len(pairs),
            reason="no user/assistant pair fits the batch ceiling" if pairs else "no sources",
        )
        async with pool.acquire() as conn, conn.transaction():
            tx = await lock_workspace(conn, workspace)
            tx.state.scope(activity.scope_key).advance(through)
            tx.touch(activity.scope_key)
            await write_workspace(tx, directory_max=ctx.settings.pending_directory_max)
        return None
    if len(batch) < len(pairs):
        log.info(
            "pipeline.batch_trimmed",
            scope=activity.scope_key,
            kept=len(batch),
            left_out=len(pairs) - len(batch),
        )
    origin = batch[-1].user.request_id
    provider, model = pinned[origin]
    snapshot = Snapshot(
        scope_kind="shared" if activity.scope_kind == "shared" else "private",
        sources=[s for p in batch for s in (p.user, p.assistant)],
        through_request=through,
    )
    input_hash = snapshot.input_hash()
    async with pool.acquire() as conn, conn.transaction():
        # Planning is serialized per workspace, like every other change to its memory.
        await conn.execute("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", workspace)
        if await jobs.extraction_in_flight(conn, workspace, activity.scope_key):
            return None  # its commit moves the watermark; plan what is left next tick
        if await jobs.active_job_hash(conn, workspace, activity.scope_key) == input_hash:
            return None
        # New messages make a new snapshot: a waiting extraction of older input gives way.
        await jobs.supersede_unleased(conn, workspace, activity.scope_key, "extract", input_hash)
        job_id = await jobs.create_job(
            conn,
            workspace=workspace,
            scope_key=activity.scope_key,
            phase="extract",
            snapshot=snapshot,
            input_hash=input_hash,
            origin_request_id=origin,
            provider=provider or ctx.model.provider,
            model=model or ctx.model.model,
        )
    if job_id is not None:
        log.info(
            "pipeline.job_planned",
            job=job_id,
            scope=activity.scope_key,
            sources=len(snapshot.sources),
        )
    return job_id


def _source(row: asyncpg.Record, prefix: str, role: Literal["user", "assistant"]) -> SnapshotSource:
    """One side of a request row (columns u_* or a_*) as a snapshot source."""
    return SnapshotSource(
        id=source_id(row[f"{prefix}_id"]),
        message_id=row[f"{prefix}_id"],
        request_id=row["request_id"],
        hash=row[f"{prefix}_hash"],
        role=role,
        speaker_id=row[f"{prefix}_speaker"],
        thread_id=row[f"{prefix}_thread"],
        created_at=row[f"{prefix}_at"],
    )
