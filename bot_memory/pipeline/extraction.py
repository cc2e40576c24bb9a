"""Phase 1: one tool-free call turns a source batch into a titled, source-linked summary."""

from __future__ import annotations

from datetime import datetime

import structlog

from bot_memory.pipeline import jobs
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.jobs import Job
from bot_memory.pipeline.prompts import ExtractionOutput, extraction_messages, validate_extraction
from bot_memory.redaction import redact
from bot_memory.state import (
    MemoryRecord,
    SourceRef,
    WorkspaceState,
    add_record,
    content_hash,
    new_memory_id,
)
from bot_memory.store import lock_workspace, write_workspace

log = structlog.get_logger(__name__)

EXISTING_SUMMARY_CHARS = 400  # existing memories accompany a batch in brief


class SourcesChanged(RuntimeError):
    pass


async def run_extraction(ctx: PipelineContext, job: Job, now: datetime) -> None:
    snap = job.snapshot
    texts = await ctx.store.source_texts(job.workspace, [s.message_id for s in snap.sources])
    _check_sources(job, texts)
    out = _checkpointed(job)
    if out is None:
        raw_state = await ctx.pool.fetchval(
            "SELECT state FROM workspaces WHERE id = $1", job.workspace
        )
        state = WorkspaceState.model_validate_json(raw_state or "{}")
        existing = [
            {"id": r.id, "title": r.title, "summary": r.summary[:EXISTING_SUMMARY_CHARS]}
            for r in state.valid_records(job.scope_key)[: ctx.settings.existing_memory_in_batch]
        ]
        sources = [
            {
                "id": s.id,
                "role": s.role,
                "speaker_id": s.speaker_id,
                "thread_id": s.thread_id,
                "date": s.created_at.isoformat(timespec="seconds"),
                "text": texts[s.message_id],
            }
            for s in snap.sources
        ]
        messages = extraction_messages(
            scope_kind=snap.scope_kind, sources=sources, existing=existing
        )
        out = await ctx.charged_call(job, "memory_extract", messages, ExtractionOutput)
        out = validate_extraction(
            out,
            allowed_sources={s.id for s in snap.sources},
            max_bytes=ctx.settings.summary_max_bytes,
        )
        out = ExtractionOutput(
            title=redact(out.title), summary=redact(out.summary), source_ids=out.source_ids
        )
        if not await jobs.save_checkpoint(ctx.pool, job, "extract", out.model_dump()):
            log.warning("pipeline.lost_ownership", job=job.id, phase="extract")
            return
    await _commit(ctx, job, out, now)


def _checkpointed(job: Job) -> ExtractionOutput | None:
    saved = job.checkpoint.get("extract")
    return None if saved is None else ExtractionOutput.model_validate(saved)


def _check_sources(job: Job, texts: dict[int, str]) -> None:
    for s in job.snapshot.sources:
        text = texts.get(s.message_id)
        if text is None or content_hash(text) != s.hash:
            raise SourcesChanged(f"source {s.id} was edited or removed after planning")


async def _commit(ctx: PipelineContext, job: Job, out: ExtractionOutput, now: datetime) -> None:
    snap = job.snapshot
    async with ctx.pool.acquire() as conn, conn.transaction():
        if not await jobs.hold(conn, job):
            log.warning("pipeline.lost_ownership", job=job.id, phase="extract-commit")
            return
        tx = await lock_workspace(conn, job.workspace)
        scope = tx.state.scope(job.scope_key)
        rows = await conn.fetch(
            "SELECT id, content_hash FROM messages WHERE id = ANY($1::bigint[])"
            " AND deleted_at IS NULL",
            [s.message_id for s in snap.sources],
        )
        current = {r["id"]: r["content_hash"] for r in rows}
        if any(current.get(s.message_id) != s.hash for s in snap.sources):
            await jobs.stop(conn, job, "sources changed during extraction")
            return
        if any(s.id in scope.tombstones for s in snap.sources):
            await jobs.stop(conn, job, "a source was forgotten during extraction")
            return
        if not scope.enabled:
            await jobs.stop(conn, job, "memory was turned off in this scope")
            return
        record = None
        if not out.is_empty:
            users = [s for s in snap.sources if s.role == "user"]
            record = MemoryRecord(
                id=new_memory_id(),
                scope_key=job.scope_key,
                origin="extracted",
                title=out.title.strip(),
                summary=out.summary.strip(),
                speaker_ids=sorted({s.speaker_id for s in users}),
                thread_ids=sorted({s.thread_id for s in snap.sources}),
                sources=[
                    SourceRef(
                        id=s.id,
                        hash=s.hash,
                        speaker_id=s.speaker_id,
                        thread_id=s.thread_id,
                        role=s.role,
                    )
                    for s in snap.sources
                ],
                cited=out.source_ids,
                created_at=now,
                last_used_at=now,
            )
            add_record(tx.state, record)
        scope.advance(snap.through_request)
        tx.touch(job.scope_key)
        await jobs.advance(conn, job, "consolidate" if record else "done")
        await write_workspace(tx, directory_max=ctx.settings.pending_directory_max)
    log.info(
        "pipeline.extracted",
        job=job.id,
        scope=job.scope_key,
        memory=record.id if record else None,
        empty=record is None,
    )
