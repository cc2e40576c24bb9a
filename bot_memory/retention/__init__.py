"""Retention: memory never outlives what it was built from. `sweeps` (edits, expiry, erasure,
privacy sweeps), `verify` (verifiable forgetting: every place a text or source still appears).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.retention import sweeps
from bot_memory.retention.verify import After, Trace, find_traces

__all__ = ["After", "Trace", "find_traces", "sweeps"]
