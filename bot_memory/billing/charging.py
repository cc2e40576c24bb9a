"""Every model call goes through here: its worst case reserved and its attempt on the ledger
before it is sent, its outcome and charge settled after (see storage/ledger.py).

Calls are attached to the request they serve (the answer's own, or the originating request of a
background job), so a request's recorded total can grow after its visible answer completed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.models import ChatModel, Completion, ModelError, Outcome, Usage
from bot_memory.storage import Attempt, BudgetRefused, Ledger, Store, is_connection_error

log = get_logger(__name__)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
# What a paid answer keeps, in the transaction that records its charge.
Settle = Callable[[Store, Any], Awaitable[None]]


class BudgetExhausted(ModelError):
    """The worst case of the call does not fit what is left of a budget: it was not made."""


@dataclass(frozen=True)
class Charge:
    """Whom a call is charged to, under which name, and how long its answer may be."""

    workspace: str
    request_id: int | None
    kind: str  # answer | memory_extract | memory_consolidate
    key: str  # idempotency key: an attempt is made once
    max_tokens: int
    job_id: int | None = None


@dataclass
class Charger:
    store: Store
    model: ChatModel
    workspace_budget_usd: float
    settle_retry_seconds: float = 10.0
    metrics: Metrics = field(default_factory=lambda: Metrics(enabled=False))

    async def complete(
        self,
        charge: Charge,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
    ) -> Completion:
        async def call() -> tuple[Completion, Usage]:
            completion = await self.model.complete(
                messages, tools=tools, max_tokens=charge.max_tokens
            )
            return completion, completion.usage

        return await self._charged(charge, _size(messages, tools), call, None)

    async def complete_structured(
        self,
        charge: Charge,
        messages: list[dict[str, Any]],
        output_model: type[M],
        name: str,
        *,
        validate: Callable[[M], M] | None = None,
        settle: Settle | None = None,
    ) -> M:
        """A tool-free call whose answer must validate; `settle(conn, answer)` runs in the
        transaction that records the charge (a job's checkpoint: paid and kept together)."""

        async def call() -> tuple[M, Usage]:
            parsed, completion = await self.model.complete_structured(
                messages, output_model, name, max_tokens=charge.max_tokens
            )
            if validate is not None:
                try:
                    parsed = validate(parsed)
                except ValueError as exc:  # processed and billed, but not usable
                    raise ModelError(
                        f"invalid model output: {exc}", usage=completion.usage
                    ) from exc
            return parsed, completion.usage

        return await self._charged(charge, _size(messages, None), call, settle)

    async def _charged(
        self,
        charge: Charge,
        request_bytes: int,
        call: Callable[[], Awaitable[tuple[T, Usage]]],
        settle: Settle | None,
    ) -> T:
        try:
            attempt = await self.store.ledger.open_attempt(
                workspace=charge.workspace,
                request_id=charge.request_id,
                job_id=charge.job_id,
                kind=charge.kind,
                key=charge.key,
                provider=self.model.provider,
                model=self.model.model,
                worst_usd=self.model.worst_case_usd(request_bytes, charge.max_tokens),
                workspace_budget_usd=self.workspace_budget_usd,
            )
        except BudgetRefused as exc:
            self.metrics.model_call(charge.kind, "refused")
            raise BudgetExhausted(str(exc)) from exc
        try:
            result, usage = await call()
        except ModelError as exc:
            self._count(charge, exc.outcome, exc.usage)
            await self._close(attempt, exc.outcome, exc.usage, str(exc))
            raise
        except BaseException as exc:
            # Cancelled (deadline, shutdown) or broken mid-call: the request may have been
            # processed. Recorded even while the cancellation goes on.
            self._count(charge, "unknown", Usage())
            await asyncio.shield(self._close(attempt, "unknown", Usage(), repr(exc)[:300]))
            raise
        self._count(charge, "ok", usage)
        # Paid: record it and keep the answer even if a cancellation arrives meanwhile, and only
        # then let the cancellation go on (the caller reads the ledger to see it was kept).
        closing = asyncio.ensure_future(self._close(attempt, "ok", usage, None, settle, result))
        try:
            await asyncio.shield(closing)
        except asyncio.CancelledError:
            while not closing.done():  # a second cancellation does not cut it either
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(closing)
            if closing.exception() is not None:
                log.warning("memory.settle_failed", error=repr(closing.exception())[:200])
            raise
        return result

    def _count(self, charge: Charge, outcome: str, usage: Usage) -> None:
        self.metrics.model_call(
            charge.kind,
            outcome,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=self.model.cost_usd(usage),
        )

    async def _close(
        self,
        attempt: Attempt,
        outcome: Outcome | str,
        usage: Usage,
        detail: str | None,
        settle: Settle | None = None,
        result: Any = None,
    ) -> None:
        """Settle the attempt (and run `settle`) in one transaction; while the database is
        away, keep trying for settle_retry_seconds so a paid answer is not bought again."""
        deadline = time.monotonic() + self.settle_retry_seconds
        pause = 0.2
        while True:
            try:
                if settle is None:  # one statement: no transaction around it
                    await self._settle_attempt(self.store.ledger, attempt, outcome, usage, detail)
                    return
                async with self.store.atomic() as tx:
                    await self._settle_attempt(tx.ledger, attempt, outcome, usage, detail)
                    await settle(tx, result)
                return
            except Exception as exc:
                if not is_connection_error(exc):
                    raise
                self.metrics.database_error("settle")
                if time.monotonic() > deadline:
                    raise
                log.warning("memory.settle_retry", error=repr(exc)[:200], ledger=attempt.ledger_id)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)

    async def _settle_attempt(
        self,
        ledger: Ledger,
        attempt: Attempt,
        outcome: Outcome | str,
        usage: Usage,
        detail: str | None,
    ) -> None:
        await ledger.close_attempt(
            attempt,
            outcome,  # type: ignore[arg-type]
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=self.model.cost_usd(usage),
            detail=detail,
        )


def _size(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    """Bytes of the request body that count as prompt: its worst case in tokens."""
    body = json.dumps({"messages": messages, "tools": tools or []}, ensure_ascii=False)
    return len(body.encode("utf-8"))


def warn_if_unpriced(model: ChatModel, workspace_budget_usd: float) -> None:
    """At start: a budget is set but nobody said what the model costs, so it cannot stop
    anything."""
    if not model.price_known and workspace_budget_usd > 0:
        log.warning(
            "memory.price_unknown",
            model=model.model,
            detail="no price is known for this model: calls are charged $0 and budgets"
            " cannot stop spending; set BOT_MEMORY_LLM_INPUT_USD_PER_MTOK and"
            " BOT_MEMORY_LLM_OUTPUT_USD_PER_MTOK",
        )
