"""Tenancy: which workspace a chat's memory lives in, and moving a chat between keys.

By default every group and every user's private chat is its own workspace (its own lock, record
cap, prune clock and budget); a named workspace (BOT_MEMORY_WORKSPACE) or the host's resolver
can group chats instead. A chat's memory moves as a whole, in one transaction, when Telegram
upgrades a group to a supergroup, and when a database from before per-chat workspaces is adopted.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from bot_memory.logs import get_logger
from bot_memory.scopes import Scope
from bot_memory.storage import Limits, lock_workspace

log = get_logger(__name__)


def default_workspace(bot_id: int, chat_id: int) -> str:
    """The per-chat workspace: one per group, one per user's private chat, per bot."""
    return f"tg:{bot_id}:{chat_id}"


@dataclass(frozen=True)
class MoveReport:
    scopes: int
    messages: int
    records: int


# Tables keyed by (workspace_id, scope_key): every row of a moved scope changes both. Requests
# first: a request being finished holds its row lock, so the move waits for that commit and
# then moves the answer it wrote too.
_SCOPED = ("requests", "messages", "memory_scopes", "memory_records", "tombstones", "memory_jobs")


async def move_chat(
    conn: asyncpg.Connection,
    *,
    bot_id: int,
    old_chat_id: int,
    new_chat_id: int,
    old_workspace: str,
    new_workspace: str,
    limits: Limits,
) -> MoveReport:
    """Move every scope of one chat to another chat ID and/or workspace, inside a transaction.

    Both workspace rows are locked (in name order), so a tick, a tool call or a commit under the
    old key waits and then finds nothing of it: jobs move with their scope and lose their
    ownership token, so a worker that was running one cannot write under the old key.
    """
    if not conn.is_in_transaction():
        # SET CONSTRAINTS lasts as long as the transaction (outside one it does nothing), and
        # the row locks must be held to the end: one transaction, wherever the server is.
        raise RuntimeError("move_chat must run inside a transaction")
    await conn.execute(
        "INSERT INTO workspaces (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", new_workspace
    )
    for name in sorted({old_workspace, new_workspace}):
        await lock_workspace(conn, name, limits=limits)
    await conn.execute("SET CONSTRAINTS ALL DEFERRED")
    rows = await conn.fetch(
        "SELECT scope_key, kind, user_id, topic_id FROM memory_scopes WHERE workspace_id = $1"
        " AND bot_id = $2 AND chat_id = $3",
        old_workspace,
        bot_id,
        old_chat_id,
    )
    keys = {r["scope_key"] for r in rows}
    keys |= {
        r["scope_key"]
        for r in await conn.fetch(
            "SELECT DISTINCT scope_key FROM messages WHERE workspace_id = $1 AND bot_id = $2"
            " AND chat_id = $3",
            old_workspace,
            bot_id,
            old_chat_id,
        )
    }
    old_keys = sorted(keys)
    new_keys = [_rekey(k, new_workspace, new_chat_id) for k in old_keys]
    if not old_keys:
        return MoveReport(0, 0, 0)
    counts: dict[str, int] = {}
    for table in _SCOPED:
        sets = "workspace_id = $2, scope_key = m.new_key"
        args: list[object] = [old_workspace, new_workspace, old_keys, new_keys]
        if table == "memory_scopes":
            sets += ", chat_id = $5"
            args.append(new_chat_id)
        elif table == "requests":
            sets += (
                ", scope = jsonb_set(jsonb_set(scope, '{workspace}', to_jsonb($2::text)),"
                " '{chat_id}', to_jsonb($5::bigint))"
            )
            args.append(new_chat_id)
        result: str = await conn.execute(
            f"UPDATE {table} t SET {sets}"
            " FROM unnest($3::text[], $4::text[]) AS m(old_key, new_key)"
            " WHERE t.workspace_id = $1 AND t.scope_key = m.old_key",
            *args,
        )
        counts[table] = int(result.split()[-1])
    # Jobs moved with their scope: whoever was running one no longer owns it.
    await conn.execute(
        "UPDATE memory_jobs SET ownership_token = NULL, lease_until = NULL"
        " WHERE workspace_id = $1 AND scope_key = ANY($2::text[])",
        new_workspace,
        new_keys,
    )
    if old_workspace != new_workspace:
        await _move_by_ids(conn, old_workspace, new_workspace, new_keys)
    await conn.execute("SET CONSTRAINTS ALL IMMEDIATE")
    log.info(
        "memory.chat_moved",
        bot_id=bot_id,
        old_chat_id=old_chat_id,
        new_chat_id=new_chat_id,
        old_workspace=old_workspace,
        new_workspace=new_workspace,
        scopes=len(old_keys),
    )
    return MoveReport(len(old_keys), counts.get("messages", 0), counts.get("memory_records", 0))


async def _move_by_ids(
    conn: asyncpg.Connection, old_workspace: str, new_workspace: str, new_keys: list[str]
) -> None:
    """Rows keyed by workspace and an ID of something that already moved."""
    await conn.execute(
        "UPDATE record_sources s SET workspace_id = $2 WHERE s.workspace_id = $1 AND"
        " s.record_id IN (SELECT id FROM memory_records WHERE workspace_id = $2"
        " AND scope_key = ANY($3::text[]))",
        old_workspace,
        new_workspace,
        new_keys,
    )
    await conn.execute(
        "UPDATE message_deps d SET workspace_id = $2 WHERE d.workspace_id = $1 AND"
        " d.message_id IN (SELECT id FROM messages WHERE workspace_id = $2"
        " AND scope_key = ANY($3::text[]))",
        old_workspace,
        new_workspace,
        new_keys,
    )
    for table in ("tool_calls", "usage_ledger"):
        await conn.execute(
            f"UPDATE {table} x SET workspace_id = $2 WHERE x.workspace_id = $1 AND"
            " x.request_id IN (SELECT id FROM requests WHERE workspace_id = $2"
            " AND scope_key = ANY($3::text[]))",
            old_workspace,
            new_workspace,
            new_keys,
        )
    # Spending follows the ledger rows it is made of.
    await conn.execute(
        "UPDATE workspaces w SET spent_usd = coalesce((SELECT sum(cost_usd) FROM usage_ledger u"
        " WHERE u.workspace_id = w.id), 0) WHERE w.id = ANY($1::text[])",
        [old_workspace, new_workspace],
    )


def _rekey(scope_key: str, workspace: str, chat_id: int) -> str:
    """The same scope under another workspace and chat ID."""
    _, bot, kind, chat, last = scope_key.split("/")
    if kind == "p":
        return f"{workspace}/{bot}/p/{chat}/{last}"  # a private chat's ID never changes
    return f"{workspace}/{bot}/g/{chat_id}/{last}"


def rekey_scope(scope: Scope, workspace: str, chat_id: int) -> Scope:
    return scope.model_copy(
        update={
            "workspace": workspace,
            "chat_id": chat_id if not scope.is_private else scope.chat_id,
        }
    )


async def adopt_legacy(pool: asyncpg.Pool, *, limits: Limits, single_workspace: str | None) -> int:
    """A database from before per-chat workspaces held a whole bot in one workspace. With no
    named workspace configured, split it: each chat's memory moves to its own workspace.
    With one configured, keep it as it is. Returns the number of chats moved."""
    if single_workspace is not None:
        return 0
    moved = 0
    legacy = [r["id"] for r in await pool.fetch("SELECT id FROM workspaces WHERE legacy")]
    for old in legacy:
        async with pool.acquire() as conn:
            chats = await conn.fetch(
                "SELECT DISTINCT bot_id, chat_id FROM memory_scopes WHERE workspace_id = $1"
                " UNION SELECT DISTINCT bot_id, chat_id FROM messages WHERE workspace_id = $1",
                old,
            )
            for chat in chats:
                async with conn.transaction():
                    await move_chat(
                        conn,
                        bot_id=chat["bot_id"],
                        old_chat_id=chat["chat_id"],
                        new_chat_id=chat["chat_id"],
                        old_workspace=old,
                        new_workspace=default_workspace(chat["bot_id"], chat["chat_id"]),
                        limits=limits,
                    )
                    moved += 1
            await conn.execute("UPDATE workspaces SET legacy = false WHERE id = $1", old)
    if moved:
        log.info("memory.legacy_split", chats=moved)
    return moved
