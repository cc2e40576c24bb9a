"""What every Bot API area of the emulator shares: the HTTP server and its routing, the
calls received, injected failures, the queue of updates and waiting on any change."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot_memory_aiogram.testing.emulator.wire import (
    ApiCall,
    EmulatorError,
    Handler,
    JsonDict,
    as_int,
    bad_request,
    decode_value,
)
from bot_memory_aiogram.testing.loopback import LoopbackServer


class EmulatorServer(LoopbackServer):
    """A Telegram Bot API server on loopback for one bot: the transport and the state; the Bot
    API methods are answered by the areas built on it (see the package docstring)."""

    def __init__(
        self,
        token: str = "42:TEST",
        *,
        bot_id: int = 42,
        username: str = "memory_test_bot",
        first_name: str = "Memory Bot",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        self.token = token
        self.bot_id = bot_id
        self.username = username
        self.first_name = first_name
        #: Every request received, in arrival order (including ``getUpdates``).
        self.calls: list[ApiCall] = []
        #: Status answered by ``getChatMember`` for pairs without an explicit status.
        self.default_member_status = "member"
        #: Current webhook URL ("" = none); ``getUpdates`` answers 409 while it is set, and
        #: updates are posted there instead, as Telegram does.
        self.webhook_url = ""
        #: ``secret_token`` of ``setWebhook``, sent back in a header with every post.
        self.webhook_secret = ""
        #: The HTTP status of every webhook post, in order (a refused one is posted again);
        #: 0 for a post that got no answer (a dropped connection, or none within the timeout).
        self.webhook_statuses: list[int] = []
        #: As Telegram does, a webhook post not answered within this many seconds counts as
        #: failed and the update is delivered again (the handler may still be running).
        self.webhook_timeout_seconds = 10.0
        #: How often an update is posted before it is given up on (Telegram stops retrying too);
        #: what was given up is in :attr:`dropped_updates`.
        self.webhook_max_attempts = 20
        #: How many updates are posted at once (``setWebhook``'s ``max_connections``, 1-100).
        self.webhook_max_connections = 40
        self.dropped_updates: list[JsonDict] = []
        self._delivery: asyncio.Task[None] | None = None
        #: Commands set via ``setMyCommands``, keyed by ``"<scope type>:<language>"``.
        self.commands: dict[str, list[Any]] = {}
        #: What ``getMe`` reports.
        self.can_read_all_group_messages = False

        # Every area's state is declared here, so that each sees all of it typed.
        self._updates: list[JsonDict] = []
        self._next_update_id = 1
        self._allowed_updates: frozenset[str] | None = None
        self._messages: dict[tuple[int, int], JsonDict] = {}
        self._next_message_id: dict[int, int] = {}
        self._chats: dict[int, JsonDict] = {}
        self._users: dict[int, JsonDict] = {}
        self._member_status: dict[tuple[int, int], str] = {}
        self._member_is_member: dict[tuple[int, int], bool] = {}
        self._auto_delete: dict[int, int] = {}
        self._injected: dict[str, list[EmulatorError]] = {}
        self._raw: dict[str, list[tuple[int, bytes]]] = {}  # answers that are not the Bot API's
        self._next_callback_id = 1

        self._waiters: set[asyncio.Future[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        self._poll_generation = 0
        self._last_activity = time.monotonic()
        #: Bot API method (lower case) -> (its name, what answers it).
        self._handlers: dict[str, tuple[str, Handler]] = {
            name.lower(): (name, handler) for name, handler in self._methods().items()
        }

    def _methods(self) -> dict[str, Handler]:
        """The Bot API methods answered, by name; each area adds its own (any other method is
        answered ``true``)."""
        return {"getMe": self._get_me, "close": self._return_true, "logOut": self._return_true}

    # ------------------------------------------------------------------ lifecycle

    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/{tail:.*}", self._not_found)
        return app

    def on_start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._closing = False

    def on_stop(self) -> None:
        """Pending long polls are answered with ``[]`` right away; webhook posts stop."""
        self._closing = True
        if self._delivery is not None:
            self._delivery.cancel()
            self._delivery = None
        self._notify()

    @property
    def base_url(self) -> str:
        """``http://host:port``; pass it to ``TelegramAPIServer.from_base``."""
        return self.origin

    # --------------------------------------------------------------- inspection

    @property
    def sent(self) -> list[ApiCall]:
        """The ``sendMessage`` calls, in order."""
        return self.calls_to("sendMessage")

    def calls_to(self, method: str) -> list[ApiCall]:
        """The calls of one method (case-insensitive name)."""
        wanted = method.lower()
        return [call for call in self.calls if call.method.lower() == wanted]

    @property
    def pending_updates(self) -> list[JsonDict]:
        """Pushed updates not yet confirmed (or discarded) by ``getUpdates``."""
        return list(self._updates)

    def get_message(self, chat_id: int, message_id: int) -> JsonDict | None:
        """A message the emulator knows (pushed or sent, not deleted), as last edited."""
        message = self._messages.get((chat_id, message_id))
        return copy.deepcopy(message) if message is not None else None

    def chat_messages(self, chat_id: int) -> list[JsonDict]:
        """Known messages of a chat ordered by ``message_id``."""
        keys = sorted(key for key in self._messages if key[0] == chat_id)
        return [copy.deepcopy(self._messages[key]) for key in keys]

    # ----------------------------------------------------------------- failures

    def inject_error(
        self,
        method: str,
        *,
        error_code: int = 400,
        description: str = "Bad Request: injected error",
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        """Make the next ``times`` calls of ``method`` fail with the given error.

        E.g. ``inject_error("sendMessage", error_code=429,
        description="Too Many Requests: retry after 1", retry_after=1)`` or
        ``inject_error("sendMessage", error_code=403,
        description="Forbidden: bot was blocked by the user")``.
        The failing calls are still recorded in :attr:`calls` (with ``error`` set).
        """
        queue = self._injected.setdefault(method.lower(), [])
        for _ in range(times):
            queue.append(EmulatorError(error_code, description, retry_after=retry_after))

    def inject_raw(
        self,
        method: str,
        body: bytes = b"<html>502 Bad Gateway</html>",
        *,
        status: int = 502,
        times: int = 1,
    ) -> None:
        """Make the next ``times`` calls of ``method`` get this raw HTTP answer instead of a Bot
        API one (a proxy's error page, a truncated body): what a bot does not expect."""
        queue = self._raw.setdefault(method.lower(), [])
        queue.extend([(status, body)] * times)

    # ---------------------------------------------------------------- waiting

    async def wait_for_sent(self, count: int, timeout: float = 10.0) -> list[ApiCall]:  # noqa: ASYNC109
        """Wait until at least ``count`` ``sendMessage`` calls were received; return them."""
        return await self.wait_for_calls("sendMessage", count, timeout)

    async def wait_for_calls(
        self,
        method: str,
        count: int = 1,
        timeout: float = 10.0,  # noqa: ASYNC109
    ) -> list[ApiCall]:
        """Wait until at least ``count`` calls of ``method`` were received; return them all.

        Event-driven: woken by every received request.  Raises ``TimeoutError`` listing
        what was received instead.
        """

        def describe() -> str:
            got = self.calls_to(method)
            others = [call.method for call in self.calls if call.method != "getUpdates"]
            detail = ", ".join(repr(call.params.get("text", call.params)) for call in got)
            return (
                f"timed out after {timeout}s waiting for {count} {method} call(s); "
                f"got {len(got)}: [{detail}]; non-polling calls so far: {others}; "
                f"unconfirmed updates: {len(self._updates)}"
            )

        await self._wait_until(lambda: len(self.calls_to(method)) >= count, timeout, describe)
        return self.calls_to(method)

    async def wait_idle(self, timeout: float = 10.0, *, quiet: float = 0.0) -> None:  # noqa: ASYNC109
        """Wait until the bot has consumed everything pushed so far.

        Exact semantics: returns once the queue of unconfirmed updates is empty, i.e.
        every pushed update was either confirmed -- a ``getUpdates`` call whose
        ``offset`` is greater than its ``update_id`` has *started*; with aiogram's
        polling that means the dispatcher took the update and already asked for the
        next batch -- or discarded (its type is excluded by ``allowed_updates``, or
        ``deleteWebhook(drop_pending_updates=True)`` / a negative offset forgot it).
        Returns immediately when nothing was pushed.

        It does *not* wait for handlers: with ``handle_as_tasks=False`` the dispatcher
        confirms an update only after handling it, so idle means handled; with the
        default ``handle_as_tasks=True`` handlers may still be running.  Use
        :meth:`wait_for_sent` / :meth:`wait_for_calls` for that, or ``quiet > 0`` to also
        require that no request other than ``getUpdates`` arrived during the last
        ``quiet`` seconds.  Raises ``TimeoutError`` otherwise.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if not self._updates:
                silent_for = time.monotonic() - self._last_activity
                if silent_for >= quiet:
                    return
                if remaining <= 0:
                    break
                await self._wait_change(min(remaining, quiet - silent_for))
                continue
            if remaining <= 0:
                break
            await self._wait_change(remaining)
        pending = [update["update_id"] for update in self._updates]
        msg = (
            f"emulator not idle after {timeout}s: unconfirmed update ids {pending}"
            if pending
            else f"emulator not quiet for {quiet}s within {timeout}s"
        )
        raise TimeoutError(msg)

    async def _wait_until(
        self, predicate: Callable[[], bool], within: float, describe: Callable[[], str]
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(describe())
            await self._wait_change(remaining)

    async def _wait_change(self, at_most: float | None) -> None:
        """Sleep until the emulator state changes (push, request, stop) or ``at_most`` s."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.add(future)
        try:
            await asyncio.wait_for(future, at_most)
        except TimeoutError:
            pass
        finally:
            self._waiters.discard(future)

    def _notify(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                loop.call_soon_threadsafe(self._wake_waiters)
                return
        self._wake_waiters()

    def _wake_waiters(self) -> None:
        waiters, self._waiters = self._waiters, set()
        for future in waiters:
            if not future.done():
                future.set_result(None)

    def _enqueue(self, update: JsonDict) -> JsonDict:
        update_id = as_int(update.get("update_id"))
        if update_id is None:
            update = {"update_id": self._next_update_id, **update}
            self._next_update_id += 1
        else:
            self._next_update_id = max(self._next_update_id, update_id + 1)
        self._updates.append(update)
        self._updates.sort(key=lambda u: int(u["update_id"]))
        self._notify()
        return update

    def _bot_user(self) -> JsonDict:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }

    # ------------------------------------------------------------------- HTTP

    async def _not_found(self, request: web.Request) -> web.Response:
        return EmulatorError(404, "Not Found").response()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            return EmulatorError(401, "Unauthorized").response()
        raw_method = request.match_info["method"]
        try:
            params = await self._read_params(request)
        except ValueError as exc:
            return bad_request(f"invalid request parameters: {exc}").response()
        return await self._call(raw_method, params)

    async def _call(self, raw_method: str, params: JsonDict) -> web.Response:
        """One Bot API call, from HTTP or from a webhook's answer: recorded, then answered."""
        method, handler = self._handlers.get(raw_method.lower(), (raw_method, self._return_true))
        call = ApiCall(method=method, params=params)
        self.calls.append(call)
        if method != "getUpdates":
            self._last_activity = time.monotonic()
        self._notify()
        raw = self._raw.get(method.lower())
        if raw:
            status, body = raw.pop(0)
            call.error = f"raw {status}"
            return web.Response(status=status, body=body, content_type="text/html")
        try:
            injected = self._injected.get(method.lower())
            if injected:
                raise injected.pop(0)
            result = await handler(params)
        except EmulatorError as exc:
            call.error = exc.description
            self._notify()
            return exc.response()
        call.result = result
        if method != "getUpdates":
            self._last_activity = time.monotonic()
        self._notify()
        return web.json_response({"ok": True, "result": result})

    async def _read_params(self, request: web.Request) -> JsonDict:
        raw: dict[str, Any] = dict(request.query)
        if request.method == "POST" and request.can_read_body:
            if request.content_type == "application/json":
                body = await request.json()
                if not isinstance(body, dict):
                    msg = "JSON body must be an object"
                    raise ValueError(msg)
                raw.update(body)
            else:
                form = await request.post()
                for key, value in form.items():
                    if isinstance(value, web.FileField):
                        raw[key] = {
                            "filename": value.filename,
                            "content_type": value.content_type,
                            "size": len(value.file.read()),
                        }
                    elif isinstance(value, bytes):
                        raw[key] = value.decode("utf-8", errors="replace")
                    else:
                        raw[key] = value
        return {
            key: decode_value(key, value) if isinstance(value, str) else value
            for key, value in raw.items()
        }

    async def _return_true(self, params: JsonDict) -> Any:
        return True

    async def _get_me(self, params: JsonDict) -> Any:
        return {
            **self._bot_user(),
            "can_join_groups": True,
            "can_read_all_group_messages": self.can_read_all_group_messages,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }
