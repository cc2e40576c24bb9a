"""The lifecycle both project test servers share: an aiohttp app on a loopback port.

Used by the Bot API emulator (tests and the demo) and by the tests' fake OpenAI server.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from aiohttp import web


class LoopbackServer:
    """start() / stop() / `async with`; port 0 picks a free port, a restart reuses it."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self._port = port
        self._runner: web.AppRunner | None = None

    def build_app(self) -> web.Application:
        raise NotImplementedError

    def on_start(self) -> None:
        """Called before binding: reset per-run state."""

    def on_stop(self) -> None:
        """Called before the runner is cleaned up: release anyone still waiting."""

    async def start(self) -> None:
        if self._runner is not None:
            return
        self.on_start()
        # handler_cancellation: a client that gives up (aiogram's stop_polling cancels its
        # long poll) cancels the server-side wait at once; shutdown_timeout keeps stop() quick.
        runner = web.AppRunner(
            self.build_app(), handler_cancellation=True, access_log=None, shutdown_timeout=2.0
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._port = int(runner.addresses[0][1])
        self._runner = runner

    async def stop(self) -> None:
        runner = self._runner
        if runner is None:
            return
        self._runner = None
        self.on_stop()
        await runner.cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        """The bound port (the configured one before start())."""
        return self._port

    @property
    def is_running(self) -> bool:
        return self._runner is not None

    @property
    def origin(self) -> str:
        if self._port == 0:
            msg = f"{type(self).__name__} is not started yet (port 0 is chosen on start())"
            raise RuntimeError(msg)
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self._port}"
