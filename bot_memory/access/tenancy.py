"""Tenancy: which workspace a chat's memory lives in, and moving a chat between keys.

By default every group and every user's private chat is its own workspace (its own lock, record
cap, prune clock and budget); a named workspace (BOT_MEMORY_WORKSPACE) or the host's resolver
can group chats instead. A chat's memory moves as a whole, in one transaction, when Telegram
upgrades a group to a supergroup, and when a database from before per-chat workspaces is adopted.
"""

from __future__ import annotations

from bot_memory.logs import get_logger
from bot_memory.storage import MoveReport as MoveReport  # what a move returns, said here too
from bot_memory.storage import Store

log = get_logger(__name__)


def default_workspace(bot_id: int, chat_id: int) -> str:
    """The per-chat workspace: one per group, one per user's private chat, per bot."""
    return f"tg:{bot_id}:{chat_id}"


async def move_chat(
    store: Store,
    *,
    bot_id: int,
    old_chat_id: int,
    new_chat_id: int,
    old_workspace: str,
    new_workspace: str,
) -> MoveReport:
    """Move every scope of one chat to another chat ID and/or workspace, inside a transaction
    (a store from `Store.atomic()`; `Tenancy.move_chat` says how).

    Both workspace rows are locked (in name order), so a tick, a tool call or a commit under the
    old key waits and then finds nothing of it: jobs move with their scope and lose their
    ownership token, so a worker that was running one cannot write under the old key.
    """
    report = await store.tenancy.move_chat(
        bot_id=bot_id,
        old_chat_id=old_chat_id,
        new_chat_id=new_chat_id,
        old_workspace=old_workspace,
        new_workspace=new_workspace,
        rekey=lambda key: _rekey(key, new_workspace, new_chat_id),
    )
    if report.scopes:
        log.info(
            "memory.chat_moved",
            bot_id=bot_id,
            old_chat_id=old_chat_id,
            new_chat_id=new_chat_id,
            old_workspace=old_workspace,
            new_workspace=new_workspace,
            scopes=report.scopes,
        )
    return report


def _rekey(scope_key: str, workspace: str, chat_id: int) -> str:
    """The same scope under another workspace and chat ID."""
    _, bot, kind, chat, last = scope_key.split("/")
    if kind == "p":
        return f"{workspace}/{bot}/p/{chat}/{last}"  # a private chat's ID never changes
    return f"{workspace}/{bot}/g/{chat_id}/{last}"


async def adopt_legacy(store: Store, *, single_workspace: str | None) -> int:
    """A database from before per-chat workspaces held a whole bot in one workspace. With no
    named workspace configured, split it: each chat's memory moves to its own workspace.
    With one configured, keep it as it is. Returns the number of chats moved."""
    if single_workspace is not None:
        return 0
    moved = 0
    for old in await store.tenancy.legacy_workspaces():
        for bot_id, chat_id in await store.tenancy.chats_of(old):
            async with store.atomic() as tx:
                await move_chat(
                    tx,
                    bot_id=bot_id,
                    old_chat_id=chat_id,
                    new_chat_id=chat_id,
                    old_workspace=old,
                    new_workspace=default_workspace(bot_id, chat_id),
                )
                moved += 1
        await store.tenancy.end_legacy(old)
    if moved:
        log.info("memory.legacy_split", chats=moved)
    return moved
