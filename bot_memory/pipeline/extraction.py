"""Phase 1: one tool-free call turns a source batch into a titled, source-linked summary."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot_memory.logs import get_logger
from bot_memory.pipeline.context import PipelineContext, job_lost
from bot_memory.pipeline.corrections import may_replace
from bot_memory.pipeline.inputs import SourcesChanged, check_scope_input
from bot_memory.pipeline.prompts import (
    ExtractionOutput,
    extraction_messages,
    source_entries,
    source_entry_bytes,
    validate_extraction,
)
from bot_memory.records import MemoryRecord, SourceRef, new_memory_id
from bot_memory.redaction import redact
from bot_memory.storage import (
    Job,
    SnapshotSource,
    WorkspaceGone,
)

log = get_logger(__name__)


async def run_extraction(
    ctx: PipelineContext,
    job: Job,
    now: datetime,
    *,
    clock: Callable[[], datetime] | None = None,
) -> None:
    """`now` dates the job's record (the tick's start); `clock` tells the time of each check
    (before the call, the texts read for it, the commit): a source whose retention boundary
    passes during the tick is neither sent nor kept. Without one, every check is at `now`."""
    snap = job.snapshot
    at = clock or (lambda: now)
    out = _checkpointed(job)
    if out is None:
        checked = at()
        await check_scope_input(ctx.store, job, checked)
        texts = await ctx.store.source_texts(job.workspace, sorted(snap.message_ids), at=checked)
        missing = sorted(snap.message_ids - set(texts))
        if missing:  # erased or past its boundary since the check
            raise SourcesChanged(f"source m{missing[0]} was removed or expired")
        sources = source_entries(snap.sources, texts)
        # Existing memories come along while they fit under the ceiling with the sources:
        # the request is never more than the ceiling plus the fixed prompt.
        room = ctx.settings.batch_max_bytes - sum(source_entry_bytes(e) for e in sources)
        existing, briefs = [], []
        shown_in_part: set[str] = set()
        brief_chars = ctx.settings.existing_memory_summary_chars
        for record in await _existing(ctx, job, checked):
            brief: dict[str, object] = {
                "id": record.id,
                "title": redact(record.title),
                "summary": redact(record.summary[:brief_chars]),
                "speaker_ids": record.speaker_ids,
            }
            if len(record.summary) > brief_chars:
                brief["shown_in_part"] = True  # the prompt: never replaced
                shown_in_part.add(record.id)
            room -= source_entry_bytes(brief)
            if room < 0:
                break
            existing.append(record)
            briefs.append(brief)
        messages = extraction_messages(scope_kind=snap.scope_kind, sources=sources, existing=briefs)

        def valid(answer: ExtractionOutput) -> ExtractionOutput:
            answer = validate_extraction(
                answer,
                allowed_sources={s.id for s in snap.sources},
                allowed_memories={r.id for r in existing},
                max_bytes=ctx.settings.summary_max_bytes,
            )
            return answer.model_copy(
                update={
                    "title": redact(answer.title),
                    "summary": redact(answer.summary),
                    "replaces": _replacing(job, answer, existing, shown_in_part)
                    if ctx.settings.corrections
                    else [],
                }
            )

        out = await ctx.charged_call(
            job, "memory_extract", messages, ExtractionOutput, validate=valid, phase="extract"
        )
    await _commit(ctx, job, out, now, at())


async def _existing(ctx: PipelineContext, job: Job, now: datetime) -> list[MemoryRecord]:
    """Validated memories that accompany the batch (newest first, available now, not
    replaced: what holds is what a batch may carry facts from, or correct)."""
    return await ctx.store.current_records(
        job.workspace, job.scope_key, now, limit=ctx.settings.existing_memory_in_batch
    )


def _replacing(
    job: Job, answer: ExtractionOutput, given: list[MemoryRecord], shown_in_part: set[str]
) -> list[str]:
    """What the answer may replace (pipeline/corrections.py); the rest is kept, logged."""
    cited = set(answer.source_ids)
    speakers = {s.speaker_id for s in job.snapshot.sources if s.role == "user" and s.id in cited}
    decided = may_replace(
        answer.replaces,
        {r.id: r for r in given},
        shown_in_part=shown_in_part,
        speakers=speakers,
    )
    if decided.partial or decided.others:
        log.info(
            "pipeline.replace_kept",
            job=job.id,
            shown_in_part=decided.partial,
            others_statements=decided.others,
        )
    return decided.kept


def _checkpointed(job: Job) -> ExtractionOutput | None:
    saved = job.checkpoint.get("extract")
    return None if saved is None else ExtractionOutput.model_validate(saved)


async def _commit(
    ctx: PipelineContext, job: Job, out: ExtractionOutput, now: datetime, at: datetime
) -> None:
    """One statement (`Commits.extraction`): under the workspace lock, if the job is still
    this worker's, no earlier claim's call of it was cut off (the ledger's check, made here
    for a job resumed from its checkpoint) and its input still holds, the record (inheriting
    the sources of the memories it carried facts from), the scope's watermark, the job done,
    the scope looked at again for later batches, the records its answer replaces marked
    replaced by it, and the recall row. Its scope's index is pending: the planner plans the
    consolidation, in this tick. `at`: the commit's time, which the sources' retention
    boundaries are checked against."""
    record = None if out.is_empty else _record(job, out, now)
    outcome, detail = await ctx.store.commits.extraction(
        job,
        record,
        carried=out.memory_ids,
        replaces=[] if record is None else out.replaces,
        at=at,
    )
    if outcome == "gone":
        raise WorkspaceGone(f"workspace {job.workspace!r} does not exist")
    if outcome == "lost":
        await job_lost(ctx.store.jobs, job, "extract-commit")
        return
    if outcome == "cut_off":  # an earlier claim's call may have been billed
        job.phase = "stopped"
        log.warning("pipeline.job_stopped", job=job.id, reason="call cut off earlier")
        return
    if outcome == "stopped":
        job.phase = "stopped"
        log.info("pipeline.job_stopped", job=job.id, reason=detail)
        return
    job.phase = "done"
    log.info(
        "pipeline.extracted",
        job=job.id,
        scope=job.scope_key,
        memory=record.id if record else None,
        empty=record is None,
        replaces=len(out.replaces) if record else 0,
    )


def _record(job: Job, out: ExtractionOutput, now: datetime) -> MemoryRecord:
    """The new record, depending on its batch; at commit it also comes to depend on everything
    the memories it carried facts from depend on (tracked by ID and hash, never resent), and
    to be derived from them."""
    snap = job.snapshot
    users = [s for s in snap.sources if s.role == "user"]
    return MemoryRecord(
        id=new_memory_id(),
        scope_key=job.scope_key,
        origin="extracted",
        title=out.title.strip(),
        summary=out.summary.strip(),
        speaker_ids=sorted({s.speaker_id for s in users}),
        thread_ids=sorted({s.thread_id for s in snap.sources}),
        sources=[
            SourceRef(
                message_id=s.message_id,
                hash=s.hash,
                speaker_id=s.speaker_id,
                thread_id=s.thread_id,
                role=s.role,
            )
            for s in sorted({s.message_id: s for s in snap.sources}.values(), key=_message_id)
        ],
        cited=out.source_ids,
        # Dated by its conversation, not by when a worker got to it: a late worker's records
        # are a punctual one's, in the same order.
        created_at=min(now, max(s.created_at for s in snap.sources)),
        last_used_at=now,  # available_until: the earliest boundary of its sources, on insert
    )


def _message_id(source: SnapshotSource) -> int:
    return source.message_id
