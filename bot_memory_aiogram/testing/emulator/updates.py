"""Getting updates: long polling (``getUpdates`` with offsets, limits, ``allowed_updates`` and
409 conflicts), the webhook switches that turn it off, and raw updates a test pushes."""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Final

from bot_memory_aiogram.testing.emulator.records import EmulatorRecords
from bot_memory_aiogram.testing.emulator.wire import (
    EmulatorError,
    Handler,
    JsonDict,
    as_float,
    as_int,
    truthy,
)

#: Update types Telegram only delivers when explicitly listed in ``allowed_updates``.
_OPT_IN_UPDATE_TYPES: Final = frozenset(
    {"chat_member", "message_reaction", "message_reaction_count"}
)

_MESSAGE_UPDATE_TYPES: Final = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "business_message",
    "edited_business_message",
)


class UpdateMethods(EmulatorRecords):
    def _methods(self) -> dict[str, Handler]:
        return {
            **super()._methods(),
            "getUpdates": self._get_updates,
            "setWebhook": self._set_webhook,
            "deleteWebhook": self._delete_webhook,
            "getWebhookInfo": self._get_webhook_info,
        }

    def push_update(self, update: JsonDict) -> JsonDict:
        """Queue a raw update (``update_id`` is assigned when missing) and return it.

        Messages inside message-like updates are remembered, so the bot can reply to them.
        """
        for key in _MESSAGE_UPDATE_TYPES:
            message = update.get(key)
            if isinstance(message, dict):
                self._store_message(copy.deepcopy(message))
        return self._enqueue(update)

    def _update_allowed(self, update: JsonDict) -> bool:
        kind = next((key for key in update if key != "update_id"), None)
        if kind is None:
            return False
        if self._allowed_updates is None:
            return kind not in _OPT_IN_UPDATE_TYPES
        return kind in self._allowed_updates

    async def _get_updates(self, params: JsonDict) -> Any:
        if self.webhook_url:
            raise EmulatorError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = as_int(params.get("offset"), 0) or 0
        limit = min(max(as_int(params.get("limit"), 100) or 100, 1), 100)
        timeout = max(as_float(params.get("timeout"), 0.0), 0.0)
        allowed = params.get("allowed_updates")
        if isinstance(allowed, list):
            self._allowed_updates = frozenset(str(a) for a in allowed) if allowed else None
        if offset > 0:
            self._updates = [u for u in self._updates if int(u["update_id"]) >= offset]
        elif offset < 0:
            self._updates = self._updates[offset:]
        self._poll_generation += 1
        generation = self._poll_generation
        self._notify()

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if generation != self._poll_generation:
                raise EmulatorError(
                    409,
                    "Conflict: terminated by other getUpdates request; "
                    "make sure that only one bot instance is running",
                )
            kept = [u for u in self._updates if self._update_allowed(u)]
            if len(kept) != len(self._updates):
                self._updates = kept
                self._notify()
            batch = self._updates[:limit]
            remaining = deadline - loop.time()
            if batch or self._closing or remaining <= 0:
                return batch
            await self._wait_change(remaining)

    async def _set_webhook(self, params: JsonDict) -> Any:
        self.webhook_url = str(params.get("url") or "")
        if truthy(params.get("drop_pending_updates")):
            self._updates.clear()
        # A pending long poll is terminated like on Telegram.
        self._poll_generation += 1
        return True

    async def _delete_webhook(self, params: JsonDict) -> Any:
        self.webhook_url = ""
        if truthy(params.get("drop_pending_updates")):
            self._updates.clear()
        return True

    async def _get_webhook_info(self, params: JsonDict) -> Any:
        return {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }
