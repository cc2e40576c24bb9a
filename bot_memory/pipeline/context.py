"""What every pipeline phase works with, and the one way it calls the model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import asyncpg
import structlog
from pydantic import BaseModel

from bot_memory.models.base import ChatModel, ModelError, Usage
from bot_memory.pipeline.jobs import Job
from bot_memory.settings import MemorySettings
from bot_memory.store import Store, UsageEntry

log = structlog.get_logger(__name__)
M = TypeVar("M", bound=BaseModel)


class BudgetExhausted(RuntimeError):
    pass


@dataclass
class PipelineContext:
    store: Store  # over the worker's own pool: ingress never waits for the pipeline
    model: ChatModel
    settings: MemorySettings

    @property
    def pool(self) -> asyncpg.Pool:
        return self.store.pool

    def config_matches(self, job: Job) -> bool:
        """Model and provider configuration changes stop stale work."""
        return job.provider == self.model.provider and job.model == self.model.model

    async def charged_call(
        self, job: Job, kind: str, messages: list[dict[str, Any]], output_model: type[M]
    ) -> M:
        """One tool-free structured call, checked against the budgets and charged to the
        originating request as `kind` (memory_extract / memory_consolidate)."""
        await self._check_budget(job)
        name = "memory_extraction" if kind == "memory_extract" else "memory_consolidation"
        key = f"job:{job.id}:{kind}:claim{job.claims}"
        try:
            parsed, completion = await self.model.complete_structured(messages, output_model, name)
        except ModelError as exc:
            await self.store.record_usage(
                self._usage(
                    job,
                    kind,
                    exc.usage.prompt_tokens,
                    exc.usage.completion_tokens,
                    outcome=exc.outcome,
                    detail=str(exc),
                    key=key,
                )
            )
            raise
        await self.store.record_usage(
            self._usage(
                job,
                kind,
                completion.usage.prompt_tokens,
                completion.usage.completion_tokens,
                outcome="ok",
                detail=None,
                key=key,
            )
        )
        return parsed

    async def _check_budget(self, job: Job) -> None:
        limit = self.settings.workspace_budget_usd
        if job.origin_request_id is not None:
            request_left, workspace_left = await self.store.remaining_budget(
                job.origin_request_id, limit
            )
        else:
            spent = await self.store.pool.fetchval(
                "SELECT spent_usd FROM workspaces WHERE id = $1", job.workspace
            )
            request_left, workspace_left = float("inf"), limit - float(spent or 0)
        if request_left <= 0 or workspace_left <= 0:
            raise BudgetExhausted(
                f"budget exhausted (request ${request_left:.4f}, workspace ${workspace_left:.4f})"
            )

    def _usage(
        self,
        job: Job,
        kind: str,
        prompt: int,
        completion: int,
        *,
        outcome: Any,
        detail: str | None,
        key: str,
    ) -> UsageEntry:
        cost = self.model.cost_usd(Usage(prompt_tokens=prompt, completion_tokens=completion))
        return UsageEntry(
            workspace=job.workspace,
            request_id=job.origin_request_id,
            kind=kind,
            provider=self.model.provider,
            model=self.model.model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            cost_usd=cost,
            outcome=outcome,
            detail=detail,
            job_id=job.id,
            idempotency_key=key,
        )
