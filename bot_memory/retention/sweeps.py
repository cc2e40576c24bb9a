"""When sources change or go: memory never outlives what it was built from.

Edits make records built on the old text unavailable. Expiry (a message's retention boundary
passing), removal (a host reports a deletion) and privacy sweeps erase: the message's text goes
(the row may stay, content-free: ID and hash), and in the same transaction everything derived
from it goes too, transitively: records that depend on it (directly or inherited), answers that
were given those records, records built from those answers, checkpoints of jobs that hold any of
them, tombstones of the erased originals, and the recall rows and indexes that named them.

Every change here locks the workspace first (the order every path keeps), then rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from bot_memory.logs import get_logger
from bot_memory.records import content_hash, source_id
from bot_memory.storage import (
    Limits,
    Store,
    WorkspaceGone,
    WorkspaceTx,
    recall_limits,
    stop_jobs_touching,
)
from bot_memory.terms import text_vector

log = get_logger(__name__)


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


async def apply_edit(
    store: Store,
    *,
    bot_id: int,
    chat_id: int,
    telegram_message_id: int,
    text: str,
) -> list[str]:
    """A recorded message's text or caption changed: keep the new text, make every record
    built on the old one unavailable. Returns the source IDs whose content changed."""
    changed: list[str] = []
    found = await store.find_messages(bot_id, chat_id, [telegram_message_id])
    for workspace in found:
        try:
            async with store.locked(workspace) as tx:
                row = await tx.conn.fetchrow(
                    "UPDATE messages SET text = $5, content_hash = $6, edited_at = now(),"
                    " search = $7::tsvector WHERE workspace_id = $1 AND bot_id = $2"
                    " AND chat_id = $3"
                    " AND telegram_message_id = $4 AND text IS NOT NULL AND content_hash <> $6"
                    " RETURNING id, scope_key",
                    workspace,
                    bot_id,
                    chat_id,
                    telegram_message_id,
                    text,
                    content_hash(text),
                    text_vector(text),
                )
                if row is None:
                    continue
                dependents = await tx.dependents([row["id"]])
                await tx.invalidate(dependents, "source edited")  # their indexes go pending
                state = await tx.scope_by_key(row["scope_key"])
                if state is not None:
                    await stop_jobs_touching(tx.conn, state.scope, [row["id"]], "source edited")
                changed.append(source_id(row["id"]))
                log.info(
                    "memory.source_edited",
                    source=source_id(row["id"]),
                    invalidated=[r.id for r in dependents],
                )
        except WorkspaceGone:
            continue
    return changed


async def derived_closure(tx: WorkspaceTx, message_ids: set[int]) -> set[int]:
    """These messages and every answer derived from them, and from those, to a fixed point."""
    # Answers derived from records built on answers: a record's sources include answers, and
    # an answer's dependencies are the sources of the records it was given.
    reached: list[int] = await tx.conn.fetchval(
        "SELECT bm_derived_closure($1, $2::bigint[])", tx.workspace, sorted(message_ids)
    )
    return set(reached)


async def erase(
    conn: asyncpg.Connection | asyncpg.Pool,
    workspace: str,
    message_ids: Iterable[int],
    *,
    reason: str,
    limits: Limits,
) -> SweepReport:
    """Erase these messages and everything derived from them, in one statement (bm_erase,
    which takes the workspace lock): answers derived from them to a fixed point, the records
    depending on any of them (directly or inherited), requests still being answered with any
    of it flagged, job checkpoints, tombstones of the erased originals, references to them, and
    the recall rows and indexes that named them. WorkspaceGone if there is no workspace."""
    row = await conn.fetchrow(
        "SELECT * FROM bm_erase($1, $2::bigint[], $3, $4, $5)",
        workspace,
        sorted(set(message_ids)),
        reason,
        *recall_limits(limits),
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


async def drop_empty_scopes(tx: WorkspaceTx, scope_keys: Iterable[str]) -> int:
    """Scopes with nothing stored (no records, tombstones or retained messages) and default
    switches are dropped, so the per-scope rows of a workspace stay bounded."""
    keys = sorted(scope_keys)
    if not keys:
        return 0
    dropped: list[str] = await tx.conn.fetchval(
        "SELECT bm_drop_empty_scopes($1, $2::text[])", tx.workspace, keys
    )
    tx.discard(*dropped)
    return len(dropped)


async def _message_ids(
    conn: asyncpg.Connection | asyncpg.Pool,
    bot_id: int | None,
    chat_id: int,
    telegram_ids: list[int],
) -> dict[str, list[int]]:
    rows = await conn.fetch(
        "SELECT workspace_id, id, bot_id FROM messages WHERE chat_id = $1"
        " AND telegram_message_id = ANY($2::bigint[]) AND ($3::bigint IS NULL OR bot_id = $3)",
        chat_id,
        telegram_ids,
        bot_id,
    )
    bots = {r["bot_id"] for r in rows}
    if bot_id is None and chat_id > 0 and len(bots) > 1:
        # A private chat's message IDs are counted per bot: message 7 of one bot's chat with a
        # user is not message 7 of another's. Which bot's was deleted?
        raise ValueError(
            f"chat {chat_id} has messages of several bots ({', '.join(map(str, sorted(bots)))})"
            " with these IDs: pass bot_id to say whose were deleted"
        )
    found: dict[str, list[int]] = {}
    for r in rows:
        found.setdefault(r["workspace_id"], []).append(r["id"])
    return found


async def remove_messages(
    store: Store,
    *,
    chat_id: int,
    telegram_message_ids: list[int],
    bot_id: int | None,
    reason: str = "removed",
) -> SweepReport:
    """A host learned that these Telegram messages were deleted: erase them now."""
    found = await _message_ids(store.pool, bot_id, chat_id, telegram_message_ids)
    report = await erase_each(store, found.items(), reason=reason)
    log.info("memory.messages_removed", chat_id=chat_id, **report.as_dict())
    return report


async def set_retention(
    store: Store,
    *,
    chat_id: int,
    telegram_message_ids: list[int],
    until: datetime,
    bot_id: int | None,
    now: datetime,
) -> SweepReport:
    """Shorten (never extend) how long these messages, and everything derived from them, are
    kept. A boundary already past erases at once."""
    found = await _message_ids(store.pool, bot_id, chat_id, telegram_message_ids)
    if until <= now:
        return await erase_each(store, found.items(), reason="expired")
    for workspace, ids in found.items():
        with contextlib.suppress(WorkspaceGone):  # purged meanwhile: nothing left to keep
            async with store.locked(workspace) as tx:
                await shorten(tx, set(ids), until)
    return SweepReport()


async def erase_each(
    store: Store, by_workspace: Iterable[tuple[str, list[int]]], *, reason: str
) -> SweepReport:
    """Erase messages workspace by workspace, each under its lock; a workspace purged
    meanwhile has nothing left to erase."""
    report = SweepReport()
    for workspace, ids in by_workspace:
        with contextlib.suppress(WorkspaceGone):
            report.add(await erase(store.pool, workspace, ids, reason=reason, limits=store.limits))
    return report


async def shorten(tx: WorkspaceTx, message_ids: set[int], until: datetime) -> None:
    """Messages, the answers derived from them and the records built on any of them are kept
    no longer than `until`."""
    reached = await derived_closure(tx, message_ids)
    await tx.conn.execute(
        "UPDATE messages SET retain_until = least(retain_until, $3) WHERE workspace_id = $1"
        " AND id = ANY($2::bigint[])",
        tx.workspace,
        sorted(reached),
        until,
    )
    dependents = await tx.dependents(reached)
    await tx.conn.execute(
        "UPDATE memory_records SET available_until = least(available_until, $3)"
        " WHERE workspace_id = $1 AND id = ANY($2::text[])",
        tx.workspace,
        [r.id for r in dependents],
        until,
    )
    for key in {r.scope_key for r in dependents}:
        state = await tx.scope_by_key(key)
        if state is not None:
            tx.save(state)  # the recall row carries each record's boundary


async def expire_due(store: Store, now: datetime) -> SweepReport:
    """The worker's expiry pass: every message whose boundary has passed is erased, with all
    that was derived from it. Reads only what is due (an index on the boundary)."""
    rows = await store.pool.fetch(
        "SELECT workspace_id, array_agg(id) AS ids FROM messages WHERE retain_until <= $1"
        " AND erased_at IS NULL GROUP BY workspace_id LIMIT 200",
        now,
    )
    report = await erase_each(
        store, ((r["workspace_id"], r["ids"]) for r in rows), reason="expired"
    )
    if rows:
        log.info("retention.expired", workspaces=len(rows), **report.as_dict())
    return report


async def privacy_sweep(
    store: Store,
    *,
    source_ids: Iterable[str] = (),
    user_id: int | None = None,
    chat_id: int | None = None,
    bot_id: int | None = None,
) -> SweepReport:
    """Erase by source IDs, by user (their messages and the answers to them) or by chat, and
    everything derived from them, transitively, in every workspace they appear in."""
    ids = [int(s[1:]) for s in source_ids if s[:1] == "m" and s[1:].isdigit()]
    rows = await store.pool.fetch(
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
        ids,
        user_id,
        chat_id,
        bot_id,
    )
    report = await erase_each(store, ((r["workspace_id"], r["ids"]) for r in rows), reason="swept")
    log.info("memory.privacy_sweep", **report.as_dict())
    return report


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
