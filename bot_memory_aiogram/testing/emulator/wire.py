"""What travels between aiogram and the emulator: request parameters as aiogram sends them
(form fields, decoded back to JSON types), the calls as recorded, and Bot API error envelopes."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from aiohttp import web

from bot_memory.errors import BotMemoryError

JsonDict = dict[str, Any]

#: ``*_id`` parameters whose values are strings, not integers.
_STRING_ID_KEYS: Final = frozenset(
    {
        "business_connection_id",
        "callback_query_id",
        "custom_emoji_id",
        "file_id",
        "file_unique_id",
        "gift_id",
        "inline_message_id",
        "inline_query_id",
        "message_effect_id",
        "pre_checkout_query_id",
        "shipping_query_id",
        "web_app_query_id",
        "owned_gift_id",
        "poll_option_id",
    }
)
_INT_KEYS: Final = frozenset(
    {
        "offset",
        "limit",
        "timeout",
        "until_date",
        "cache_time",
        "max_connections",
        "duration",
        "width",
        "height",
        "length",
        "quote_position",
        "open_period",
        "close_date",
        "star_count",
    }
)
_BOOL_PREFIXES: Final = (
    "is_",
    "can_",
    "has_",
    "disable_",
    "protect_",
    "allow_",
    "show_",
    "drop_",
    "only_",
    "revoke_",
    "supports_",
    "for_",
)
_INT_RE: Final = re.compile(r"-?\d+")


def as_int(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT_RE.fullmatch(value.strip()):
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


def as_float(value: Any, default: float) -> float:
    if isinstance(value, bool):
        return default
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return default
    return default


def truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1"}
    return bool(value)


def decode_value(key: str, value: str) -> Any:
    stripped = value.strip()
    if stripped[:1] in {"{", "["}:
        try:
            decoded = json.loads(stripped)
        except ValueError:
            return value
        if isinstance(decoded, dict | list):
            return decoded
        return value
    if _INT_RE.fullmatch(stripped) and (
        key in _INT_KEYS or (key.endswith("_id") and key not in _STRING_ID_KEYS)
    ):
        return int(stripped)
    if stripped in {"true", "false"} and key.startswith(_BOOL_PREFIXES):
        return stripped == "true"
    return value


class EmulatorError(BotMemoryError):
    """An error answered to the client as a Bot API error envelope.

    Can also be queued with :meth:`BotAPIEmulator.inject_error`.
    """

    def __init__(
        self,
        error_code: int,
        description: str,
        *,
        retry_after: int | None = None,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after
        self.migrate_to_chat_id = migrate_to_chat_id

    def payload(self) -> JsonDict:
        body: JsonDict = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        parameters: JsonDict = {}
        if self.retry_after is not None:
            parameters["retry_after"] = self.retry_after
        if self.migrate_to_chat_id is not None:
            parameters["migrate_to_chat_id"] = self.migrate_to_chat_id
        if parameters:
            body["parameters"] = parameters
        return body

    def response(self) -> web.Response:
        return web.json_response(self.payload(), status=self.error_code)


def bad_request(description: str) -> EmulatorError:
    return EmulatorError(400, f"Bad Request: {description}")


@dataclass
class ApiCall:
    """One Bot API request received by the emulator.

    ``params`` holds the decoded request parameters (see the package docstring).
    ``result`` is the ``result`` the emulator answered with (``None`` for errors) and
    ``error`` the error description, if the call failed; ``at`` when it arrived
    (``time.monotonic()``), to time replies by.
    """

    method: str
    params: dict[str, Any]
    result: Any = field(default=None, compare=False, repr=False)
    error: str | None = field(default=None, compare=False)
    at: float = field(default_factory=time.monotonic, compare=False, repr=False)


Handler = Callable[[JsonDict], Awaitable[Any]]
