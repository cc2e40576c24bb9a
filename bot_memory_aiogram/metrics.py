"""`/metrics` (Prometheus) and `/healthz` (JSON) over HTTP, for a Memory.

    mount(app, memory)                          # in your aiohttp app (a webhook bot's), or
    runner = await serve(memory)                # on BOT_MEMORY_METRICS_HOST:_PORT

`bot-memory run` (long polling) and `bot-memory worker` serve them when BOT_MEMORY_METRICS_PORT
is set. /healthz answers 200 when the database answers `SELECT 1` within
BOT_MEMORY_HEALTH_TIMEOUT_SECONDS and a worker ticked recently, 503 otherwise. Without
prometheus-client, /metrics answers 503 with one line saying so; /healthz works all the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from bot_memory.logs import get_logger
from bot_memory.metrics import INSTALL_HINT, MetricsUnavailable, available
from bot_memory.service import Memory

__all__ = ["mount", "routes", "serve", "serve_configured"]

log = get_logger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def routes(memory: Memory, *, prefix: str = "") -> list[web.RouteDef]:
    """GET {prefix}/metrics and GET {prefix}/healthz."""

    async def metrics(_: web.Request) -> web.Response:
        try:
            body = await memory.scrape()
        except MetricsUnavailable as exc:
            return web.Response(status=503, text=f"{exc}\n")
        response = web.Response(body=body)
        response.headers["Content-Type"] = memory.metrics.content_type
        return response

    async def healthz(_: web.Request) -> web.Response:
        ok, details = await memory.health()
        return web.json_response(details, status=200 if ok else 503)

    return [web.get(f"{prefix}/metrics", metrics), web.get(f"{prefix}/healthz", healthz)]


def mount(app: web.Application, memory: Memory, *, prefix: str = "") -> None:
    """Serve /metrics and /healthz (under `prefix`, e.g. "/ops") in your aiohttp app."""
    _say_if_unavailable(memory)
    app.add_routes(routes(memory, prefix=prefix))


async def serve(
    memory: Memory, *, host: str | None = None, port: int | None = None
) -> web.AppRunner:
    """Serve /metrics and /healthz on their own port (BOT_MEMORY_METRICS_HOST / _PORT unless
    given; port 0: any free one, see `runner.addresses`). `await runner.cleanup()` stops it."""
    settings = memory.settings
    port = port if port is not None else settings.metrics_port
    if port is None:
        raise ValueError("no port: set BOT_MEMORY_METRICS_PORT or pass port=")
    app = web.Application()
    mount(app, memory)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host if host is not None else settings.metrics_host, port).start()
    log.info("memory.metrics_serving", addresses=[str(a) for a in runner.addresses])
    return runner


async def serve_configured(memory: Memory) -> web.AppRunner | None:
    """`serve(memory)` when BOT_MEMORY_METRICS_PORT is set, else nothing (None)."""
    if memory.settings.metrics_port is None:
        return None
    return await serve(memory)


def _say_if_unavailable(memory: Memory) -> None:
    if not memory.metrics.enabled:
        reason = INSTALL_HINT if not available() else "BOT_MEMORY_METRICS_ENABLED is false"
        log.warning("memory.metrics_off", reason=reason, detail="/metrics answers 503")
