"""Ingress: what happens to a message on the handler's path, before anything else sees it:
a message recorded with the request it opens (`recorder`), text made storable (`text`),
messages held while the database is away (`outage`), what an update delivered again gets
(`redelivery`), and requests with nothing to keep closed in batches off that path (`closing`).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.ingress.closing import RequestCloser
from bot_memory.ingress.outage import Buffered, OutageBuffer
from bot_memory.ingress.recorder import MemoryUnavailable, Recorder
from bot_memory.ingress.redelivery import Redelivery, on_redelivery
from bot_memory.ingress.text import storable

__all__ = [
    "Buffered",
    "MemoryUnavailable",
    "OutageBuffer",
    "Recorder",
    "Redelivery",
    "RequestCloser",
    "on_redelivery",
    "storable",
]
