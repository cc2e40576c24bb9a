"""What a job may still work on: checked before every model call and again at commit."""

from __future__ import annotations

import asyncpg

from bot_memory.pipeline.jobs import Job, StopKind


class SourcesChanged(RuntimeError):
    """The job's input no longer holds (edited, removed, forgotten, memory off): stop it."""

    def __init__(self, message: str, kind: StopKind = "changed") -> None:
        super().__init__(message)
        self.kind: StopKind = kind


async def check_scope_input(conn: asyncpg.Connection | asyncpg.Pool, job: Job) -> None:
    """Raise SourcesChanged unless memory is on in the scope, the bot is there, and every
    snapshot source is retained, unedited and not forgotten.

    Before every model call, so nothing forgotten, switched off or erased is sent to the
    provider, and again under the workspace lock at commit, so nothing that changed during
    the call is written.
    """
    scope = await conn.fetchrow(
        "SELECT enabled, suspended FROM memory_scopes WHERE workspace_id = $1 AND scope_key = $2",
        job.workspace,
        job.scope_key,
    )
    if scope is None:
        raise SourcesChanged("the scope is gone", "gone")
    if not scope["enabled"]:
        raise SourcesChanged("memory was turned off in this scope", "off")
    if scope["suspended"]:
        raise SourcesChanged("the bot is no longer in this chat", "off")
    ids = sorted(job.snapshot.message_ids)
    if not ids:
        return
    rows = await conn.fetch(
        "SELECT m.id, m.content_hash, m.text IS NOT NULL AS kept, t.message_id IS NOT NULL"
        " AS forgotten FROM messages m LEFT JOIN tombstones t ON t.workspace_id = m.workspace_id"
        " AND t.scope_key = $2 AND t.message_id = m.id"
        " WHERE m.workspace_id = $1 AND m.id = ANY($3::bigint[])",
        job.workspace,
        job.scope_key,
        ids,
    )
    found = {r["id"]: r for r in rows}
    for s in job.snapshot.sources:
        row = found.get(s.message_id)
        if row is None or not row["kept"]:
            raise SourcesChanged(f"source {s.id} was removed or expired")
        if row["forgotten"]:
            raise SourcesChanged(f"source {s.id} was forgotten")
        if row["content_hash"] != s.hash:
            raise SourcesChanged(f"source {s.id} was edited")
