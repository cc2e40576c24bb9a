"""Signed, expiring tickets that carry a memory scope to the Mini App (never a bare chat ID).

A ticket names a scope (a private chat, or a group Topic), the one user it was issued to, what
it is for and when it expires, signed with a key derived from the bot's token (HMAC-SHA256,
128 bits kept). Kinds, never accepted for one another:

- "link": the start parameter of a deep link from a group's /memory screen to the private
  chat (Telegram allows 64 characters: no workspace; it is resolved again on arrival);
- "scope": the scope of a page opened from that private chat (`?s=` in the page's URL);
- "download": one export download (`api/export?t=`), with a random nonce (claimed in the
  database at its one download: Tickets.use_once in storage), whether the link alone may fetch it
  (`bearer`: Telegram's downloadFile fetches it without the page's headers) and the user's
  language (a refusal of a download without login data is worded in it).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import struct
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from bot_memory.errors import BotMemoryError

TicketKind = Literal["link", "scope", "download"]
# b"d" was a download ticket without a nonce (0.2): refused as of another kind.
_KIND_BYTES: dict[str, bytes] = {"link": b"l", "scope": b"s", "download": b"D"}
_HEAD = struct.Struct(">ccqiqI")  # kind, private/group, chat, topic, user, expires (unix s)
_DOWNLOAD = struct.Struct(">16s?B")  # a download's nonce, bearer, the language's length
NONCE_BYTES = 16
_MAC_BYTES = 16
LINK_PREFIX = "bm"  # a deep link's start parameter: LINK_PREFIX + ticket


class TicketError(BotMemoryError, ValueError):
    """A ticket that is malformed, forged, of another kind, or expired (`expired` says)."""

    def __init__(self, expired: bool = False) -> None:
        super().__init__("expired" if expired else "invalid")
        self.expired = expired


@dataclass(frozen=True)
class Ticket:
    kind: TicketKind
    private: bool
    chat_id: int
    topic_id: int
    user_id: int  # the only user it serves
    expires_at: int  # unix seconds
    workspace: str = ""  # empty in links
    # Downloads only: claimed once (NONCE_BYTES random bytes), whether the link alone may fetch
    # it (no login data), and the language a refusal is worded in without login data.
    nonce: bytes = b""
    bearer: bool = False
    language: str = ""


def new_nonce() -> bytes:
    return secrets.token_bytes(NONCE_BYTES)


def ticket_key(bot_token: str) -> bytes:
    """The signing key: derived from the bot's token, so revoking the token revokes tickets."""
    return hmac.new(b"bot-memory scope ticket", bot_token.encode(), hashlib.sha256).digest()


def issue(ticket: Ticket, key: bytes) -> str:
    body = _HEAD.pack(
        _KIND_BYTES[ticket.kind],
        b"p" if ticket.private else b"g",
        ticket.chat_id,
        ticket.topic_id,
        ticket.user_id,
        ticket.expires_at,
    )
    if ticket.kind == "download":
        language = ticket.language.encode()
        if len(ticket.nonce) != NONCE_BYTES or len(language) > 255:
            raise ValueError("a download ticket takes a 16-byte nonce and a short language")
        body += _DOWNLOAD.pack(ticket.nonce, ticket.bearer, len(language)) + language
    body += ticket.workspace.encode()
    mac = hmac.new(key, body, hashlib.sha256).digest()[:_MAC_BYTES]
    return base64.urlsafe_b64encode(body + mac).decode().rstrip("=")


def read(token: str, key: bytes, *, kind: TicketKind, now: datetime) -> Ticket:
    """The ticket, if it is well formed, signed with `key`, of this kind and not expired."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TicketError() from exc
    if len(raw) < _HEAD.size + _MAC_BYTES or len(token) > 1024:
        raise TicketError()
    body, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
    if not hmac.compare_digest(mac, hmac.new(key, body, hashlib.sha256).digest()[:_MAC_BYTES]):
        raise TicketError()
    code, place, chat_id, topic_id, user_id, expires_at = _HEAD.unpack(body[: _HEAD.size])
    if code != _KIND_BYTES[kind] or place not in (b"p", b"g"):
        raise TicketError()
    rest, nonce, bearer, language = body[_HEAD.size :], b"", False, ""
    try:
        if kind == "download":
            if len(rest) < _DOWNLOAD.size:
                raise TicketError()
            nonce, bearer, size = _DOWNLOAD.unpack(rest[: _DOWNLOAD.size])
            rest = rest[_DOWNLOAD.size :]
            language, rest = rest[:size].decode(), rest[size:]
        workspace = rest.decode()
    except UnicodeDecodeError as exc:
        raise TicketError() from exc
    if now.timestamp() >= expires_at:
        raise TicketError(expired=True)
    found = Ticket(kind, place == b"p", chat_id, topic_id, user_id, expires_at, workspace)
    return replace(found, nonce=nonce, bearer=bearer, language=language)
