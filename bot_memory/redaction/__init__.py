"""Credential redaction for text sent to a model or stored as a note: `patterns` (the one
pass), `formats` (bare tokens known by their shape), `labels` (secrets known by their label).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.redaction.patterns import (
    REDACTED,
    redact,
    redact_sequence,
    redact_value,
    redacted_spans,
)

__all__ = ["REDACTED", "redact", "redact_sequence", "redact_value", "redacted_spans"]
