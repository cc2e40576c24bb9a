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
