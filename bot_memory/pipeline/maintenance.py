"""Housekeeping each tick, reading only what is due: requests a host left open, records to
prune, finished jobs to drop.

Retention only ever shortens what memory keeps (30 days without use, 256 records at most per
workspace, records that became unavailable); it never extends how long the original messages
are retained.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot_memory.billing import ledger
from bot_memory.logs import get_logger
from bot_memory.pipeline.context import PipelineContext
from bot_memory.retention.sweeps import drop_empty_scopes
from bot_memory.scopes import Scope
from bot_memory.storage import WorkspaceGone, schedule_scope
from bot_memory.terms import record_vector, text_vector

log = get_logger(__name__)


async def close_abandoned(ctx: PipelineContext, now: datetime) -> int:
    """Open requests stop holding their scope: those a host explicitly kept open after the
    abandonment window (6 h), any other (its process died mid-handler) after the request
    timeout."""
    kept = now - timedelta(seconds=ctx.settings.open_request_abandon_seconds)
    lost = now - timedelta(seconds=ctx.settings.request_timeout_seconds)
    rows = await ctx.pool.fetch(
        "UPDATE requests SET status = CASE WHEN keep_open THEN 'failed' ELSE 'unanswered' END,"
        " error = CASE WHEN keep_open THEN 'abandoned: no outcome reported'"
        " ELSE 'never closed: the handling process ended' END,"
        " finished_at = $3, updated_at = now()"
        " WHERE status IN ('queued', 'running', 'awaiting_approval')"
        " AND updated_at < $2 AND (NOT keep_open OR updated_at < $1)"
        " RETURNING scope",
        kept,
        lost,
        now,
    )
    for row in rows:
        scope = Scope.model_validate_json(row["scope"])
        await schedule_scope(ctx.pool, scope, now=now, idle_seconds=0)
    if rows:
        log.info("pipeline.requests_abandoned", count=len(rows))
    return len(rows)


async def prune_due(ctx: PipelineContext, now: datetime) -> int:
    """Drop records unused for the inactivity window or no longer valid; rebuild their
    scopes' indexes. Returns how many records went."""
    cutoff = now - timedelta(days=ctx.settings.inactive_prune_days)
    rows = await ctx.pool.fetch(
        "SELECT DISTINCT workspace_id FROM memory_records WHERE last_used_at < $1 OR NOT valid"
        " OR available_until <= $2 LIMIT 200",
        cutoff,
        now,
    )
    total = 0
    for row in rows:
        try:
            async with ctx.store.locked(row["workspace_id"]) as tx:
                doomed = await tx.prunable(cutoff, now)
                scopes = await tx.delete(doomed)
                await drop_empty_scopes(tx, scopes)
        except WorkspaceGone:
            continue
        total += len(doomed)
        log.info("retention.pruned", workspace=row["workspace_id"], records=len(doomed))
    return total


async def fill_search_terms(ctx: PipelineContext, *, batch: int = 500) -> int:
    """Rows stored before word search existed get their search terms, a batch per tick (the
    partial indexes make this free once done). An edit or an erasure meanwhile wins: the terms
    are written only while the text they were cut from is still the row's."""
    filled = 0
    records = await ctx.pool.fetch(
        "SELECT workspace_id, id, title, summary FROM memory_records WHERE search IS NULL LIMIT $1",
        batch,
    )
    if records:
        await ctx.pool.executemany(
            "UPDATE memory_records SET search = $3::tsvector WHERE workspace_id = $1 AND id = $2"
            " AND search IS NULL",
            [
                (r["workspace_id"], r["id"], record_vector(r["title"], r["summary"]))
                for r in records
            ],
        )
        filled += len(records)
    messages = await ctx.pool.fetch(
        "SELECT id, text, content_hash FROM messages WHERE search IS NULL AND text IS NOT NULL"
        " LIMIT $1",
        batch,
    )
    if messages:
        await ctx.pool.executemany(
            "UPDATE messages SET search = $2::tsvector WHERE id = $1 AND search IS NULL"
            " AND text IS NOT NULL AND content_hash = $3",
            [(m["id"], text_vector(m["text"]), m["content_hash"]) for m in messages],
        )
        filled += len(messages)
    if filled:
        log.info("pipeline.search_terms_filled", rows=filled)
    return filled


async def drop_finished_jobs(ctx: PipelineContext, now: datetime) -> int:
    """Finished job rows (checkpoints already cleared) are kept for operators a while."""
    cutoff = now - timedelta(days=ctx.settings.finished_job_retention_days)
    result: str = await ctx.pool.execute("DELETE FROM memory_jobs WHERE finished_at < $1", cutoff)
    return int(result.split()[-1])


async def close_stale_attempts(ctx: PipelineContext, now: datetime) -> int:
    """Attempts of interactive answers (no job) still pending long after any call could have
    ended: the process died mid-call. Unknown, charged at their worst case."""
    cutoff = now - timedelta(seconds=4 * ctx.settings.llm_call_deadline_seconds)
    rows = await ctx.pool.fetch(
        "SELECT workspace_id, id, request_id, reserved_usd FROM usage_ledger"
        " WHERE outcome = 'pending' AND job_id IS NULL AND created_at < $1 LIMIT 500",
        cutoff,
    )
    for row in rows:
        attempt = ledger.Attempt(
            ledger_id=row["id"],
            workspace=row["workspace_id"],
            request_id=row["request_id"],
            reserved=row["reserved_usd"],
        )
        async with ctx.pool.acquire() as conn:
            await ledger.close_attempt(
                conn, attempt, "unknown", detail="the answering process ended mid-call"
            )
    return len(rows)
