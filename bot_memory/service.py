"""Memory: the one service object a host bot holds.

    async with await Memory.open(MemorySettings()) as memory:   # DATABASE_URL, or embedded
        ...

Ingress records through it, the worker runs under it, recall and tools are reached from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

from bot_memory import control
from bot_memory.access import Access, CanRead, Gate, Membership, MembershipCache, Requester, tenancy
from bot_memory.agent import ReferenceAgent, ToolContext, ToolExecutor, Turn
from bot_memory.control import ControlResult
from bot_memory.ingress import Held, OutageBuffer, RequestCloser, storable
from bot_memory.intents import MemoryRequest
from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.models import ChatModel, build_model
from bot_memory.pipeline import (
    Pipeline,
    PipelineContext,
    RequestsFirst,
    Worker,
    live_window,
    pipeline_settings,
)
from bot_memory.redaction import redacted_spans
from bot_memory.retention import After, Trace, find_traces
from bot_memory.retention import sweeps as retention
from bot_memory.retrieval import (
    RecallContext,
    denied,
    entry_view,
    render,
    unreadable_entries,
)
from bot_memory.scopes import Scope
from bot_memory.settings import MemorySettings
from bot_memory.storage import (
    ChatInfo,
    Closing,
    Database,
    Limits,
    RequestStatus,
    SourceMessage,
    Store,
    WorkspaceGone,
    WorkspaceTx,
    is_connection_error,
)
from bot_memory.terms import worth_searching

log = get_logger(__name__)

USE_MARK_INTERVAL = 3600.0  # being recalled counts as use; written at most hourly per scope


class MemoryUnavailable(RuntimeError):
    """PostgreSQL cannot be reached right now. The directed message is kept in a bounded
    in-process buffer and recorded once the database is back (see Memory.record)."""


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
    _marked: dict[str, datetime] = field(default_factory=dict)  # scope/record -> use written
    _outage: OutageBuffer = field(init=False)
    _closed: bool = False
    # Bumped by every purge: what adapters cached about chats (their auto-delete timers) was
    # deleted with the workspace and must be asked for again.
    purges: int = 0
    # This Memory's own Prometheus registry (off without prometheus-client): docs/operating.md.
    metrics: Metrics = field(default_factory=lambda: Metrics(enabled=False))

    def __post_init__(self) -> None:
        self._outage = OutageBuffer(
            self.settings.ingress_buffer_max, self._record, self._close_unanswered
        )

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
        if not model.price_known and settings.workspace_budget_usd > 0:
            log.warning(
                "memory.price_unknown",
                model=model.model,
                detail="no price is known for this model: calls are charged $0 and budgets"
                " cannot stop spending; set BOT_MEMORY_LLM_INPUT_USD_PER_MTOK and"
                " BOT_MEMORY_LLM_OUTPUT_USD_PER_MTOK",
            )
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
        )

    async def close(self) -> None:
        """Stop the worker (a call in flight may finish), close the model client and the
        database. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        await self.closer.flush()
        self._outage.cancel()
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
            try:
                found = await self.store.jobs.backlog(timeout=self.settings.health_timeout_seconds)
            except Exception as exc:  # the counters are still worth a scrape
                if is_connection_error(exc) or isinstance(exc, TimeoutError):
                    self.metrics.database_error("scrape")
                log.warning("memory.metrics_backlog_failed", error=repr(exc)[:200])
            else:
                self.metrics.backlog(found.jobs, found.lag_seconds)
        return self.metrics.render()

    async def health(self) -> tuple[bool, dict[str, Any]]:
        """(healthy?, details) for /healthz: the database answers SELECT 1 within
        health_timeout_seconds, and a worker ticked recently (this process's, or any sharing
        the database) -- within the window `bot-memory status` calls a worker live."""
        timeout = self.settings.health_timeout_seconds
        window = live_window(self.settings.tick_interval_seconds).total_seconds()
        started = time.monotonic()
        database: dict[str, Any] = {"ok": False}
        try:
            await asyncio.wait_for(self.store.ping(), timeout)
            database["ok"] = True
        except Exception as exc:
            self.metrics.database_error("health")
            database["error"] = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
        database["seconds"] = round(time.monotonic() - started, 4)
        last = self.pipeline.last_tick_at
        worker: dict[str, Any] = {
            "ok": False,
            "in_process": self.worker.running,
            "window_seconds": window,
            "last_tick_age_seconds": None if last is None else round(time.time() - last, 3),
        }
        if last is not None and time.time() - last <= window:
            worker["ok"] = True
        elif database["ok"]:
            try:  # a worker of its own process (bot-memory worker), sharing the database
                age = await asyncio.wait_for(self.store.workers.last_tick_age(), timeout)
            except Exception as exc:
                self.metrics.database_error("health")
                worker["error"] = type(exc).__name__
            else:
                if age is not None:
                    worker["last_tick_age_seconds"] = round(age, 3)
                    worker["ok"] = age <= window
        ok = bool(database["ok"] and worker["ok"])
        return ok, {"ok": ok, "database": database, "worker": worker}

    # --- tenancy ------------------------------------------------------------------------------

    def default_workspace(self, bot_id: int, chat_id: int) -> str:
        """The named workspace if one is configured, else the chat's own."""
        return self.settings.workspace or tenancy.default_workspace(bot_id, chat_id)

    async def chat(self, bot_id: int, chat_id: int) -> ChatInfo | None:
        return await self.store.chat(bot_id, chat_id)

    async def bot_membership(
        self, *, bot_id: int, chat_id: int, chat_type: str, workspace: str, active: bool
    ) -> int:
        """The bot left / was removed from a chat (active=False), or was added back.

        Its scopes are suspended, not deleted: no recall, no memory requests, no jobs, while
        everything stays stored; adding the bot back restores recall of what is still
        retained. Returns the number of scopes changed.
        """
        await self.store.save_chat(
            bot_id=bot_id, chat_id=chat_id, workspace=workspace, chat_type=chat_type
        )
        await self.store.set_bot_active(bot_id, chat_id, active)
        if not active:
            self.access.cache.forget_chat(bot_id, chat_id)
        changed = 0
        try:
            async with self.store.locked(workspace) as tx:
                changed = await self._suspend(tx, bot_id, chat_id, suspended=not active)
        except WorkspaceGone:
            pass  # nothing stored for this chat yet
        log.info(
            "memory.bot_membership",
            chat_id=chat_id,
            active=active,
            scopes=changed,
            reason="bot added" if active else "bot left or was removed",
        )
        return changed

    async def _suspend(self, tx: WorkspaceTx, bot_id: int, chat_id: int, *, suspended: bool) -> int:
        changed = 0
        for state in await tx.scopes_of_chat(bot_id, chat_id):
            if state.suspended == suspended:
                continue
            state.suspended = suspended
            tx.save(state)
            changed += 1
            if suspended:
                await tx.jobs.stop_touching(state.scope, None, "the bot left the chat")
            else:
                await tx.planning.rearm(tx.workspace, state.key, datetime.now(UTC))
        return changed

    async def migrate_chat(
        self,
        *,
        bot_id: int,
        old_chat_id: int,
        new_chat_id: int,
        old_workspace: str,
        new_workspace: str,
    ) -> tenancy.MoveReport:
        """A group became a supergroup: its memory moves to the new chat ID, in one
        transaction. Idempotent (both service messages may arrive)."""
        async with self.store.atomic() as tx:
            report = await tenancy.move_chat(
                tx,
                bot_id=bot_id,
                old_chat_id=old_chat_id,
                new_chat_id=new_chat_id,
                old_workspace=old_workspace,
                new_workspace=new_workspace,
            )
            await tx.chat_migrated(bot_id, old_chat_id, new_chat_id)
        self.access.cache.forget_chat(bot_id, old_chat_id)
        return report

    async def auto_delete_changed(
        self, *, bot_id: int, chat_id: int, chat_type: str, workspace: str, seconds: int
    ) -> None:
        """The chat's auto-delete timer changed: messages recorded from now on are kept no
        longer than it (earlier ones keep the boundary they were recorded with)."""
        await self.store.save_chat(
            bot_id=bot_id,
            chat_id=chat_id,
            workspace=workspace,
            chat_type=chat_type,
            auto_delete_seconds=seconds or None,
            auto_delete_known=True,
        )

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
        held = Held(
            scope,
            storable(text),  # what the database refuses (NUL, lone surrogates) goes first
            speaker_id,
            thread_id,
            telegram_message_id,
            language,
            sent_at or datetime.now(UTC),
        )
        try:
            return await self._record(held)
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            self.metrics.database_error("record")
            kept = self._outage.hold(held, exc)
            self.metrics.message_skipped("held" if kept else "buffer_full")
            raise MemoryUnavailable(str(exc)) from exc

    async def _record(self, held: Held) -> SourceMessage | None:
        days = self.settings.message_retention_days
        source = await self.store.record_directed(
            held.scope,
            thread_id=held.thread_id,
            telegram_message_id=held.telegram_message_id,
            speaker_id=held.speaker_id,
            text=held.text,
            language=held.language,
            budget_usd=self.settings.request_budget_usd,
            sent_at=held.sent_at,
            retain_until=held.sent_at + timedelta(days=days) if days is not None else None,
        )
        if source is None:
            self.metrics.message_skipped("duplicate")
        else:
            self.metrics.message_recorded()
        return source

    async def _close_unanswered(self, source: SourceMessage) -> None:
        await self.finish(source, status="unanswered", error="recorded after a database outage")

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
        await self.store.start_request(
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
        closed = await self.store.finish_request(
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
        recalled = await self._recall(scope, gate, now or datetime.now(UTC), message)
        self.metrics.recall(recalled.mode)
        return recalled

    async def _recall(
        self, scope: Scope, gate: Gate | None, now: datetime, message: str | None
    ) -> RecallContext:
        if gate is not None:
            # Asked first, even with nothing stored: "denied" also tells the reference agent to
            # leave the group's stored conversation out of the prompt.
            who = await gate.membership()
            if not who.member:
                log.info(
                    "memory.recall_refused",
                    scope=scope.key,
                    requester=gate.requester.user_id,
                    reason=who.reason,
                )
                return denied(render(None, scope, now=now))
        row = await self.store.recall_row(scope)
        if row is None:
            return render(None, scope, now=now)
        hidden: set[str] = set()
        if gate is not None:
            hidden = await unreadable_entries(gate, scope, row)
        recalled = render(row, scope, now=now, unreadable=hidden)
        if recalled.mode in ("index", "directory") and worth_searching(message):
            recalled = await self._with_matches(recalled, scope, message or "", gate, now)
        if recalled.memory_ids:
            await self._note_use(scope, recalled.memory_ids, now)
        return recalled

    async def _with_matches(
        self, recalled: RecallContext, scope: Scope, message: str, gate: Gate | None, now: datetime
    ) -> RecallContext:
        """The records query_memories would find for this message, under the same gates (memory
        on and the sources retained in the search itself; membership asked above; the host's
        read grants here), beside what the block already names."""
        most = self.settings.recall_matches_max_records
        if most <= 0:
            return recalled
        standing, found = await self.store.search.matches(
            scope,
            query=message,
            now=now,
            limit=most,
            excluded=recalled.memory_ids,
        )
        if standing != "ok":
            return recalled
        picked = []
        for entry in found:
            if gate is not None and not await gate.readable(entry_view(scope, entry)):
                continue
            picked.append(entry)
        return recalled.with_matches(picked, self.settings.recall_block_max_bytes)

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
        return Turn(memory=self, context=context, kind=kind)

    async def _note_use(self, scope: Scope, memory_ids: list[str], now: datetime) -> None:
        """Being in the index a request was given counts as use (retention and the cap)."""
        # On the request's own clock: a replay (the evaluation) compresses months into seconds.
        # Each record is written at most hourly (the matches differ from message to message).
        fresh = [
            i
            for i in memory_ids
            if (last := self._marked.get(f"{scope.key}/{i}")) is None
            or not last <= now < last + timedelta(seconds=USE_MARK_INTERVAL)
        ]
        if not fresh:
            return
        for i in fresh:
            self._marked[f"{scope.key}/{i}"] = now
        async with self.store.locked(scope.workspace) as tx:
            await tx.mark_used(fresh, now)

    async def still_available(self, scope: Scope, memory_ids: list[str], now: datetime) -> set[str]:
        """Which of these records are valid and retained now (for in-flight rechecks)."""
        return await self.store.available_of(scope.workspace, memory_ids, now)

    async def control(
        self,
        request: MemoryRequest,
        source: SourceMessage,
        *,
        gate: Gate | None = None,
        who: Membership | None = None,
        memory_id: str | None = None,
        now: datetime | None = None,
    ) -> ControlResult:
        """Carry out a recognized memory request, checking who may, now.

        With a `gate` (or none: the speaker's own), the standing is asked now and an admin-only
        action is granted on a cached "administrator" only after Telegram confirms it (someone
        demoted within the cache's lifetime is no admin); refused as a non-admin on a cached
        standing, it is asked again (someone just promoted is an admin at once), as the
        adapter's paths do (control.acting). `who` is a standing the caller has settled
        already (the adapter passes the one it confirmed), used as given."""

        async def act(standing: Membership) -> ControlResult:
            return await control.apply(
                self.store,
                request,
                source,
                who=standing,
                provider=self.model.provider,
                model=self.model.model,
                memory_id=memory_id,
                now=now,
            )

        if who is None:
            gate = gate or self.gate(
                source.scope, Requester(user_id=source.speaker_id, chat_id=source.scope.chat_id)
            )
            who = await gate.membership()
            result = await control.acting(gate, who, act)
        else:
            result = await act(who)
        if not result.changed:
            log.info(
                "memory.request_refused" if result.outcome.startswith("not") else "memory.request",
                action=result.action,
                outcome=result.outcome,
                scope=source.scope.key,
                reason=who.reason,
            )
        return result
