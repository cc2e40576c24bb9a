"""Media the bot sends (photos, documents, albums, dice and the other ``send*`` methods
answered generically), with their captions checked as Telegram checks them."""

from __future__ import annotations

import copy
from typing import Any, Final

from bot_memory_aiogram.testing.emulator.parse_mode import format_text
from bot_memory_aiogram.testing.emulator.records import EmulatorRecords
from bot_memory_aiogram.testing.emulator.wire import Handler, JsonDict, bad_request

_MAX_CAPTION_LENGTH: Final = 1024

#: Methods returning a ``Message`` that the emulator answers generically.
_GENERIC_SEND_METHODS: Final = (
    "sendPhoto",
    "sendDocument",
    "sendVideo",
    "sendAudio",
    "sendVoice",
    "sendAnimation",
    "sendVideoNote",
    "sendSticker",
    "sendLocation",
    "sendVenue",
    "sendContact",
    "sendPoll",
    "sendDice",
    "sendGame",
    "sendInvoice",
)


class MediaMethods(EmulatorRecords):
    def _methods(self) -> dict[str, Handler]:
        return {
            **super()._methods(),
            "sendMediaGroup": self._send_media_group,
            **{name: self._generic_sender(name) for name in _GENERIC_SEND_METHODS},
        }

    def _media_message(self, chat_id: int, params: JsonDict, method: str) -> JsonDict:
        message = self._new_bot_message(chat_id, params)
        caption = params.get("caption")
        if isinstance(caption, str) and caption:
            plain, entities = format_text(
                caption, params.get("parse_mode"), params.get("caption_entities")
            )
            if len(plain) > _MAX_CAPTION_LENGTH:
                raise bad_request("message caption is too long")
            message["caption"] = plain
            if entities:
                message["caption_entities"] = entities
        mid = message["message_id"]
        file_ref = {"file_id": f"file-{chat_id}-{mid}", "file_unique_id": f"uniq-{chat_id}-{mid}"}
        if method == "sendPhoto":
            message["photo"] = [{**file_ref, "width": 320, "height": 240}]
        elif method == "sendDocument":
            message["document"] = file_ref
        elif method == "sendDice":
            message["dice"] = {"emoji": params.get("emoji") or "🎲", "value": 1}
        self._store_message(message)
        return message

    def _generic_sender(self, method: str) -> Handler:
        async def send(params: JsonDict) -> Any:
            chat_id = self._resolve_chat_id(params.get("chat_id"))
            return copy.deepcopy(self._media_message(chat_id, params, method))

        return send

    async def _send_media_group(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        media = params.get("media")
        items = media if isinstance(media, list) else []
        if not 2 <= len(items) <= 10:
            raise bad_request("wrong number of messages in the media group")
        result = []
        for item in items:
            item_params = {**params, **(item if isinstance(item, dict) else {})}
            kind = str(item_params.get("type", "document"))
            result.append(
                self._media_message(chat_id, item_params, "sendPhoto" if kind == "photo" else "")
            )
        return copy.deepcopy(result)
