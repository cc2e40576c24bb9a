"""Phase 2: one tool-free call turns a scope's valid records into its compact recall index.

Runs after an extraction, and on its own when an explicit note or a forget changed the scope.
"""

from __future__ import annotations

import uuid
from datetime import datetime

import asyncpg
import structlog

from bot_memory.pipeline import jobs
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.jobs import Job, Snapshot
from bot_memory.pipeline.prompts import (
    ConsolidationOutput,
    consolidation_messages,
    validate_consolidation,
)
from bot_memory.redaction import redact
from bot_memory.scopes import scope_kind_of
from bot_memory.state import WorkspaceState, content_hash, set_index
from bot_memory.store import WorkspaceTx, lock_workspace, write_workspace

log = structlog.get_logger(__name__)

CANDIDATE_SUMMARY_CHARS = 600


async def plan_consolidation(
    conn: asyncpg.Connection,
    *,
    workspace: str,
    scope_key: str,
    scope_kind: str,
    state: WorkspaceState,
    origin_request_id: int | None,
    provider: str,
    model: str,
    reason: str,
) -> int | None:
    """Queue a consolidation-only job unless one is already waiting for this scope."""
    waiting = await conn.fetchval(
        "SELECT id FROM memory_jobs WHERE workspace_id = $1 AND scope_key = $2"
        " AND phase = 'consolidate' AND (lease_until IS NULL OR lease_until < now())",
        workspace,
        scope_key,
    )
    if waiting is not None:
        return None
    # Unique per plan: the "waiting" check above is what deduplicates consolidations.
    fingerprints = ",".join(f"{r.id}:{r.fingerprint}" for r in state.valid_records(scope_key))
    fingerprints += f"|{uuid.uuid4()}"
    snapshot = Snapshot(scope_kind="shared" if scope_kind == "shared" else "private", reason=reason)
    return await jobs.create_job(
        conn,
        workspace=workspace,
        scope_key=scope_key,
        phase="consolidate",
        snapshot=snapshot,
        input_hash=snapshot.input_hash(content_hash(fingerprints)),
        origin_request_id=origin_request_id,
        provider=provider,
        model=model,
    )


async def plan_pending(ctx: PipelineContext, tx: WorkspaceTx) -> list[int]:
    """Queue consolidation for scopes whose index went stale on its own (an edited or pruned
    source) and that nothing is already rebuilding. A scope whose last attempt failed waits
    out the backoff, so a persistent failure costs one call per backoff period, not per tick."""
    created: list[int] = []
    for scope_key, memory in tx.state.scopes.items():
        if not (memory.enabled and memory.index.pending and tx.state.valid_records(scope_key)):
            continue
        busy = await tx.conn.fetchval(
            "SELECT 1 FROM memory_jobs WHERE workspace_id = $1 AND scope_key = $2"
            " AND (phase IN ('extract', 'consolidate') OR (phase IN ('failed', 'stopped')"
            " AND updated_at > now() - make_interval(secs => $3))) LIMIT 1",
            tx.workspace,
            scope_key,
            ctx.settings.failure_backoff_seconds,
        )
        if busy:
            continue
        job_id = await plan_consolidation(
            tx.conn,
            workspace=tx.workspace,
            scope_key=scope_key,
            scope_kind=scope_kind_of(scope_key),
            state=tx.state,
            origin_request_id=None,  # charged to the workspace budget alone
            provider=ctx.model.provider,
            model=ctx.model.model,
            reason="stale index",
        )
        if job_id is not None:
            created.append(job_id)
    return created


async def run_consolidation(ctx: PipelineContext, job: Job, now: datetime) -> None:
    limit = ctx.settings.consolidation_max_candidates
    saved = job.checkpoint.get("consolidate")
    if saved is not None and saved.get("output") is not None:
        pinned: dict[str, str] = saved["candidates"]
        out = ConsolidationOutput.model_validate(saved["output"])
    else:
        raw = await ctx.pool.fetchval("SELECT state FROM workspaces WHERE id = $1", job.workspace)
        records = WorkspaceState.model_validate_json(raw or "{}").valid_records(job.scope_key)
        records = records[:limit]
        pinned = {r.id: r.fingerprint for r in records}
        if not records:
            out = ConsolidationOutput(index="", memory_ids=[])
        else:
            candidates = [
                {
                    "id": r.id,
                    "title": r.title,
                    "summary": r.summary[:CANDIDATE_SUMMARY_CHARS],
                    "speaker_ids": r.speaker_ids,
                    "date": r.created_at.date().isoformat(),
                }
                for r in records
            ]
            messages = consolidation_messages(
                candidates=candidates,
                max_ids=ctx.settings.index_max_ids,
                max_bytes=ctx.settings.index_max_bytes,
            )
            out = await ctx.charged_call(job, "memory_consolidate", messages, ConsolidationOutput)
            out = validate_consolidation(
                out,
                candidates=set(pinned),
                max_bytes=ctx.settings.index_max_bytes,
                max_ids=ctx.settings.index_max_ids,
            )
            out = ConsolidationOutput(index=redact(out.index), memory_ids=out.memory_ids)
        ok = await jobs.save_checkpoint(
            ctx.pool, job, "consolidate", {"candidates": pinned, "output": out.model_dump()}
        )
        if not ok:
            log.warning("pipeline.lost_ownership", job=job.id, phase="consolidate")
            return
    await _commit(ctx, job, pinned, out, now)


async def _commit(
    ctx: PipelineContext,
    job: Job,
    pinned: dict[str, str],
    out: ConsolidationOutput,
    now: datetime,
) -> None:
    async with ctx.pool.acquire() as conn, conn.transaction():
        if not await jobs.hold(conn, job):
            log.warning("pipeline.lost_ownership", job=job.id, phase="consolidate-commit")
            return
        tx = await lock_workspace(conn, job.workspace)
        scope = tx.state.scope(job.scope_key)
        current = {r.id: r for r in tx.state.valid_records(job.scope_key)}
        changed = [
            mid
            for mid, fp in pinned.items()
            if mid not in current or current[mid].fingerprint != fp
        ]
        if changed or not scope.enabled:
            reason = "memory turned off" if not scope.enabled else "candidates changed"
            await jobs.stop(conn, job, f"{reason} during consolidation")
            if scope.enabled:
                await _replan(conn, job, tx.state)
            return
        set_index(tx.state, job.scope_key, out.index, out.memory_ids, now)
        newer = set(current) - set(pinned)
        if newer and len(pinned) < ctx.settings.consolidation_max_candidates:
            scope.index.pending = True  # a record arrived after the snapshot
            await _replan(conn, job, tx.state)
        tx.touch(job.scope_key)
        await jobs.advance(conn, job, "done")
        await write_workspace(tx, directory_max=ctx.settings.pending_directory_max)
    log.info("pipeline.consolidated", job=job.id, scope=job.scope_key, ids=len(out.memory_ids))


async def _replan(conn: asyncpg.Connection, job: Job, state: WorkspaceState) -> None:
    await plan_consolidation(
        conn,
        workspace=job.workspace,
        scope_key=job.scope_key,
        scope_kind=job.snapshot.scope_kind,
        state=state,
        origin_request_id=job.origin_request_id,
        provider=job.provider,
        model=job.model,
        reason="replan",
    )
