"""Which messages are directed at the bot (the only group traffic memory ever records), and who
sent them."""

from __future__ import annotations

from aiogram.types import Message

from bot_memory.access import ANONYMOUS_ADMIN_BOT_ID, Requester


def requester_of(message: Message) -> Requester | None:
    """The human behind a message: its sender, or the group itself for an anonymous admin
    (whose `from` is a placeholder bot). None for bots, channels and unknown senders."""
    sender_chat = message.sender_chat
    if sender_chat is not None:
        if sender_chat.id == message.chat.id:
            return Requester(user_id=sender_chat.id, chat_id=message.chat.id, anonymous_admin=True)
        return None  # a channel speaking: nobody in particular
    user = message.from_user
    if user is None or user.is_bot or user.id == ANONYMOUS_ADMIN_BOT_ID:
        return None
    return Requester(user_id=user.id, chat_id=message.chat.id)


def is_directed(message: Message, *, bot_id: int, bot_username: str | None) -> bool:
    """Every private message; in groups a mention of the bot, a reply to it, or a command to it."""
    if message.chat.type == "private":
        return True
    reply = message.reply_to_message
    if (
        reply is not None
        and reply.from_user is not None
        and reply.from_user.id == bot_id
        # In forum topics every message "replies" to the topic's creation message.
        and reply.forum_topic_created is None
        and not (message.is_topic_message and reply.message_id == message.message_thread_id)
    ):
        return True
    text = message.text or message.caption or ""
    username = (bot_username or "").casefold()
    for entity in message.entities or message.caption_entities or []:
        if entity.type == "text_mention" and entity.user is not None and entity.user.id == bot_id:
            return True
        if (
            entity.type == "mention"
            and username
            and entity.extract_from(text).casefold() == "@" + username
        ):
            return True
        if entity.type == "bot_command" and entity.offset == 0:
            command = entity.extract_from(text)
            if "@" not in command:
                return True  # a bare /command in a group is addressed to every bot in it
            return command.split("@", 1)[1].casefold() == username
    return False


def message_flags(message: Message) -> tuple[bool, bool]:
    """(quoted, forwarded): either makes a message insufficient for a memory request."""
    quoted = message.quote is not None or any(
        e.type in ("blockquote", "expandable_blockquote") and e.offset == 0
        for e in message.entities or []
    )
    forwarded = message.forward_origin is not None or bool(message.is_automatic_forward)
    return quoted, forwarded


def replied_to(message: Message) -> int | None:
    """Telegram's ID of the message this one replies to in its chat: None for none, and for the
    reply every message in a forum Topic makes to the Topic's creation."""
    reply = message.reply_to_message
    if reply is None or reply.forum_topic_created is not None:
        return None
    if message.is_topic_message and reply.message_id == message.message_thread_id:
        return None
    return reply.message_id
