"""A forget inside the workspace lock: what forgetting some records would reach, read in one
trip that takes the lock first (bm_forget_reach), and the forget itself, one statement
(bm_forget) that also writes the transaction's scopes back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from bot_memory.records import MemoryRecord, ScopeState
from bot_memory.storage.documents import dumps
from bot_memory.storage.rows import scope_from_row

if TYPE_CHECKING:
    from bot_memory.storage.workspace import WorkspaceTx


@dataclass(frozen=True)
class Reach:
    """What bm_forget_reach read: the scope as stored (None: nothing is), every record it
    returned by ID, which of the named ones exist, the records sharing their sources, the
    answers given with them and the records built on those, and what is not extracted yet."""

    state: ScopeState | None
    records: dict[str, MemoryRecord]
    chosen: set[str]
    dependents: list[str]
    answers: list[tuple[int, str]]  # (message ID, text)
    answer_dependents: list[str]
    unextracted: list[tuple[int, str]]


@dataclass(frozen=True)
class Exchange:
    """A request and its messages (the speaker's, and the answer once there is one), as a
    request not to remember finds the one it means."""

    request_id: int
    speaker_id: int
    message_ids: frozenset[int]


class Forgetting:
    """Bound to a locked workspace transaction (`WorkspaceTx.forgetting`)."""

    def __init__(self, tx: WorkspaceTx) -> None:
        self._tx = tx

    async def reach(
        self,
        scope_key: str,
        ids: list[str],
        *,
        flag: bool,
        request_id: int | None,
        asker: int | None,
    ) -> Reach | None:
        """None when the workspace does not exist. `flag`: flag the answers in flight of the
        forget's request (`request_id`, whose exchanges: `asker`) and read what is not
        extracted yet."""
        tx = self._tx
        found = await tx.conn.fetchval(
            "SELECT bm_forget_reach($1, $2, $3::text[], $4, $5, $6)",
            tx.workspace,
            scope_key,
            ids,
            flag,
            request_id,
            asker,
        )
        if found is None:
            return None
        raw = json.loads(found)
        return Reach(
            state=None if raw["scope"] is None else scope_from_row(tx.workspace, raw["scope"]),
            records={r["id"]: MemoryRecord.model_validate(r) for r in raw["records"]},
            chosen=set(raw["chosen"]),
            dependents=list(raw["dependents"]),
            answers=[(a["id"], a["text"]) for a in raw["answers"]],
            answer_dependents=list(raw["answer_dependents"]),
            unextracted=[(m["id"], m["text"]) for m in raw["unextracted"]],
        )

    async def forget(
        self,
        scope_key: str,
        reached: list[MemoryRecord],
        doomed: set[int],
        *,
        rearm_at: datetime | None,
    ) -> None:
        """The reached records go, the forgotten messages become tombstones (records still
        built on them become unavailable), jobs holding them stop, references to them are
        scrubbed, and the transaction's scopes are written back."""
        tx = self._tx
        tx.touch(*{r.scope_key for r in reached})
        commit = tx.write_back() | {
            "scope_key": scope_key,
            "removed": [r.id for r in reached],
            "doomed": sorted(doomed),
            "rearm_at": rearm_at,
        }
        await tx.conn.execute("SELECT bm_forget_commit($1::jsonb)", dumps(commit))

    async def exchange_meant(
        self,
        scope_key: str,
        *,
        request_id: int,
        speaker_id: int,
        thread_id: int,
        replied_to: tuple[int, int, int] | None,
    ) -> Exchange | None:
        """The exchange a request not to remember (`request_id`) means: the one holding the
        message it replies to (`replied_to`: bot, chat and Telegram message ID), else the
        speaker's previous one in the same Topic of the scope. None when memory holds neither
        (a reply to ordinary group traffic, which is never stored)."""
        tx = self._tx
        if replied_to is not None:
            bot_id, chat_id, telegram_id = replied_to
            row = await tx.conn.fetchrow(
                "SELECT r.id, u.speaker_id, r.user_message_id, r.answer_message_id"
                " FROM messages m JOIN requests r ON r.workspace_id = m.workspace_id"
                " AND r.scope_key = m.scope_key"
                " AND (r.user_message_id = m.id OR r.answer_message_id = m.id)"
                " JOIN messages u ON u.workspace_id = r.workspace_id AND u.id = r.user_message_id"
                " WHERE m.workspace_id = $1 AND m.scope_key = $2 AND m.bot_id = $3"
                " AND m.chat_id = $4 AND m.telegram_message_id = $5 AND r.id <> $6 LIMIT 1",
                tx.workspace,
                scope_key,
                bot_id,
                chat_id,
                telegram_id,
                request_id,
            )
        else:
            row = await tx.conn.fetchrow(
                "SELECT r.id, u.speaker_id, r.user_message_id, r.answer_message_id"
                " FROM requests r JOIN messages u ON u.workspace_id = r.workspace_id"
                " AND u.id = r.user_message_id"
                " WHERE r.workspace_id = $1 AND r.scope_key = $2 AND r.id < $3"
                " AND u.speaker_id = $4 AND u.thread_id = $5 ORDER BY r.id DESC LIMIT 1",
                tx.workspace,
                scope_key,
                request_id,
                speaker_id,
                thread_id,
            )
        if row is None:
            return None
        ids = {row["user_message_id"], row["answer_message_id"]} - {None}
        return Exchange(row["id"], row["speaker_id"], frozenset(ids))

    async def keep_out(
        self,
        scope_key: str,
        reached: list[MemoryRecord],
        doomed: set[int],
        requests: list[int],
        *,
        rearm_at: datetime | None,
    ) -> None:
        """A request not to remember: the answers of these requests are kept out with them
        (flagged as a forget flags them, also one still being written), then the forget's
        statement: the messages become tombstones, the reached records (built on them before)
        go, jobs holding them stop, references are scrubbed, the scopes are written back."""
        tx = self._tx
        await tx.conn.execute(
            "UPDATE requests SET answer_forgotten = true WHERE workspace_id = $1"
            " AND scope_key = $2 AND id = ANY($3::bigint[]) AND NOT answer_forgotten",
            tx.workspace,
            scope_key,
            sorted(set(requests)),
        )
        await self.forget(scope_key, reached, doomed, rearm_at=rearm_at)
