"""`bot-memory <command>`: the operator's command line. `commands` (parsing and output),
`operations` (what the commands read and change).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.cli import operations
from bot_memory.cli.commands import main, show_status

__all__ = ["main", "operations", "show_status"]
