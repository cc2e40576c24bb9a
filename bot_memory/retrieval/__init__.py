"""Retrieval: what memory gives back. `recall` (the compact index every request carries, with
the records that match its message),
what the read tools and the memory screens find is storage's (`Store.search`).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.retrieval.recall import (
    RecallContext,
    denied,
    entry_view,
    render,
    unreadable_entries,
)

__all__ = [
    "RecallContext",
    "denied",
    "entry_view",
    "render",
    "unreadable_entries",
]
