"""A loopback Telegram Bot API emulator for tests and the offline demo.

The emulator is an :mod:`aiohttp.web` server that speaks the subset of the Bot API a
long-polling aiogram bot needs.  Point aiogram at it with::

    emu = BotAPIEmulator()
    await emu.start()
    bot = Bot(
        token=emu.token,
        session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)),
    )

and drive the bot by pushing updates (:meth:`BotAPIEmulator.push_message`, ...) and
inspecting what the bot sent (:attr:`BotAPIEmulator.calls`, :attr:`BotAPIEmulator.sent`,
:meth:`BotAPIEmulator.wait_for_sent`).

It deliberately does not import aiogram: it is the server, aiogram is the client under
test.  Behaviour mirrors Telegram where it matters to a bot:

* ``{"ok": true, "result": ...}`` / ``{"ok": false, "error_code": ..., "description": ...}``
  envelopes, 401 for a wrong token, 404 for unknown paths;
* ``getUpdates`` honours ``offset`` (confirmation), negative offsets, ``limit``,
  ``allowed_updates`` (remembered between calls; updates of other types are discarded)
  and real long polling (``timeout`` seconds, woken immediately by a push, ended
  promptly when the emulator stops or the client disconnects).  A second concurrent
  ``getUpdates`` terminates the first one with 409 Conflict, and ``getUpdates`` while a
  webhook is set answers 409 as well;
* message ids are per chat and shared by user and bot messages; replies carry the full
  ``reply_to_message`` (without its own nested reply, as Telegram does);
* ``sendMessage``/``editMessageText`` validate text (empty, longer than 4096 characters)
  and, for ``parse_mode=HTML``, parse the markup like Telegram (unsupported tags,
  unbalanced tags and stray ``<`` are 400 "can't parse entities" errors) so that the
  resulting ``Message.text``/``entities`` are what Telegram would produce.  Other parse
  modes are stored verbatim without validation;
* replying to an unknown message is 400 "message to be replied not found" unless
  ``allow_sending_without_reply`` is set.

Request parameters are recorded as :class:`ApiCall` objects.  aiogram sends every
parameter as a form field string; the emulator decodes them back: values that parse as
JSON objects/arrays become ``dict``/``list``, numeric ``*_id`` fields (``chat_id``,
``message_id``, ``message_thread_id``, ``user_id``, ...) and ``offset``/``limit``/
``timeout``-style fields become ``int``, ``"true"``/``"false"`` of boolean-looking fields
(``disable_*``, ``protect_*``, ``allow_*``, ``is_*``, ``can_*``, ``show_*``, ``drop_*``,
...) become ``bool``; everything else (notably ``text``) stays a string.
"""

from __future__ import annotations

import asyncio
import copy
import html
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from aiohttp import web

from bot_memory_aiogram.loopback import LoopbackServer

__all__ = [
    "ApiCall",
    "BotAPIEmulator",
    "EmulatorError",
    "command_entity",
    "mention_entity",
    "utf16_len",
]

JsonDict = dict[str, Any]

#: Update types Telegram only delivers when explicitly listed in ``allowed_updates``.
_OPT_IN_UPDATE_TYPES: Final = frozenset(
    {"chat_member", "message_reaction", "message_reaction_count"}
)

_MESSAGE_UPDATE_TYPES: Final = (
    "message",
    "edited_message",
    "channel_post",
    "edited_channel_post",
    "business_message",
    "edited_business_message",
)

_MAX_MESSAGE_LENGTH: Final = 4096
_MAX_CAPTION_LENGTH: Final = 1024

_CHAT_MEMBER_STATUSES: Final = frozenset(
    {"creator", "administrator", "member", "restricted", "left", "kicked"}
)
_STATUS_ALIASES: Final = {"owner": "creator", "admin": "administrator", "banned": "kicked"}

#: The placeholder sender Telegram puts in ``from`` for anonymous group admins.
_ANONYMOUS_ADMIN: Final = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}

#: ``*_id`` parameters whose values are strings, not integers.
_STRING_ID_KEYS: Final = frozenset(
    {
        "business_connection_id",
        "callback_query_id",
        "custom_emoji_id",
        "file_id",
        "file_unique_id",
        "gift_id",
        "inline_message_id",
        "inline_query_id",
        "message_effect_id",
        "pre_checkout_query_id",
        "shipping_query_id",
        "web_app_query_id",
        "owned_gift_id",
        "poll_option_id",
    }
)
_INT_KEYS: Final = frozenset(
    {
        "offset",
        "limit",
        "timeout",
        "until_date",
        "cache_time",
        "max_connections",
        "duration",
        "width",
        "height",
        "length",
        "quote_position",
        "open_period",
        "close_date",
        "star_count",
    }
)
_BOOL_PREFIXES: Final = (
    "is_",
    "can_",
    "has_",
    "disable_",
    "protect_",
    "allow_",
    "show_",
    "drop_",
    "only_",
    "revoke_",
    "supports_",
    "for_",
)
_INT_RE: Final = re.compile(r"-?\d+")

#: Methods returning a ``Message`` that the emulator answers generically.
_GENERIC_SEND_METHODS: Final = (
    "sendPhoto",
    "sendDocument",
    "sendVideo",
    "sendAudio",
    "sendVoice",
    "sendAnimation",
    "sendVideoNote",
    "sendSticker",
    "sendLocation",
    "sendVenue",
    "sendContact",
    "sendPoll",
    "sendDice",
    "sendGame",
    "sendInvoice",
)


# --------------------------------------------------------------------------- helpers


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, the unit of Telegram entity offsets."""
    return len(text.encode("utf-16-le")) // 2


def mention_entity(text: str, username: str) -> JsonDict:
    """A ``mention`` entity for the first ``@username`` in ``text`` (UTF-16 offsets).

    ``username`` may be given with or without the leading ``@``.  Raises ``ValueError`` if
    the mention does not occur in ``text``.
    """
    mention = username if username.startswith("@") else f"@{username}"
    index = text.find(mention)
    if index < 0:
        msg = f"{mention!r} does not occur in {text!r}"
        raise ValueError(msg)
    return {"type": "mention", "offset": utf16_len(text[:index]), "length": utf16_len(mention)}


_COMMAND_RE: Final = re.compile(r"(?<![\w/@])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?")
_MENTION_RE: Final = re.compile(r"(?<![\w@/])@[A-Za-z][A-Za-z0-9_]{3,31}(?![\w@])")


def command_entity(text: str) -> JsonDict:
    """A ``bot_command`` entity for the command (``/cmd`` or ``/cmd@bot``) starting ``text``.

    Raises ``ValueError`` when ``text`` does not start with a command.
    """
    match = _COMMAND_RE.match(text)
    if match is None:
        msg = f"{text!r} does not start with a bot command"
        raise ValueError(msg)
    return {"type": "bot_command", "offset": 0, "length": utf16_len(match.group(0))}


def _auto_entities(text: str) -> list[JsonDict]:
    """Entities Telegram detects by itself in user text: bot commands and @mentions."""
    entities: list[JsonDict] = []
    spans: list[tuple[int, int]] = []
    for match in _COMMAND_RE.finditer(text):
        spans.append(match.span())
        entities.append(
            {
                "type": "bot_command",
                "offset": utf16_len(text[: match.start()]),
                "length": utf16_len(match.group(0)),
            }
        )
    for match in _MENTION_RE.finditer(text):
        start, end = match.span()
        if any(s <= start < e for s, e in spans):
            continue
        entities.append(
            {
                "type": "mention",
                "offset": utf16_len(text[:start]),
                "length": utf16_len(text[start:end]),
            }
        )
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return entities


def _now() -> int:
    return int(time.time())


def _as_int(value: Any, default: int | None = None) -> int | None:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT_RE.fullmatch(value.strip()):
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


def _as_float(value: Any, default: float) -> float:
    if isinstance(value, bool):
        return default
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return default
    return default


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1"}
    return bool(value)


def _decode_value(key: str, value: str) -> Any:
    stripped = value.strip()
    if stripped[:1] in {"{", "["}:
        try:
            decoded = json.loads(stripped)
        except ValueError:
            return value
        if isinstance(decoded, dict | list):
            return decoded
        return value
    if _INT_RE.fullmatch(stripped) and (
        key in _INT_KEYS or (key.endswith("_id") and key not in _STRING_ID_KEYS)
    ):
        return int(stripped)
    if stripped in {"true", "false"} and key.startswith(_BOOL_PREFIXES):
        return stripped == "true"
    return value


class EmulatorError(Exception):
    """An error answered to the client as a Bot API error envelope.

    Can also be queued with :meth:`BotAPIEmulator.inject_error`.
    """

    def __init__(
        self,
        error_code: int,
        description: str,
        *,
        retry_after: int | None = None,
        migrate_to_chat_id: int | None = None,
    ) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after
        self.migrate_to_chat_id = migrate_to_chat_id

    def payload(self) -> JsonDict:
        body: JsonDict = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        parameters: JsonDict = {}
        if self.retry_after is not None:
            parameters["retry_after"] = self.retry_after
        if self.migrate_to_chat_id is not None:
            parameters["migrate_to_chat_id"] = self.migrate_to_chat_id
        if parameters:
            body["parameters"] = parameters
        return body

    def response(self) -> web.Response:
        return web.json_response(self.payload(), status=self.error_code)


def _bad_request(description: str) -> EmulatorError:
    return EmulatorError(400, f"Bad Request: {description}")


# ------------------------------------------------------------------- HTML parse mode

_HTML_ENTITY_TAGS: Final = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
_TAG_NAME_RE: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9-]*")
_ATTR_RE: Final = re.compile(
    r"""\s*([a-zA-Z_][a-zA-Z0-9_-]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?"""
)
_HTML_ENTITY_RE: Final = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,6});")
_NAMED_ENTITIES: Final = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


@dataclass
class _OpenTag:
    name: str
    start16: int
    attrs: dict[str, str]


def _parse_attrs(raw: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for match in _ATTR_RE.finditer(raw):
        name = match.group(1).lower()
        value = next((g for g in match.groups()[1:] if g is not None), "")
        attrs[name] = html.unescape(value)
    return attrs


def _parse_html(text: str) -> tuple[str, list[JsonDict]]:
    """Parse Telegram-flavoured HTML into ``(plain_text, entities)``.

    Raises ``EmulatorError`` (400 "can't parse entities: ...") like Telegram does.
    """

    def fail(detail: str) -> EmulatorError:
        return _bad_request(f"can't parse entities: {detail}")

    def byte_offset(index: int) -> int:
        return len(text[:index].encode("utf-8"))

    out: list[str] = []
    pos16 = 0
    stack: list[_OpenTag] = []
    entities: list[JsonDict] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "&":
            match = _HTML_ENTITY_RE.match(text, i)
            decoded: str | None = None
            if match is not None:
                ref = match.group(1)
                if ref.startswith(("#x", "#X")):
                    code = int(ref[2:], 16)
                    decoded = chr(code) if 0 < code <= 0x10FFFF else None
                elif ref.startswith("#"):
                    code = int(ref[1:])
                    decoded = chr(code) if 0 < code <= 0x10FFFF else None
                else:
                    decoded = _NAMED_ENTITIES.get(ref)
            if match is not None and decoded is not None:
                out.append(decoded)
                pos16 += utf16_len(decoded)
                i = match.end()
            else:
                out.append("&")
                pos16 += 1
                i += 1
            continue
        if ch != "<":
            out.append(ch)
            pos16 += utf16_len(ch)
            i += 1
            continue
        is_end = text.startswith("</", i)
        name_match = _TAG_NAME_RE.match(text, i + (2 if is_end else 1))
        name = name_match.group(0).lower() if name_match else ""
        if not is_end and name not in _HTML_ENTITY_TAGS:
            raise fail(f'Unsupported start tag "{name}" at byte offset {byte_offset(i)}')
        close = text.find(">", i)
        if close < 0:
            raise fail(f"Can't find end of the tag starting at byte offset {byte_offset(i)}")
        if is_end:
            if not stack:
                raise fail(f"Unexpected end tag at byte offset {byte_offset(i)}")
            top = stack.pop()
            if name != top.name:
                raise fail(
                    f'Unmatched end tag at byte offset {byte_offset(i)}, expected "</{top.name}>", '
                    f'found "</{name}>"'
                )
            entity = _entity_for_tag(top, pos16, stack, entities)
            if entity is not None:
                entities.append(entity)
            i = close + 1
            continue
        if name not in _HTML_ENTITY_TAGS or name_match is None:
            raise fail(f'Unsupported start tag "{name}" at byte offset {byte_offset(i)}')
        attrs = _parse_attrs(text[name_match.end() : close].rstrip("/"))
        if name == "span" and attrs.get("class") != "tg-spoiler":
            raise fail('Tag "span" must have class "tg-spoiler"')
        stack.append(_OpenTag(name=name, start16=pos16, attrs=attrs))
        i = close + 1
    if stack:
        raise fail(f'Can\'t find end tag corresponding to start tag "{stack[-1].name}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _entity_for_tag(
    tag: _OpenTag, end16: int, stack: list[_OpenTag], entities: list[JsonDict]
) -> JsonDict | None:
    length = end16 - tag.start16
    entity_type = _HTML_ENTITY_TAGS[tag.name]
    entity: JsonDict = {"type": entity_type, "offset": tag.start16, "length": length}
    if tag.name == "a":
        href = tag.attrs.get("href", "")
        if not href:
            return None
        entity["url"] = href
    elif tag.name == "tg-emoji":
        entity["custom_emoji_id"] = tag.attrs.get("emoji-id", "")
    elif tag.name == "blockquote" and "expandable" in tag.attrs:
        entity["type"] = "expandable_blockquote"
    elif tag.name == "code" and stack and stack[-1].name == "pre":
        language = tag.attrs.get("class", "")
        if language.startswith("language-"):
            stack[-1].attrs["language"] = language.removeprefix("language-")
            return None
    elif tag.name == "pre" and tag.attrs.get("language"):
        entity["language"] = tag.attrs["language"]
    if length <= 0:
        return None
    return entity


# ------------------------------------------------------------------------- records


@dataclass
class ApiCall:
    """One Bot API request received by the emulator.

    ``params`` holds the decoded request parameters (see the module docstring).
    ``result`` is the ``result`` the emulator answered with (``None`` for errors) and
    ``error`` the error description, if the call failed.
    """

    method: str
    params: dict[str, Any]
    result: Any = field(default=None, compare=False, repr=False)
    error: str | None = field(default=None, compare=False)


_Handler = Callable[[JsonDict], Awaitable[Any]]


# ------------------------------------------------------------------------ emulator


class BotAPIEmulator(LoopbackServer):
    """A Telegram Bot API server on loopback for one bot (see the module docstring)."""

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
        #: Current webhook URL ("" = none); ``getUpdates`` answers 409 while it is set.
        self.webhook_url = ""
        #: Commands set via ``setMyCommands``, keyed by ``"<scope type>:<language>"``.
        self.commands: dict[str, list[Any]] = {}
        #: What ``getMe`` reports.
        self.can_read_all_group_messages = False

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

        self._handlers: dict[str, tuple[str, _Handler]] = {}
        for name, handler in (
            ("getMe", self._get_me),
            ("getUpdates", self._get_updates),
            ("setWebhook", self._set_webhook),
            ("deleteWebhook", self._delete_webhook),
            ("getWebhookInfo", self._get_webhook_info),
            ("sendMessage", self._send_message),
            ("editMessageText", self._edit_message_text),
            ("deleteMessage", self._delete_message),
            ("sendChatAction", self._return_true),
            ("setMyCommands", self._set_my_commands),
            ("getMyCommands", self._get_my_commands),
            ("deleteMyCommands", self._delete_my_commands),
            ("getChatMember", self._get_chat_member),
            ("getChat", self._get_chat),
            ("answerCallbackQuery", self._answer_callback_query),
            ("close", self._return_true),
            ("logOut", self._return_true),
            ("copyMessage", self._copy_message),
            ("forwardMessage", self._forward_message),
            ("sendMediaGroup", self._send_media_group),
            *((name, self._generic_sender(name)) for name in _GENERIC_SEND_METHODS),
        ):
            self._handlers[name.lower()] = (name, handler)

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
        """Pending long polls are answered with ``[]`` right away."""
        self._closing = True
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

    def set_chat_member_status(
        self, chat_id: int, user_id: int, status: str, *, is_member: bool = True
    ) -> None:
        """Status ``getChatMember(chat_id, user_id)`` reports.

        One of creator, administrator, member, restricted, left, kicked (aliases:
        owner, admin, banned). ``is_member`` is reported for "restricted".
        """
        normalized = _STATUS_ALIASES.get(status, status)
        if normalized not in _CHAT_MEMBER_STATUSES:
            msg = f"unknown chat member status {status!r}"
            raise ValueError(msg)
        self._member_status[(chat_id, user_id)] = normalized
        self._member_is_member[(chat_id, user_id)] = is_member

    def set_auto_delete(self, chat_id: int, seconds: int) -> None:
        """``message_auto_delete_time`` that ``getChat`` reports for the chat (0: none)."""
        self._auto_delete[chat_id] = seconds

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

    # --------------------------------------------------------------- injection

    def push_message(
        self,
        *,
        chat_id: int,
        user_id: int,
        text: str | None = None,
        chat_type: str = "private",
        first_name: str = "User",
        username: str | None = None,
        language_code: str | None = "en",
        thread_id: int | None = None,
        is_forum: bool = False,
        is_topic_message: bool | None = None,
        reply_to_message_id: int | None = None,
        entities: list[JsonDict] | None = None,
        caption: str | None = None,
        photo: bool = False,
        forward_from_user_id: int | None = None,
        quote_text: str | None = None,
        chat_title: str | None = None,
        anonymous_admin: bool = False,
        date: int | None = None,
    ) -> JsonDict:
        """Queue a ``message`` update from a user and return it.

        * ``chat_type``: "private", "group", "supergroup" (groups are titled
          ``chat_title``, default "Test group"; a chat keeps its title/forum flag).
        * ``entities=None`` auto-detects ``/commands`` and ``@mentions`` like Telegram
          does; pass ``[]`` for none or an explicit list (see :func:`mention_entity`).
        * ``thread_id`` sets ``message_thread_id``; in a forum (``is_forum=True``)
          ``is_topic_message`` defaults to ``True``.  A reply without ``thread_id`` to a
          message in a forum topic inherits the topic.
        * ``reply_to_message_id`` of a message the emulator knows (pushed or sent by the
          bot in this chat) adds the full ``reply_to_message``; unknown ids add nothing
          (as for a deleted message).  ``quote_text`` adds ``quote``.
        * ``photo=True`` sends a one-size photo; ``text`` then becomes the caption
          unless ``caption`` is given.
        * ``forward_from_user_id`` adds ``forward_origin`` of type "user".
        * ``anonymous_admin=True`` sends as the group itself, like Telegram does for an
          anonymous admin: ``sender_chat`` is the chat and ``from`` the GroupAnonymousBot
          placeholder (``user_id`` only registers who is behind it).
        * ``date`` overrides the message's Unix time (default: now).
        """
        user = self._register_user(user_id, first_name, username, language_code)
        chat = self._register_chat(chat_id, chat_type, user, chat_title, is_forum)
        message_id = self._new_message_id(chat_id)
        message: JsonDict = {
            "message_id": message_id,
            "from": copy.deepcopy(user),
            "chat": copy.deepcopy(chat),
            "date": _now() if date is None else date,
        }
        if anonymous_admin:
            message["from"] = copy.deepcopy(_ANONYMOUS_ADMIN)
            message["sender_chat"] = copy.deepcopy(chat)
        forum = bool(chat.get("is_forum"))
        reply: JsonDict | None = None
        if reply_to_message_id is not None:
            reply = self._reply_snapshot(chat_id, reply_to_message_id)
            if reply is not None and thread_id is None and forum:
                thread_id = reply.get("message_thread_id")
        if thread_id is not None:
            message["message_thread_id"] = thread_id
        topic = (
            is_topic_message if is_topic_message is not None else thread_id is not None and forum
        )
        if topic:
            message["is_topic_message"] = True
        if forward_from_user_id is not None:
            sender = self._users.get(forward_from_user_id) or {
                "id": forward_from_user_id,
                "is_bot": False,
                "first_name": "Forwarded User",
            }
            message["forward_origin"] = {
                "type": "user",
                "sender_user": copy.deepcopy(sender),
                "date": _now() - 60,
            }
        if reply is not None:
            message["reply_to_message"] = reply
        if quote_text is not None:
            position = 0
            replied_text = (reply or {}).get("text") or (reply or {}).get("caption") or ""
            if isinstance(replied_text, str) and quote_text in replied_text:
                position = utf16_len(replied_text[: replied_text.index(quote_text)])
            message["quote"] = {"text": quote_text, "position": position}
        if photo:
            message["photo"] = [
                {
                    "file_id": f"photo-{chat_id}-{message_id}",
                    "file_unique_id": f"uniq-{chat_id}-{message_id}",
                    "width": 320,
                    "height": 240,
                    "file_size": 4096,
                }
            ]
            if caption is None:
                caption = text
        elif text is not None:
            message["text"] = text
            found = _auto_entities(text) if entities is None else entities
            if found:
                message["entities"] = copy.deepcopy(found)
        if caption is not None:
            message["caption"] = caption
            found = entities if photo and entities is not None else _auto_entities(caption)
            if found:
                message["caption_entities"] = copy.deepcopy(found)
        self._store_message(message)
        return self._enqueue({"message": message})

    def push_edited_message(
        self,
        *,
        chat_id: int,
        message_id: int,
        text: str | None = None,
        caption: str | None = None,
        entities: list[JsonDict] | None = None,
    ) -> JsonDict:
        """Queue an ``edited_message`` update for a previously pushed message.

        The stored message gets the new ``text`` (or ``caption``) and ``edit_date``;
        ``entities=None`` re-detects commands/mentions.  ``KeyError`` for unknown messages.
        """
        stored = self._messages.get((chat_id, message_id))
        if stored is None:
            msg = f"no known message {message_id} in chat {chat_id} to edit"
            raise KeyError(msg)
        message = copy.deepcopy(stored)
        for field_name, entities_name, value in (
            ("text", "entities", text),
            ("caption", "caption_entities", caption),
        ):
            if value is None:
                continue
            message[field_name] = value
            found = _auto_entities(value) if entities is None else entities
            message.pop(entities_name, None)
            if found:
                message[entities_name] = copy.deepcopy(found)
        message["edit_date"] = max(_now(), int(message.get("date", 0)))
        self._store_message(message)
        return self._enqueue({"edited_message": message})

    def push_callback_query(
        self,
        *,
        chat_id: int,
        user_id: int,
        data: str,
        message_id: int | None = None,
        first_name: str = "User",
        username: str | None = None,
        language_code: str | None = "en",
    ) -> JsonDict:
        """Queue a ``callback_query`` update (button press on a known message, if given)."""
        user = self._register_user(user_id, first_name, username, language_code)
        query: JsonDict = {
            "id": str(self._next_callback_id),
            "from": copy.deepcopy(user),
            "chat_instance": str(chat_id),
            "data": data,
        }
        self._next_callback_id += 1
        if message_id is not None:
            message = self._messages.get((chat_id, message_id))
            if message is None:
                msg = f"no known message {message_id} in chat {chat_id}"
                raise KeyError(msg)
            query["message"] = copy.deepcopy(message)
        return self._enqueue({"callback_query": query})

    def push_update(self, update: JsonDict) -> JsonDict:
        """Queue a raw update (``update_id`` is assigned when missing) and return it.

        Messages inside message-like updates are remembered, so the bot can reply to them.
        """
        for key in _MESSAGE_UPDATE_TYPES:
            message = update.get(key)
            if isinstance(message, dict):
                self._store_message(copy.deepcopy(message))
        return self._enqueue(update)

    def _enqueue(self, update: JsonDict) -> JsonDict:
        update_id = _as_int(update.get("update_id"))
        if update_id is None:
            update = {"update_id": self._next_update_id, **update}
            self._next_update_id += 1
        else:
            self._next_update_id = max(self._next_update_id, update_id + 1)
        self._updates.append(update)
        self._updates.sort(key=lambda u: int(u["update_id"]))
        self._notify()
        return update

    # -------------------------------------------------------------- data model

    def _bot_user(self) -> JsonDict:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": self.first_name,
            "username": self.username,
        }

    def _register_user(
        self, user_id: int, first_name: str, username: str | None, language_code: str | None
    ) -> JsonDict:
        user: JsonDict = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username is not None:
            user["username"] = username
        if language_code is not None:
            user["language_code"] = language_code
        self._users[user_id] = user
        return user

    def _register_chat(
        self,
        chat_id: int,
        chat_type: str,
        user: JsonDict,
        title: str | None,
        is_forum: bool,
    ) -> JsonDict:
        previous = self._chats.get(chat_id, {})
        chat: JsonDict = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = user["first_name"]
            if "username" in user:
                chat["username"] = user["username"]
        else:
            chat["title"] = title or previous.get("title") or "Test group"
            if "username" in previous:
                chat["username"] = previous["username"]
            if is_forum or previous.get("is_forum"):
                chat["is_forum"] = True
        self._chats[chat_id] = chat
        return chat

    def _chat_for(self, chat_id: int) -> JsonDict:
        chat = self._chats.get(chat_id)
        if chat is None:
            if chat_id > 0:
                user = self._users.get(chat_id, {})
                chat = {
                    "id": chat_id,
                    "type": "private",
                    "first_name": user.get("first_name", "User"),
                }
            else:
                chat = {"id": chat_id, "type": "supergroup", "title": "Test group"}
            self._chats[chat_id] = chat
        return copy.deepcopy(chat)

    def _resolve_chat_id(self, value: Any) -> int:
        chat_id = _as_int(value)
        if chat_id is not None:
            return chat_id
        if isinstance(value, str) and value.startswith("@") and len(value) > 1:
            name = value[1:].lower()
            for known_id, chat in self._chats.items():
                if str(chat.get("username", "")).lower() == name:
                    return known_id
            new_id = -1_000_000_000_000 - len(self._chats) - 1
            self._chats[new_id] = {
                "id": new_id,
                "type": "supergroup",
                "title": value[1:],
                "username": value[1:],
            }
            return new_id
        raise _bad_request("chat not found")

    def _new_message_id(self, chat_id: int) -> int:
        message_id = self._next_message_id.get(chat_id, 0) + 1
        self._next_message_id[chat_id] = message_id
        return message_id

    def _store_message(self, message: JsonDict) -> None:
        chat = message.get("chat")
        chat_id = _as_int(chat.get("id")) if isinstance(chat, dict) else None
        message_id = _as_int(message.get("message_id"))
        if chat_id is None or message_id is None:
            return
        self._messages[(chat_id, message_id)] = message
        self._next_message_id[chat_id] = max(self._next_message_id.get(chat_id, 0), message_id)
        if isinstance(chat, dict) and chat_id not in self._chats:
            self._chats[chat_id] = copy.deepcopy(chat)

    def _reply_snapshot(self, chat_id: int, message_id: int) -> JsonDict | None:
        message = self._messages.get((chat_id, message_id))
        if message is None:
            return None
        snapshot = copy.deepcopy(message)
        # Telegram: the replied-to message never contains its own reply_to_message.
        snapshot.pop("reply_to_message", None)
        return snapshot

    @staticmethod
    def _format(text: str, parse_mode: Any, entities: Any) -> tuple[str, list[JsonDict]]:
        if isinstance(parse_mode, str) and parse_mode.lower() == "html":
            return _parse_html(text)
        if isinstance(entities, list):
            return text, [e for e in entities if isinstance(e, dict)]
        return text, []

    def _new_bot_message(self, chat_id: int, params: JsonDict) -> JsonDict:
        chat = self._chat_for(chat_id)
        reply = self._reply_target(chat_id, params)
        message: JsonDict = {
            "message_id": self._new_message_id(chat_id),
            "from": self._bot_user(),
            "chat": chat,
            "date": _now(),
        }
        thread_id = _as_int(params.get("message_thread_id"))
        if thread_id is None and reply is not None and chat.get("is_forum"):
            thread_id = _as_int(reply.get("message_thread_id"))
        if thread_id is not None:
            message["message_thread_id"] = thread_id
            if chat.get("is_forum"):
                message["is_topic_message"] = True
        if reply is not None:
            message["reply_to_message"] = reply
            reply_parameters = params.get("reply_parameters")
            if isinstance(reply_parameters, dict) and isinstance(
                reply_parameters.get("quote"), str
            ):
                quote = reply_parameters["quote"]
                message["quote"] = {
                    "text": quote,
                    "position": _as_int(reply_parameters.get("quote_position"), 0),
                    "is_manual": True,
                }
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            message["reply_markup"] = markup
        return message

    def _reply_target(self, chat_id: int, params: JsonDict) -> JsonDict | None:
        reply_parameters = params.get("reply_parameters")
        if isinstance(reply_parameters, dict):
            message_id = _as_int(reply_parameters.get("message_id"))
            target_chat = reply_parameters.get("chat_id")
            allow = reply_parameters.get(
                "allow_sending_without_reply", params.get("allow_sending_without_reply")
            )
        else:
            message_id = _as_int(params.get("reply_to_message_id"))
            target_chat = None
            allow = params.get("allow_sending_without_reply")
        if message_id is None:
            return None
        source_chat = chat_id if target_chat is None else self._resolve_chat_id(target_chat)
        snapshot = self._reply_snapshot(source_chat, message_id)
        if snapshot is None and not _truthy(allow):
            raise _bad_request("message to be replied not found")
        return snapshot

    def _require_message_id(self, params: JsonDict) -> tuple[int, int]:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        message_id = _as_int(params.get("message_id"))
        if message_id is None:
            raise _bad_request("message identifier is not specified")
        return chat_id, message_id

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
            return _bad_request(f"invalid request parameters: {exc}").response()
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
            key: _decode_value(key, value) if isinstance(value, str) else value
            for key, value in raw.items()
        }

    # ---------------------------------------------------------------- methods

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

    def _update_allowed(self, update: JsonDict) -> bool:
        kind = next((key for key in update if key != "update_id"), None)
        if kind is None:
            return False
        if self._allowed_updates is None:
            return kind not in _OPT_IN_UPDATE_TYPES
        return kind in self._allowed_updates

    async def _get_updates(self, params: JsonDict) -> Any:
        if self.webhook_url:
            raise EmulatorError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = _as_int(params.get("offset"), 0) or 0
        limit = min(max(_as_int(params.get("limit"), 100) or 100, 1), 100)
        timeout = max(_as_float(params.get("timeout"), 0.0), 0.0)
        allowed = params.get("allowed_updates")
        if isinstance(allowed, list):
            self._allowed_updates = frozenset(str(a) for a in allowed) if allowed else None
        if offset > 0:
            self._updates = [u for u in self._updates if int(u["update_id"]) >= offset]
        elif offset < 0:
            self._updates = self._updates[offset:]
        self._poll_generation += 1
        generation = self._poll_generation
        self._notify()

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if generation != self._poll_generation:
                raise EmulatorError(
                    409,
                    "Conflict: terminated by other getUpdates request; "
                    "make sure that only one bot instance is running",
                )
            kept = [u for u in self._updates if self._update_allowed(u)]
            if len(kept) != len(self._updates):
                self._updates = kept
                self._notify()
            batch = self._updates[:limit]
            remaining = deadline - loop.time()
            if batch or self._closing or remaining <= 0:
                return batch
            await self._wait_change(remaining)

    async def _set_webhook(self, params: JsonDict) -> Any:
        self.webhook_url = str(params.get("url") or "")
        if _truthy(params.get("drop_pending_updates")):
            self._updates.clear()
        # A pending long poll is terminated like on Telegram.
        self._poll_generation += 1
        return True

    async def _delete_webhook(self, params: JsonDict) -> Any:
        self.webhook_url = ""
        if _truthy(params.get("drop_pending_updates")):
            self._updates.clear()
        return True

    async def _get_webhook_info(self, params: JsonDict) -> Any:
        return {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }

    def _checked_text(self, params: JsonDict) -> tuple[str, list[JsonDict]]:
        text = params.get("text")
        if not isinstance(text, str) or not text.strip():
            raise _bad_request("message text is empty")
        plain, entities = self._format(text, params.get("parse_mode"), params.get("entities"))
        if not plain.strip():
            raise _bad_request("message text is empty")
        if len(plain) > _MAX_MESSAGE_LENGTH:
            raise _bad_request("message is too long")
        return plain, entities

    def _check_markup(self, chat_id: int, params: JsonDict) -> None:
        """Inline buttons as Telegram checks them: a web_app button only in a private chat,
        and only to an HTTPS page."""
        markup = params.get("reply_markup")
        rows = markup.get("inline_keyboard", []) if isinstance(markup, dict) else []
        for button in (b for row in rows if isinstance(row, list) for b in row):
            web_app = button.get("web_app") if isinstance(button, dict) else None
            if web_app is None:
                continue
            if self._chat_for(chat_id).get("type") != "private":
                raise _bad_request("BUTTON_TYPE_INVALID")
            url = str(web_app.get("url", "")) if isinstance(web_app, dict) else ""
            if not url.startswith("https://"):
                raise _bad_request(
                    f"inline keyboard button Web App URL '{url}' is invalid:"
                    " Only HTTPS links are allowed"
                )

    async def _answer_callback_query(self, params: JsonDict) -> Any:
        """A `url` is opened by the client: only t.me/<this bot>?start=... links (no games)."""
        url = params.get("url")
        if url is not None and not re.fullmatch(
            rf"https://t\.me/{re.escape(self.username)}\?start=[A-Za-z0-9_-]{{1,64}}", str(url)
        ):
            raise _bad_request("URL_INVALID")
        return True

    async def _send_message(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        self._check_markup(chat_id, params)
        plain, entities = self._checked_text(params)
        message = self._new_bot_message(chat_id, params)
        message["text"] = plain
        if entities:
            message["entities"] = entities
        self._store_message(message)
        return copy.deepcopy(message)

    async def _edit_message_text(self, params: JsonDict) -> Any:
        if params.get("inline_message_id"):
            self._checked_text(params)
            return True
        key = self._require_message_id(params)
        stored = self._messages.get(key)
        if stored is None:
            raise _bad_request("message to edit not found")
        if stored.get("from", {}).get("id") != self.bot_id:
            raise _bad_request("message can't be edited")
        plain, entities = self._checked_text(params)
        self._check_markup(key[0], params)
        markup = params.get("reply_markup")
        if (
            plain == stored.get("text")
            and entities == stored.get("entities", [])
            and (markup is None or markup == stored.get("reply_markup"))
        ):
            raise _bad_request(
                "message is not modified: specified new message content and reply markup "
                "of the specified message are exactly the same as a previous content and "
                "reply markup of the specified message"
            )
        message = copy.deepcopy(stored)
        message["text"] = plain
        message.pop("entities", None)
        if entities:
            message["entities"] = entities
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            message["reply_markup"] = markup
        message["edit_date"] = max(_now(), int(message.get("date", 0)))
        self._store_message(message)
        return copy.deepcopy(message)

    async def _delete_message(self, params: JsonDict) -> Any:
        key = self._require_message_id(params)
        if self._messages.pop(key, None) is None:
            raise _bad_request("message to delete not found")
        return True

    @staticmethod
    def _commands_key(params: JsonDict) -> str:
        scope = params.get("scope")
        scope_type = scope.get("type", "default") if isinstance(scope, dict) else "default"
        return f"{scope_type}:{params.get('language_code') or ''}"

    async def _set_my_commands(self, params: JsonDict) -> Any:
        commands = params.get("commands")
        self.commands[self._commands_key(params)] = commands if isinstance(commands, list) else []
        return True

    async def _get_my_commands(self, params: JsonDict) -> Any:
        return self.commands.get(self._commands_key(params), [])

    async def _delete_my_commands(self, params: JsonDict) -> Any:
        self.commands.pop(self._commands_key(params), None)
        return True

    async def _get_chat_member(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        user_id = _as_int(params.get("user_id"))
        if user_id is None:
            raise _bad_request("user not found")
        status = self._member_status.get((chat_id, user_id), self.default_member_status)
        status = _STATUS_ALIASES.get(status, status)
        if user_id == self.bot_id:
            user = self._bot_user()
        else:
            user = copy.deepcopy(
                self._users.get(user_id, {"id": user_id, "is_bot": False, "first_name": "User"})
            )
        member: JsonDict = {"status": status, "user": user}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update(
                {
                    "can_be_edited": False,
                    "is_anonymous": False,
                    "can_manage_chat": True,
                    "can_delete_messages": True,
                    "can_manage_video_chats": True,
                    "can_restrict_members": True,
                    "can_promote_members": False,
                    "can_change_info": True,
                    "can_invite_users": True,
                    "can_post_stories": False,
                    "can_edit_stories": False,
                    "can_delete_stories": False,
                    "can_send_welcome_messages": False,
                    "can_pin_messages": True,
                    "can_manage_topics": True,
                }
            )
        elif status == "restricted":
            member.update(
                {
                    "is_member": self._member_is_member.get((chat_id, user_id), True),
                    "can_send_messages": False,
                    "can_send_audios": False,
                    "can_send_documents": False,
                    "can_send_photos": False,
                    "can_send_videos": False,
                    "can_send_video_notes": False,
                    "can_send_voice_notes": False,
                    "can_send_polls": False,
                    "can_send_other_messages": False,
                    "can_add_web_page_previews": False,
                    "can_react_to_messages": False,
                    "can_edit_tag": False,
                    "can_change_info": False,
                    "can_invite_users": False,
                    "can_pin_messages": False,
                    "can_manage_topics": False,
                    "until_date": 0,
                }
            )
        elif status == "kicked":
            member["until_date"] = 0
        return member

    async def _get_chat(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        chat = self._chat_for(chat_id)
        extra: JsonDict = {}
        if self._auto_delete.get(chat_id):
            extra["message_auto_delete_time"] = self._auto_delete[chat_id]
        return {
            **chat,
            **extra,
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": False,
                "limited_gifts": False,
                "unique_gifts": False,
                "premium_subscription": False,
                "gifts_from_channels": False,
            },
        }

    def _media_message(self, chat_id: int, params: JsonDict, method: str) -> JsonDict:
        message = self._new_bot_message(chat_id, params)
        caption = params.get("caption")
        if isinstance(caption, str) and caption:
            plain, entities = self._format(
                caption, params.get("parse_mode"), params.get("caption_entities")
            )
            if len(plain) > _MAX_CAPTION_LENGTH:
                raise _bad_request("message caption is too long")
            message["caption"] = plain
            if entities:
                message["caption_entities"] = entities
        mid = message["message_id"]
        file_ref = {"file_id": f"file-{chat_id}-{mid}", "file_unique_id": f"uniq-{chat_id}-{mid}"}
        if method == "sendPhoto":
            message["photo"] = [{**file_ref, "width": 320, "height": 240}]
        elif method == "sendDocument":
            message["document"] = file_ref
        elif method == "sendDice":
            message["dice"] = {"emoji": params.get("emoji") or "🎲", "value": 1}
        self._store_message(message)
        return message

    def _generic_sender(self, method: str) -> _Handler:
        async def send(params: JsonDict) -> Any:
            chat_id = self._resolve_chat_id(params.get("chat_id"))
            return copy.deepcopy(self._media_message(chat_id, params, method))

        return send

    async def _send_media_group(self, params: JsonDict) -> Any:
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        media = params.get("media")
        items = media if isinstance(media, list) else []
        if not 2 <= len(items) <= 10:
            raise _bad_request("wrong number of messages in the media group")
        result = []
        for item in items:
            item_params = {**params, **(item if isinstance(item, dict) else {})}
            kind = str(item_params.get("type", "document"))
            result.append(
                self._media_message(chat_id, item_params, "sendPhoto" if kind == "photo" else "")
            )
        return copy.deepcopy(result)

    def _copy_source(self, params: JsonDict) -> JsonDict:
        from_chat = self._resolve_chat_id(params.get("from_chat_id"))
        message_id = _as_int(params.get("message_id"))
        source = self._messages.get((from_chat, message_id or 0))
        if source is None:
            raise _bad_request("message to copy not found")
        return source

    async def _copy_message(self, params: JsonDict) -> Any:
        source = self._copy_source(params)
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        message = self._new_bot_message(chat_id, params)
        for key in ("text", "entities", "caption", "caption_entities", "photo", "document"):
            if key in source:
                message[key] = copy.deepcopy(source[key])
        self._store_message(message)
        return {"message_id": message["message_id"]}

    async def _forward_message(self, params: JsonDict) -> Any:
        source = self._copy_source(params)
        chat_id = self._resolve_chat_id(params.get("chat_id"))
        message = self._new_bot_message(chat_id, {"chat_id": chat_id})
        for key in ("text", "entities", "caption", "caption_entities", "photo", "document"):
            if key in source:
                message[key] = copy.deepcopy(source[key])
        sender = source.get("from")
        if isinstance(sender, dict):
            message["forward_origin"] = {
                "type": "user",
                "sender_user": copy.deepcopy(sender),
                "date": source.get("date", _now()),
            }
        self._store_message(message)
        return copy.deepcopy(message)
