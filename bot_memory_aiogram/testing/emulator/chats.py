"""Chats and their members: ``getChat`` and ``getChatMember`` answered from what a test set
(who is admin or member, auto-delete timers), and chat actions."""

from __future__ import annotations

import copy
from typing import Any, Final

from bot_memory_aiogram.testing.emulator.records import EmulatorRecords
from bot_memory_aiogram.testing.emulator.wire import Handler, JsonDict, as_int, bad_request

_CHAT_MEMBER_STATUSES: Final = frozenset(
    {"creator", "administrator", "member", "restricted", "left", "kicked"}
)
_STATUS_ALIASES: Final = {"owner": "creator", "admin": "administrator", "banned": "kicked"}


class ChatMethods(EmulatorRecords):
    def _methods(self) -> dict[str, Handler]:
        return {
            **super()._methods(),
            "getChat": self._get_chat,
            "getChatMember": self._get_chat_member,
            "sendChatAction": self._return_true,
        }

    def set_chat_member_status(
        self, chat_id: int, user_id: int, status: str, *, is_member: bool = True
    ) -> None:
        """Status ``getChatMember(chat_id, user_id)`` reports.

        One of creator, administrator, member, restricted, left, kicked (aliases:
        owner, admin, banned). ``is_member`` is reported for "restricted".
        """
        normalized = _STATUS_ALIASES.get(status, status)
        if normalized not in _CHAT_MEMBER_STATUSES:
            msg = f"unknown chat member status {status!r}"
            raise ValueError(msg)
        self._member_status[(chat_id, user_id)] = normalized
        self._member_is_member[(chat_id, user_id)] = is_member

    def set_auto_delete(self, chat_id: int, seconds: int) -> None:
        """``message_auto_delete_time`` that ``getChat`` reports for the chat (0: none)."""
        self._auto_delete[chat_id] = seconds

    async def _get_chat_member(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        user_id = as_int(params.get("user_id"))
        if user_id is None:
            raise bad_request("user not found")
        status = self._member_status.get((chat_id, user_id), self.default_member_status)
        status = _STATUS_ALIASES.get(status, status)
        if user_id == self.bot_id:
            user = self._bot_user()
        else:
            user = copy.deepcopy(
                self._users.get(user_id, {"id": user_id, "is_bot": False, "first_name": "User"})
            )
        member: JsonDict = {"status": status, "user": user}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update(
                {
                    "can_be_edited": False,
                    "is_anonymous": False,
                    "can_manage_chat": True,
                    "can_delete_messages": True,
                    "can_manage_video_chats": True,
                    "can_restrict_members": True,
                    "can_promote_members": False,
                    "can_change_info": True,
                    "can_invite_users": True,
                    "can_post_stories": False,
                    "can_edit_stories": False,
                    "can_delete_stories": False,
                    "can_send_welcome_messages": False,
                    "can_pin_messages": True,
                    "can_manage_topics": True,
                }
            )
        elif status == "restricted":
            member.update(
                {
                    "is_member": self._member_is_member.get((chat_id, user_id), True),
                    "can_send_messages": False,
                    "can_send_audios": False,
                    "can_send_documents": False,
                    "can_send_photos": False,
                    "can_send_videos": False,
                    "can_send_video_notes": False,
                    "can_send_voice_notes": False,
                    "can_send_polls": False,
                    "can_send_other_messages": False,
                    "can_add_web_page_previews": False,
                    "can_react_to_messages": False,
                    "can_edit_tag": False,
                    "can_change_info": False,
                    "can_invite_users": False,
                    "can_pin_messages": False,
                    "can_manage_topics": False,
                    "until_date": 0,
                }
            )
        elif status == "kicked":
            member["until_date"] = 0
        return member

    async def _get_chat(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        chat = self._chat_for(chat_id)
        extra: JsonDict = {}
        if self._auto_delete.get(chat_id):
            extra["message_auto_delete_time"] = self._auto_delete[chat_id]
        return {
            **chat,
            **extra,
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": False,
                "limited_gifts": False,
                "unique_gifts": False,
                "premium_subscription": False,
                "gifts_from_channels": False,
            },
        }
