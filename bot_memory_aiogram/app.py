"""`python -m bot_memory run`: the reference bot, with long polling or (BOT_MEMORY_WEBHOOK_URL)
a webhook served by aiogram's request handler."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import sys
from urllib.parse import urlsplit

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
from aiohttp import web

from bot_memory.errors import BotMemoryError
from bot_memory.logs import get_logger
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage import DatabaseUnavailable
from bot_memory_aiogram.metrics import serve_configured
from bot_memory_aiogram.miniapp import mount, serve
from bot_memory_aiogram.setup import ALLOWED_UPDATES, setup

log = get_logger(__name__)


class CannotListen(BotMemoryError, RuntimeError):
    """The webhook's address cannot be listened on (in use, or not this machine's)."""


def make_bot(token: str, api_url: str | None) -> Bot:
    """A Bot on the public Bot API, or on the server at api_url (a local telegram-bot-api)."""
    if api_url:
        return Bot(token, session=AiohttpSession(api=TelegramAPIServer.from_base(api_url)))
    return Bot(token)


async def run(settings: MemorySettings | None = None) -> int:
    token = os.environ.get("BOT_TOKEN")
    if not token:
        print("BOT_TOKEN is not set: the bot's token from @BotFather is required.", file=sys.stderr)
        return 2
    try:
        memory = await Memory.open(settings or MemorySettings())
    except DatabaseUnavailable as exc:
        print(f"bot-memory: {exc}", file=sys.stderr)
        return 1
    bot = make_bot(token, os.environ.get("TELEGRAM_API_URL"))
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)
    # /metrics and /healthz on BOT_MEMORY_METRICS_HOST:_PORT, if that port is set (never on
    # the webhook's public server).
    metrics = await serve_configured(memory)
    try:
        if memory.settings.webhook_url:
            try:
                await run_webhook(dp, bot, memory.settings)
            except CannotListen as exc:
                print(f"bot-memory: {exc}", file=sys.stderr)
                return 1
        else:
            # The memory manager Mini App on BOT_MEMORY_MINIAPP_HOST:_PORT, if
            # BOT_MEMORY_MINIAPP_URL says where your HTTPS proxy publishes it.
            page = await serve(dp, bot)
            try:
                await dp.start_polling(bot, allowed_updates=ALLOWED_UPDATES)
            finally:
                if page is not None:
                    await page.cleanup()
    finally:
        if metrics is not None:
            await metrics.cleanup()
        await memory.close()
        await bot.session.close()
    return 0


async def run_webhook(dp: Dispatcher, bot: Bot, settings: MemorySettings) -> None:
    """Serve the webhook (and the Mini App, on the same server) until SIGINT or SIGTERM."""
    assert settings.webhook_url is not None
    path = settings.webhook_path or urlsplit(settings.webhook_url).path or "/"
    # Without a secret anyone who finds the URL could post updates as any user: one is made
    # for this run (Telegram is told it by setWebhook below).
    secret = settings.webhook_secret or secrets.token_urlsafe(32)
    app = web.Application()
    # Telegram is answered once the update is handled: a process killed meanwhile leaves it
    # unanswered, so Telegram delivers it again (handled once: ingress/redelivery.py).
    SimpleRequestHandler(
        dispatcher=dp, bot=bot, secret_token=secret, handle_in_background=False
    ).register(app, path=path)
    setup_application(app, dp, bot=bot)  # the dispatcher's startup and shutdown hooks
    mount(app, dp, bot)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        site = web.TCPSite(runner, settings.webhook_host, settings.webhook_port)
        try:
            await site.start()
        except OSError as exc:  # a deployment mistake: one line, not a traceback
            where = f"{settings.webhook_host}:{settings.webhook_port}"
            msg = f"cannot serve the webhook on {where}: {exc.strerror or exc}"
            raise CannotListen(msg) from exc
        await bot.set_webhook(
            settings.webhook_url,
            secret_token=secret,
            allowed_updates=ALLOWED_UPDATES,
        )
        log.info(
            "memory.webhook_serving",
            host=settings.webhook_host,
            port=settings.webhook_port,
            path=path,
        )
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
        await runner.cleanup()


def main() -> int:
    return asyncio.run(run())
