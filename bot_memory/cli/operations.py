"""What the operator's command line reads and changes (see commands.py for how it is shown).

Reads are the storage's (`Store.operations`); changes go through the same code paths as the bot
(the workspace lock, the forget cascade, the planner), as an operator acting with admin rights.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot_memory.access import Membership
from bot_memory.control import ControlResult, forget_record
from bot_memory.errors import BotMemoryError
from bot_memory.pipeline import Pin, disagreements, lacks, live_window, plan_pending
from bot_memory.records import MemoryRecord
from bot_memory.scopes import Scope
from bot_memory.storage import Store, WorkspaceGone

OPERATOR = Membership(member=True, admin=True, reason="operator")


class NotFound(BotMemoryError, LookupError):
    """A memory, job, workspace or scope that does not exist (said plainly, no traceback)."""


async def status(
    store: Store,
    *,
    limit: int = 50,
    workspace: str | None = None,
    live_within: timedelta | None = None,
    cap: tuple[int, float] | None = None,
) -> dict[str, Any]:
    """Every workspace's figures (or one workspace's, for its admins in the Mini App); each
    worker and what it calls; jobs waiting for a model no worker that ticked within
    `live_within` calls (default: three default ticks and a minute), with what each live
    worker lacks for them. With `cap` (workspace_max_records, scope_max_share), the scopes of
    these workspaces holding at least their fair share of it, and the speakers whose notes
    do: past the cap, their least used records are the first to go."""
    live_within = live_within or live_window(60.0)
    found = await store.operations.status(
        limit=limit, workspace=workspace, live_within=live_within, cap=cap
    )
    live = [w for w in found.workers if w["live"]]
    return {
        "totals": found.totals,
        "workspaces": found.workspaces,
        "problems": found.problems,
        "at_share": [
            {k: r[k] for k in ("workspace", "holder", "who", "held", "share")}
            for r in found.at_share
        ],
        "workers": found.workers,
        "waiting": waiting_for_models(found.pinned, live),
        # Settings a live worker runs with differently from a bot (not its model: above).
        "disagreements": disagreements(found.bots, live),
    }


def waiting_for_models(
    pinned: list[dict[str, Any]], live: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Job counts by pinned model that no live worker calls, each with what every live worker
    lacks for it (a worker that has not ticked yet, or ticked with no model, says nothing)."""
    calls = {Pin(w["provider"], w["model"]) for w in live if w["provider"] is not None}
    waiting = []
    for group in pinned:
        wanted = Pin(group["provider"], group["model"])
        if wanted in calls:
            continue
        lacking = [
            {
                "worker": w["worker"],
                "provider": w["provider"],
                "model": w["model"],
                "lacks": lacks(Pin(w["provider"], w["model"]), wanted),
            }
            for w in live
            if w["provider"] is not None
        ]
        waiting.append({**group, "lacking": lacking})
    return waiting


async def inspect(store: Store, workspace: str, scope_key: str | None) -> list[dict[str, Any]]:
    view = await store.operations.inspect(workspace, scope_key)
    if view == "workspace":
        raise NotFound(f"no workspace {workspace!r}")
    if view == "scope":
        raise NotFound(f"no scope {scope_key!r} in workspace {workspace!r}")
    records = [r for r in view.records.values() if scope_key is None or r.scope_key == scope_key]
    records.sort(key=lambda r: (r.scope_key, r.created_at, r.id), reverse=True)
    return [_provenance(r.model_dump(mode="json")) for r in records]


async def export(
    store: Store, *, user_id: int | None = None, scope_key: str | None = None
) -> list[dict[str, Any]]:
    """The records a person may take with them: those of their private chats and, in groups,
    those whose statements are all theirs; or every record of one scope."""
    workspaces = await store.operations.export_workspaces(user_id=user_id, scope_key=scope_key)
    if workspaces is None:
        raise NotFound(f"no scope {scope_key!r}")
    out: list[dict[str, Any]] = []
    async for workspace, view in store.operations.views(workspaces):
        for record in view.records.values():
            if not record.valid:
                continue
            scope = view.scopes.get(record.scope_key)
            if scope_key is not None:
                keep = record.scope_key == scope_key
            else:
                keep = may_take(record, scope.scope if scope else None, user_id)
            if keep:
                out.append(export_line(workspace, record))
    out.sort(key=lambda r: (r["scope_key"], r["created_at"]))
    return out


def may_take(record: MemoryRecord, scope: Scope | None, user_id: int | None) -> bool:
    """Whether a person may take a record with them: all of their private chat's, and in
    groups those made only of their own statements."""
    if scope is not None and scope.is_private:
        return scope.user_id == user_id
    return record.speaker_ids == [user_id]


def export_line(workspace: str, record: MemoryRecord) -> dict[str, Any]:
    """One line of an export (the CLI's and the Mini App's): the record with its provenance."""
    return {"workspace": workspace, **_provenance(record.model_dump(mode="json"))}


async def forget(store: Store, memory_id: str) -> ControlResult:
    scope = await store.operations.scope_of_record(memory_id)
    if scope is None:
        raise NotFound(f"no memory {memory_id!r}")
    return await forget_record(
        store, scope, memory_id, actor_id=0, who=OPERATOR, now=datetime.now(UTC)
    )


async def consolidate(store: Store, scope_key: str, *, provider: str, model: str) -> int:
    # A host's workspace names may hold "/": look the scope up rather than split its key.
    workspace = await store.operations.workspace_of_scope(scope_key)
    if workspace is None:
        raise NotFound(f"no scope {scope_key!r} (bot-memory inspect WORKSPACE lists them)")
    try:
        async with store.locked(workspace) as tx:
            state = await tx.scope_by_key(scope_key)
            if state is None:
                raise NotFound(f"no scope {scope_key!r}")
            state.index.pending = True
            tx.save(state)
            job = await plan_pending(tx, state, provider=provider, model=model, force=True)
    except WorkspaceGone as exc:
        raise NotFound(f"no scope {scope_key!r}: its workspace is gone") from exc
    if job is None:
        raise NotFound(
            f"nothing to consolidate in {scope_key!r}: no records, or this exact input is"
            " already waiting or stopped on an unknown outcome (bot-memory retry)"
        )
    return job


async def retry(store: Store, job_id: int) -> dict[str, Any]:
    """Re-arm a job stopped on an unknown provider outcome (or failed for good), after an
    operator has checked the provider's bill: it runs again from scratch, claims reset."""
    row = await store.operations.rearm(job_id)
    if row is None:
        known = await store.operations.job_phase(job_id)
        if known is None:
            raise NotFound(f"no job {job_id}")
        phase, stop_kind = known
        raise NotFound(
            f"job {job_id} is {phase}"
            + (f" ({stop_kind})" if stop_kind else "")
            + ": only a job stopped on an unknown outcome, or failed, is re-armed"
        )
    return row


def _provenance(record: dict[str, Any]) -> dict[str, Any]:
    """A record with its sources spelled out: ID, hash, speaker, role, inherited."""
    record["sources"] = [
        {
            "source_id": f"m{s['message_id']}",
            "hash": s["hash"],
            "speaker_id": s["speaker_id"],
            "role": s["role"],
            "inherited": s["inherited"],
        }
        for s in record["sources"]
    ]
    return record
