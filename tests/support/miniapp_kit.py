"""What the Mini App tests share: the page served next to a running bot, and initData signed
the way Telegram signs it (there is no Telegram client here), by the test kit's public helper."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from bot_memory_aiogram.miniapp import launch_fragment, serve
from bot_memory_aiogram.miniapp.api import Clock
from bot_memory_aiogram.testing import TestBot, sign_init_data

APP_URL = "https://memory.example/app/"  # the public URL the buttons carry
NAMES = {1001: "Ada", 1002: "Bo", 1003: "Cy", 2001: "Dai", 2002: "Eli"}
NAMES |= {4001: "Александра", 4002: "Олександра"}


def init_data(
    bot: TestBot,
    user_id: int,
    *,
    language: str = "en",
    age_seconds: float = 0,
    token: str | None = None,
) -> str:
    user = {"id": user_id, "first_name": NAMES.get(user_id, "User"), "language_code": language}
    when = datetime.now(UTC) - timedelta(seconds=age_seconds)
    return sign_init_data(token or bot.emu.token, user=user, auth_date=when, query_id="AAE1")


@asynccontextmanager
async def served(bot: TestBot, *, clock: Clock | None = None) -> AsyncIterator[str]:
    """The Mini App on a loopback port (on `clock`'s time when given); yields its local URL
    (standing in for APP_URL)."""
    runner = await serve(bot.dp, bot.bot, host="127.0.0.1", port=0, clock=clock)
    assert runner is not None, "BOT_MEMORY_MINIAPP_URL must be set for these tests"
    try:
        host, port = runner.addresses[0][:2]
        yield f"http://{host}:{port}/app/"
    finally:
        await runner.cleanup()


class Page:
    """The API as the page calls it, for one user (and scope ticket)."""

    def __init__(self, client: httpx.AsyncClient, init: str, ticket: str = "") -> None:
        self.client = client
        self.headers = {"Authorization": f"tma {init}"} if init else {}
        if ticket:
            self.headers["X-Memory-Scope"] = ticket

    async def get(self, path: str, **params: Any) -> httpx.Response:
        return await self.client.get(path, params=params, headers=self.headers)

    async def post(self, path: str, body: Any) -> httpx.Response:
        return await self.client.post(path, json=body, headers=self.headers)


@asynccontextmanager
async def client(base: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base, timeout=10) as c:
        yield c


def launch_url(
    base: str, init: str, *, ticket: str = "", theme: dict[str, str] | None = None
) -> str:
    query = f"?s={ticket}" if ticket else ""
    return base + query + launch_fragment(init, theme)
