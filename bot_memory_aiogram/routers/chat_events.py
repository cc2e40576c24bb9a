"""What memory must learn from a chat besides directed messages: edits and deletions, the bot's
and members' membership, group upgrades and auto-delete timers.

Every handler here observes and then lets the update go on (SkipHandler), so a host's own
handlers for the same updates still run. Registering them is also what makes
`dp.resolve_used_update_types()` subscribe to these update types.
"""

from __future__ import annotations

from aiogram import Bot, F, Router
from aiogram.dispatcher.event.bases import SkipHandler
from aiogram.types import BusinessMessagesDeleted, ChatMemberUpdated, Message

from bot_memory.access import MemberStatus
from bot_memory.logs import get_logger
from bot_memory.service import Memory
from bot_memory_aiogram.middleware.memory import MemoryMiddleware
from bot_memory_aiogram.routers.common import chat_moved, timer_changed

log = get_logger(__name__)

GONE_STATUSES = frozenset({"left", "kicked"})


def chat_events_router(middleware: MemoryMiddleware) -> Router:
    router = Router(name="bot_memory.chat_events")

    @router.edited_message(F.text | F.caption)
    async def on_edit(message: Message, bot: Bot, memory: Memory) -> None:
        await memory.record_edit(
            message.chat.id,
            message.message_id,
            message.text or message.caption or "",
            bot_id=bot.id,
        )
        raise SkipHandler

    @router.deleted_business_messages()
    async def on_deleted(event: BusinessMessagesDeleted, bot: Bot, memory: Memory) -> None:
        await memory.remove_messages(event.chat.id, list(event.message_ids), bot_id=bot.id)
        raise SkipHandler

    @router.my_chat_member()
    async def on_bot_membership(update: ChatMemberUpdated, bot: Bot, memory: Memory) -> None:
        chat = update.chat
        workspace = await middleware.workspace_for(bot, chat, update.from_user)
        if workspace is not None and chat.type in ("group", "supergroup"):
            was = update.old_chat_member.status not in GONE_STATUSES
            now = update.new_chat_member.status not in GONE_STATUSES
            if was != now:
                await memory.chats.bot_membership(
                    bot_id=bot.id,
                    chat_id=chat.id,
                    chat_type=chat.type,
                    workspace=workspace,
                    active=now,
                )
        raise SkipHandler

    @router.chat_member()
    async def on_member(update: ChatMemberUpdated, bot: Bot, memory: Memory) -> None:
        member = update.new_chat_member
        memory.access.note(
            bot.id,
            update.chat.id,
            member.user.id,
            MemberStatus(status=member.status, is_member=getattr(member, "is_member", None)),
        )
        raise SkipHandler

    @router.message(chat_moved)
    async def on_upgrade(message: Message, bot: Bot, memory: Memory) -> None:
        if message.migrate_to_chat_id:
            old, new = message.chat.id, message.migrate_to_chat_id
            old_chat, new_type = message.chat, "supergroup"
        else:
            assert message.migrate_from_chat_id is not None
            old, new = message.migrate_from_chat_id, message.chat.id
            old_chat, new_type = (
                message.chat.model_copy(update={"id": old, "type": "group"}),
                "supergroup",
            )
        new_chat = old_chat.model_copy(update={"id": new, "type": new_type})
        old_ws = await middleware.workspace_for(bot, old_chat, message.from_user)
        new_ws = await middleware.workspace_for(bot, new_chat, message.from_user)
        if old_ws is not None and new_ws is not None:
            await memory.chats.migrate_chat(
                bot_id=bot.id,
                old_chat_id=old,
                new_chat_id=new,
                old_workspace=old_ws,
                new_workspace=new_ws,
            )
        raise SkipHandler

    @router.message(timer_changed)
    async def on_timer(message: Message, bot: Bot, memory: Memory) -> None:
        timer = message.message_auto_delete_timer_changed
        assert timer is not None
        workspace = await middleware.workspace_for(bot, message.chat, message.from_user)
        if workspace is not None:
            await memory.chats.auto_delete_changed(
                bot_id=bot.id,
                chat_id=message.chat.id,
                chat_type=message.chat.type,
                workspace=workspace,
                seconds=timer.message_auto_delete_time,
            )
        raise SkipHandler

    return router
