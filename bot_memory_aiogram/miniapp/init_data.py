"""Who opened the page: Telegram's signed `initData`, checked as Telegram specifies.

The HMAC check itself is aiogram's (`safe_parse_webapp_init_data`: HMAC-SHA256 over the sorted
fields with a key derived from the bot token); this module adds the age limit, and signs
initData the way Telegram does for the demo and the tests, which have no Telegram client.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from aiogram.utils.web_app import (
    WebAppInitData,
    WebAppUser,
    parse_webapp_init_data,
    safe_parse_webapp_init_data,
)
from pydantic import ValidationError

from bot_memory.errors import BotMemoryError


class InitDataError(BotMemoryError, ValueError):
    """initData that is missing, malformed, not signed with this bot's token, or too old."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason  # missing | invalid | expired


def verify_init_data(
    raw: str, bot_token: str, *, now: datetime, max_age_seconds: float
) -> WebAppUser:
    """The user who opened the page, if `raw` is this bot's initData and recent enough."""
    if not raw:
        raise InitDataError("missing")
    try:
        data = safe_parse_webapp_init_data(bot_token, raw)
    except (ValueError, ValidationError) as exc:  # a bad signature, or fields that do not parse
        raise InitDataError("invalid") from exc
    if data.user is None:
        raise InitDataError("invalid")
    if (now - data.auth_date).total_seconds() > max_age_seconds:
        raise InitDataError("expired")
    return data.user


def unverified_language(raw: str) -> str | None:
    """The language a (possibly invalid) initData claims: only to word an error message."""
    try:
        data: WebAppInitData = parse_webapp_init_data(raw)
    except (ValueError, ValidationError, TypeError):
        return None
    return data.user.language_code if data.user else None


def sign_init_data(
    bot_token: str, *, user: dict[str, Any], auth_date: datetime, **fields: str
) -> str:
    """initData as Telegram would hand it to the page (for the demo and tests)."""
    values = {
        "user": json.dumps(user, separators=(",", ":"), ensure_ascii=False),
        "auth_date": str(int(auth_date.timestamp())),
        **fields,
    }
    check = "\n".join(f"{k}={v}" for k, v in sorted(values.items()))
    secret = hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()
    values["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(values)


def launch_fragment(init_data: str, theme: dict[str, str] | None = None) -> str:
    """The URL fragment Telegram opens a Mini App with: `#tgWebAppData=...` (and the theme)."""
    params = {"tgWebAppData": init_data, "tgWebAppVersion": "8.0", "tgWebAppPlatform": "web"}
    if theme:
        params["tgWebAppThemeParams"] = json.dumps(theme, separators=(",", ":"))
    return "#" + urlencode(params)
