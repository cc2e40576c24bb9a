"""Messages: what users send (pushed by a test, edited later) and what the bot sends, edits,
deletes, copies and forwards, checked as Telegram checks text and inline keyboards."""

from __future__ import annotations

import copy
from typing import Any, Final

from bot_memory_aiogram.testing.emulator.entities import auto_entities, utf16_len
from bot_memory_aiogram.testing.emulator.parse_mode import format_text
from bot_memory_aiogram.testing.emulator.records import EmulatorRecords, unix_now
from bot_memory_aiogram.testing.emulator.wire import Handler, JsonDict, as_int, bad_request

_MAX_MESSAGE_LENGTH: Final = 4096

#: The placeholder sender Telegram puts in ``from`` for anonymous group admins.
_ANONYMOUS_ADMIN: Final = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}


class MessageMethods(EmulatorRecords):
    def _methods(self) -> dict[str, Handler]:
        return {
            **super()._methods(),
            "sendMessage": self._send_message,
            "editMessageText": self._edit_message_text,
            "deleteMessage": self._delete_message,
            "copyMessage": self._copy_message,
            "forwardMessage": self._forward_message,
        }

    def push_message(
        self,
        *,
        chat_id: int,
        user_id: int,
        text: str | None = None,
        chat_type: str = "private",
        first_name: str = "User",
        username: str | None = None,
        language_code: str | None = "en",
        thread_id: int | None = None,
        is_forum: bool = False,
        is_topic_message: bool | None = None,
        reply_to_message_id: int | None = None,
        entities: list[JsonDict] | None = None,
        caption: str | None = None,
        photo: bool = False,
        forward_from_user_id: int | None = None,
        quote_text: str | None = None,
        chat_title: str | None = None,
        anonymous_admin: bool = False,
        date: int | None = None,
    ) -> JsonDict:
        """Queue a ``message`` update from a user and return it.

        * ``chat_type``: "private", "group", "supergroup" (groups are titled
          ``chat_title``, default "Test group"; a chat keeps its title/forum flag).
        * ``entities=None`` auto-detects ``/commands`` and ``@mentions`` like Telegram
          does; pass ``[]`` for none or an explicit list (see :func:`mention_entity`).
        * ``thread_id`` sets ``message_thread_id``; in a forum (``is_forum=True``)
          ``is_topic_message`` defaults to ``True``.  A reply without ``thread_id`` to a
          message in a forum topic inherits the topic.
        * ``reply_to_message_id`` of a message the emulator knows (pushed or sent by the
          bot in this chat) adds the full ``reply_to_message``; unknown ids add nothing
          (as for a deleted message).  ``quote_text`` adds ``quote``.
        * ``photo=True`` sends a one-size photo; ``text`` then becomes the caption
          unless ``caption`` is given.
        * ``forward_from_user_id`` adds ``forward_origin`` of type "user".
        * ``anonymous_admin=True`` sends as the group itself, like Telegram does for an
          anonymous admin: ``sender_chat`` is the chat and ``from`` the GroupAnonymousBot
          placeholder (``user_id`` only registers who is behind it).
        * ``date`` overrides the message's Unix time (default: now).
        """
        user = self._register_user(user_id, first_name, username, language_code)
        chat = self._register_chat(chat_id, chat_type, user, chat_title, is_forum)
        message_id = self._new_message_id(chat_id)
        message: JsonDict = {
            "message_id": message_id,
            "from": copy.deepcopy(user),
            "chat": copy.deepcopy(chat),
            "date": unix_now() if date is None else date,
        }
        if anonymous_admin:
            message["from"] = copy.deepcopy(_ANONYMOUS_ADMIN)
            message["sender_chat"] = copy.deepcopy(chat)
        forum = bool(chat.get("is_forum"))
        reply: JsonDict | None = None
        if reply_to_message_id is not None:
            reply = self._reply_snapshot(chat_id, reply_to_message_id)
            if reply is not None and thread_id is None and forum:
                thread_id = reply.get("message_thread_id")
        if thread_id is not None:
            message["message_thread_id"] = thread_id
        topic = (
            is_topic_message if is_topic_message is not None else thread_id is not None and forum
        )
        if topic:
            message["is_topic_message"] = True
        if forward_from_user_id is not None:
            sender = self._users.get(forward_from_user_id) or {
                "id": forward_from_user_id,
                "is_bot": False,
                "first_name": "Forwarded User",
            }
            message["forward_origin"] = {
                "type": "user",
                "sender_user": copy.deepcopy(sender),
                "date": unix_now() - 60,
            }
        if reply is not None:
            message["reply_to_message"] = reply
        if quote_text is not None:
            position = 0
            replied_text = (reply or {}).get("text") or (reply or {}).get("caption") or ""
            if isinstance(replied_text, str) and quote_text in replied_text:
                position = utf16_len(replied_text[: replied_text.index(quote_text)])
            message["quote"] = {"text": quote_text, "position": position}
        if photo:
            message["photo"] = [
                {
                    "file_id": f"photo-{chat_id}-{message_id}",
                    "file_unique_id": f"uniq-{chat_id}-{message_id}",
                    "width": 320,
                    "height": 240,
                    "file_size": 4096,
                }
            ]
            if caption is None:
                caption = text
        elif text is not None:
            message["text"] = text
            found = auto_entities(text) if entities is None else entities
            if found:
                message["entities"] = copy.deepcopy(found)
        if caption is not None:
            message["caption"] = caption
            found = entities if photo and entities is not None else auto_entities(caption)
            if found:
                message["caption_entities"] = copy.deepcopy(found)
        self._store_message(message)
        return self._enqueue({"message": message})

    def push_edited_message(
        self,
        *,
        chat_id: int,
        message_id: int,
        text: str | None = None,
        caption: str | None = None,
        entities: list[JsonDict] | None = None,
    ) -> JsonDict:
        """Queue an ``edited_message`` update for a previously pushed message.

        The stored message gets the new ``text`` (or ``caption``) and ``edit_date``;
        ``entities=None`` re-detects commands/mentions.  ``KeyError`` for unknown messages.
        """
        stored = self._messages.get((chat_id, message_id))
        if stored is None:
            msg = f"no known message {message_id} in chat {chat_id} to edit"
            raise KeyError(msg)
        message = copy.deepcopy(stored)
        for field_name, entities_name, value in (
            ("text", "entities", text),
            ("caption", "caption_entities", caption),
        ):
            if value is None:
                continue
            message[field_name] = value
            found = auto_entities(value) if entities is None else entities
            message.pop(entities_name, None)
            if found:
                message[entities_name] = copy.deepcopy(found)
        message["edit_date"] = max(unix_now(), int(message.get("date", 0)))
        self._store_message(message)
        return self._enqueue({"edited_message": message})

    def _checked_text(self, params: JsonDict) -> tuple[str, list[JsonDict]]:
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise bad_request("message text is empty")
        plain, entities = format_text(text, params.get("parse_mode"), params.get("entities"))
        if not plain.strip():
            raise bad_request("message text is empty")
        if len(plain) > _MAX_MESSAGE_LENGTH:
            raise bad_request("message is too long")
        return plain, entities

    def _check_markup(self, chat_id: int, params: JsonDict) -> None:
        """Inline buttons as Telegram checks them: a web_app button only in a private chat,
        and only to an HTTPS page."""
        markup = params.get("reply_markup")
        rows = markup.get("inline_keyboard", []) if isinstance(markup, dict) else []
        for button in (b for row in rows if isinstance(row, list) for b in row):
            web_app = button.get("web_app") if isinstance(button, dict) else None
            if web_app is None:
                continue
            if self._chat_for(chat_id).get("type") != "private":
                raise bad_request("BUTTON_TYPE_INVALID")
            url = str(web_app.get("url", "")) if isinstance(web_app, dict) else ""
            if not url.startswith("https://"):
                raise bad_request(
                    f"inline keyboard button Web App URL '{url}' is invalid:"
                    " Only HTTPS links are allowed"
                )

    async def _send_message(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        self._check_markup(chat_id, params)
        plain, entities = self._checked_text(params)
        message = self._new_bot_message(chat_id, params)
        message["text"] = plain
        if entities:
            message["entities"] = entities
        self._store_message(message)
        return copy.deepcopy(message)

    async def _edit_message_text(self, params: JsonDict) -> Any:
        if params.get("inline_message_id"):
            self._checked_text(params)
            return True
        key = self._require_message_id(params)
        stored = self._messages.get(key)
        if stored is None:
            raise bad_request("message to edit not found")
        if stored.get("from", {}).get("id") != self.bot_id:
            raise bad_request("message can't be edited")
        plain, entities = self._checked_text(params)
        self._check_markup(key[0], params)
        markup = params.get("reply_markup")
        if (
            plain == stored.get("text")
            and entities == stored.get("entities", [])
            and (markup is None or markup == stored.get("reply_markup"))
        ):
            raise bad_request(
                "message is not modified: specified new message content and reply markup "
                "of the specified message are exactly the same as a previous content and "
                "reply markup of the specified message"
            )
        message = copy.deepcopy(stored)
        message["text"] = plain
        message.pop("entities", None)
        if entities:
            message["entities"] = entities
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            message["reply_markup"] = markup
        message["edit_date"] = max(unix_now(), int(message.get("date", 0)))
        self._store_message(message)
        return copy.deepcopy(message)

    async def _delete_message(self, params: JsonDict) -> Any:
        key = self._require_message_id(params)
        if self._messages.pop(key, None) is None:
            raise bad_request("message to delete not found")
        return True

    def _copy_source(self, params: JsonDict) -> JsonDict:
        from_chat = self._resolve_chat_id(params.get("from_chat_id"))
        message_id = as_int(params.get("message_id"))
        source = self._messages.get((from_chat, message_id or 0))
        if source is None:
            raise bad_request("message to copy not found")
        return source

    async def _copy_message(self, params: JsonDict) -> Any:
        source = self._copy_source(params)
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        message = self._new_bot_message(chat_id, params)
        for key in ("text", "entities", "caption", "caption_entities", "photo", "document"):
            if key in source:
                message[key] = copy.deepcopy(source[key])
        self._store_message(message)
        return {"message_id": message["message_id"]}

    async def _forward_message(self, params: JsonDict) -> Any:
        source = self._copy_source(params)
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        message = self._new_bot_message(chat_id, {"chat_id": chat_id})
        for key in ("text", "entities", "caption", "caption_entities", "photo", "document"):
            if key in source:
                message[key] = copy.deepcopy(source[key])
        sender = source.get("from")
        if isinstance(sender, dict):
            message["forward_origin"] = {
                "type": "user",
                "sender_user": copy.deepcopy(sender),
                "date": source.get("date", unix_now()),
            }
        self._store_message(message)
        return copy.deepcopy(message)
