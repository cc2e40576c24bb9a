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
from bot_memory.storage.handle import Handle, transaction

AttemptOutcome = Literal["ok", "error", "unknown"]


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
        async with transaction(self._on) as conn:
            if request_id is not None:
                left = await conn.fetchval(
                    "UPDATE requests SET reserved_usd = reserved_usd + $3 WHERE workspace_id = $1"
                    " AND id = $2 AND budget_usd - charged_usd - reserved_usd > 0"
                    " AND budget_usd - charged_usd - reserved_usd >= $3"
                    " RETURNING budget_usd - charged_usd - reserved_usd",
                    workspace,
                    request_id,
                    worst,
                )
                if left is None:
                    raise BudgetRefused(
                        await _why(conn, "request", workspace, request_id, worst, None)
                    )
            left = await conn.fetchval(
                "UPDATE workspaces SET reserved_usd = reserved_usd + $2 WHERE id = $1"
                " AND $3 - spent_usd - reserved_usd > 0 AND $3 - spent_usd - reserved_usd >= $2"
                " RETURNING $3 - spent_usd - reserved_usd",
                workspace,
                worst,
                money(workspace_budget_usd),
            )
            if left is None:
                raise BudgetRefused(
                    await _why(conn, "workspace", workspace, None, worst, workspace_budget_usd)
                )
            ledger_id = await conn.fetchval(
                "INSERT INTO usage_ledger (workspace_id, request_id, job_id, kind, provider, model,"
                " outcome, reserved_usd, idempotency_key) VALUES ($1, $2, $3, $4, $5, $6,"
                " 'pending', $7, $8) ON CONFLICT (workspace_id, idempotency_key) DO NOTHING"
                " RETURNING id",
                workspace,
                request_id,
                job_id,
                kind,
                provider,
                model,
                worst,
                key,
            )
            if ledger_id is None:
                raise BudgetRefused(f"this call ({key}) was attempted before: not sending it again")
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
        async with transaction(self._on) as conn:
            closed = await conn.fetchval(
                "UPDATE usage_ledger SET outcome = $3, prompt_tokens = $4, completion_tokens = $5,"
                " cost_usd = $6, reserved_usd = 0, detail = $7, closed_at = now()"
                " WHERE workspace_id = $1 AND id = $2 AND outcome = 'pending' RETURNING id",
                attempt.workspace,
                attempt.ledger_id,
                outcome,
                prompt_tokens,
                completion_tokens,
                cost,
                (detail or "")[:500] or None,
            )
            if closed is None:
                return False
            await _settle(conn, attempt.workspace, attempt.request_id, attempt.reserved, cost)
        return True

    async def close_abandoned_attempts(self, workspace: str, job_id: int) -> int:
        """Attempts of a job still pending when it is claimed again: the process that made them died
        mid-call, so the provider may have processed and billed them. They become unknown."""
        async with transaction(self._on) as conn:
            return await _close_abandoned(conn, workspace, job_id)

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


async def _why(
    conn: asyncpg.Connection,
    which: str,
    workspace: str,
    request_id: int | None,
    worst: Decimal,
    workspace_budget: float | None,
) -> str:
    if which == "request":
        left = await conn.fetchval(
            "SELECT budget_usd - charged_usd - reserved_usd FROM requests WHERE workspace_id = $1"
            " AND id = $2",
            workspace,
            request_id,
        )
    else:
        left = await conn.fetchval(
            "SELECT $2 - spent_usd - reserved_usd FROM workspaces WHERE id = $1",
            workspace,
            money(workspace_budget or 0),
        )
    return (
        f"budget exhausted: the {which} has ${float(left or 0):.6f} left, the call may cost"
        f" up to ${float(worst):.6f}"
    )


async def _settle(
    conn: asyncpg.Connection,
    workspace: str,
    request_id: int | None,
    reserved: Decimal,
    cost: Decimal,
) -> None:
    if request_id is not None:
        await conn.execute(
            "UPDATE requests SET reserved_usd = greatest(reserved_usd - $3, 0),"
            " charged_usd = charged_usd + $4 WHERE workspace_id = $1 AND id = $2",
            workspace,
            request_id,
            reserved,
            cost,
        )
    await conn.execute(
        "UPDATE workspaces SET reserved_usd = greatest(reserved_usd - $2, 0),"
        " spent_usd = spent_usd + $3 WHERE id = $1",
        workspace,
        reserved,
        cost,
    )


async def _close_abandoned(conn: asyncpg.Connection, workspace: str, job_id: int) -> int:
    rows = await conn.fetch(
        "UPDATE usage_ledger SET outcome = 'unknown', cost_usd = reserved_usd, reserved_usd = 0,"
        " detail = 'the process making this call ended before its answer was recorded',"
        " closed_at = now() WHERE workspace_id = $1 AND job_id = $2 AND outcome = 'pending'"
        " RETURNING request_id, cost_usd",
        workspace,
        job_id,
    )
    for row in rows:
        await _settle(conn, workspace, row["request_id"], row["cost_usd"], row["cost_usd"])
    return len(rows)
