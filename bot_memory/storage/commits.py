"""The commits that are one server-side function each: the function takes the workspace lock
itself, checks what the commit depends on (the job still this worker's, its input unchanged,
what it carries and replaces still there) and writes the change with the scope's recall row,
in one statement."""

from __future__ import annotations

import json
from datetime import datetime

import asyncpg

from bot_memory.records import MemoryRecord
from bot_memory.scopes import Scope
from bot_memory.storage.documents import dumps, record_document
from bot_memory.storage.handle import Handle
from bot_memory.storage.jobs import Job, snapshot_sources
from bot_memory.storage.limits import Limits, limits_document
from bot_memory.storage.workspace import WorkspaceGone

UNDECIDED = "BM001"  # raised by bm_forget_at_once_commit: what it read needs the application


class Commits:
    def __init__(self, on: Handle, limits: Limits) -> None:
        self._on = on
        self._limits = limits

    async def extraction(
        self,
        job: Job,
        record: MemoryRecord | None,
        *,
        carried: list[str],
        replaces: list[str],
        at: datetime,
    ) -> tuple[str, str | None]:
        """An extraction's record (None: the batch held nothing to keep), the memories it
        carried facts from (`carried`, whose sources it inherits) and the records it replaces,
        checked against the sources' retention at `at`. Returns (outcome, detail): "done",
        "gone" (the workspace), "lost" (ownership), "cut_off" (an earlier call may have been
        billed) or "stopped" (detail: why)."""
        commit = {
            "workspace": job.workspace,
            "scope_key": job.scope_key,
            "job": {
                "id": job.id,
                "token": str(job.token),
                "sources": json.loads(snapshot_sources(job)),
                "through_request": job.snapshot.through_request,
            },
            "carried": carried,
            "replaces": replaces,
            "at": at,
            "limits": limits_document(self._limits),
        }
        if record is not None:
            commit |= record_document(job.workspace, record, self._limits)
        row = await self._on.fetchrow(
            "SELECT * FROM bm_extraction_commit($1::jsonb)", dumps(commit)
        )
        assert row is not None
        return row["outcome"], row["detail"]

    async def remember(self, scope: Scope, record: MemoryRecord, now: datetime) -> str:
        """A note, under the workspace lock, unless the bot left the chat or memory is off
        there, and only while its source is the message's text, retained at `now`. Returns the
        outcome: "remembered", or why not ("gone" raises WorkspaceGone)."""
        commit = record_document(scope.workspace, record, self._limits) | {
            "scope": {
                "scope_key": scope.key,
                "kind": scope.kind,
                "bot_id": scope.bot_id,
                "chat_id": scope.chat_id,
                "user_id": scope.user_id,
                "topic_id": scope.topic_id,
            },
            "at": now,
        }
        outcome: str = await self._on.fetchval("SELECT bm_note_commit($1::jsonb)", dumps(commit))
        if outcome == "gone":
            raise WorkspaceGone(f"workspace {scope.workspace!r} does not exist")
        return outcome

    async def forget_at_once(
        self, scope: Scope, record_id: str, asker: int | None, now: datetime
    ) -> tuple[str, list[str]] | None:
        """Forget a record in one statement, when no text has to be read to decide (no answer
        given with it, nothing said since the last extraction): ("forgotten", the records that
        went) or ("nothing", []); None when text must be read, and nothing was changed."""
        try:
            commit = {
                "workspace": scope.workspace,
                "scope_key": scope.key,
                "ids": [record_id],
                "request_id": None,
                "asker": asker,
                "rearm_at": now,
                "limits": limits_document(self._limits),
            }
            row = await self._on.fetchrow(
                "SELECT * FROM bm_forget_at_once_commit($1::jsonb)", dumps(commit)
            )
        except asyncpg.PostgresError as exc:
            if exc.sqlstate == UNDECIDED:
                return None
            raise
        assert row is not None
        if row["outcome"] == "gone":
            raise WorkspaceGone(f"workspace {scope.workspace!r} does not exist")
        if row["outcome"] == "nothing":
            return "nothing", []
        if row["outcome"] == "forgotten":
            return "forgotten", list(row["removed"])
        return None
