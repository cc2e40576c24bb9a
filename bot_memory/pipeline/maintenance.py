"""Once per tick and workspace, one locked pass over its memory record: retention, then the
indexes that went stale without an extraction to rebuild them.

Retention only ever shortens what memory keeps (30 days without use, 256 records at most); it
never extends how long the original messages are retained.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from bot_memory.pipeline.consolidation import plan_pending
from bot_memory.pipeline.context import PipelineContext
from bot_memory.state import prune

log = structlog.get_logger(__name__)


async def maintain(ctx: PipelineContext, workspace: str, now: datetime) -> list[int]:
    """Prune the workspace's records and plan stale-index consolidations; returns new job IDs."""
    async with ctx.store.locked_workspace(workspace) as tx:
        pruned = prune(
            tx.state,
            now,
            inactive_days=ctx.settings.inactive_prune_days,
            max_records=ctx.settings.workspace_max_records,
        )
        if pruned:
            tx.touch(*pruned)
            log.info("retention.pruned", workspace=workspace, scopes=sorted(pruned))
        return await plan_pending(ctx, tx)
