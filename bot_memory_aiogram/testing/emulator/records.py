"""The emulator's world: the users, chats and messages it knows (pushed by a test or sent by the
bot), per-chat message IDs, and how a message the bot sends is built (replies, threads)."""

from __future__ import annotations

import copy
import time
from typing import Any

from bot_memory_aiogram.testing.emulator.server import EmulatorServer
from bot_memory_aiogram.testing.emulator.wire import JsonDict, as_int, bad_request, truthy


def unix_now() -> int:
    return int(time.time())


class EmulatorRecords(EmulatorServer):
    """Users, chats and messages, shared by every Bot API area."""

    def _register_user(
        self, user_id: int, first_name: str, username: str | None, language_code: str | None
    ) -> JsonDict:
        user: JsonDict = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username is not None:
            user["username"] = username
        if language_code is not None:
            user["language_code"] = language_code
        self._users[user_id] = user
        return user

    def _register_chat(
        self,
        chat_id: int,
        chat_type: str,
        user: JsonDict,
        title: str | None,
        is_forum: bool,
    ) -> JsonDict:
        previous = self._chats.get(chat_id, {})
        chat: JsonDict = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = user["first_name"]
            if "username" in user:
                chat["username"] = user["username"]
        else:
            chat["title"] = title or previous.get("title") or "Test group"
            if "username" in previous:
                chat["username"] = previous["username"]
            if is_forum or previous.get("is_forum"):
                chat["is_forum"] = True
        self._chats[chat_id] = chat
        return chat

    def _chat_for(self, chat_id: int) -> JsonDict:
        chat = self._chats.get(chat_id)
        if chat is None:
            if chat_id > 0:
                user = self._users.get(chat_id, {})
                chat = {
                    "id": chat_id,
                    "type": "private",
                    "first_name": user.get("first_name", "User"),
                }
            else:
                chat = {"id": chat_id, "type": "supergroup", "title": "Test group"}
            self._chats[chat_id] = chat
        return copy.deepcopy(chat)

    def _resolve_chat_id(self, value: Any) -> int:
        chat_id = as_int(value)
        if chat_id is not None:
            return chat_id
        if isinstance(value, str) and value.startswith("@") and len(value) > 1:
            name = value[1:].lower()
            for known_id, chat in self._chats.items():
                if str(chat.get("username", "")).lower() == name:
                    return known_id
            new_id = -1_000_000_000_000 - len(self._chats) - 1
            self._chats[new_id] = {
                "id": new_id,
                "type": "supergroup",
                "title": value[1:],
                "username": value[1:],
            }
            return new_id
        raise bad_request("chat not found")

    def _new_message_id(self, chat_id: int) -> int:
        message_id = self._next_message_id.get(chat_id, 0) + 1
        self._next_message_id[chat_id] = message_id
        return message_id

    def _store_message(self, message: JsonDict) -> None:
        chat = message.get("chat")
        chat_id = as_int(chat.get("id")) if isinstance(chat, dict) else None
        message_id = as_int(message.get("message_id"))
        if chat_id is None or message_id is None:
            return
        self._messages[(chat_id, message_id)] = message
        self._next_message_id[chat_id] = max(self._next_message_id.get(chat_id, 0), message_id)
        if isinstance(chat, dict) and chat_id not in self._chats:
            self._chats[chat_id] = copy.deepcopy(chat)

    def _reply_snapshot(self, chat_id: int, message_id: int) -> JsonDict | None:
        message = self._messages.get((chat_id, message_id))
        if message is None:
            return None
        snapshot = copy.deepcopy(message)
        # Telegram: the replied-to message never contains its own reply_to_message.
        snapshot.pop("reply_to_message", None)
        return snapshot

    def _new_bot_message(self, chat_id: int, params: JsonDict) -> JsonDict:
        chat = self._chat_for(chat_id)
        reply = self._reply_target(chat_id, params)
        message: JsonDict = {
            "message_id": self._new_message_id(chat_id),
            "from": self._bot_user(),
            "chat": chat,
            "date": unix_now(),
        }
        thread_id = as_int(params.get("message_thread_id"))
        if thread_id is None and reply is not None and chat.get("is_forum"):
            thread_id = as_int(reply.get("message_thread_id"))
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            if chat.get("is_forum"):
                message["is_topic_message"] = True
        if reply is not None:
            message["reply_to_message"] = reply
            reply_parameters = params.get("reply_parameters")
            if isinstance(reply_parameters, dict) and isinstance(
                reply_parameters.get("quote"), str
            ):
                quote = reply_parameters["quote"]
                message["quote"] = {
                    "text": quote,
                    "position": as_int(reply_parameters.get("quote_position"), 0),
                    "is_manual": True,
                }
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            message["reply_markup"] = markup
        return message

    def _reply_target(self, chat_id: int, params: JsonDict) -> JsonDict | None:
        reply_parameters = params.get("reply_parameters")
        if isinstance(reply_parameters, dict):
            message_id = as_int(reply_parameters.get("message_id"))
            target_chat = reply_parameters.get("chat_id")
            allow = reply_parameters.get(
                "allow_sending_without_reply", params.get("allow_sending_without_reply")
            )
        else:
            message_id = as_int(params.get("reply_to_message_id"))
            target_chat = None
            allow = params.get("allow_sending_without_reply")
        if message_id is None:
            return None
        source_chat = chat_id if target_chat is None else self._resolve_chat_id(target_chat)
        snapshot = self._reply_snapshot(source_chat, message_id)
        if snapshot is None and not truthy(allow):
            raise bad_request("message to be replied not found")
        return snapshot

    def _require_message_id(self, params: JsonDict) -> tuple[int, int]:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        message_id = as_int(params.get("message_id"))
        if message_id is None:
            raise bad_request("message identifier is not specified")
        return chat_id, message_id
