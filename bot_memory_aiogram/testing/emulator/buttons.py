"""Button presses: callback queries a test pushes on a known message, and how the bot may
answer them (a ``url`` only to this bot's ``t.me`` start link)."""

from __future__ import annotations

import copy
import re
from typing import Any

from bot_memory_aiogram.testing.emulator.records import EmulatorRecords
from bot_memory_aiogram.testing.emulator.wire import Handler, JsonDict, bad_request


class ButtonMethods(EmulatorRecords):
    def _methods(self) -> dict[str, Handler]:
        return {**super()._methods(), "answerCallbackQuery": self._answer_callback_query}

    def push_callback_query(
        self,
        *,
        chat_id: int,
        user_id: int,
        data: str,
        message_id: int | None = None,
        first_name: str = "User",
        username: str | None = None,
        language_code: str | None = "en",
    ) -> JsonDict:
        """Queue a ``callback_query`` update (button press on a known message, if given)."""
        user = self._register_user(user_id, first_name, username, language_code)
        query: JsonDict = {
            "id": str(self._next_callback_id),
            "from": copy.deepcopy(user),
            "chat_instance": str(chat_id),
            "data": data,
        }
        self._next_callback_id += 1
        if message_id is not None:
            message = self._messages.get((chat_id, message_id))
            if message is None:
                msg = f"no known message {message_id} in chat {chat_id}"
                raise KeyError(msg)
            query["message"] = copy.deepcopy(message)
        return self._enqueue({"callback_query": query})

    async def _answer_callback_query(self, params: JsonDict) -> Any:
        """A `url` is opened by the client: only t.me/<this bot>?start=... links (no games)."""
        url = params.get("url")
        if url is not None and not re.fullmatch(
            rf"https://t\.me/{re.escape(self.username)}\?start=[A-Za-z0-9_-]{{1,64}}", str(url)
        ):
            raise bad_request("URL_INVALID")
        return True
