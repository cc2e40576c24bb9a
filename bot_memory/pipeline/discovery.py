"""Find idle, finished conversations and plan one extraction job per new source batch.

Scheduling reads only what changed: finishing a request marks its scope due after the idle
window (`storage.schedule_scope`), and a tick looks at due scopes alone, so idle workspaces and
old history cost nothing. A scope that cannot be planned (busy, off, the bot gone) is not looked
at again until new input arrives.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot_memory.logs import get_logger
from bot_memory.models import Pin
from bot_memory.pipeline.batching import Exchange, Pair, first_conversation, next_batch
from bot_memory.pipeline.consolidation import plan_pending
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.pins import planned_pin
from bot_memory.records import ScopeState
from bot_memory.storage import Snapshot, WorkspaceGone, WorkspaceTx

log = get_logger(__name__)


async def plan_due(ctx: PipelineContext, now: datetime, *, limit: int = 500) -> list[int]:
    """Plan for every scope that is due now (a consolidation for a pending index, an
    extraction for new idle pairs); returns new job IDs."""
    created: list[int] = []
    for workspace, scope_key in await ctx.store.planning.due_scopes(now, limit):
        try:
            created += await plan_scope(ctx, workspace, scope_key, now)
        except WorkspaceGone:
            continue
    return created


async def plan_scope(
    ctx: PipelineContext, workspace: str, scope_key: str, now: datetime
) -> list[int]:
    """Under the workspace lock: plan the scope's consolidation if its index is pending, and
    its next extraction batch if it is idle and has new pairs. Returns new job IDs."""
    idle = timedelta(seconds=ctx.settings.idle_window_seconds)
    created: list[int] = []
    async with ctx.store.locked(workspace, scope_key=scope_key) as tx:
        due = await tx.planning.due(workspace, scope_key)
        if due is None or due.due_at is None or due.due_at > now:
            return created  # planned by someone else meanwhile

        async def settle(next_at: datetime | None) -> list[int]:
            # Only if nothing finished since the scope was read: a request closed meanwhile
            # (ingress does not take the workspace lock) scheduled its own wake-up, which this
            # must not overwrite with what was decided without it.
            await tx.planning.set_due(workspace, scope_key, next_at, wakes=due.wakes)
            return created

        state = await tx.scope_by_key(scope_key)
        if state is None or not state.active:
            return await settle(None)  # re-armed when memory is back on, or the bot returns
        if state.index.pending and not await tx.jobs.in_flight(workspace, scope_key, "consolidate"):
            # Records changed (a note, a forget, an extraction, a source gone): rebuild the
            # index now, without waiting for the idle window.
            job_id = await plan_pending(
                tx, state, provider=ctx.model.provider, model=ctx.model.model
            )
            if job_id is not None:
                created.append(job_id)
                log.info("pipeline.job_planned", job=job_id, scope=scope_key, phase="consolidate")
        if await tx.jobs.in_flight(workspace, scope_key, "extract"):
            return await settle(None)  # its commit re-arms the scope
        # Requests still open hold back what comes after them (their answers are not in yet);
        # finished conversations before them can go.
        oldest_open = await tx.planning.oldest_open(workspace, scope_key)
        open_at = Exchange(*oldest_open, oldest_open[1]) if oldest_open else None
        last = due.last_activity
        idle_now = last is None or last + idle <= now
        job_id = await _plan_batch(
            ctx, tx, state, settled=idle_now and open_at is None, oldest_open=open_at
        )
        if job_id is not None:
            created.append(job_id)
            return await settle(None)  # its commit re-arms the scope
        if oldest_open is not None:
            return await settle(None)  # finishing the open request re-arms it
        return await settle(None if idle_now or last is None else last + idle)


async def _plan_batch(
    ctx: PipelineContext,
    tx: WorkspaceTx,
    state: ScopeState,
    *,
    settled: bool,
    oldest_open: Exchange | None,
) -> int | None:
    """Snapshot the next batch of new, retained pairs (not forgotten, not said while memory
    was off) of the oldest conversation that is finished: one followed by an idle gap, or the
    last one when the scope is idle (`settled`). `oldest_open`: the oldest request still open, which
    nothing after may pass. Pairs too large to fit alone are skipped, the rest of a long
    conversation waits for the next batch."""
    workspace = tx.workspace
    idle = timedelta(seconds=ctx.settings.idle_window_seconds)
    tombstones = await tx.tombstones(state.key)
    while True:
        rows = await tx.planning.answered(
            workspace,
            state.key,
            after=state.extracted_through,
            before=oldest_open.request_id if oldest_open else None,
        )
        if not rows:
            return None
        exchanges = [
            Exchange(r.request_id, r.user.created_at, r.assistant.created_at) for r in rows
        ]
        ends = first_conversation(exchanges + ([oldest_open] if oldest_open else []), idle)
        if ends >= len(rows) and not settled and (oldest_open is None or ends > len(rows)):
            return None  # the conversation goes on: it is not memory material yet
        ends = min(ends, len(rows))
        rows = rows[:ends]
        usable = [
            r
            for r in rows
            if r.user_kept
            and r.assistant_kept
            and r.user.message_id not in tombstones
            and r.assistant.message_id not in tombstones
            and not state.was_off(r.request_id)
        ]
        texts = await tx.planning.kept_texts(
            workspace, [s.message_id for r in usable for s in (r.user, r.assistant)]
        )
        pairs = [
            Pair(
                user=r.user,
                assistant=None if r.answer_forgotten else r.assistant,
                user_text=texts[r.user.message_id],
                assistant_text="" if r.answer_forgotten else texts[r.assistant.message_id],
            )
            for r in usable
            if r.user.message_id in texts and r.assistant.message_id in texts
        ]
        batch = next_batch(pairs, max_bytes=ctx.settings.batch_max_bytes)
        for pair in batch.skipped:
            log.info(
                "pipeline.pair_skipped",
                scope=state.key,
                request=pair.request_id,
                bytes=pair.size,
                reason="the pair alone is over the batch ceiling",
            )
        if not batch.pairs:
            # Nothing in this conversation to extract: move past it, on to the next.
            state.advance(rows[-1].request_id)
            tx.save(state)
            continue
        origin = batch.pairs[-1].request_id
        answered = next(r for r in rows if r.request_id == origin)
        pinned = (
            Pin(answered.provider, answered.model) if answered.provider and answered.model else None
        )
        # The model the conversation was answered with (or its bot calls), for a process that
        # calls it; this worker's own only if the bot has moved to it (pins.planned_pin).
        pin = planned_pin(pinned, ctx.pin, await tx.jobs.current_pin(workspace, state.key))
        snapshot = Snapshot(
            scope_kind=state.scope.kind,
            sources=[s for p in batch.pairs for s in p.sources],
            through_request=batch.through_request,
        )
        job_id = await tx.jobs.create(
            workspace=workspace,
            scope_key=state.key,
            phase="extract",
            snapshot=snapshot,
            origin_request_id=origin,
            provider=pin.provider,
            model=pin.model,
        )
        if job_id is not None:
            log.info(
                "pipeline.job_planned",
                job=job_id,
                scope=state.key,
                sources=len(snapshot.sources),
                later_pairs=batch.remaining,
            )
            if pin != ctx.pin:  # for a process that calls the bot's model
                log.info("pipeline.job_left", job=job_id, wants=str(pin), calls=str(ctx.pin))
            return job_id
        if not await tx.jobs.given_up(workspace, state.key, snapshot.input_hash()):
            return None  # this very batch is planned already
        # This batch failed for good (or waits for an operator): later history goes on.
        log.warning("pipeline.batch_given_up", scope=state.key, through=batch.through_request)
        state.advance(batch.through_request)
        tx.save(state)
