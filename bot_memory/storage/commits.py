"""The commits that are one server-side function each: the function takes the workspace lock
itself, checks what the commit depends on (the job still this worker's, its input unchanged,
what it carries and replaces still there) and writes the change with the scope's recall row,
in one statement."""

from __future__ import annotations

from datetime import datetime

from bot_memory.records import MemoryRecord
from bot_memory.storage.handle import Handle
from bot_memory.storage.jobs import Job, snapshot_sources
from bot_memory.storage.workspace import Limits, recall_limits
from bot_memory.terms import record_vector


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
        row = await self._on.fetchrow(
            "SELECT * FROM bm_commit_extraction_v3($1, $2, $3, $4, $5::jsonb, $6, $7::jsonb,"
            " $8::text[], $9::text[], $10, $11::tsvector, $12, $13, $14, $15, $16)",
            job.workspace,
            job.scope_key,
            job.id,
            job.token,
            snapshot_sources(job),
            job.snapshot.through_request,
            None if record is None else record.model_dump_json(),
            carried,
            replaces,
            None if record is None else record.fingerprint,
            None if record is None else record_vector(record.title, record.summary),
            at,
            self._limits.max_records,
            self._limits.max_share,
            *recall_limits(self._limits),
        )
        assert row is not None
        return row["outcome"], row["detail"]
