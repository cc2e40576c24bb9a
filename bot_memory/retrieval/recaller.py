"""Recall for a new request: the scope's recall row rendered for this requester (the index, or
a directory of the newest records when the index names one they may not read), with the records
that best match the current message, and their use noted."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bot_memory.access import Gate
from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.retrieval.recall import (
    RecallContext,
    denied,
    entry_view,
    render,
    unreadable_entries,
)
from bot_memory.scopes import Scope
from bot_memory.settings import MemorySettings
from bot_memory.storage import Store
from bot_memory.terms import worth_searching

log = get_logger(__name__)

USE_MARK_INTERVAL = 3600.0  # being recalled counts as use; written at most hourly per scope


@dataclass
class Recaller:
    """`Memory.recaller`; `Memory.recall` and a turn's start call it."""

    _store: Store
    _settings: MemorySettings
    _metrics: Metrics
    _marked: dict[str, datetime] = field(default_factory=dict)  # scope/record -> use written

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
        self._metrics.recall(recalled.mode)
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
        row = await self._store.recall_row(scope)
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
        most = self._settings.recall_matches_max_records
        if most <= 0:
            return recalled
        self._metrics.recall_search()
        standing, found = await self._store.search.matches(
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
        return recalled.with_matches(picked, self._settings.recall_block_max_bytes)

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
        async with self._store.locked(scope.workspace) as tx:
            await tx.mark_used(fresh, now)

    async def still_available(self, scope: Scope, memory_ids: list[str], now: datetime) -> set[str]:
        """Which of these records are valid and retained now (for in-flight rechecks)."""
        return await self._store.available_of(scope.workspace, memory_ids, now)
