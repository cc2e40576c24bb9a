"""Calling the Mini App's HTTP API from a test: initData signed as Telegram signs it (a test
has no Telegram client to hand it over), and the headers the page sends.

    init = sign_init_data(bot.emu.token, user=1001)                # now, user 1001
    headers = miniapp_headers(bot.emu.token, user=1001)            # Authorization: tma ...
    await client.get(base + "api/memories", headers=headers)

A group Topic's page takes a scope ticket too: the `s` query parameter of the page URL in the
button the bot sends to the user's private chat (`miniapp_headers(..., scope_ticket=...)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bot_memory_aiogram.miniapp.init_data import sign_init_data as _sign

__all__ = ["miniapp_headers", "sign_init_data"]

SCOPE_HEADER = "X-Memory-Scope"


def sign_init_data(
    bot_token: str,
    *,
    user: int | Mapping[str, Any],
    auth_date: datetime | None = None,
    **fields: str,
) -> str:
    """Telegram's initData for `user` (an ID, or the WebAppUser fields as a dict: `id`,
    `first_name`, `language_code`, ...), signed with `bot_token` and dated `auth_date` (now by
    default; an older date tests the age limit). Other keywords are more fields (`query_id`)."""
    if isinstance(user, int):
        fields_of_user: dict[str, Any] = {"id": user, "first_name": "User", "language_code": "en"}
    else:
        fields_of_user = dict(user)
    when = auth_date if auth_date is not None else datetime.now(UTC)
    return _sign(bot_token, user=fields_of_user, auth_date=when, **fields)


def miniapp_headers(
    bot_token: str,
    *,
    user: int | Mapping[str, Any],
    auth_date: datetime | None = None,
    scope_ticket: str | None = None,
) -> dict[str, str]:
    """The headers the page sends with every API call: `Authorization: tma <initData>` and,
    for a group Topic, `X-Memory-Scope: <ticket>`."""
    headers = {"Authorization": "tma " + sign_init_data(bot_token, user=user, auth_date=auth_date)}
    if scope_ticket:
        headers[SCOPE_HEADER] = scope_ticket
    return headers
