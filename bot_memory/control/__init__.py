"""Control: what a user asks of memory itself (remember, forget, keep a message out, on and
off). `rules` says who may do what and which records a "forget X" names (plain functions);
`actions` carries requests out in the workspace transaction, with what each one reaches.

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.control.actions import apply, carry_out, forget_preview, forget_record, switch
from bot_memory.control.rules import (
    ControlResult,
    Outcome,
    acting,
    may_forget,
    may_keep_out,
    may_toggle,
    note_subject,
)

__all__ = [
    "ControlResult",
    "Outcome",
    "acting",
    "apply",
    "carry_out",
    "forget_preview",
    "forget_record",
    "may_forget",
    "may_keep_out",
    "may_toggle",
    "note_subject",
    "switch",
]
