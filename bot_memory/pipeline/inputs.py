"""What a job may still work on: checked before every model call and again at commit."""

from __future__ import annotations

import json
from datetime import datetime

import asyncpg

from bot_memory.storage import Job, StopKind


class SourcesChanged(RuntimeError):
    """The job's input no longer holds (edited, removed, forgotten, memory off): stop it."""

    def __init__(self, message: str, kind: StopKind = "changed") -> None:
        super().__init__(message)
        self.kind: StopKind = kind


async def check_scope_input(
    conn: asyncpg.Connection | asyncpg.Pool, job: Job, at: datetime
) -> None:
    """Raise SourcesChanged unless memory is on in the scope, the bot is there, and every
    snapshot source is retained (its retention boundary still ahead of `at`, the time of the
    check, not of the tick's start), unedited and not forgotten.

    Before every model call, so nothing forgotten, switched off, erased or past its boundary is
    sent to the provider, and again under the workspace lock at commit, so nothing that changed
    during the call is written.
    """
    problem = await conn.fetchrow(
        "SELECT kind, problem FROM bm_input_problem_v2($1, $2, $3::jsonb, $4)",
        job.workspace,
        job.scope_key,
        snapshot_sources(job),
        at,
    )
    if problem is not None and problem["problem"] is not None:
        raise SourcesChanged(problem["problem"], problem["kind"])


def snapshot_sources(job: Job) -> str:
    """The job's sources as the server-side check reads them (in snapshot order)."""
    return json.dumps([{"message_id": s.message_id, "hash": s.hash} for s in job.snapshot.sources])
