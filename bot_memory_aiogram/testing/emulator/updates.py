"""Getting updates: long polling (``getUpdates`` with offsets, limits, ``allowed_updates`` and
409 conflicts), webhooks (updates posted to the bot's URL with its secret token, up to
``max_connections`` at once and each chat's in order, until a 2xx; a method in the answer's
body is carried out as a call, as Telegram does), and raw updates a test pushes."""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Final

import aiohttp

from bot_memory_aiogram.testing.emulator.records import EmulatorRecords
from bot_memory_aiogram.testing.emulator.wire import (
    EmulatorError,
    Handler,
    JsonDict,
    as_float,
    as_int,
    decode_value,
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

    def on_start(self) -> None:
        super().on_start()
        if self.webhook_url:  # restarted with a webhook set: posting goes on
            self._delivery = asyncio.create_task(self._post_updates())

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
        self.webhook_secret = str(params.get("secret_token") or "")
        self.webhook_max_connections = min(
            max(as_int(params.get("max_connections"), 40) or 40, 1), 100
        )
        allowed = params.get("allowed_updates")
        if isinstance(allowed, list):
            self._allowed_updates = frozenset(str(a) for a in allowed) if allowed else None
        if truthy(params.get("drop_pending_updates")):
            self._updates.clear()
        # A pending long poll is terminated like on Telegram.
        self._poll_generation += 1
        if self.webhook_url and (self._delivery is None or self._delivery.done()):
            self._delivery = asyncio.create_task(self._post_updates())
        self._notify()
        return True

    async def _delete_webhook(self, params: JsonDict) -> Any:
        self.webhook_url = ""
        if truthy(params.get("drop_pending_updates")):
            self._updates.clear()
        self._notify()  # the delivery task sees the URL gone and ends
        return True

    async def _post_updates(self) -> None:
        """Telegram's side of a webhook: updates are posted as Telegram does, up to
        ``max_connections`` at once (``setWebhook``'s, 40 by default) and one chat's in order:
        a chat's next update waits until its previous one was accepted (2xx). A refused,
        dropped or timed-out post is delivered again after a backoff, up to
        ``webhook_max_attempts`` times (then it is dropped)."""
        timeout = aiohttp.ClientTimeout(total=self.webhook_timeout_seconds)
        posting: dict[int, asyncio.Task[None]] = {}  # update_id -> its delivery
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(timeout=timeout, connector=connector) as http:
            try:
                while self.webhook_url and not self._closing:
                    kept = [u for u in self._updates if self._update_allowed(u)]
                    if len(kept) != len(self._updates):
                        self._updates = kept
                        self._notify()
                    for done in [i for i, task in posting.items() if task.done()]:
                        del posting[done]
                    waiting: set[object] = set()  # chats with an earlier update not accepted
                    for update in kept:
                        if len(posting) >= self.webhook_max_connections:
                            break
                        chat = _chat_of(update)
                        if chat in waiting:
                            continue
                        waiting.add(chat)
                        if int(update["update_id"]) not in posting:
                            posting[int(update["update_id"])] = asyncio.create_task(
                                self._post_one(http, update)
                            )
                    await self._wait_change(None)
            finally:
                for task in posting.values():
                    task.cancel()
                await asyncio.gather(*posting.values(), return_exceptions=True)

    async def _post_one(self, http: aiohttp.ClientSession, update: JsonDict) -> None:
        headers = {}
        if self.webhook_secret:
            headers["X-Telegram-Bot-Api-Secret-Token"] = self.webhook_secret
        try:
            for attempt in range(1, self.webhook_max_attempts + 1):
                answer: tuple[str, JsonDict] | None = None
                try:
                    async with http.post(self.webhook_url, json=update, headers=headers) as resp:
                        self.webhook_statuses.append(resp.status)
                        accepted = 200 <= resp.status < 300
                        if accepted:
                            answer = await _method_in(resp)
                except (aiohttp.ClientError, OSError, TimeoutError):
                    self.webhook_statuses.append(0)
                    accepted = False
                if accepted:
                    if update in self._updates:
                        self._updates.remove(update)
                    self._notify()
                    if answer is not None:
                        await self._call(*answer)
                    return
                if attempt < self.webhook_max_attempts and self.webhook_url:
                    # again, backing off as Telegram does (here up to a second)
                    await asyncio.sleep(min(0.05 * 2 ** (attempt - 1), 1.0))
                if not self.webhook_url or self._closing:
                    return
            if update in self._updates:
                self._updates.remove(update)
            self.dropped_updates.append(update)
        finally:
            self._notify()

    async def _get_webhook_info(self, params: JsonDict) -> Any:
        return {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }


async def _method_in(resp: aiohttp.ClientResponse) -> tuple[str, JsonDict] | None:
    """The method a bot answered a webhook post with: JSON, or a form (aiogram sends one)."""
    raw: dict[str, Any] = {}
    if resp.content_type == "application/json":
        body = await resp.json()
        if isinstance(body, dict):
            raw = body
    elif resp.content_type.startswith("multipart/"):
        reader = aiohttp.MultipartReader.from_response(resp)
        async for part in reader:
            if isinstance(part, aiohttp.BodyPartReader) and part.name:
                raw[part.name] = await part.text()
    method = raw.pop("method", None)
    if not isinstance(method, str) or not method:
        return None
    params = {k: decode_value(k, v) if isinstance(v, str) else v for k, v in raw.items()}
    return method, params


def _chat_of(update: JsonDict) -> object:
    """The chat an update belongs to (its updates are delivered in order), or the update
    itself when it names none."""
    for value in update.values():
        if isinstance(value, dict):
            chat = value.get("chat") or (value.get("message") or {}).get("chat")
            if isinstance(chat, dict) and "id" in chat:
                return chat["id"]
    return ("update", update.get("update_id"))
