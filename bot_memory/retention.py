"""Retention of memory records: inactive ones are pruned, and a workspace keeps at most N.

These limits only ever shorten what memory keeps; they never extend how long the original
messages are retained.
"""

from __future__ import annotations

from datetime import datetime

from bot_memory.settings import MemorySettings
from bot_memory.state import prune
from bot_memory.store import Store


async def sweep(store: Store, settings: MemorySettings, workspace: str, now: datetime) -> set[str]:
    """Prune one workspace's record under its row lock; returns the scopes that changed."""
    async with store.locked_workspace(workspace) as tx:
        touched = prune(
            tx.state,
            now,
            inactive_days=settings.inactive_prune_days,
            max_records=settings.workspace_max_records,
        )
        tx.touch(*touched)
    return touched
