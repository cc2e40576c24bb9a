"""Memory: the one service object a host bot holds.

    async with await Memory.open(MemorySettings()) as memory:   # DATABASE_URL, or embedded
        ...

Ingress records through it, the worker runs under it, recall and tools are reached from it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from bot_memory import control
from bot_memory.access import (
    Access,
    CanRead,
    ChatEvents,
    Gate,
    Membership,
    MembershipCache,
    Requester,
    tenancy,
)
from bot_memory.agent import ReferenceAgent, ToolContext, ToolExecutor, Turn, TurnParts
from bot_memory.billing import warn_if_unpriced
from bot_memory.control import ControlResult
from bot_memory.deprecation import warn_deprecated
from bot_memory.ingress import MemoryUnavailable as MemoryUnavailable  # raised by record
from bot_memory.ingress import Recorder, RequestCloser, storable
from bot_memory.intents import MemoryRequest
from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.models import ChatModel, build_model
from bot_memory.pipeline import (
    Pipeline,
    PipelineContext,
    RequestsFirst,
    Worker,
    health,
    pipeline_settings,
    read_backlog,
)
from bot_memory.redaction import redacted_spans
from bot_memory.retention import After, Trace, find_traces
from bot_memory.retention import sweeps as retention
from bot_memory.retrieval import RecallContext, Recaller
from bot_memory.scopes import Scope
from bot_memory.settings import MemorySettings
from bot_memory.storage import (
    Closing,
    Database,
    Limits,
    RequestStatus,
    SourceMessage,
    Store,
)

log = get_logger(__name__)


def _moved(area: str, name: str) -> Any:
    """A method that moved to `memory.<area>`: still reached here for one release, warned."""

    def get(self: Memory) -> Any:
        warn_deprecated(f"Memory.{name}", f"use memory.{area}.{name}")
        return getattr(getattr(self, area), name)

    return property(get)


@dataclass
class Memory:
    settings: MemorySettings
    db: Database
    store: Store
    model: ChatModel
    pipeline: Pipeline
    worker: Worker
    tools: ToolExecutor
    agent: ReferenceAgent
    access: Access
    closer: RequestCloser
    requests_first: RequestsFirst
    chats: ChatEvents
    recaller: Recaller
    _recorder: Recorder = field(init=False)
    _closed: bool = False
    # Bumped by every purge: what adapters cached about chats (their auto-delete timers) was
    # deleted with the workspace and must be asked for again.
    purges: int = 0
    # This Memory's own Prometheus registry (off without prometheus-client): docs/operating.md.
    metrics: Metrics = field(default_factory=lambda: Metrics(enabled=False))

    @property
    def _turn_parts(self) -> TurnParts:
        return TurnParts(
            store=self.store,
            recaller=self.recaller,
            tools=self.tools,
            model=self.model,
            metrics=self.metrics,
            message_max_bytes=self.settings.agent_message_max_bytes,
        )

    def __post_init__(self) -> None:
        self._recorder = Recorder(self.store, self.settings, self.metrics)

    @classmethod
    async def open(
        cls,
        settings: MemorySettings | None = None,
        *,
        model: ChatModel | None = None,
        can_read: CanRead | None = None,
    ) -> Memory:
        """Connect (or start the embedded server), migrate, and get ready.

        `model`: bring your own ChatModel; default: LLM_* settings, else the offline model.
        `can_read(requester, item) -> bool`: a read grant checked for every record and message
        a request could be shown (default: everyone who may read the scope may read it all).
        """
        settings = settings or MemorySettings()
        db = await Database.open(settings)
        metrics = Metrics(enabled=settings.metrics_enabled)
        db.watch_pools(metrics)
        metrics.watch_counter("redactions", redacted_spans)
        limits = Limits.from_settings(settings)
        store = db.store(limits)
        await tenancy.adopt_legacy(store, single_workspace=settings.workspace)
        await store.rebuild_missing_recall()
        model = model or build_model(settings)
        access = Access(
            admin_user_ids=settings.admin_user_ids,
            cache=MembershipCache(ttl_seconds=settings.member_cache_seconds),
            can_read=can_read,
        )
        warn_if_unpriced(model, settings.workspace_budget_usd)
        # The worker in this process steps aside while messages are handled (RequestsFirst).
        requests_first = RequestsFirst(settings.worker_yield_max_seconds)
        worker_store = db.worker_store(limits, wait=requests_first.step_aside)
        pipeline = Pipeline(
            PipelineContext(store=worker_store, model=model, settings=settings, metrics=metrics)
        )
        tools = ToolExecutor(store, model, settings, access, metrics)
        log.info(
            "memory.opened",
            embedded=db.embedded is not None,
            provider=model.provider,
            model=model.model,
            workspace=settings.workspace or "per chat",
        )
        return cls(
            settings=settings,
            db=db,
            store=store,
            model=model,
            pipeline=pipeline,
            worker=Worker(pipeline),
            tools=tools,
            agent=ReferenceAgent(store, model, settings, metrics),
            access=access,
            requests_first=requests_first,
            closer=RequestCloser(
                store,
                idle_seconds=settings.idle_window_seconds,
                linger_seconds=settings.request_close_linger_seconds,
                metrics=metrics,
            ),
            metrics=metrics,
            chats=ChatEvents(store, access, settings.workspace),
            recaller=Recaller(store, settings, metrics),
        )

    async def close(self) -> None:
        """Stop the worker (a call in flight may finish), close the model client and the
        database. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        await self.closer.flush()
        self._recorder.outage.cancel()
        if self.worker.started:
            await self.worker.stop()  # removes its row in worker_ticks when it stops cleanly
        else:  # ticks run directly (a host's or a test's) leave a row too: this is a clean end
            with contextlib.suppress(Exception):
                await self.store.workers.stopped(self.pipeline.worker_id)
        await self.model.aclose()
        await self.db.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- metrics and health ------------------------------------------------------------------

    async def scrape(self) -> bytes:
        """The metrics in Prometheus' text format, with the gauges that need the database (jobs
        by state, pipeline lag) read now, in one statement. Raises metrics.MetricsUnavailable
        without prometheus-client (or with BOT_MEMORY_METRICS_ENABLED=false)."""
        if self.metrics.enabled:
            await read_backlog(
                self.store, timeout=self.settings.health_timeout_seconds, metrics=self.metrics
            )
        return self.metrics.render()

    async def health(self) -> tuple[bool, dict[str, Any]]:
        """(healthy?, details) for /healthz: the database answers SELECT 1 within
        health_timeout_seconds, and a worker ticked recently (this process's, or any sharing
        the database) -- within the window `bot-memory status` calls a worker live."""
        return await health(
            self.store,
            self.pipeline,
            self.worker,
            timeout=self.settings.health_timeout_seconds,
            metrics=self.metrics,
        )

    # --- tenancy ------------------------------------------------------------------------------

    # Moved to `memory.chats` (access/chats.py): kept here for one release.
    default_workspace = _moved("chats", "default_workspace")
    chat = _moved("chats", "chat")
    bot_membership = _moved("chats", "bot_membership")
    migrate_chat = _moved("chats", "migrate_chat")
    auto_delete_changed = _moved("chats", "auto_delete_changed")

    async def purge_workspace(self, workspace: str) -> bool:
        """Delete everything a workspace holds (the ledger keeps amounts, no text)."""
        try:
            return await retention.purge_workspace(self.store, workspace)
        finally:
            self.purges += 1

    async def find_traces(
        self,
        workspace: str,
        *,
        texts: list[str] = (),  # type: ignore[assignment]
        source_ids: list[str] = (),  # type: ignore[assignment]
        after: After = "erase",
    ) -> list[Trace]:
        """Every place in the workspace a text or source ID still appears (retention.verify)."""
        return await find_traces(
            self.store, workspace, texts=texts, source_ids=source_ids, after=after
        )

    async def remove_messages(
        self, chat_id: int, message_ids: list[int], *, bot_id: int | None = None
    ) -> retention.SweepReport:
        """The host learned these Telegram messages were deleted: erase them and everything
        derived from them now."""
        return await retention.remove_messages(
            self.store,
            chat_id=chat_id,
            telegram_message_ids=message_ids,
            bot_id=bot_id,
        )

    async def set_retention(
        self,
        chat_id: int,
        message_ids: list[int],
        until: datetime,
        *,
        bot_id: int | None = None,
        now: datetime | None = None,
    ) -> retention.SweepReport:
        """Keep these Telegram messages (and what was derived from them) no longer than
        `until`. Never extends a boundary; one already past erases at once."""
        return await retention.set_retention(
            self.store,
            chat_id=chat_id,
            telegram_message_ids=message_ids,
            until=until,
            bot_id=bot_id,
            now=now or datetime.now(UTC),
        )

    async def privacy_sweep(
        self,
        *,
        source_ids: list[str] = (),  # type: ignore[assignment]
        user_id: int | None = None,
        chat_id: int | None = None,
        bot_id: int | None = None,
    ) -> dict[str, int]:
        """Erase by source IDs, by user, or by chat, and everything derived, transitively.
        Returns what it touched, by kind and count."""
        report = await retention.privacy_sweep(
            self.store,
            source_ids=source_ids,
            user_id=user_id,
            chat_id=chat_id,
            bot_id=bot_id,
        )
        return report.as_dict()

    # --- ingress ----------------------------------------------------------------------------

    async def record(
        self,
        scope: Scope,
        *,
        text: str,
        speaker_id: int,
        thread_id: int = 0,
        telegram_message_id: int | None = None,
        language: str | None = None,
        sent_at: datetime | None = None,
    ) -> SourceMessage | None:
        """Record a directed message and open its interactive request (one statement).

        None when this Telegram message was recorded before (a redelivered update). While
        PostgreSQL is away the message is held in memory (up to BOT_MEMORY_INGRESS_BUFFER_MAX,
        then skipped and logged), recorded once the database is back, and MemoryUnavailable is
        raised so the caller can answer without memory.
        """
        return await self._recorder.record(
            scope,
            text=text,
            speaker_id=speaker_id,
            thread_id=thread_id,
            telegram_message_id=telegram_message_id,
            language=language,
            sent_at=sent_at,
        )

    async def record_edit(
        self, chat_id: int, telegram_message_id: int, text: str, *, bot_id: int
    ) -> list[str]:
        """A recorded message's text or caption was edited: memories built on it become
        unavailable. Returns the source IDs that changed."""
        return await retention.apply_edit(
            self.store,
            bot_id=bot_id,
            chat_id=chat_id,
            telegram_message_id=telegram_message_id,
            text=storable(text),
        )

    async def serve_bot(self, bot_id: int) -> None:
        """Record that this bot's memory calls this process's model (setup() does, at start):
        its jobs wait for a worker that calls it, and a worker on another model or server
        leaves them (`bot-memory status` says which worker lacks what)."""
        await self.store.jobs.pin_bot(
            bot_id, self.pipeline.ctx.pin, pipeline_settings(self.settings)
        )

    # --- requests ---------------------------------------------------------------------------

    async def begin(
        self, source: SourceMessage, *, kind: str = "chat", keep_open: bool = False
    ) -> None:
        """Mark the request running, pinned to the current provider and model."""
        await self.store.requests.start(
            source,
            provider=self.model.provider,
            model=self.model.model,
            kind=kind,
            keep_open=keep_open,
        )

    async def finish(
        self,
        source: SourceMessage,
        *,
        status: RequestStatus,
        answer_text: str | None = None,
        answer_telegram_id: int | None = None,
        bot_id: int | None = None,
        error: str | None = None,
        now: datetime | None = None,
        kind: str | None = None,
    ) -> bool:
        """Close the request, once: a second call changes nothing and returns False.

        With the aiogram adapter this happens by itself when the handler returns; call it for
        requests a handler kept open (flags={"memory": "keep_open"})."""
        if self.closer.closed_here(source.request_id):
            return False  # closed by this process already: no statement to say so again
        closed = await self.store.requests.finish(
            source,
            status=status,
            now=now or datetime.now(UTC),
            idle_seconds=self.settings.idle_window_seconds,
            answer_text=None if answer_text is None else storable(answer_text),
            answer_telegram_id=answer_telegram_id,
            bot_id=bot_id,
            error=error,
            kind=kind,
        )
        self.closer.note_closed(source.request_id)
        if closed:
            self.metrics.request_closed(status)
        return closed

    def close_later(
        self,
        source: SourceMessage,
        *,
        status: RequestStatus,
        error: str | None = None,
        kind: str | None = None,
        now: datetime | None = None,
    ) -> None:
        """Close a request that has no answer to keep (failed, unanswered), soon and together
        with others, in one statement; `flush()` waits for it. Closing is once, as `finish`."""
        if status == "succeeded":
            raise ValueError("a succeeded request keeps its answer: use finish()")
        if self.closer.closed_here(source.request_id):
            return  # finished by this process already
        at = now or datetime.now(UTC)
        closing = Closing(
            source.request_id, status, at, None if error is None else storable(error), kind
        )
        self.closer.close_later(closing)
        self.metrics.request_closed(status)

    async def flush(self) -> None:
        """Wait until every request closed with close_later() is written."""
        await self.closer.flush()

    # --- recall and control -----------------------------------------------------------------

    def gate(self, scope: Scope, requester: Requester, lookup: object = None) -> Gate:
        return Gate(self.access, scope, requester, lookup)  # type: ignore[arg-type]

    async def recall(
        self,
        scope: Scope,
        *,
        gate: Gate | None = None,
        now: datetime | None = None,
        message: str | None = None,
    ) -> RecallContext:
        """The memory block for a new request in this scope, for this requester, now; with
        `message` (the current human message's text) also the records that best match it."""
        return await self.recaller.recall(scope, gate=gate, now=now, message=message)

    def turn(
        self,
        source: SourceMessage,
        *,
        gate: Gate | None = None,
        quoted: bool = False,
        forwarded: bool = False,
        kind: str = "chat",
    ) -> Turn:
        """The turn of an interactive request. Nothing happens until it is used: its first
        use pins the model and freezes the request's recall."""
        context = ToolContext(source=source, quoted=quoted, forwarded=forwarded, gate=gate)
        return Turn(self._turn_parts, context=context, kind=kind)

    async def still_available(self, scope: Scope, memory_ids: list[str], now: datetime) -> set[str]:
        """Deprecated: `memory.store.available_of(scope.workspace, memory_ids, now)`."""
        warn_deprecated("Memory.still_available", "use memory.store.available_of")
        return await self.store.available_of(scope.workspace, memory_ids, now)

    async def control(
        self,
        request: MemoryRequest,
        source: SourceMessage,
        *,
        gate: Gate | None = None,
        who: Membership | None = None,
        memory_id: str | None = None,
        replied_to: int | None = None,
        now: datetime | None = None,
    ) -> ControlResult:
        """Carry out a recognized memory request, checking who may, now: with `gate` (default:
        the speaker's own) asked now, or as `who`, a standing the caller settled already
        (control.carry_out says how an admin-only action is granted). `replied_to`: Telegram's
        ID of the message the request replies to, which a "don't remember that" means (without
        one it means the speaker's previous message in the chat or Topic)."""
        return await control.carry_out(
            self.store,
            self.access,
            request,
            source,
            pin=self.pipeline.ctx.pin,
            gate=gate,
            who=who,
            memory_id=memory_id,
            replied_to=replied_to,
            now=now,
        )
