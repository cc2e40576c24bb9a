"""The ledger of billed calls (usage_ledger): an attempt is on disk before the request leaves,
and its answer and its charge land together.

    attempt = await store.ledger.open_attempt(...)   # committed: 'pending', reserved
    ... the model call ...
    async with store.atomic() as tx:                 # the charge and what the answer keeps
        await tx.ledger.close_attempt(attempt, outcome, ...)

Reserving the worst case (prompt bytes as tokens, plus max_tokens, at the configured prices)
before the call and settling it after means concurrent calls (agent rounds, workers, background
and interactive) can never spend past a budget together. An attempt still pending when its job
is claimed again was cut off by a dying process: its outcome is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal

import asyncpg

from bot_memory.errors import BotMemoryError
from bot_memory.storage.handle import Handle

AttemptOutcome = Literal["ok", "error", "unknown"]
REFUSED = "BM002"  # raised by bm_open_attempt: a budget does not cover the call, or it was made


class BudgetRefused(BotMemoryError, RuntimeError):
    """The worst case of the call does not fit what is left of a budget."""


@dataclass(frozen=True)
class Attempt:
    ledger_id: int
    workspace: str
    request_id: int | None
    reserved: Decimal


def money(value: float) -> Decimal:
    return Decimal(str(round(value, 6)))


class Ledger:
    """The ledger's attempts, on the pool (`Store.ledger`) or inside the caller's transaction
    (`Store.atomic()`: the charge lands with what the answer keeps)."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def open_attempt(
        self,
        *,
        workspace: str,
        request_id: int | None,
        job_id: int | None,
        kind: str,
        key: str,
        provider: str,
        model: str,
        worst_usd: float,
        workspace_budget_usd: float,
    ) -> Attempt:
        """Reserve the worst case and write the attempt, committed, before anything is sent.

        Raises BudgetRefused when the request's or the workspace's remaining budget (minus what
        other calls have reserved) does not cover the worst case, or when this exact attempt (its
        idempotency key) was made before.
        """
        worst = money(worst_usd)
        try:
            ledger_id = await self._on.fetchval(
                "SELECT bm_open_attempt($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                workspace,
                request_id,
                job_id,
                kind,
                provider,
                model,
                worst,
                key,
                money(workspace_budget_usd),
            )
        except asyncpg.PostgresError as exc:
            if exc.sqlstate == REFUSED:
                raise BudgetRefused(str(exc)) from exc
            raise
        return Attempt(
            ledger_id=ledger_id, workspace=workspace, request_id=request_id, reserved=worst
        )

    async def close_attempt(
        self,
        attempt: Attempt,
        outcome: AttemptOutcome,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
        detail: str | None = None,
    ) -> bool:
        """Settle an attempt: the charge replaces the reservation. An unknown outcome is charged its
        worst case (the provider may have billed it). False when someone else closed it already."""
        cost = attempt.reserved if outcome == "unknown" else money(cost_usd)
        closed: bool = await self._on.fetchval(
            "SELECT bm_close_attempt($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            attempt.workspace,
            attempt.ledger_id,
            attempt.request_id,
            attempt.reserved,
            outcome,
            prompt_tokens,
            completion_tokens,
            cost,
            (detail or "")[:500] or None,
        )
        return closed

    async def close_abandoned_attempts(self, workspace: str, job_id: int) -> int:
        """Attempts of a job still pending when it is claimed again: the process that made them died
        mid-call, so the provider may have processed and billed them. They become unknown."""
        closed: int = await self._on.fetchval(
            "SELECT bm_close_abandoned($1, $2)", workspace, job_id
        )
        return closed

    async def stale_attempts(self, before: datetime, *, limit: int = 500) -> list[Attempt]:
        """Attempts of interactive answers (no job) still pending, made before then."""
        rows = await self._on.fetch(
            "SELECT workspace_id, id, request_id, reserved_usd FROM usage_ledger"
            " WHERE outcome = 'pending' AND job_id IS NULL AND created_at < $1 LIMIT $2",
            before,
            limit,
        )
        return [
            Attempt(
                ledger_id=r["id"],
                workspace=r["workspace_id"],
                request_id=r["request_id"],
                reserved=r["reserved_usd"],
            )
            for r in rows
        ]

    async def outcome(self, workspace: str, key: str) -> str | None:
        """What became of the attempt with this idempotency key (None: none was made)."""
        found: str | None = await self._on.fetchval(
            "SELECT outcome FROM usage_ledger WHERE workspace_id = $1 AND idempotency_key = $2",
            workspace,
            key,
        )
        return found
