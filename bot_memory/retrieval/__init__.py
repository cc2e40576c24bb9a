"""Retrieval: what memory gives back. `recall` (the compact index every request carries, with
the records that match its message), `recaller` (recall for a new request: the row rendered for
its requester, the message's matches, their use noted), `reader` (what one requester may read
of a scope's memory, paged: the one read model of the screen, the page and query_memories); the
search itself is storage's (`Store.search`).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.retrieval.reader import Page, Reader, record_view
from bot_memory.retrieval.recall import (
    RecallContext,
    denied,
    entry_view,
    render,
    unreadable_entries,
)
from bot_memory.retrieval.recaller import Recaller

__all__ = [
    "Page",
    "Reader",
    "RecallContext",
    "Recaller",
    "denied",
    "entry_view",
    "record_view",
    "render",
    "unreadable_entries",
]
