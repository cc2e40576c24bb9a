"""The background worker: once per tick, plan due jobs, then run claimed jobs one at a time.

It runs on its own task and its own connection pool, so ingress, deliveries and heartbeats
never wait for it. A tick has a deadline; stopping the worker cancels the tick in flight,
and whatever a job had checkpointed resumes on the next claim.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from bot_memory.charging import BudgetExhausted
from bot_memory.models.base import ModelError
from bot_memory.pipeline import jobs
from bot_memory.pipeline.consolidation import run_consolidation
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.discovery import plan_due
from bot_memory.pipeline.extraction import run_extraction
from bot_memory.pipeline.inputs import SourcesChanged
from bot_memory.pipeline.jobs import Job, StopKind
from bot_memory.pipeline.maintenance import close_abandoned, drop_finished_jobs, prune_due
from bot_memory.retention import expire_due
from bot_memory.workspace import WorkspaceGone

log = structlog.get_logger(__name__)


@dataclass
class TickReport:
    planned: list[int] = field(default_factory=list)
    finished: dict[int, str] = field(default_factory=dict)  # job ID -> final phase this tick
    pruned: int = 0
    abandoned: int = 0
    expired: dict[str, int] = field(default_factory=dict)


class Pipeline:
    def __init__(self, ctx: PipelineContext) -> None:
        self.ctx = ctx

    async def tick(self, now: datetime | None = None) -> TickReport:
        """One pass: housekeeping that is due, planning for due scopes, then claimed jobs.

        Every query here reads only what is due (indexed), so a tick with nothing to do costs
        the same with ten workspaces or ten thousand.
        """
        report = TickReport()
        now = now or datetime.now(UTC)
        report.abandoned = await close_abandoned(self.ctx, now)
        report.expired = (
            await expire_due(
                self.ctx.store, now, provider=self.ctx.model.provider, model=self.ctx.model.model
            )
        ).as_dict()
        report.pruned = await prune_due(self.ctx, now)
        await drop_finished_jobs(self.ctx, now)
        report.planned += await plan_due(self.ctx, now)
        while True:
            job = await jobs.claim_next(
                self.ctx.pool,
                lease_seconds=self.ctx.settings.lease_seconds,
                max_claims=self.ctx.settings.max_claims_per_input,
            )
            if job is None:
                return report
            report.finished[job.id] = await self.run_job(job, now)

    async def run_job(self, job: Job, now: datetime) -> str:
        """Run a claimed job; returns the phase it ends in."""
        settings = self.ctx.settings
        log.info("pipeline.job_claimed", job=job.id, phase=job.phase, claims=job.claims)
        if not self.ctx.config_matches(job):
            await jobs.stop(self.ctx.pool, job, "model or provider configuration changed", "config")
            log.info("pipeline.job_stopped", job=job.id, reason="stale configuration")
            return job.phase
        try:
            if job.phase == "extract":
                await run_extraction(self.ctx, job, now)
            elif job.phase == "consolidate":
                await run_consolidation(self.ctx, job, now)
        except (SourcesChanged, ModelError, ValueError) as exc:
            retry, reason, kind = _verdict(exc)
            if retry:
                job.phase = await jobs.back_off(
                    self.ctx.pool,
                    job,
                    reason,
                    backoff_seconds=settings.failure_backoff_seconds,
                    max_claims=settings.max_claims_per_input,
                )
                log.warning("pipeline.job_failed", job=job.id, error=reason, phase=job.phase)
            else:
                await jobs.stop(self.ctx.pool, job, reason, kind)
                log.warning("pipeline.job_stopped", job=job.id, reason=reason)
        except WorkspaceGone:
            log.info("pipeline.job_dropped", job=job.id, reason="workspace purged")
            return "stopped"
        return job.phase


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
    """Started and stopped by the host's dispatcher; one task, one tick at a time."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if self.running:
            return
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name="bot-memory-worker")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._stopping.set()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _loop(self) -> None:
        settings = self.pipeline.ctx.settings
        while not self._stopping.is_set():
            try:
                await asyncio.wait_for(self.pipeline.tick(), settings.tick_deadline_seconds)
            except TimeoutError:
                log.warning("pipeline.tick_deadline", seconds=settings.tick_deadline_seconds)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bad tick is logged; the loop goes on
                log.exception("pipeline.tick_failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), settings.tick_interval_seconds)
