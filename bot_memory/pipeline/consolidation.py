"""Phase 2: one tool-free call turns a scope's valid records into its compact recall index.

Whenever a scope's records change (an extraction, an explicit note, a forget, a record that
became unavailable on its own: an edited, expired or removed source, pruning) its index is
marked pending and the scope due; the planner then plans a consolidation, without waiting for
the idle window. Its input is the exact candidate set (IDs and fingerprints, never contents),
so an unchanged failing input is claimed at most max_claims times however often it is planned.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot_memory.logs import get_logger
from bot_memory.models import Pin
from bot_memory.pipeline.context import PipelineContext, job_lost
from bot_memory.pipeline.inputs import SourcesChanged, check_scope_input
from bot_memory.pipeline.pins import planned_pin
from bot_memory.pipeline.prompts import (
    ConsolidationOutput,
    consolidation_messages,
    validate_consolidation,
)
from bot_memory.records import MemoryRecord, ScopeState
from bot_memory.redaction import redact
from bot_memory.scopes import ScopeKind
from bot_memory.storage import Job, Snapshot, WorkspaceTx

log = get_logger(__name__)

CANDIDATE_SUMMARY_CHARS = 600


async def plan_consolidation(
    tx: WorkspaceTx,
    *,
    scope_key: str,
    scope_kind: ScopeKind,
    origin_request_id: int | None,
    provider: str,
    model: str,
    reason: str,
    force: bool = False,
) -> int | None:
    """Queue a consolidation of the scope's current candidates (none if it has no records)."""
    candidates = await tx.candidates(scope_key, tx.limits.consolidation_max_candidates)
    if not candidates:
        return None
    snapshot = Snapshot(scope_kind=scope_kind, candidates=candidates, reason=reason)
    return await tx.jobs.create(
        workspace=tx.workspace,
        scope_key=scope_key,
        phase="consolidate",
        snapshot=snapshot,
        origin_request_id=origin_request_id,
        provider=provider,
        model=model,
        force=force,
    )


async def plan_pending(
    tx: WorkspaceTx, state: ScopeState, *, provider: str, model: str, force: bool = False
) -> int | None:
    """A scope whose index went stale (a new record, a note, a forget, an edited, expired or
    pruned source) gets its consolidation planned. Charged to the scope's newest succeeded
    request, like any other call, and pinned to that request's model (for a process that calls
    it), or to `provider`/`model` (the planner's) when there is none or the scope's bot has
    moved to the planner's model since (pins.planned_pin)."""
    origin = await tx.planning.last_answered(tx.workspace, state.key)
    planner = Pin(provider, model)
    pin = planned_pin(
        Pin(origin[1], origin[2]) if origin else None,
        planner,
        await tx.jobs.current_pin(tx.workspace, state.key),
    )
    job_id = await plan_consolidation(
        tx,
        scope_key=state.key,
        scope_kind=state.scope.kind,
        origin_request_id=origin[0] if origin else None,
        provider=pin.provider,
        model=pin.model,
        reason="index pending",
        force=force,
    )
    if job_id is not None and pin != planner:
        log.info("pipeline.job_left", job=job_id, wants=str(pin), calls=str(planner))
    return job_id


async def run_consolidation(
    ctx: PipelineContext,
    job: Job,
    now: datetime,
    *,
    clock: Callable[[], datetime] | None = None,
) -> None:
    """`now` dates the index (the tick's start); `clock` tells the time of each check (before
    the call, the candidates read for it, the commit): a candidate whose retention boundary
    passes during the tick is neither sent nor indexed. Without one, every check is at `now`."""
    at = clock or (lambda: now)
    saved = job.checkpoint.get("consolidate")
    pinned = job.snapshot.candidates
    if saved is not None:
        out = ConsolidationOutput.model_validate(saved)
    else:
        checked = at()
        await check_scope_input(ctx.store, job, checked)
        records = await _candidates(ctx, job, checked)
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

        def valid(answer: ConsolidationOutput) -> ConsolidationOutput:
            answer = validate_consolidation(
                answer,
                candidates=set(pinned),
                max_bytes=ctx.settings.index_max_bytes,
                max_ids=ctx.settings.index_max_ids,
            )
            return ConsolidationOutput(index=redact(answer.index), memory_ids=answer.memory_ids)

        out = await ctx.charged_call(
            job,
            "memory_consolidate",
            messages,
            ConsolidationOutput,
            validate=valid,
            phase="consolidate",
        )
    await _commit(ctx, job, out, now, at())


async def _candidates(ctx: PipelineContext, job: Job, at: datetime) -> list[MemoryRecord]:
    """The pinned candidates, unchanged and available at `at`, newest first; SourcesChanged if
    any changed, passed its retention boundary or was replaced since."""
    records = await ctx.store.current_of(job.workspace, list(job.snapshot.candidates), at)
    if {r.id: r.fingerprint for r in records} != job.snapshot.candidates:
        raise SourcesChanged("candidates changed since planning")
    return records


async def _commit(
    ctx: PipelineContext, job: Job, out: ConsolidationOutput, now: datetime, at: datetime
) -> None:
    """Under the workspace lock: the index, if the job is still this worker's and its pinned
    candidates are unchanged and still available at `at` (the commit's time)."""
    async with ctx.store.locked(job.workspace) as tx:
        if not await tx.jobs.lock_owned(job):
            await job_lost(tx.jobs, job, "consolidate-commit")
            return
        state = await tx.scope_by_key(job.scope_key)
        current = {r.id: r for r in await tx.valid_records(job.scope_key) if r.available(at)}
        pinned = job.snapshot.candidates
        changed = any(
            mid not in current or current[mid].fingerprint != fp for mid, fp in pinned.items()
        )
        if state is None or not state.active or changed:
            reason = "candidates changed" if changed else "memory is off here"
            await tx.jobs.stop(job, f"{reason} during consolidation", "changed")
            if changed and state is not None and state.active:
                tx.touch(job.scope_key)  # pending again: the planner takes it from here
            return
        state.index.text = out.index
        state.index.memory_ids = list(out.memory_ids)
        state.index.candidates = sorted(pinned)  # what its text may repeat
        state.index.built_at = now
        # A record that arrived after the snapshot keeps the index pending (and the scope due).
        newer = set(current) - set(pinned)
        state.index.pending = bool(newer) and len(pinned) < tx.limits.consolidation_max_candidates
        tx.save(state)
        await tx.jobs.advance(job, "done")
    log.info("pipeline.consolidated", job=job.id, scope=job.scope_key, ids=len(out.memory_ids))
