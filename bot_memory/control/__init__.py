"""Control: what a user asks of memory itself (remember, forget, on and off), who may, and
what each request reaches.

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.control import actions

__all__ = ["actions"]
