"""Housekeeping each tick, reading only what is due: requests a host left open, records to
prune, finished jobs to drop.

Retention only ever shortens what memory keeps (30 days without use, 256 records at most per
workspace, records that became unavailable); it never extends how long the original messages
are retained.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot_memory.logs import get_logger
from bot_memory.pipeline.context import PipelineContext
from bot_memory.storage import WorkspaceGone

log = get_logger(__name__)


async def close_abandoned(ctx: PipelineContext, now: datetime) -> int:
    """Open requests stop holding their scope: those a host explicitly kept open after the
    abandonment window (6 h), any other (its process died mid-handler) after the request
    timeout."""
    kept = now - timedelta(seconds=ctx.settings.open_request_abandon_seconds)
    lost = now - timedelta(seconds=ctx.settings.request_timeout_seconds)
    closed = await ctx.store.requests.abandon(kept_since=kept, since=lost, now=now)
    if closed:
        log.info("pipeline.requests_abandoned", count=closed)
    return closed


async def prune_due(ctx: PipelineContext, now: datetime) -> int:
    """Drop records unused for the inactivity window or no longer valid; rebuild their
    scopes' indexes. Returns how many records went."""
    cutoff = now - timedelta(days=ctx.settings.inactive_prune_days)
    total = 0
    for workspace in await ctx.store.prunable_workspaces(cutoff, now):
        try:
            async with ctx.store.locked(workspace) as tx:
                doomed = await tx.prunable(cutoff, now)
                scopes = await tx.delete(doomed)
                await tx.drop_empty_scopes(scopes)
        except WorkspaceGone:
            continue
        total += len(doomed)
        log.info("retention.pruned", workspace=workspace, records=len(doomed))
    return total


async def fill_search_terms(ctx: PipelineContext, *, batch: int = 500) -> int:
    """Rows stored before word search existed get their search terms, a batch per tick (the
    partial indexes make this free once done). An edit or an erasure meanwhile wins: the terms
    are written only while the text they were cut from is still the row's."""
    filled = await ctx.store.fill_search_terms(batch)
    if filled:
        log.info("pipeline.search_terms_filled", rows=filled)
    return filled


async def drop_finished_jobs(ctx: PipelineContext, now: datetime) -> int:
    """Finished job rows (checkpoints already cleared) are kept for operators a while."""
    cutoff = now - timedelta(days=ctx.settings.finished_job_retention_days)
    return await ctx.store.jobs.drop_finished(cutoff)


async def close_stale_attempts(ctx: PipelineContext, now: datetime) -> int:
    """Attempts of interactive answers (no job) still pending long after any call could have
    ended: the process died mid-call. Unknown, charged at their worst case."""
    cutoff = now - timedelta(seconds=4 * ctx.settings.llm_call_deadline_seconds)
    stale = await ctx.store.ledger.stale_attempts(cutoff)
    for attempt in stale:
        await ctx.store.ledger.close_attempt(
            attempt, "unknown", detail="the answering process ended mid-call"
        )
    return len(stale)
