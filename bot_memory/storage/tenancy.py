"""Moving a chat's memory between keys: every row of its scopes to another chat ID and/or
workspace, in one transaction (a group upgraded to a supergroup, a legacy database split per
chat), and the legacy workspaces still to split. Which workspace a chat lives in, and a scope's
new key, are access's (`bot_memory/access/tenancy.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

from bot_memory.storage.handle import Handle, connection
from bot_memory.storage.limits import Limits
from bot_memory.storage.workspace import lock_workspace


@dataclass(frozen=True)
class MoveReport:
    scopes: int
    messages: int
    records: int


# Tables keyed by (workspace_id, scope_key): every row of a moved scope changes both. Requests
# first: a request being finished holds its row lock, so the move waits for that commit and
# then moves the answer it wrote too.
_SCOPED = ("requests", "messages", "memory_scopes", "memory_records", "tombstones", "memory_jobs")


class Tenancy:
    """Chat moves, inside the caller's transaction (`Store.atomic()`: `tx.tenancy`), and the
    legacy workspaces' rows, on the pool (`Store.tenancy`)."""

    def __init__(self, on: Handle, limits: Limits) -> None:
        self._on = on
        self._limits = limits

    async def move_chat(
        self,
        *,
        bot_id: int,
        old_chat_id: int,
        new_chat_id: int,
        old_workspace: str,
        new_workspace: str,
        rekey: Callable[[str], str],
    ) -> MoveReport:
        """Move every scope of one chat to another chat ID and/or workspace, inside a
        transaction; `rekey` gives an old scope key's new one.

        Both workspace rows are locked (in name order), so a tick, a tool call or a commit under
        the old key waits and then finds nothing of it: jobs move with their scope and lose their
        ownership token, so a worker that was running one cannot write under the old key.
        """
        async with connection(self._on) as conn:
            if not conn.is_in_transaction():
                # SET CONSTRAINTS lasts as long as the transaction (outside one it does
                # nothing), and the row locks must be held to the end: one transaction,
                # wherever the server is.
                raise RuntimeError("move_chat must run inside a transaction")
            await conn.execute(
                "INSERT INTO workspaces (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", new_workspace
            )
            for name in sorted({old_workspace, new_workspace}):
                await lock_workspace(conn, name, limits=self._limits)
            await conn.execute("SET CONSTRAINTS ALL DEFERRED")
            rows = await conn.fetch(
                "SELECT scope_key, kind, user_id, topic_id FROM memory_scopes"
                " WHERE workspace_id = $1 AND bot_id = $2 AND chat_id = $3",
                old_workspace,
                bot_id,
                old_chat_id,
            )
            keys = {r["scope_key"] for r in rows}
            keys |= {
                r["scope_key"]
                for r in await conn.fetch(
                    "SELECT DISTINCT scope_key FROM messages WHERE workspace_id = $1"
                    " AND bot_id = $2 AND chat_id = $3",
                    old_workspace,
                    bot_id,
                    old_chat_id,
                )
            }
            old_keys = sorted(keys)
            new_keys = [rekey(k) for k in old_keys]
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
            return MoveReport(
                len(old_keys), counts.get("messages", 0), counts.get("memory_records", 0)
            )

    async def legacy_workspaces(self) -> list[str]:
        """Workspaces from before per-chat workspaces (a whole bot in one), still to split."""
        return [r["id"] for r in await self._on.fetch("SELECT id FROM workspaces WHERE legacy")]

    async def chats_of(self, workspace: str) -> list[tuple[int, int]]:
        """Every chat (bot ID, chat ID) a workspace holds scopes or messages of."""
        rows = await self._on.fetch(
            "SELECT DISTINCT bot_id, chat_id FROM memory_scopes WHERE workspace_id = $1"
            " UNION SELECT DISTINCT bot_id, chat_id FROM messages WHERE workspace_id = $1",
            workspace,
        )
        return [(r["bot_id"], r["chat_id"]) for r in rows]

    async def end_legacy(self, workspace: str) -> None:
        """The legacy workspace was split: it is an ordinary one now."""
        await self._on.execute("UPDATE workspaces SET legacy = false WHERE id = $1", workspace)


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
    for table in ("message_deps", "answer_records"):
        await conn.execute(
            f"UPDATE {table} d SET workspace_id = $2 WHERE d.workspace_id = $1 AND"
            " d.message_id IN (SELECT id FROM messages WHERE workspace_id = $2"
            " AND scope_key = ANY($3::text[]))",
            old_workspace,
            new_workspace,
            new_keys,
        )
    # A record's sources as answers were given it go with the answers (copied: answers in
    # both workspaces may depend on one record).
    await conn.execute(
        "INSERT INTO given_sources (workspace_id, record_id, message_id)"
        " SELECT $2, g.record_id, g.message_id FROM given_sources g WHERE g.workspace_id = $1"
        " AND g.record_id IN (SELECT unnest(a.record_ids) FROM answer_records a"
        " WHERE a.workspace_id = $2)"
        " ON CONFLICT DO NOTHING",
        old_workspace,
        new_workspace,
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
