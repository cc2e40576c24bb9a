"""How far behind the pipeline is, for the metrics: jobs by state and the age of the oldest
due job or scope, in one statement (read when the metrics are scraped, not per message)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import asyncpg

# Jobs by phase (finished ones stay a week: finished_job_retention_days), and the oldest due
# job (not finished, its next attempt due) and scope (its wake-up due), by the indexes on them.
_BACKLOG = """
SELECT
    (SELECT coalesce(jsonb_object_agg(phase, n), '{}'::jsonb)
       FROM (SELECT phase, count(*) AS n FROM memory_jobs GROUP BY phase) AS j) AS jobs,
    (SELECT extract(epoch FROM now() - min(next_attempt_at)) FROM memory_jobs
      WHERE phase IN ('extract', 'consolidate') AND next_attempt_at <= now()) AS job_lag,
    (SELECT extract(epoch FROM now() - min(due_at)) FROM memory_scopes
      WHERE due_at IS NOT NULL AND due_at <= now()) AS scope_lag
"""


@dataclass(frozen=True)
class Backlog:
    jobs: dict[str, int]  # phase -> jobs
    lag_seconds: float  # age of the oldest due job or scope; 0 when none is due


async def backlog(pool: asyncpg.Pool, *, timeout: float) -> Backlog:  # noqa: ASYNC109
    row = await pool.fetchrow(_BACKLOG, timeout=timeout)
    jobs = row["jobs"]
    if isinstance(jobs, str):
        jobs = json.loads(jobs)
    lags = [float(v) for v in (row["job_lag"], row["scope_lag"]) if v is not None]
    return Backlog(jobs={k: int(v) for k, v in jobs.items()}, lag_seconds=max([0.0, *lags]))
