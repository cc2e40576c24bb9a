"""Memory jobs (memory_jobs): the row model and the statements that plan, claim, lease,
checkpoint and end them, and the models bots and workers call (bot_models).

A job is owned by whoever holds its ownership token while its lease runs. Every write a worker
makes after a model call checks both, so a worker whose lease ran out (and whose job another
worker claimed) can never commit stale results.

Locks are always taken in one order, workspace row first, then job rows, so planning, claims,
commits, forgets and chat migrations never deadlock each other.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import asyncpg
from pydantic import BaseModel, ConfigDict, Field

from bot_memory.models import Pin
from bot_memory.records import content_hash
from bot_memory.scopes import Scope
from bot_memory.storage.handle import Handle, connection
from bot_memory.storage.statements import SCOPE_DUE

Phase = Literal["extract", "consolidate", "done", "failed", "stopped"]
ACTIVE_PHASES = ("extract", "consolidate")
# Why a job stopped. Only "unknown" (the provider may have acted and charged) needs an
# operator before the same input runs again; the others are re-planned when due.
StopKind = Literal["unknown", "changed", "config", "off", "budget", "superseded", "gone"]


class SnapshotSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str  # public source ID ("m123")
    message_id: int
    request_id: int
    hash: str
    role: Literal["user", "assistant"]
    speaker_id: int
    thread_id: int
    created_at: datetime


class Snapshot(BaseModel):
    """What a job was planned on: source IDs and hashes, or candidate record fingerprints;
    never contents."""

    model_config = ConfigDict(extra="forbid")

    scope_kind: Literal["private", "shared"]
    sources: list[SnapshotSource] = Field(default_factory=list)
    through_request: int = 0  # the scope's watermark moves here when extraction commits
    candidates: dict[str, str] = Field(default_factory=dict)  # consolidation: id -> fingerprint
    reason: str = "extraction"

    def input_hash(self) -> str:
        parts = [f"{s.id}:{s.hash}" for s in self.sources]
        parts += [f"{k}:{v}" for k, v in sorted(self.candidates.items())]
        kind = "consolidate" if self.candidates or not self.sources else "extract"
        return content_hash("|".join([kind, str(self.through_request), *parts]))

    @property
    def message_ids(self) -> set[int]:
        return {s.message_id for s in self.sources}


class Job(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    workspace: str
    scope_key: str
    phase: Phase
    input_hash: str
    snapshot: Snapshot
    origin_request_id: int | None
    provider: str
    model: str
    token: uuid.UUID | None
    lease_until: datetime | None
    claims: int
    checkpoint: dict[str, Any]
    last_error: str | None
    # The ledger key of this claim's latest billed call (in memory only): after a cancellation
    # its outcome says whether the call was cut (unknown) or its answer is paid and kept.
    call_key: str | None = None

    @classmethod
    def from_row(cls, row: asyncpg.Record) -> Job:
        return cls(
            id=row["id"],
            workspace=row["workspace_id"],
            scope_key=row["scope_key"],
            phase=row["phase"],
            input_hash=row["input_hash"],
            snapshot=Snapshot.model_validate_json(row["snapshot"]),
            origin_request_id=row["origin_request_id"],
            provider=row["provider"],
            model=row["model"],
            token=row["ownership_token"],
            lease_until=row["lease_until"],
            claims=row["claims"],
            checkpoint=json.loads(row["checkpoint"]),
            last_error=row["last_error"],
        )


# Jobs by phase (finished ones stay a week: finished_job_retention_days), and the oldest due
# job (not finished, its next attempt due) and scope (its wake-up due), by the indexes on them.
# A scope due first carries the sentinel 'epoch' as its due_at, which is no time: it has been
# due since due_since.
_BACKLOG = f"""
SELECT
    (SELECT coalesce(jsonb_object_agg(phase, n), '{{}}'::jsonb)
       FROM (SELECT phase, count(*) AS n FROM memory_jobs GROUP BY phase) AS j) AS jobs,
    (SELECT extract(epoch FROM now() - min(next_attempt_at)) FROM memory_jobs
      WHERE phase IN ('extract', 'consolidate') AND next_attempt_at <= now()) AS job_lag,
    (SELECT extract(epoch FROM now() - min(CASE WHEN due_at = 'epoch'::timestamptz
                THEN coalesce(due_since, now()) ELSE due_at END))
       FROM memory_scopes WHERE {SCOPE_DUE.format(at="now()")})
       AS scope_lag
"""


@dataclass(frozen=True)
class Backlog:
    """How far behind the pipeline is, for the metrics."""

    jobs: dict[str, int]  # phase -> jobs
    lag_seconds: float  # age of the oldest due job or scope; 0 when none is due


def snapshot_sources(job: Job) -> str:
    """The job's sources as the server-side checks read them (in snapshot order)."""
    return json.dumps([{"message_id": s.message_id, "hash": s.hash} for s in job.snapshot.sources])


# What a scope's bot calls now: the model its process last started with (setup() records it),
# or else the one the scope's newest request was pinned to.
CURRENT_PIN = (
    "SELECT b.provider, b.model FROM memory_scopes s JOIN bot_models b ON b.bot_id = s.bot_id"
    " WHERE s.workspace_id = {ws} AND s.scope_key = {scope}"
    " UNION ALL (SELECT r.provider, r.model FROM requests r WHERE r.workspace_id = {ws}"
    " AND r.scope_key = {scope} AND r.provider IS NOT NULL ORDER BY r.id DESC LIMIT 1)"
    " LIMIT 1"
)


class Jobs:
    """The job rows, on the pool (`Store.jobs`) or inside the workspace lock (`WorkspaceTx.jobs`).

    A job is owned by whoever holds its ownership token while its lease runs: every write after
    a model call checks both.
    """

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def create(
        self,
        *,
        workspace: str,
        scope_key: str,
        phase: Literal["extract", "consolidate"],
        snapshot: Snapshot,
        origin_request_id: int | None,
        provider: str,
        model: str,
        force: bool = False,
    ) -> int | None:
        """Plan a job for this exact input, once. Inside the workspace lock.

        The same input planned again revives its job if it was stopped for a reason that no
        longer holds (superseded, memory was off, configuration, ...), keeping its claims: an
        unchanged input is claimed at most max_claims times across re-plans. A job that failed
        for good or stopped on an unknown provider outcome stays as it is (an operator re-arms
        it).
        """
        input_hash = snapshot.input_hash()
        # One statement: plan (or revive) the job, and stop the scope's other waiting jobs of
        # the same phase, whose input it replaces.
        job_id: int | None = await self._on.fetchval(
            """
            WITH job AS (
                INSERT INTO memory_jobs (workspace_id, scope_key, phase, input_hash, snapshot,
                    origin_request_id, provider, model)
                VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)
                ON CONFLICT (workspace_id, scope_key, input_hash) DO UPDATE SET
                    phase = EXCLUDED.phase, origin_request_id = EXCLUDED.origin_request_id,
                    provider = EXCLUDED.provider, model = EXCLUDED.model, stop_kind = NULL,
                    checkpoint = '{}'::jsonb, next_attempt_at = now(), finished_at = NULL,
                    claims = CASE WHEN $9 THEN 0 ELSE memory_jobs.claims END, updated_at = now()
                WHERE (memory_jobs.phase = 'stopped'
                       AND memory_jobs.stop_kind IS DISTINCT FROM 'unknown')
                   OR ($9 AND memory_jobs.phase IN ('done', 'failed'))
                RETURNING id
            ), superseded AS (
                UPDATE memory_jobs SET phase = 'stopped', stop_kind = 'superseded',
                    last_error = 'superseded by newer input', checkpoint = '{}'::jsonb,
                    finished_at = now(), updated_at = now()
                WHERE workspace_id = $1 AND scope_key = $2 AND phase = $3
                  AND EXISTS (SELECT 1 FROM job) AND id NOT IN (SELECT id FROM job)
                  AND (lease_until IS NULL OR lease_until < now())
            )
            SELECT id FROM job
            """,
            workspace,
            scope_key,
            phase,
            input_hash,
            snapshot.model_dump_json(),
            origin_request_id,
            provider,
            model,
            force,
        )
        return job_id

    async def given_up(self, workspace: str, scope_key: str, input_hash: str) -> bool:
        """This input's job failed for good or stopped on an unknown outcome."""
        found = await self._on.fetchval(
            "SELECT 1 FROM memory_jobs WHERE workspace_id = $1 AND scope_key = $2"
            " AND input_hash = $3 AND (phase = 'failed' OR (phase = 'stopped'"
            " AND stop_kind = 'unknown'))",
            workspace,
            scope_key,
            input_hash,
        )
        return found is not None

    async def in_flight(self, workspace: str, scope_key: str, phase: str) -> bool:
        """A job of this scope and phase holds a live lease (a worker is running it now)."""
        found = await self._on.fetchval(
            "SELECT 1 FROM memory_jobs WHERE workspace_id = $1 AND scope_key = $2"
            " AND phase = $3 AND lease_until > now() LIMIT 1",
            workspace,
            scope_key,
            phase,
        )
        return found is not None

    async def current_pin(self, workspace: str, scope_key: str) -> Pin | None:
        row = await self._on.fetchrow(CURRENT_PIN.format(ws="$1", scope="$2"), workspace, scope_key)
        return Pin(row["provider"], row["model"]) if row else None

    async def pin_bot(self, bot_id: int, pin: Pin, settings: dict[str, Any] | None = None) -> None:
        """The model a bot's process starts with: its jobs wait for a worker that calls it.
        With the settings its memory work depends on, for `status` to compare with the
        workers'."""
        await self._on.execute(
            "INSERT INTO bot_models (bot_id, provider, model, settings) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (bot_id) DO UPDATE SET provider = EXCLUDED.provider,"
            " model = EXCLUDED.model, settings = EXCLUDED.settings, updated_at = now()",
            bot_id,
            pin.provider,
            pin.model,
            None if settings is None else json.dumps(settings),
        )

    async def claim_next(
        self, *, lease_seconds: float, max_claims: int, pin: Pin | None = None
    ) -> Job | None:
        """Claim one due job with a fresh token and lease.

        Workspaces take turns: the one served least recently goes first, so a busy workspace
        cannot starve the others. Locks: the job's workspace row, then the job row (SKIP
        LOCKED, so two workers never claim one job). `pin`: what the worker calls; only jobs it
        runs or re-plans are claimed (pins.verdict, in SQL), the others are left to a
        process that calls their model.
        """
        skipped: list[int] = []
        provider, model = (pin.provider, pin.model) if pin else (None, None)
        async with connection(self._on) as conn:
            while True:
                candidate = await conn.fetchrow(
                    "SELECT j.workspace_id, j.id FROM memory_jobs j"
                    " JOIN workspaces w ON w.id = j.workspace_id"
                    " WHERE j.phase = ANY($1::text[]) AND j.next_attempt_at <= now()"
                    " AND (j.lease_until IS NULL OR j.lease_until < now())"
                    " AND NOT (j.id = ANY($2::bigint[]))"
                    " AND ($3::text IS NULL OR (j.provider = $3 AND j.model = $4)"
                    " OR ($3, $4) = ("
                    + CURRENT_PIN.format(ws="j.workspace_id", scope="j.scope_key")
                    + "))"
                    " ORDER BY w.last_served_at NULLS FIRST, j.next_attempt_at, j.id LIMIT 1",
                    list(ACTIVE_PHASES),
                    skipped,
                    provider,
                    model,
                )
                if candidate is None:
                    return None
                workspace, job_id = candidate["workspace_id"], candidate["id"]
                async with conn.transaction():
                    locked = await conn.fetchval(
                        "SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE", workspace
                    )
                    row = await conn.fetchrow(
                        "SELECT claims FROM memory_jobs WHERE workspace_id = $1 AND id = $2"
                        " AND phase = ANY($3::text[]) AND next_attempt_at <= now()"
                        " AND (lease_until IS NULL OR lease_until < now())"
                        " FOR UPDATE SKIP LOCKED",
                        workspace,
                        job_id,
                        list(ACTIVE_PHASES),
                    )
                    if locked is None or row is None:
                        skipped.append(job_id)  # taken, or gone, since we looked
                        continue
                    if row["claims"] >= max_claims:
                        await conn.execute(
                            "UPDATE memory_jobs SET phase = 'failed', checkpoint = '{}'::jsonb,"
                            " finished_at = now(), updated_at = now(),"
                            " last_error = coalesce(last_error, '') || ' (claim limit reached)'"
                            " WHERE workspace_id = $1 AND id = $2",
                            workspace,
                            job_id,
                        )
                        continue
                    claimed = await conn.fetchrow(
                        "UPDATE memory_jobs SET ownership_token = $3, claims = claims + 1,"
                        " lease_until = now() + make_interval(secs => $4), updated_at = now()"
                        " WHERE workspace_id = $1 AND id = $2 RETURNING *",
                        workspace,
                        job_id,
                        uuid.uuid4(),
                        lease_seconds,
                    )
                    await conn.execute(
                        "UPDATE workspaces SET last_served_at = now() WHERE id = $1", workspace
                    )
                    assert claimed is not None
                    return Job.from_row(claimed)

    async def lock_owned(self, job: Job) -> bool:
        """Lock the job row if this worker still owns it and its lease runs; inside a
        transaction, after the workspace row."""
        owned = await self._on.fetchval(
            "SELECT 1 FROM memory_jobs WHERE workspace_id = $1 AND id = $2"
            " AND ownership_token = $3 AND lease_until > now() FOR UPDATE",
            job.workspace,
            job.id,
            job.token,
        )
        return owned is not None

    async def stopped_by_change(self, job: Job) -> str | None:
        """Why a job this worker no longer owns was stopped by what changed under it (a forget,
        a source gone: its `last_error`); None when its lease ran out instead."""
        reason: str | None = await self._on.fetchval(
            "SELECT coalesce(last_error, '') FROM memory_jobs WHERE workspace_id = $1"
            " AND id = $2 AND phase = 'stopped' AND stop_kind = 'changed'",
            job.workspace,
            job.id,
        )
        return reason

    async def renew_lease(self, job: Job, lease_seconds: float) -> bool:
        result: str = await self._on.execute(
            "UPDATE memory_jobs SET lease_until = now() + make_interval(secs => $4),"
            " updated_at = now() WHERE workspace_id = $1 AND id = $2 AND ownership_token = $3"
            " AND lease_until > now()",
            job.workspace,
            job.id,
            job.token,
            lease_seconds,
        )
        return result.endswith(" 1")

    async def save_checkpoint(self, job: Job, phase: str, data: dict[str, Any]) -> bool:
        """Keep a validated model output so a restart resumes without calling the model again.

        The token alone decides: a lease that ran out while PostgreSQL was away, with nobody
        else claiming the job, still lets the owner keep what it paid for."""
        job.checkpoint[phase] = data
        result: str = await self._on.execute(
            "UPDATE memory_jobs SET checkpoint = checkpoint"
            " || jsonb_build_object($4::text, $5::jsonb), updated_at = now()"
            " WHERE workspace_id = $1 AND id = $2 AND ownership_token = $3",
            job.workspace,
            job.id,
            job.token,
            phase,
            json.dumps(data, ensure_ascii=False),
        )
        return result.endswith(" 1")

    async def release(self, job: Job) -> None:
        """Give a claimed job back without having sent anything: its claim is refunded, so a
        shutdown or a tick running out of time never spends one."""
        await self._on.execute(
            "UPDATE memory_jobs SET ownership_token = NULL, lease_until = NULL,"
            " claims = greatest(claims - 1, 0), updated_at = now()"
            " WHERE workspace_id = $1 AND id = $2 AND ownership_token = $3",
            job.workspace,
            job.id,
            job.token,
        )

    async def advance(self, job: Job, phase: Phase) -> None:
        """Move an owned job on (inside the committing transaction). Ending releases the lease
        and drops the checkpoint: model outputs are kept only while the job needs them."""
        await self._on.execute("SELECT bm_job_phase($1, $2, $3)", job.workspace, job.id, phase)
        job.phase = phase

    async def back_off(
        self, job: Job, error: str, *, backoff_seconds: float, max_claims: int
    ) -> Phase:
        """A failed attempt: retry after the backoff, or fail for good at the claim limit."""
        phase: Phase = "failed" if job.claims >= max_claims else job.phase
        ending = phase == "failed"
        await self._on.execute(
            "UPDATE memory_jobs SET phase = $4, last_error = $5, lease_until = NULL,"
            " ownership_token = NULL, next_attempt_at = now() + make_interval(secs => $6),"
            " checkpoint = CASE WHEN $7 THEN '{}'::jsonb ELSE checkpoint END,"
            " finished_at = CASE WHEN $7 THEN now() END,"
            " updated_at = now() WHERE workspace_id = $1 AND id = $2 AND ownership_token = $3",
            job.workspace,
            job.id,
            job.token,
            phase,
            error[:1000],
            backoff_seconds,
            ending,
        )
        return phase

    async def stop(self, job: Job, reason: str, kind: StopKind, *, refund: bool = False) -> None:
        """End an owned job without retry; its checkpoint goes with it. `refund` gives the claim
        back, for a job stopped before it sent anything (its input was never tried)."""
        await self._on.execute(
            "SELECT bm_stop_job($1, $2, $3, $4, $5, $6)",
            job.workspace,
            job.id,
            job.token,
            reason,
            kind,
            refund,
        )
        job.phase = "stopped"

    async def input_problem(self, job: Job, at: datetime) -> tuple[StopKind, str] | None:
        """Why the job's input no longer holds at `at` (memory off, the bot gone, a source
        edited, erased, forgotten or past its retention boundary), or None while it holds."""
        row = await self._on.fetchrow(
            "SELECT kind, problem FROM bm_input_problem_v2($1, $2, $3::jsonb, $4)",
            job.workspace,
            job.scope_key,
            snapshot_sources(job),
            at,
        )
        if row is None or row["problem"] is None:
            return None
        return row["kind"], row["problem"]

    async def backlog(self, *, timeout: float) -> Backlog:  # noqa: ASYNC109
        """Jobs by phase and the age of the oldest due work, in one statement."""
        row = await self._on.fetchrow(_BACKLOG, timeout=timeout)
        assert row is not None
        jobs = row["jobs"]
        if isinstance(jobs, str):
            jobs = json.loads(jobs)
        lags = [float(v) for v in (row["job_lag"], row["scope_lag"]) if v is not None]
        return Backlog(jobs={k: int(v) for k, v in jobs.items()}, lag_seconds=max([0.0, *lags]))

    async def stop_touching(
        self, scope: Scope, message_ids: Iterable[int] | None, reason: str
    ) -> int:
        """Stop a scope's active jobs that hold these sources (all of them when None), and every
        consolidation of the scope, clearing their checkpoints; in flight or not. A worker still
        running one loses ownership and cannot commit. Inside the workspace lock."""
        ids = None if message_ids is None else sorted(set(message_ids))
        stopped: int = await self._on.fetchval(
            "SELECT bm_stop_jobs_touching($1, $2, $3::bigint[], $4)",
            scope.workspace,
            scope.key,
            ids,
            reason,
        )
        return stopped

    async def drop_finished(self, before: datetime) -> int:
        """Drop the rows of jobs that finished before then; how many went."""
        result: str = await self._on.execute(
            "DELETE FROM memory_jobs WHERE finished_at < $1", before
        )
        return int(result.split()[-1])
