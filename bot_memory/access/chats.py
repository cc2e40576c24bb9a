"""What Telegram tells about the chats themselves, applied to memory: the bot added to a chat
or gone from it (its scopes suspended, not deleted), a group upgraded to a supergroup (its
memory moved to the new ID), the chat's auto-delete timer; and which workspace a chat's memory
lives in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot_memory.access import tenancy
from bot_memory.access.gate import Access
from bot_memory.logs import get_logger
from bot_memory.storage import ChatInfo, MoveReport, Store, WorkspaceGone, WorkspaceTx

log = get_logger(__name__)


@dataclass
class ChatEvents:
    """`Memory.chats`: the adapter's chat_member and service-message handlers call these."""

    store: Store
    access: Access
    named_workspace: str | None = None  # BOT_MEMORY_WORKSPACE: every chat's memory in one

    def default_workspace(self, bot_id: int, chat_id: int) -> str:
        """The named workspace if one is configured, else the chat's own."""
        return self.named_workspace or tenancy.default_workspace(bot_id, chat_id)

    async def chat(self, bot_id: int, chat_id: int) -> ChatInfo | None:
        return await self.store.chat(bot_id, chat_id)

    async def bot_membership(
        self, *, bot_id: int, chat_id: int, chat_type: str, workspace: str, active: bool
    ) -> int:
        """The bot left / was removed from a chat (active=False), or was added back.

        Its scopes are suspended, not deleted: no recall, no memory requests, no jobs, while
        everything stays stored; adding the bot back restores recall of what is still
        retained. Returns the number of scopes changed.
        """
        await self.store.save_chat(
            bot_id=bot_id, chat_id=chat_id, workspace=workspace, chat_type=chat_type
        )
        await self.store.set_bot_active(bot_id, chat_id, active)
        if not active:
            self.access.cache.forget_chat(bot_id, chat_id)
        changed = 0
        try:
            async with self.store.locked(workspace) as tx:
                changed = await self._suspend(tx, bot_id, chat_id, suspended=not active)
        except WorkspaceGone:
            pass  # nothing stored for this chat yet
        log.info(
            "memory.bot_membership",
            chat_id=chat_id,
            active=active,
            scopes=changed,
            reason="bot added" if active else "bot left or was removed",
        )
        return changed

    async def _suspend(self, tx: WorkspaceTx, bot_id: int, chat_id: int, *, suspended: bool) -> int:
        changed = 0
        for state in await tx.scopes_of_chat(bot_id, chat_id):
            if state.suspended == suspended:
                continue
            state.suspended = suspended
            tx.save(state)
            changed += 1
            if suspended:
                await tx.jobs.stop_touching(state.scope, None, "the bot left the chat")
            else:
                await tx.planning.rearm(tx.workspace, state.key, datetime.now(UTC))
        return changed

    async def migrate_chat(
        self,
        *,
        bot_id: int,
        old_chat_id: int,
        new_chat_id: int,
        old_workspace: str,
        new_workspace: str,
    ) -> MoveReport:
        """A group became a supergroup: its memory moves to the new chat ID, in one
        transaction. Idempotent (both service messages may arrive)."""
        async with self.store.atomic() as tx:
            report = await tenancy.move_chat(
                tx,
                bot_id=bot_id,
                old_chat_id=old_chat_id,
                new_chat_id=new_chat_id,
                old_workspace=old_workspace,
                new_workspace=new_workspace,
            )
            await tx.chat_migrated(bot_id, old_chat_id, new_chat_id)
        self.access.cache.forget_chat(bot_id, old_chat_id)
        return report

    async def auto_delete_changed(
        self, *, bot_id: int, chat_id: int, chat_type: str, workspace: str, seconds: int
    ) -> None:
        """The chat's auto-delete timer changed: messages recorded from now on are kept no
        longer than it (earlier ones keep the boundary they were recorded with)."""
        await self.store.save_chat(
            bot_id=bot_id,
            chat_id=chat_id,
            workspace=workspace,
            chat_type=chat_type,
            auto_delete_seconds=seconds or None,
            auto_delete_known=True,
        )
