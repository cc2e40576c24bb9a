"""The test kit's emulator redelivers a webhook update as Telegram does: after a non-2xx
answer, a dropped connection or no answer within `webhook_timeout_seconds`, with backoff, at
most `webhook_max_attempts` times."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web

from bot_memory_aiogram.testing import BotAPIEmulator


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def serving(answer: Callable[[int], Awaitable[web.Response]]) -> tuple[web.AppRunner, str]:
    """A webhook endpoint that answers its n-th post (from 1) with `answer(n)`."""
    posts = 0

    async def hook(request: web.Request) -> web.Response:
        nonlocal posts
        posts += 1
        await request.read()
        return await answer(posts)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}/hook"


async def set_webhook(emu: BotAPIEmulator, url: str) -> None:
    """As a bot does: setWebhook over the Bot API."""
    async with aiohttp.ClientSession() as http:
        endpoint = f"{emu.base_url}/bot{emu.token}/setWebhook"
        async with http.post(endpoint, json={"url": url}) as resp:
            assert resp.status == 200


async def until(predicate: Callable[[], bool]) -> None:
    for _ in range(400):
        if predicate():
            return
        await asyncio.sleep(0.025)
    raise TimeoutError("not reached")


async def test_a_refused_then_timed_out_post_is_delivered_again() -> None:
    async def answer(n: int) -> web.Response:
        if n == 1:
            return web.Response(status=500)
        if n == 2:
            await asyncio.sleep(2)  # past the emulator's timeout
        return web.Response(status=200)

    runner, url = await serving(answer)
    emu = BotAPIEmulator()
    emu.webhook_timeout_seconds = 0.5
    await emu.start()
    try:
        await set_webhook(emu, url)
        emu.push_message(chat_id=5, user_id=5, text="hello")
        await until(lambda: 200 in emu.webhook_statuses)
        assert emu.webhook_statuses[:3] == [500, 0, 200]
        assert not emu.pending_updates and not emu.dropped_updates
    finally:
        await emu.stop()
        await runner.cleanup()


async def test_an_update_never_accepted_is_given_up_after_the_bound() -> None:
    async def answer(n: int) -> web.Response:
        return web.Response(status=502)

    runner, url = await serving(answer)
    emu = BotAPIEmulator()
    emu.webhook_max_attempts = 3
    await emu.start()
    try:
        await set_webhook(emu, url)
        update = emu.push_message(chat_id=5, user_id=5, text="hello")
        await until(lambda: bool(emu.dropped_updates))
        assert emu.webhook_statuses == [502, 502, 502]
        assert emu.dropped_updates == [update] and not emu.pending_updates
    finally:
        await emu.stop()
        await runner.cleanup()


async def test_chats_are_posted_at_once_and_each_chat_in_order() -> None:
    """As Telegram does (max_connections): a chat whose post hangs holds back only its own
    later updates; another chat's are posted meanwhile."""
    seen: list[tuple[int, str]] = []
    release = asyncio.Event()

    async def hook(request: web.Request) -> web.Response:
        update = await request.json()
        message = update["message"]
        seen.append((message["chat"]["id"], message["text"]))
        if message["text"] == "slow":
            await release.wait()
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    emu = BotAPIEmulator()
    await emu.start()
    try:
        await set_webhook(emu, f"http://127.0.0.1:{port}/hook")
        emu.push_message(chat_id=1, user_id=1, text="slow")
        emu.push_message(chat_id=1, user_id=1, text="after slow")
        emu.push_message(chat_id=2, user_id=2, text="other chat")
        await until(lambda: (2, "other chat") in seen)
        assert (1, "after slow") not in seen  # its chat's earlier update is not accepted yet
        release.set()
        await until(lambda: (1, "after slow") in seen)
        assert seen.index((1, "slow")) < seen.index((1, "after slow"))
        await until(lambda: not emu.pending_updates)
    finally:
        await emu.stop()
        await runner.cleanup()
