"""The background worker: once per tick, plan due jobs, then run claimed jobs one at a time.

It runs on its own task and its own connection pool, so ingress, deliveries and heartbeats never
wait for it. The tick deadline is a budget, not a guillotine: a job is claimed only while its
worst-case call time still fits, and what is left continues next tick. While a call runs, its
job's lease is renewed (a heartbeat), so a slow call is never taken for a dead one. Stopping lets
a call in flight finish and commit within a grace period; a job claimed but not yet sent is given
back with its claim refunded, and only a call cut by the grace period is an unknown outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot_memory.billing import BudgetExhausted
from bot_memory.logs import get_logger
from bot_memory.models import ModelError
from bot_memory.pipeline.agreement import pipeline_settings
from bot_memory.pipeline.consolidation import run_consolidation
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.discovery import plan_due
from bot_memory.pipeline.extraction import run_extraction
from bot_memory.pipeline.inputs import SourcesChanged
from bot_memory.pipeline.maintenance import (
    close_abandoned,
    close_stale_attempts,
    drop_finished_jobs,
    fill_search_terms,
    prune_due,
)
from bot_memory.retention.sweeps import expire_due
from bot_memory.storage import (
    Job,
    StopKind,
    WorkspaceGone,
    is_connection_error,
)

log = get_logger(__name__)


@dataclass
class TickReport:
    planned: list[int] = field(default_factory=list)
    finished: dict[int, str] = field(default_factory=dict)  # job ID -> final phase this tick
    pruned: int = 0
    abandoned: int = 0
    expired: dict[str, int] = field(default_factory=dict)
    left_over: bool = False  # the budget ran out with jobs still due


class Pipeline:
    def __init__(self, ctx: PipelineContext) -> None:
        self.ctx = ctx
        self.stopping = asyncio.Event()
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.last_tick_at: float | None = None  # time.time() when a tick last finished here
        # What time it is (tests inject one): a tick's checks read it as they go, so a
        # retention boundary passing during a tick stops what would send or keep its text.
        self.clock: Callable[[], datetime] = _utcnow

    async def tick(
        self, now: datetime | None = None, *, deadline: float | None = None
    ) -> TickReport:
        """One pass: housekeeping that is due, planning for due scopes, then claimed jobs.

        Every query here reads only what is due (indexed), so a tick with nothing to do costs
        the same with ten workspaces or ten thousand. `deadline` (time.monotonic()) is the
        budget: no job is claimed whose worst-case call would not fit before it.
        """
        report = TickReport()
        started = self.clock()
        now = now or started

        def current() -> datetime:  # the tick's time as it goes on (from an injected `now` too)
            return now + (self.clock() - started)

        report.abandoned = await close_abandoned(self.ctx, now)
        self.ctx.metrics.request_closed("abandoned", report.abandoned)
        await close_stale_attempts(self.ctx, now)
        report.expired = (await expire_due(self.ctx.store, now)).as_dict()
        report.pruned = await prune_due(self.ctx, now)
        await drop_finished_jobs(self.ctx, now)
        await self.ctx.store.tickets.drop_used(now)  # the Mini App's used download links
        await fill_search_terms(self.ctx)
        report.planned += await plan_due(self.ctx, now)
        worst_call = self.ctx.settings.llm_call_deadline_seconds
        ran = False
        while not self.stopping.is_set():
            if deadline is not None and deadline - time.monotonic() < worst_call:
                report.left_over = True
                log.info("pipeline.tick_budget_spent", reason="the rest continues next tick")
                break
            job = await self.ctx.store.jobs.claim_next(
                lease_seconds=self.ctx.settings.lease_seconds,
                max_claims=self.ctx.settings.max_claims_per_input,
                pin=self.ctx.pin,
            )
            if job is None:
                if not ran:
                    break
                # What the jobs committed made scopes due (an extraction's new record wants
                # its consolidation, a later batch is waiting): plan once more.
                ran = False
                report.planned += await plan_due(self.ctx, current())
                continue
            ran = True
            report.finished[job.id] = await self.run_job(job, now, clock=current)
        # For operators: when this worker last ran, what it calls.
        await self.ctx.store.workers.ticked(
            self.worker_id, self.ctx.pin, pipeline_settings(self.ctx.settings)
        )
        self.last_tick_at = time.time()
        self.ctx.metrics.worker_tick(ok=True, at=self.last_tick_at)
        return report

    async def run_job(
        self, job: Job, now: datetime, *, clock: Callable[[], datetime] | None = None
    ) -> str:
        """Run a claimed job; returns the phase it ends in. `clock`: the time of its checks
        as it runs (retention boundaries are checked against it); `now` without one."""
        log.info("pipeline.job_claimed", job=job.id, phase=job.phase, claims=job.claims)
        try:
            # An extraction resumed from its paid answer sends nothing: its commit checks the
            # ledger itself, in the same statement. Anything else checks it first.
            resumed = (
                job.phase == "extract"
                and "extract" in job.checkpoint
                and self.ctx.config_matches(job)
            )
            cut_off = 0
            if not resumed:
                cut_off = await self.ctx.store.ledger.close_abandoned_attempts(
                    job.workspace, job.id
                )
            if cut_off:
                # A process died during this job's call: the provider may have answered and
                # billed it. Only an operator re-arms it (bot-memory retry).
                await self.ctx.store.jobs.stop(
                    job, "unknown provider outcome: the call was cut off", "unknown"
                )
                log.warning("pipeline.job_stopped", job=job.id, reason="call cut off earlier")
                return job.phase
            if not self.ctx.config_matches(job):
                # Claimed because the scope's bot has moved to this worker's model since (see
                # pins.verdict): work planned for the old one stops, and the scope is
                # planned again at once under the model configured now.
                await self.ctx.store.jobs.stop(
                    job,
                    "model or provider configuration changed",
                    "config",
                    refund=True,  # nothing was sent: the input keeps its claims
                )
                await self.ctx.store.planning.rearm(job.workspace, job.scope_key, now)
                log.info("pipeline.job_stopped", job=job.id, reason="stale configuration")
                return job.phase
            async with self._heartbeat(job):
                await self._run(job, now, clock)
        except asyncio.CancelledError:
            await asyncio.shield(self._give_back(job))
            raise
        except WorkspaceGone:
            log.info("pipeline.job_dropped", job=job.id, reason="workspace purged")
            return "stopped"
        return job.phase

    async def _give_back(self, job: Job) -> None:
        """A job cut by the deadline or the shutdown grace period. A call cut mid-flight may have
        been processed and billed: the job stops for an operator. Otherwise (nothing sent, or the
        answer paid for and checkpointed) it goes back with its claim refunded and its
        checkpoint kept, so the next claim resumes without buying anything twice."""
        outcome = None
        if job.call_key is not None:
            outcome = await self.ctx.store.ledger.outcome(job.workspace, job.call_key)
        if outcome in ("unknown", "pending"):
            await self.ctx.store.ledger.close_abandoned_attempts(job.workspace, job.id)
            await self.ctx.store.jobs.stop(
                job, "unknown provider outcome: stopped mid-call", "unknown"
            )
        else:
            await self.ctx.store.jobs.release(job)

    async def _run(self, job: Job, now: datetime, clock: Callable[[], datetime] | None) -> None:
        settings = self.ctx.settings
        try:
            if job.phase == "extract":
                await run_extraction(self.ctx, job, now, clock=clock)
            elif job.phase == "consolidate":
                await run_consolidation(self.ctx, job, now, clock=clock)
        except (SourcesChanged, ModelError, ValueError) as exc:
            retry, reason, kind = _verdict(exc)
            if retry:
                job.phase = await self.ctx.store.jobs.back_off(
                    job,
                    reason,
                    backoff_seconds=settings.failure_backoff_seconds,
                    max_claims=settings.max_claims_per_input,
                )
                log.warning("pipeline.job_failed", job=job.id, error=reason, phase=job.phase)
            else:
                await self.ctx.store.jobs.stop(job, reason, kind)
                log.warning("pipeline.job_stopped", job=job.id, reason=reason)

    @contextlib.asynccontextmanager
    async def _heartbeat(self, job: Job) -> AsyncIterator[None]:
        """Renew the job's lease while it runs, so a slow call is not rescued by another worker."""
        lease = self.ctx.settings.lease_seconds

        async def beat() -> None:
            while True:
                await asyncio.sleep(lease / 3)
                with contextlib.suppress(Exception):  # a missed beat: the next one tries again
                    await self.ctx.store.jobs.renew_lease(job, lease)

        task = asyncio.create_task(beat(), name=f"bot-memory-lease-{job.id}")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _verdict(exc: Exception) -> tuple[bool, str, StopKind]:
    """(retry after the backoff?, reason, stop kind) for a job that could not finish."""
    if isinstance(exc, SourcesChanged):
        return False, str(exc), exc.kind  # a new snapshot is needed, not another try
    if isinstance(exc, BudgetExhausted):
        return False, str(exc), "budget"
    if isinstance(exc, ModelError) and exc.outcome == "unknown":
        # The provider may have acted and charged: never replay automatically.
        return False, f"unknown provider outcome: {exc}", "unknown"
    if isinstance(exc, ModelError):
        return True, str(exc), "changed"
    # Parsed, but broke a limit or cited the unknown.
    return True, f"invalid model output: {exc}", "changed"


class Worker:
    """Started and stopped by the host's dispatcher (or `bot-memory worker`); one task, one
    tick at a time."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    @property
    def started(self) -> bool:
        """Started and not stopped yet (its loop may have ended on its own)."""
        return self._task is not None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self.running:
            return
        # What exists by now (imports, settings, pools) lives as long as the process: keep it
        # out of the collector's way, so a collection during a job does not stall the loop.
        gc.freeze()
        self._stopping = asyncio.Event()
        self.pipeline.stopping = self._stopping
        self._task = asyncio.create_task(self._loop(), name="bot-memory-worker")

    async def stop(self, grace_seconds: float | None = None) -> None:
        """Finish what is in flight (up to the grace period), then stop."""
        if self._task is None:
            return
        grace = self.pipeline.ctx.settings.shutdown_grace_seconds
        self._stopping.set()
        done, _ = await asyncio.wait(
            {self._task}, timeout=grace if grace_seconds is None else grace_seconds
        )
        if not done:
            log.warning("pipeline.shutdown_cut", reason="grace period over with a call in flight")
            self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        self.pipeline.stopping = asyncio.Event()  # direct ticks work again
        if done:  # a clean stop leaves no row; a crashed or stuck worker's row shows as silent
            with contextlib.suppress(Exception):
                await self.pipeline.ctx.store.workers.stopped(self.pipeline.worker_id)

    async def _loop(self) -> None:
        settings = self.pipeline.ctx.settings
        with contextlib.suppress(Exception):  # workers that went silent a week ago are history
            await self.pipeline.ctx.store.workers.forget_silent(timedelta(days=7))
        while not self._stopping.is_set():
            deadline = time.monotonic() + settings.tick_deadline_seconds
            try:
                await self.pipeline.tick(deadline=deadline)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bad tick (the database away, ...) is logged; on we go
                self.pipeline.ctx.metrics.worker_tick(ok=False)
                if is_connection_error(exc):
                    self.pipeline.ctx.metrics.database_error("tick")
                log.warning("pipeline.tick_failed", error=repr(exc)[:300])
                log.debug("pipeline.tick_failed_detail", exc_info=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), settings.tick_interval_seconds)
