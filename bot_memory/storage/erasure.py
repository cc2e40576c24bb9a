"""Erasure: finding what an expiry, a removal or a privacy sweep erases, erasing it with
everything derived from it (bm_erase), and purging a workspace whole.

What changes inside the workspace lock on the way (an edit's new text, shortened retention
boundaries, the closure of derived answers) is `WorkspaceTx`'s; the decisions (which messages,
which windows) are retention's (`bot_memory/retention/sweeps.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from bot_memory.storage.handle import Handle, transaction
from bot_memory.storage.limits import Limits, recall_limits
from bot_memory.storage.workspace import WorkspaceGone


@dataclass
class SweepReport:
    """What an erasure touched, by kind and count."""

    messages: int = 0  # originals whose text was erased
    answers: int = 0  # derived answers whose text was erased
    records: int = 0  # memory records removed
    checkpoints: int = 0  # jobs stopped, their checkpoints cleared
    tombstones: int = 0  # tombstones dropped with their originals
    scopes: set[str] = field(default_factory=set)

    def add(self, other: SweepReport) -> None:
        self.messages += other.messages
        self.answers += other.answers
        self.records += other.records
        self.checkpoints += other.checkpoints
        self.tombstones += other.tombstones
        self.scopes |= other.scopes

    def as_dict(self) -> dict[str, int]:
        return {
            "messages": self.messages,
            "answers": self.answers,
            "records": self.records,
            "checkpoints": self.checkpoints,
            "tombstones": self.tombstones,
        }


class Erasure:
    """Erasures, on the pool (`Store.erasure`): each takes the workspace lock itself."""

    def __init__(self, on: Handle, limits: Limits) -> None:
        self._on = on
        self._limits = limits

    async def by_telegram_ids(
        self, bot_id: int | None, chat_id: int, telegram_ids: list[int]
    ) -> list[tuple[str, int, int]]:
        """Stored messages of these Telegram messages of a chat (of one bot's, when given):
        (workspace, message ID, bot ID) each."""
        rows = await self._on.fetch(
            "SELECT workspace_id, id, bot_id FROM messages WHERE chat_id = $1"
            " AND telegram_message_id = ANY($2::bigint[]) AND ($3::bigint IS NULL OR bot_id = $3)",
            chat_id,
            telegram_ids,
            bot_id,
        )
        return [(r["workspace_id"], r["id"], r["bot_id"]) for r in rows]

    async def expired(self, now: datetime) -> list[tuple[str, list[int]]]:
        """Messages whose retention boundary has passed and that still have their text, by
        workspace (up to 200 workspaces). Reads only what is due (an index on the boundary)."""
        rows = await self._on.fetch(
            "SELECT workspace_id, array_agg(id) AS ids FROM messages WHERE retain_until <= $1"
            " AND erased_at IS NULL GROUP BY workspace_id LIMIT 200",
            now,
        )
        return [(r["workspace_id"], r["ids"]) for r in rows]

    async def sweep_targets(
        self,
        message_ids: list[int],
        *,
        user_id: int | None,
        chat_id: int | None,
        bot_id: int | None,
    ) -> list[tuple[str, list[int]]]:
        """What a privacy sweep erases, by workspace: these messages, a user's messages and the
        answers to them, a chat's messages (of one bot's, when given)."""
        rows = await self._on.fetch(
            """
            SELECT workspace_id, array_agg(DISTINCT id) AS ids FROM (
                SELECT workspace_id, id FROM messages WHERE id = ANY($1::bigint[])
                UNION ALL
                SELECT m.workspace_id, m.id FROM messages m WHERE m.speaker_id = $2
                    AND ($4::bigint IS NULL OR m.bot_id = $4)
                UNION ALL
                SELECT m.workspace_id, r.answer_message_id FROM messages m
                    JOIN requests r ON r.workspace_id = m.workspace_id AND r.user_message_id = m.id
                    WHERE m.speaker_id = $2 AND r.answer_message_id IS NOT NULL
                    AND ($4::bigint IS NULL OR m.bot_id = $4)
                UNION ALL
                SELECT workspace_id, id FROM messages WHERE chat_id = $3
                    AND ($4::bigint IS NULL OR bot_id = $4)
            ) x GROUP BY workspace_id
            """,
            message_ids,
            user_id,
            chat_id,
            bot_id,
        )
        return [(r["workspace_id"], r["ids"]) for r in rows]

    async def erase(
        self, workspace: str, message_ids: Iterable[int], *, reason: str
    ) -> SweepReport:
        """Erase these messages and everything derived from them, in one statement (bm_erase,
        which takes the workspace lock): answers derived from them to a fixed point, the records
        depending on any of them (directly or inherited), requests still being answered with any
        of it flagged, job checkpoints, tombstones of the erased originals, references to them,
        and the recall rows and indexes that named them. WorkspaceGone if there is no
        workspace."""
        row = await self._on.fetchrow(
            "SELECT * FROM bm_erase($1, $2::bigint[], $3, $4, $5)",
            workspace,
            sorted(set(message_ids)),
            reason,
            *recall_limits(self._limits),
        )
        assert row is not None
        if row["gone"]:
            raise WorkspaceGone(f"workspace {workspace!r} does not exist")
        return SweepReport(
            messages=row["originals"],
            answers=row["answers"],
            records=row["records"],
            checkpoints=row["checkpoints"],
            tombstones=row["dropped_tombstones"],
            scopes=set(row["scopes"]),
        )

    async def purge(self, workspace: str) -> bool:
        """Delete every row and document of a workspace: memory, conversations, requests, jobs
        and their checkpoints, budgets, chats. The usage ledger keeps amounts and token counts,
        with no text. Idempotent; returns whether anything was there.

        The workspace row is locked FOR UPDATE (stronger than the NO KEY lock every other path
        takes), so a tick or tool call in flight waits, then finds no workspace and stops: only
        ingress of a new message ever creates one again.
        """
        async with transaction(self._on) as conn:
            existed = await conn.fetchval(
                "SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", workspace
            )
            await conn.execute(
                "UPDATE usage_ledger SET detail = NULL WHERE workspace_id = $1", workspace
            )
            await conn.execute("DELETE FROM chats WHERE workspace_id = $1", workspace)
            await conn.execute("DELETE FROM workspaces WHERE id = $1", workspace)
        return existed is not None
