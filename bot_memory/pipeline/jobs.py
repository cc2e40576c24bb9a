"""Memory jobs: the row model and the SQL that claims, leases, checkpoints and ends them.

A job is owned by whoever holds its ownership token while its lease runs. Every write a worker
makes after a model call checks both, so a worker whose lease ran out (and whose job another
worker claimed) can never commit stale results.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any, Literal

import asyncpg
from pydantic import BaseModel, ConfigDict, Field

from bot_memory.state import content_hash

Phase = Literal["extract", "consolidate", "done", "failed", "stopped"]
ACTIVE_PHASES = ("extract", "consolidate")


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
    """What a job was planned on: source IDs and hashes, never contents."""

    model_config = ConfigDict(extra="forbid")

    scope_kind: Literal["private", "shared"]
    sources: list[SnapshotSource] = Field(default_factory=list)
    through_request: int = 0  # the scope's watermark moves here when extraction commits
    reason: str = "extraction"

    def input_hash(self, extra: str = "") -> str:
        parts = [f"{s.id}:{s.hash}" for s in self.sources]
        return content_hash("|".join([self.reason, str(self.through_request), extra, *parts]))


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


async def create_job(
    conn: asyncpg.Connection | asyncpg.Pool,
    *,
    workspace: str,
    scope_key: str,
    phase: Literal["extract", "consolidate"],
    snapshot: Snapshot,
    input_hash: str,
    origin_request_id: int | None,
    provider: str,
    model: str,
) -> int | None:
    """Insert a job for this exact input, once; None if one already exists."""
    job_id: int | None = await conn.fetchval(
        """
        INSERT INTO memory_jobs (workspace_id, scope_key, phase, input_hash, snapshot,
            origin_request_id, provider, model)
        VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)
        ON CONFLICT (workspace_id, scope_key, input_hash) DO NOTHING
        RETURNING id
        """,
        workspace,
        scope_key,
        phase,
        input_hash,
        snapshot.model_dump_json(),
        origin_request_id,
        provider,
        model,
    )
    return job_id


async def active_job_hash(conn: asyncpg.Connection, workspace: str, scope_key: str) -> str | None:
    value: str | None = await conn.fetchval(
        "SELECT input_hash FROM memory_jobs WHERE workspace_id = $1 AND scope_key = $2"
        " AND phase = ANY($3::text[]) ORDER BY id DESC LIMIT 1",
        workspace,
        scope_key,
        list(ACTIVE_PHASES),
    )
    return value


async def extraction_in_flight(conn: asyncpg.Connection, workspace: str, scope_key: str) -> bool:
    """An extraction of this scope holds a live lease (a worker is running it now)."""
    found = await conn.fetchval(
        "SELECT 1 FROM memory_jobs WHERE workspace_id = $1 AND scope_key = $2"
        " AND phase = 'extract' AND lease_until > now() LIMIT 1",
        workspace,
        scope_key,
    )
    return found is not None


async def supersede_unleased(
    conn: asyncpg.Connection, workspace: str, scope_key: str, phase: str, new_hash: str
) -> int:
    """Stop waiting (unleased) jobs of a phase whose input differs: newer input replaces them."""
    result: str = await conn.execute(
        "UPDATE memory_jobs SET phase = 'stopped', last_error = 'superseded by newer input',"
        " updated_at = now() WHERE workspace_id = $1 AND scope_key = $2 AND phase = $3"
        " AND input_hash <> $4 AND (lease_until IS NULL OR lease_until < now())",
        workspace,
        scope_key,
        phase,
        new_hash,
    )
    return int(result.split()[-1])


async def claim_next(pool: asyncpg.Pool, *, lease_seconds: float, max_claims: int) -> Job | None:
    """Claim one due job under its workspace's row lock, with a fresh token and lease."""
    async with pool.acquire() as conn, conn.transaction():
        while True:
            row = await conn.fetchrow(
                "SELECT id, workspace_id, claims FROM memory_jobs"
                " WHERE phase = ANY($1::text[]) AND next_attempt_at <= now()"
                " AND (lease_until IS NULL OR lease_until < now())"
                " ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
                list(ACTIVE_PHASES),
            )
            if row is None:
                return None
            await conn.execute(
                "SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", row["workspace_id"]
            )
            if row["claims"] >= max_claims:
                await conn.execute(
                    "UPDATE memory_jobs SET phase = 'failed', updated_at = now(),"
                    " last_error = coalesce(last_error, '') || ' (claim limit reached)'"
                    " WHERE id = $1",
                    row["id"],
                )
                continue
            claimed = await conn.fetchrow(
                "UPDATE memory_jobs SET ownership_token = $2, claims = claims + 1,"
                " lease_until = now() + make_interval(secs => $3), updated_at = now()"
                " WHERE id = $1 RETURNING *",
                row["id"],
                uuid.uuid4(),
                lease_seconds,
            )
            assert claimed is not None
            return Job.from_row(claimed)


async def hold(conn: asyncpg.Connection, job: Job) -> bool:
    """Lock the job row if this worker still owns it and its lease runs; inside a transaction."""
    owned = await conn.fetchval(
        "SELECT 1 FROM memory_jobs WHERE id = $1 AND ownership_token = $2"
        " AND lease_until > now() FOR UPDATE",
        job.id,
        job.token,
    )
    return owned is not None


async def renew_lease(pool: asyncpg.Pool, job: Job, lease_seconds: float) -> bool:
    result: str = await pool.execute(
        "UPDATE memory_jobs SET lease_until = now() + make_interval(secs => $3), updated_at = now()"
        " WHERE id = $1 AND ownership_token = $2 AND lease_until > now()",
        job.id,
        job.token,
        lease_seconds,
    )
    return result.endswith(" 1")


async def save_checkpoint(pool: asyncpg.Pool, job: Job, phase: str, data: dict[str, Any]) -> bool:
    """Keep a validated model output so a restart resumes without calling the model again."""
    job.checkpoint[phase] = data
    result: str = await pool.execute(
        "UPDATE memory_jobs SET checkpoint = checkpoint || jsonb_build_object($3::text, $4::jsonb),"
        " updated_at = now() WHERE id = $1 AND ownership_token = $2 AND lease_until > now()",
        job.id,
        job.token,
        phase,
        json.dumps(data, ensure_ascii=False),
    )
    return result.endswith(" 1")


async def advance(conn: asyncpg.Connection, job: Job, phase: Phase) -> None:
    """Move an owned job on (inside the committing transaction); done releases the lease."""
    release = phase in ("done", "failed", "stopped")
    await conn.execute(
        "UPDATE memory_jobs SET phase = $2, updated_at = now(),"
        " lease_until = CASE WHEN $3 THEN NULL ELSE lease_until END,"
        " ownership_token = CASE WHEN $3 THEN NULL ELSE ownership_token END"
        " WHERE id = $1",
        job.id,
        phase,
        release,
    )
    job.phase = phase


async def back_off(
    pool: asyncpg.Pool, job: Job, error: str, *, backoff_seconds: float, max_claims: int
) -> Phase:
    """A failed attempt: retry after the backoff, or fail for good at the claim limit."""
    phase: Phase = "failed" if job.claims >= max_claims else job.phase
    await pool.execute(
        "UPDATE memory_jobs SET phase = $3, last_error = $4, lease_until = NULL,"
        " ownership_token = NULL, next_attempt_at = now() + make_interval(secs => $5),"
        " updated_at = now() WHERE id = $1 AND ownership_token = $2",
        job.id,
        job.token,
        phase,
        error[:1000],
        backoff_seconds,
    )
    return phase


async def stop(pool: asyncpg.Pool | asyncpg.Connection, job: Job, reason: str) -> None:
    """End a job without retry: unknown provider outcome, stale configuration, changed input."""
    await pool.execute(
        "UPDATE memory_jobs SET phase = 'stopped', last_error = $3, lease_until = NULL,"
        " ownership_token = NULL, updated_at = now() WHERE id = $1 AND ownership_token = $2",
        job.id,
        job.token,
        reason[:1000],
    )
    job.phase = "stopped"
