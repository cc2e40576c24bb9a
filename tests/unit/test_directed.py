"""Which messages count as directed at the bot (pure, on aiogram's own Message model)."""

from __future__ import annotations

from typing import Any

import pytest
from aiogram.types import Message

from bot_memory_aiogram.middleware.directed import is_directed, message_flags
from bot_memory_aiogram.routers import ForMemory
from bot_memory_aiogram.testing import command_entity, mention_entity

BOT_ID, BOT = 42, "memory_test_bot"
USER = {"id": 7, "is_bot": False, "first_name": "U"}
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "B", "username": BOT}
GROUP = {"id": -100, "type": "supergroup", "title": "G", "is_forum": True}


def msg(text: str = "hi", chat: dict[str, Any] | None = None, **extra: Any) -> Message:
    data = {"message_id": 10, "date": 0, "chat": chat or GROUP, "from": USER, "text": text}
    data.update(extra)
    return Message.model_validate(data)


def reply_to(sender: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"message_id": 3, "date": 0, "chat": GROUP, "from": sender, "text": "x", **extra}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (msg(chat={"id": 7, "type": "private", "first_name": "U"}), True),
        (msg("lunch anyone?"), False),
        (msg(f"@{BOT} hi", entities=[mention_entity(f"@{BOT} hi", BOT)]), True),
        (msg("@other_bot hi", entities=[mention_entity("@other_bot hi", "other_bot")]), False),
        (msg("/remember x", entities=[command_entity("/remember x")]), True),
        (msg(f"/remember@{BOT} x", entities=[command_entity(f"/remember@{BOT} x")]), True),
        (msg("/remember@other_bot x", entities=[command_entity("/remember@other_bot x")]), False),
        (msg("thanks", reply_to_message=reply_to(BOT_USER)), True),
        (msg("thanks", reply_to_message=reply_to(USER)), False),
        # In a topic the bot created, every message "replies" to the creation message.
        (
            msg(
                "hello all",
                message_thread_id=3,
                is_topic_message=True,
                reply_to_message=reply_to(
                    BOT_USER, forum_topic_created={"name": "T", "icon_color": 1}
                ),
            ),
            False,
        ),
        (
            msg(
                "hello all",
                message_thread_id=3,
                is_topic_message=True,
                reply_to_message=reply_to(BOT_USER),
            ),
            False,
        ),
    ],
)
def test_is_directed(message: Message, expected: bool) -> None:
    assert is_directed(message, bot_id=BOT_ID, bot_username=BOT) is expected


def test_quoted_and_forwarded_flags() -> None:
    assert message_flags(msg()) == (False, False)
    quoted = msg(quote={"text": "remember that", "position": 0})
    assert message_flags(quoted) == (True, False)
    forwarded = msg(forward_origin={"type": "user", "date": 0, "sender_user": USER})
    assert message_flags(forwarded) == (False, True)


# Which messages reach memory's routers at all (the parent router's one check).
SOURCE = object()  # stands for the recorded source: only its presence matters


@pytest.mark.parametrize(
    ("message", "data", "reference_agent", "passes", "action"),
    [
        (msg("lunch anyone?"), {}, False, False, None),  # a group's ordinary traffic
        (msg("hello there"), {"memory_source": SOURCE}, False, False, None),
        (msg("hello there"), {"memory_source": SOURCE}, True, True, None),  # the agent answers
        (
            msg("remember that the boat is Aurora"),
            {"memory_source": SOURCE},
            False,
            True,
            "remember",
        ),
        (
            msg("记住我喜欢茶"),
            {"memory_unavailable": True},
            False,
            True,
            "remember",
        ),  # the outage notice
        (msg("hello there"), {"memory_unavailable": True}, False, False, None),
        (msg("/memory"), {"memory_source": SOURCE}, False, True, None),
        (msg("/start bm-x"), {}, False, True, None),  # a Mini App link whose recording failed
        (msg("x", migrate_to_chat_id=-1001), {}, False, True, None),
        (
            msg("x", message_auto_delete_timer_changed={"message_auto_delete_time": 86400}),
            {},
            False,
            True,
            None,
        ),
    ],
)
async def test_memory_routers_see_only_messages_they_could_take(
    message: Message, data: dict[str, Any], reference_agent: bool, passes: bool, action: str | None
) -> None:
    got = await ForMemory(reference_agent=reference_agent)(message, **data)
    assert bool(got) is passes
    if isinstance(got, dict):
        read = got["memory_request"]
        assert (read.action if read else None) == action
