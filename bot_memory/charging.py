"""Every model call goes through here: budgets checked first, usage and charges recorded after.

Calls are attached to the request they serve (the answer's own, or the originating request of
a background job), so a request's recorded total can grow after its visible answer completed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from bot_memory.models.base import ChatModel, Completion, ModelError, Outcome, Usage
from bot_memory.store import Store, UsageEntry

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class BudgetExhausted(ModelError):
    """No dollars left on the request or the workspace: the call was not made."""


@dataclass(frozen=True)
class Charge:
    """Whom a call is charged to and under which name."""

    workspace: str
    request_id: int | None
    kind: str  # answer | memory_extract | memory_consolidate
    key: str  # idempotency key: a replayed call is recorded once
    job_id: int | None = None


@dataclass
class Charger:
    store: Store
    model: ChatModel
    workspace_budget_usd: float

    async def complete(
        self,
        charge: Charge,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion:
        async def call() -> tuple[Completion, Usage]:
            completion = await self.model.complete(messages, tools=tools)
            return completion, completion.usage

        return await self._charged(charge, call)

    async def complete_structured(
        self, charge: Charge, messages: list[dict[str, Any]], output_model: type[M], name: str
    ) -> M:
        async def call() -> tuple[M, Usage]:
            parsed, completion = await self.model.complete_structured(messages, output_model, name)
            return parsed, completion.usage

        return await self._charged(charge, call)

    async def _charged(self, charge: Charge, call: Callable[[], Awaitable[tuple[T, Usage]]]) -> T:
        """Budget first; then the call, recorded whether it succeeded or not."""
        await self.check_budget(charge)
        try:
            result, usage = await call()
        except ModelError as exc:
            await self._record(charge, exc.usage, exc.outcome, str(exc))
            raise
        await self._record(charge, usage, None, None)
        return result

    async def check_budget(self, charge: Charge) -> None:
        request_left, workspace_left = await self.store.remaining_budget(
            charge.workspace, charge.request_id, self.workspace_budget_usd
        )
        if request_left <= 0 or workspace_left <= 0:
            raise BudgetExhausted(
                f"budget exhausted (request ${request_left:.4f}, workspace ${workspace_left:.4f})"
            )

    async def _record(
        self, charge: Charge, usage: Usage, failure: Outcome | None, detail: str | None
    ) -> None:
        await self.store.record_usage(
            UsageEntry(
                workspace=charge.workspace,
                request_id=charge.request_id,
                kind=charge.kind,
                provider=self.model.provider,
                model=self.model.model,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cost_usd=self.model.cost_usd(usage),
                outcome=failure or "ok",
                detail=detail,
                job_id=charge.job_id,
                idempotency_key=charge.key,
            )
        )
