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
from datetime import datetime

from bot_memory.logs import get_logger
from bot_memory.records import source_id
from bot_memory.storage import Store, WorkspaceGone, WorkspaceTx
from bot_memory.storage import SweepReport as SweepReport  # what an erasure touched, said here too

log = get_logger(__name__)


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
                edited = await tx.edit_message(
                    bot_id=bot_id,
                    chat_id=chat_id,
                    telegram_message_id=telegram_message_id,
                    text=text,
                )
                if edited is None:
                    continue
                message_id, scope_key = edited
                dependents = await tx.dependents([message_id])
                await tx.invalidate(dependents, "source edited")  # their indexes go pending
                state = await tx.scope_by_key(scope_key)
                if state is not None:
                    await tx.jobs.stop_touching(state.scope, [message_id], "source edited")
                changed.append(source_id(message_id))
                log.info(
                    "memory.source_edited",
                    source=source_id(message_id),
                    invalidated=[r.id for r in dependents],
                )
        except WorkspaceGone:
            continue
    return changed


async def _message_ids(
    store: Store,
    bot_id: int | None,
    chat_id: int,
    telegram_ids: list[int],
) -> dict[str, list[int]]:
    rows = await store.erasure.by_telegram_ids(bot_id, chat_id, telegram_ids)
    bots = {bot for _, _, bot in rows}
    if bot_id is None and chat_id > 0 and len(bots) > 1:
        # A private chat's message IDs are counted per bot: message 7 of one bot's chat with a
        # user is not message 7 of another's. Which bot's was deleted?
        raise ValueError(
            f"chat {chat_id} has messages of several bots ({', '.join(map(str, sorted(bots)))})"
            " with these IDs: pass bot_id to say whose were deleted"
        )
    found: dict[str, list[int]] = {}
    for workspace, message_id, _ in rows:
        found.setdefault(workspace, []).append(message_id)
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
    found = await _message_ids(store, bot_id, chat_id, telegram_message_ids)
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
    found = await _message_ids(store, bot_id, chat_id, telegram_message_ids)
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
            report.add(await store.erasure.erase(workspace, ids, reason=reason))
    return report


async def shorten(tx: WorkspaceTx, message_ids: set[int], until: datetime) -> None:
    """Messages, the answers derived from them and the records built on any of them are kept
    no longer than `until`."""
    reached = await tx.derived_closure(message_ids)
    await tx.shorten_retention(reached, until)
    dependents = await tx.dependents(reached)
    await tx.shorten_availability([r.id for r in dependents], until)
    for key in {r.scope_key for r in dependents}:
        state = await tx.scope_by_key(key)
        if state is not None:
            tx.save(state)  # the recall row carries each record's boundary


async def expire_due(store: Store, now: datetime) -> SweepReport:
    """The worker's expiry pass: every message whose boundary has passed is erased, with all
    that was derived from it. Reads only what is due (an index on the boundary)."""
    rows = await store.erasure.expired(now)
    report = await erase_each(store, rows, reason="expired")
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
    rows = await store.erasure.sweep_targets(ids, user_id=user_id, chat_id=chat_id, bot_id=bot_id)
    report = await erase_each(store, rows, reason="swept")
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
    existed = await store.erasure.purge(workspace)
    log.info("memory.workspace_purged", workspace=workspace, existed=existed)
    return existed
