"""Retrieval: what memory gives back. `recall` (the compact index every request carries, with
the records that match its message),
`reader` (what one requester may read of a scope's memory, paged: the screen's, the page's and
query_memories' one read model); the search itself is storage's (`Store.search`).

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

__all__ = [
    "Page",
    "Reader",
    "RecallContext",
    "denied",
    "entry_view",
    "record_view",
    "render",
    "unreadable_entries",
]
