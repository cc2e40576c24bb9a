"""What one requester may read of a scope's memory, paged: the one read model of the /memory
screen, the Mini App and `query_memories`.

Records come from the same search (storage's `Search.records`: memory on, available, ranked
for a query, else newest first) and pass the host's read grants (`Gate.readable`) one by one.
The memory managers (the screen and the page) see what is kept while memory is off and the
records a later one replaced, marked; `query_memories` sees neither (`for_tools`), except the
replaced records a query matches, after the current ones: what held before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot_memory.access import Gate, ItemView
from bot_memory.records import MemoryRecord
from bot_memory.scopes import Scope
from bot_memory.storage import Search

# The scope's standing as the search reads it: "ok", "off" (memory off), "unavailable" (the
# bot left the chat), "gone" (no workspace).
Standing = str


def record_view(record: MemoryRecord) -> ItemView:
    """A record as the host's read-grant hook sees it."""
    return ItemView(
        kind="record",
        id=record.id,
        scope_key=record.scope_key,
        speaker_ids=record.speaker_ids,
        thread_ids=record.thread_ids,
        source_ids=record.source_ids,
    )


@dataclass(frozen=True)
class Page:
    standing: Standing
    records: list[MemoryRecord]
    more: bool  # readable records follow this page


class Reader:
    """`search`: the store's (or, for a read cited under the workspace lock, the transaction's).
    `gate`: the requester's; None reads as the host's own code does, everything."""

    def __init__(
        self, search: Search, scope: Scope, gate: Gate | None, *, for_tools: bool = False
    ) -> None:
        self._search = search
        self._scope = scope
        self._gate = gate
        # The managers list, search, forget and export what is kept: off means not used and
        # not added to, never hidden; a replaced record shows, marked, until pruned.
        self._manager = not for_tools

    @property
    def grants(self) -> bool:
        """The host's read grants decide, record by record."""
        return self._gate is not None and self._gate.access.can_read is not None

    async def readable(self, record: MemoryRecord) -> bool:
        return self._gate is None or await self._gate.readable(record_view(record))

    async def page(
        self,
        now: datetime,
        *,
        query: str | None = None,
        record_id: str | None = None,
        offset: int = 0,
        limit: int,
    ) -> Page:
        """The readable records from `offset` on, at most `limit` (one by ID, the best matches
        of a query, or the newest). Without read grants one statement; with them, pages of the
        search are read until the page is full."""
        if not self.grants:
            standing, found = await self._records(
                now, query, record_id=record_id, offset=offset, limit=limit + 1
            )
            shown = [r for r in found[:limit] if await self.readable(r)]  # all pass: no grants
            return Page(standing, shown, len(found) > limit)
        wanted = offset + limit + 1  # one more tells whether more follow
        readable: list[MemoryRecord] = []
        read = 0
        while True:
            standing, found = await self._records(
                now, query, record_id=record_id, offset=read, limit=wanted
            )
            if standing != "ok" and not found:
                return Page(standing, [], False)
            readable.extend([r for r in found if await self.readable(r)])
            read += len(found)
            if len(readable) >= wanted or len(found) < wanted:
                break
        return Page(standing, readable[offset : offset + limit], len(readable) > offset + limit)

    async def every(self, now: datetime, *, most: int) -> Page:
        """Every readable record, newest first (counted, exported, paged by the caller), up to
        `most` read."""
        standing, found = await self._records(now, None, offset=0, limit=most)
        return Page(standing, [r for r in found if await self.readable(r)], False)

    async def one(self, record_id: str, now: datetime) -> MemoryRecord | None:
        """The record, if it is there and readable (else: gone, forged, or not theirs)."""
        _, found = await self._records(now, None, record_id=record_id, offset=0, limit=1)
        return found[0] if found and await self.readable(found[0]) else None

    async def replacing(
        self,
        records: list[MemoryRecord],
        now: datetime,
        *,
        known: dict[str, MemoryRecord] | None = None,
    ) -> dict[str, MemoryRecord]:
        """The readable record that replaced each of these, where it is still there; `known`:
        records already read (a page, or everything the reader may read)."""
        on_hand = known if known is not None else {r.id: r for r in records}
        found: dict[str, MemoryRecord] = {}
        for rid in sorted({r.replaced_by for r in records if r.replaced_by}):
            newer = on_hand.get(rid)
            if newer is None and known is None:
                newer = await self.one(rid, now)
            if newer is not None:
                found[rid] = newer
        return found

    async def _records(
        self,
        now: datetime,
        query: str | None,
        *,
        offset: int,
        limit: int,
        record_id: str | None = None,
    ) -> tuple[Standing, list[MemoryRecord]]:
        return await self._search.records(
            self._scope,
            query=query,
            record_id=record_id,
            now=now,
            limit=limit,
            offset=offset,
            while_off=self._manager,
            replaced=self._manager,
            history=not self._manager,
        )
