"""A fake OpenAI-compatible chat-completions server on loopback (aiohttp.web), for tests.

Clients POST ``{base_url}/chat/completions``.  Every authorized, well-formed request body
is recorded in :attr:`FakeOpenAI.requests`; the answer comes from the one-shot
:meth:`FakeOpenAI.script` queue first, then from :attr:`FakeOpenAI.responder`
(default: :func:`default_responder`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot_memory_aiogram.testing.loopback import LoopbackServer

__all__ = ["HANG_SECONDS", "FakeOpenAI", "Responder", "ScriptItem", "default_responder"]

JsonDict = dict[str, Any]
Responder = Callable[[JsonDict], Awaitable[JsonDict] | JsonDict]
ScriptItem = JsonDict | str | int | bytes | tuple[int, str]

#: How long a scripted "hang" sleeps (longer than any sane client timeout).
HANG_SECONDS = 120.0

_ERROR_TYPES: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Bad request"),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
    403: ("permission_error", None, "You are not allowed to do this"),
    404: ("invalid_request_error", "model_not_found", "The model does not exist"),
    408: ("timeout", None, "Request timed out"),
    409: ("conflict", None, "Conflict"),
    422: ("invalid_request_error", None, "Unprocessable request"),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests"),
    500: ("server_error", None, "The server had an error while processing your request"),
    502: ("server_error", None, "Bad gateway"),
    503: ("server_error", None, "The engine is currently overloaded, please try again later"),
    504: ("server_error", None, "Gateway timeout"),
}


def error_body(status: int, message: str | None = None) -> JsonDict:
    """An OpenAI-style error body for an HTTP status."""
    kind, code, default_message = _ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None, "Error")
    )
    return {
        "error": {
            "message": message or default_message,
            "type": kind,
            "param": None,
            "code": code,
        }
    }


# ------------------------------------------------------------------ default responder


def _purpose(body: JsonDict) -> str | None:
    response_format = body.get("response_format")
    if not isinstance(response_format, dict):
        return None
    schema = response_format.get("json_schema")
    if not isinstance(schema, dict):
        return None
    name = schema.get("name")
    return name if isinstance(name, str) else None


def _content_text(content: Any) -> str:
    """Text of a message ``content`` (a string or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return ""


def _user_texts(body: JsonDict) -> list[str]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [
        _content_text(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user"
    ]


def _json_values(text: str) -> list[Any]:
    """Every JSON value found in ``text``: the whole text, else embedded objects/arrays."""
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    decoder = json.JSONDecoder()
    values: list[Any] = []
    index = 0
    while index < len(text):
        starts = [i for i in (text.find("[", index), text.find("{", index)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        values.append(value)
        index = end
    return values


def _objects_with_id(value: Any, out: list[JsonDict]) -> None:
    """Collect the outermost JSON objects that have an ``id`` key."""
    if isinstance(value, dict):
        if "id" in value:
            out.append(value)
            return
        for item in value.values():
            _objects_with_id(item, out)
    elif isinstance(value, list):
        for item in value:
            _objects_with_id(item, out)


def _source_objects(body: JsonDict) -> list[JsonDict]:
    found: list[JsonDict] = []
    for text in _user_texts(body):
        for value in _json_values(text):
            _objects_with_id(value, found)
    return found


def _object_text(obj: JsonDict) -> str:
    for key in ("text", "content", "body", "message", "summary"):
        value = obj.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _batch_sources(body: JsonDict) -> list[JsonDict]:
    """The objects under a document's "sources" key (the batch), else every object with an id."""
    for text in _user_texts(body):
        for value in _json_values(text):
            if isinstance(value, dict) and isinstance(value.get("sources"), list):
                return [s for s in value["sources"] if isinstance(s, dict) and "id" in s]
    return _source_objects(body)


def _extraction(body: JsonDict) -> JsonDict:
    try:
        sources = _batch_sources(body)
        texts = [t for t in (_object_text(s) for s in sources) if t]
        ids = [s["id"] for s in sources if isinstance(s["id"], int | str)]
        summary = " ".join(texts)[:200]
        return {
            "title": "Conversation notes" if ids else "",
            "summary": summary,
            "source_ids": ids,
        }
    except Exception:  # defensive by contract: never raise
        return {"title": "", "summary": "", "source_ids": []}


def _consolidation(body: JsonDict) -> JsonDict:
    try:
        candidates = [
            s
            for s in _source_objects(body)
            if "title" in s and isinstance(s["id"], int | str) and s["title"] is not None
        ][:12]
        lines = [f"- {c['id']}: {c['title']}" for c in candidates]
        return {"index": "\n".join(lines), "memory_ids": [c["id"] for c in candidates]}
    except Exception:  # defensive by contract: never raise
        return {"index": "", "memory_ids": []}


def default_responder(body: JsonDict) -> JsonDict:
    """The default assistant message for a request body (never raises).

    * ``memory_extraction``: ``{"title", "summary", "source_ids"}`` from the batch's sources
      (the document's ``sources``, never its existing memories); summary = first 200
      characters of their concatenated texts.
    * ``memory_consolidation``: ``{"index", "memory_ids"}`` from candidate objects with
      ``id`` and ``title`` (``"- {id}: {title}"`` lines, at most 12).
    * anything else: ``"fake answer: <first 60 chars of the last user message>"``.
    """
    try:
        purpose = _purpose(body)
    except Exception:
        purpose = None
    if purpose == "memory_extraction":
        return {"role": "assistant", "content": json.dumps(_extraction(body))}
    if purpose == "memory_consolidation":
        return {"role": "assistant", "content": json.dumps(_consolidation(body))}
    try:
        texts = _user_texts(body)
        last = texts[-1] if texts else ""
    except Exception:
        last = ""
    return {"role": "assistant", "content": f"fake answer: {last[:60]}"}


# ------------------------------------------------------------------------ server


class FakeOpenAI(LoopbackServer):
    """The fake server.  ``api_key=None`` disables the Authorization check."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, api_key: str | None = "test-key"
    ) -> None:
        super().__init__(host, port)
        self.api_key = api_key
        #: Parsed bodies of authorized, well-formed requests in arrival order.
        self.requests: list[JsonDict] = []
        #: Produces the assistant message for requests the script does not cover.
        self.responder: Responder = default_responder
        #: Requests received on /chat/completions (including rejected ones).
        self.calls_started = 0
        #: Completions sent back (200 answers).
        self.calls_answered = 0
        self._held = asyncio.Event()
        self._script: list[ScriptItem] = []
        self._changed = asyncio.Event()
        self._closing = asyncio.Event()
        self._ids = itertools.count(1)

    # ----------------------------------------------------------- lifecycle

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._models)
        return app

    def on_start(self) -> None:
        self._closing = asyncio.Event()
        self._changed = asyncio.Event()

    def on_stop(self) -> None:
        self._closing.set()  # a "hang" answer ends now

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    # ----------------------------------------------------------- scripting

    def script(self, *items: ScriptItem) -> None:
        """Queue one-shot answers, consumed in order before :attr:`responder`.

        * ``dict``: the assistant message to answer with;
        * ``str``: assistant content (except the literal ``"hang"``: never answer --
          sleep :data:`HANG_SECONDS`, cut short only by :meth:`stop` or disconnect;
          ``"drop"``: close the connection after reading the request; ``"delay:S"``: answer
          as the responder would, after S seconds; ``"hold"``: answer as the responder would
          once :meth:`release` is called);
        * ``int``: an HTTP status, answered with an OpenAI-style error body;
        * ``(int, str)``: the same, with that error message;
        * ``bytes``: a raw 200 body sent as-is (e.g. invalid JSON).
        """
        for item in items:
            if isinstance(item, tuple) and [type(x) for x in item] == [int, str]:
                continue
            if isinstance(item, bool) or not isinstance(item, dict | str | int | bytes):
                msg = f"unsupported script item {item!r}"
                raise TypeError(msg)
        self._script.extend(items)

    def release(self) -> None:
        """Let the requests held by a ``"hold"`` item be answered."""
        self._held.set()

    async def wait_for_answers(self, n: int, timeout: float = 10.0) -> None:  # noqa: ASYNC109
        """Wait until at least ``n`` completions have been sent (:attr:`calls_answered`)."""
        await self._wait_for(lambda: self.calls_answered, n, timeout, "answer(s) sent")

    @property
    def scripted_left(self) -> int:
        return len(self._script)

    def requests_by_purpose(self, name: str) -> list[JsonDict]:
        """Requests whose ``response_format.json_schema.name`` is ``name``."""
        return [body for body in self.requests if _purpose(body) == name]

    def chat_requests(self) -> list[JsonDict]:
        """Requests without ``response_format`` (plain chat answers)."""
        return [body for body in self.requests if "response_format" not in body]

    async def wait_for_requests(self, n: int, timeout: float = 10.0) -> None:  # noqa: ASYNC109
        """Wait until at least ``n`` requests have started (:attr:`calls_started`)."""
        await self._wait_for(lambda: self.calls_started, n, timeout, "request(s)")

    async def _wait_for(
        self,
        count: Callable[[], int],
        n: int,
        timeout: float,  # noqa: ASYNC109
        what: str,
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while count() < n:
            remaining = deadline - loop.time()
            if remaining <= 0:
                msg = f"timed out after {timeout}s waiting for {n} {what}; got {count()}"
                raise TimeoutError(msg)
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    # ----------------------------------------------------------- HTTP

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0}]}
        )

    def _error(self, status: int, message: str | None = None) -> web.Response:
        return web.json_response(error_body(status, message), status=status)

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        self.calls_started += 1
        self._changed.set()
        if self.api_key is not None:
            expected = f"Bearer {self.api_key}"
            if request.headers.get("Authorization", "") != expected:
                return self._error(401)
        try:
            body = await request.json()
        except ValueError:
            return self._error(400, "We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return self._error(400, "The request body must be a JSON object.")
        if not isinstance(body.get("messages"), list):
            return self._error(400, "Missing required parameter: 'messages'.")
        self.requests.append(body)

        item: ScriptItem | None = self._script.pop(0) if self._script else None
        if item == "hang":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), HANG_SECONDS)
            return self._error(503, "fake server stopped while hanging")
        if item == "drop":  # the request arrived; the connection dies before any answer
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=200)
        if isinstance(item, str) and item.startswith("delay:"):
            await asyncio.sleep(float(item.split(":", 1)[1]))
            item = None
        if item == "hold":
            await self._held.wait()
            item = None
        if isinstance(item, bytes):
            return web.Response(body=item, status=200, content_type="application/json")
        if isinstance(item, int):
            return self._error(item)
        if isinstance(item, tuple):
            return self._error(*item)
        if isinstance(item, str):
            message: JsonDict = {"role": "assistant", "content": item}
        elif isinstance(item, dict):
            message = dict(item)
        else:
            try:
                produced = self.responder(body)
                if inspect.isawaitable(produced):
                    produced = await produced
            except Exception as exc:
                return self._error(500, f"fake responder failed: {type(exc).__name__}: {exc}")
            message = dict(produced)
        response = web.json_response(self._completion(body, message))
        await response.prepare(request)
        await response.write_eof()
        self.calls_answered += 1  # sent: the client has it, whatever it does with it now
        self._changed.set()
        return response

    def _completion(self, body: JsonDict, message: JsonDict) -> JsonDict:
        message.setdefault("role", "assistant")
        message.setdefault("content", None)
        tool_calls = message.get("tool_calls")
        if not tool_calls:
            message.pop("tool_calls", None)
        prompt_tokens = max(1, len(json.dumps(body.get("messages", []), default=str)) // 4)
        completion_tokens = max(1, len(json.dumps(message, default=str)) // 4)
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
