"""What every pipeline phase works with, and the one way it calls the model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from bot_memory.billing import Charge, Charger
from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.models import CONSOLIDATION, EXTRACTION, ChatModel, Pin
from bot_memory.settings import MemorySettings
from bot_memory.storage import Job, Jobs, Store

log = get_logger(__name__)
M = TypeVar("M", bound=BaseModel)

OUTPUT_NAMES = {"memory_extract": EXTRACTION, "memory_consolidate": CONSOLIDATION}


@dataclass
class PipelineContext:
    store: Store  # over the worker's own pool: ingress never waits for the pipeline
    model: ChatModel
    settings: MemorySettings
    metrics: Metrics = field(default_factory=lambda: Metrics(enabled=False))
    charger: Charger = field(init=False)

    def __post_init__(self) -> None:
        self.charger = Charger(
            self.store,
            self.model,
            self.settings.workspace_budget_usd,
            settle_retry_seconds=self.settings.settle_retry_seconds,
            metrics=self.metrics,
        )

    @property
    def pin(self) -> Pin:
        """What this worker calls."""
        return Pin(self.model.provider, self.model.model)

    def config_matches(self, job: Job) -> bool:
        """Model and provider configuration changes stop stale work."""
        return job.provider == self.model.provider and job.model == self.model.model

    async def charged_call(
        self,
        job: Job,
        kind: str,
        messages: list[dict[str, Any]],
        output_model: type[M],
        *,
        validate: Callable[[M], M],
        phase: str,
    ) -> M:
        """One tool-free structured call, charged to the job's originating request as `kind`
        (memory_extract / memory_consolidate), at most once per claim. Its validated answer is
        checkpointed in the same transaction that records its charge: no crash can separate
        "paid" from "kept"."""
        max_tokens = (
            self.settings.extract_max_tokens
            if kind == "memory_extract"
            else self.settings.consolidate_max_tokens
        )
        charge = Charge(
            workspace=job.workspace,
            request_id=job.origin_request_id,
            kind=kind,
            # One key per claim (its fresh token): at most one call per claim, and a job an
            # operator re-arms or re-queues (claims back at 0) gets keys of its own.
            key=f"job:{job.id}:{kind}:{job.token}",
            max_tokens=max_tokens,
            job_id=job.id,
        )

        async def keep(tx: Store, answer: M) -> None:
            if not await tx.jobs.save_checkpoint(job, phase, answer.model_dump()):
                await job_lost(tx.jobs, job, phase)

        job.call_key = charge.key
        return await self.charger.complete_structured(
            charge, messages, output_model, OUTPUT_NAMES[kind], validate=validate, settle=keep
        )


async def job_lost(jobs: Jobs, job: Job, phase: str) -> None:
    """Say why a job this worker held is no longer its own: stopped by what changed under it
    (a forget, a request not to remember) is the job working as it should; a lease that ran
    out is not."""
    reason = await jobs.stopped_by_change(job)
    if reason is not None:
        log.info("pipeline.job_stopped", job=job.id, phase=phase, reason=reason)
    else:
        log.warning("pipeline.lost_ownership", job=job.id, phase=phase)
