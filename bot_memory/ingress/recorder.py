"""Recording a directed message: the message and the request it opens in one statement, or,
while PostgreSQL is away, the message held in the outage buffer and MemoryUnavailable raised so
the handler answers without memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot_memory.errors import BotMemoryError
from bot_memory.ingress.outage import Buffered, OutageBuffer
from bot_memory.ingress.text import storable
from bot_memory.metrics import Metrics
from bot_memory.scopes import Scope
from bot_memory.settings import MemorySettings
from bot_memory.storage import SourceMessage, Store, is_connection_error


class MemoryUnavailable(BotMemoryError, RuntimeError):
    """PostgreSQL cannot be reached right now. The directed message is kept in a bounded
    in-process buffer and recorded once the database is back (see Memory.record)."""


class Recorder:
    """`Memory.record`'s: one per Memory, with its outage buffer."""

    def __init__(self, store: Store, settings: MemorySettings, metrics: Metrics) -> None:
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self.outage = OutageBuffer(settings.ingress_buffer_max, self._record, self._unanswered)

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
        held = Buffered(
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
            self._metrics.database_error("record")
            kept = self.outage.add(held, exc)
            self._metrics.message_skipped("buffered" if kept else "buffer_full")
            raise MemoryUnavailable(str(exc)) from exc

    async def _record(self, held: Buffered) -> SourceMessage | None:
        days = self._settings.message_retention_days
        source = await self._store.record_directed(
            held.scope,
            thread_id=held.thread_id,
            telegram_message_id=held.telegram_message_id,
            speaker_id=held.speaker_id,
            text=held.text,
            language=held.language,
            budget_usd=self._settings.request_budget_usd,
            sent_at=held.sent_at,
            retain_until=held.sent_at + timedelta(days=days) if days is not None else None,
        )
        if source is None:
            self._metrics.message_skipped("duplicate")
        else:
            self._metrics.message_recorded()
        return source

    async def _unanswered(self, source: SourceMessage) -> None:
        """A message held through an outage was answered without memory: its request is
        history, closed as unanswered."""
        closed = await self._store.requests.finish(
            source,
            status="unanswered",
            now=datetime.now(UTC),
            idle_seconds=self._settings.idle_window_seconds,
            error="recorded after a database outage",
        )
        if closed:
            self._metrics.request_closed("unanswered")
