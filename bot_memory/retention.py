"""When sources change or go: edits invalidate what was built on them; a workspace can be
purged.

Every change here locks the workspace first, changes the message rows, and in the same
transaction makes dependent records unavailable, stops jobs whose snapshot holds the message
and queues the rebuild of the indexes that named them.
"""

from __future__ import annotations

import structlog

from bot_memory.pipeline.consolidation import replan_stale
from bot_memory.pipeline.jobs import stop_jobs_touching
from bot_memory.state import content_hash, source_id
from bot_memory.store import Store
from bot_memory.workspace import WorkspaceGone

log = structlog.get_logger(__name__)


async def apply_edit(
    store: Store,
    *,
    bot_id: int,
    chat_id: int,
    telegram_message_id: int,
    text: str,
    provider: str,
    model: str,
) -> list[str]:
    """A recorded message's text or caption changed: keep the new text, make every record
    built on the old one unavailable. Returns the source IDs whose content changed."""
    changed: list[str] = []
    found = await store.find_messages(bot_id, chat_id, [telegram_message_id])
    for workspace in found:
        try:
            async with store.locked(workspace) as tx:
                row = await tx.conn.fetchrow(
                    "UPDATE messages SET text = $5, content_hash = $6, edited_at = now()"
                    " WHERE workspace_id = $1 AND bot_id = $2 AND chat_id = $3"
                    " AND telegram_message_id = $4 AND text IS NOT NULL AND content_hash <> $6"
                    " RETURNING id, scope_key",
                    workspace,
                    bot_id,
                    chat_id,
                    telegram_message_id,
                    text,
                    content_hash(text),
                )
                if row is None:
                    continue
                dependents = await tx.dependents([row["id"]])
                scopes = await tx.invalidate(dependents, "source edited")
                state = await tx.scope_by_key(row["scope_key"])
                if state is not None:
                    await stop_jobs_touching(tx.conn, state.scope, [row["id"]], "source edited")
                await replan_stale(tx, scopes, provider=provider, model=model, reason="edited")
                changed.append(source_id(row["id"]))
                log.info(
                    "memory.source_edited",
                    source=source_id(row["id"]),
                    invalidated=[r.id for r in dependents],
                )
        except WorkspaceGone:
            continue
    return changed


async def purge_workspace(store: Store, workspace: str) -> bool:
    """Delete every row and document of a workspace: memory, conversations, requests, jobs
    and their checkpoints, budgets, chats. The usage ledger keeps amounts and token counts, with
    no text. Idempotent; returns whether anything was there.

    The workspace row is locked FOR UPDATE (stronger than the NO KEY lock every other path
    takes), so a tick or tool call in flight waits, then finds no workspace and stops: only
    ingress of a new message ever creates one again.
    """
    async with store.pool.acquire() as conn, conn.transaction():
        existed = await conn.fetchval(
            "SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", workspace
        )
        await conn.execute(
            "UPDATE usage_ledger SET detail = NULL WHERE workspace_id = $1", workspace
        )
        await conn.execute("DELETE FROM chats WHERE workspace_id = $1", workspace)
        await conn.execute("DELETE FROM workspaces WHERE id = $1", workspace)
    log.info("memory.workspace_purged", workspace=workspace, existed=existed is not None)
    return existed is not None
