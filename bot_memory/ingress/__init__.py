"""Ingress: what happens to a message on the handler's path, before anything else sees it:
text made storable, and requests with nothing to keep closed in batches off that path.

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.ingress.closing import RequestCloser
from bot_memory.ingress.text import storable

__all__ = ["RequestCloser", "storable"]
