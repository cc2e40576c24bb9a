"""The memory manager Mini App: a page inside Telegram to see, search, forget and export memories.

Served by the bot's own process as an aiohttp application under BOT_MEMORY_MINIAPP_URL's path
(without that setting nothing is served and no button is shown):

    setup(dp, memory)                                  # as always
    mount(webhook_app, dp, bot)                        # in your aiohttp webhook server, or
    runner = await serve(dp, bot)                      # on its own port (BOT_MEMORY_MINIAPP_PORT)

The page (static files in this package, no build step) talks to the API in `api.py`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib.resources import files
from pathlib import Path
from urllib.parse import urlsplit

from aiogram import Bot, Dispatcher
from aiohttp import web

from bot_memory.logs import get_logger
from bot_memory_aiogram.miniapp.api import Clock, MiniAppApi
from bot_memory_aiogram.miniapp.init_data import launch_fragment, sign_init_data

__all__ = ["launch_fragment", "memory_app", "mount", "serve", "sign_init_data"]

log = get_logger(__name__)

STATIC = Path(str(files(__package__) / "static"))
_FILES = {
    "/": ("index.html", "text/html"),
    "/app.js": ("app.js", "text/javascript"),
    "/app.css": ("app.css", "text/css"),
}
# The page runs only its own script and Telegram's, and talks only to its own API.
_CSP = (
    "default-src 'none'; script-src 'self' https://telegram.org; style-src 'self' 'unsafe-inline';"
    " img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none';"
    # Framed only by Telegram's own clients (web.telegram.org's A and K, the desktop apps'
    # webviews load it top-level).
    " frame-ancestors 'self' https://web.telegram.org https://*.telegram.org"
)


def memory_app(dp: Dispatcher, bot: Bot, *, clock: Clock | None = None) -> web.Application:
    """The page and its API as an aiohttp application, for a Dispatcher `setup()` has wired."""
    app = web.Application(client_max_size=64 * 1024)
    app.add_routes(_routes(dp, bot, clock))
    return app


def _routes(dp: Dispatcher, bot: Bot, clock: Clock | None) -> list[web.RouteDef]:
    api = MiniAppApi(
        memory=dp["memory"],
        bot=bot,
        texts=dp["memory_texts"],
        scopes=dp["memory_middleware"],
        clock=clock,
    )
    static = [web.get(route, _static(*spec)) for route, spec in _FILES.items()]
    return [*api.routes(), *static]


def path_of(url: str) -> str:
    """Where the page is served: the URL's path, without its trailing slash ("" = the root)."""
    return urlsplit(url).path.rstrip("/")


def mount(
    app: web.Application, dp: Dispatcher, bot: Bot, *, clock: Clock | None = None
) -> web.Application | None:
    """Serve the Mini App inside your own aiohttp application (the one your webhook runs in),
    under the path of BOT_MEMORY_MINIAPP_URL. Does nothing without that setting."""
    url = dp["memory"].settings.miniapp_url
    if not url:
        log.info("memory.miniapp_off", reason="BOT_MEMORY_MINIAPP_URL is not set")
        return None
    prefix = path_of(url)
    if not prefix:
        app.add_routes(_routes(dp, bot, clock))
        return app

    async def slash(_: web.Request) -> web.Response:
        raise web.HTTPPermanentRedirect(prefix + "/")  # the page's relative URLs need it

    app.router.add_get(prefix, slash)  # before the sub-application, which would claim it
    sub = memory_app(dp, bot, clock=clock)
    app.add_subapp(prefix, sub)
    return sub


async def serve(
    dp: Dispatcher,
    bot: Bot,
    *,
    host: str | None = None,
    port: int | None = None,
    clock: Clock | None = None,
) -> web.AppRunner | None:
    """Serve the Mini App on its own port (BOT_MEMORY_MINIAPP_HOST / _PORT unless given); your
    HTTPS proxy forwards BOT_MEMORY_MINIAPP_URL to it. `await runner.cleanup()` stops it.
    Does nothing without BOT_MEMORY_MINIAPP_URL."""
    settings = dp["memory"].settings
    app = web.Application()
    if mount(app, dp, bot, clock=clock) is None:
        return None
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(
        runner,
        host if host is not None else settings.miniapp_host,
        port if port is not None else settings.miniapp_port,
    )
    await site.start()
    log.info("memory.miniapp_serving", url=settings.miniapp_url, addresses=runner.addresses)
    return runner


def _static(name: str, content_type: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    path = STATIC / name

    async def send(_: web.Request) -> web.StreamResponse:
        response = web.FileResponse(path)
        response.content_type = content_type
        response.headers.update(
            {
                "Cache-Control": "no-cache",
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",  # the page's URL may carry a scope ticket
                "Content-Security-Policy": _CSP,
            }
        )
        return response

    return send
