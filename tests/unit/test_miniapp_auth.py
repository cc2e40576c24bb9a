"""initData and scope tickets, alone: pure functions, no server."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, urlencode

import pytest

from bot_memory_aiogram.miniapp.init_data import InitDataError, sign_init_data, verify_init_data
from bot_memory_aiogram.miniapp.tickets import (
    LINK_PREFIX,
    Ticket,
    TicketError,
    issue,
    new_nonce,
    read,
    ticket_key,
)

TOKEN = "42:TEST"
NOW = datetime(2026, 10, 17, 12, 0, tzinfo=UTC)
ADA = {"id": 1001, "first_name": "Ada", "language_code": "en"}


def verify(raw: str, now: datetime = NOW) -> int:
    return verify_init_data(raw, TOKEN, now=now, max_age_seconds=3600).id


def test_init_data_signed_with_the_bot_token_names_its_user() -> None:
    raw = sign_init_data(TOKEN, user=ADA, auth_date=NOW - timedelta(minutes=59), query_id="q")
    assert verify(raw) == 1001


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda f: {**f, "user": json.dumps({**ADA, "id": 1002})}, "invalid"),  # another user
        (lambda f: {**f, "auth_date": str(int(NOW.timestamp()))}, "invalid"),  # made younger
        (lambda f: {k: v for k, v in f.items() if k != "hash"}, "invalid"),
        (lambda f: {**f, "hash": "0" * 64}, "invalid"),
        (lambda f: {**f, "extra": "1"}, "invalid"),  # a field added after signing
        (lambda f: {k: v for k, v in f.items() if k != "user"}, "invalid"),
    ],
)
def test_any_change_to_signed_init_data_is_refused(change, reason) -> None:  # type: ignore[no-untyped-def]
    raw = sign_init_data(TOKEN, user=ADA, auth_date=NOW - timedelta(minutes=5))
    fields = dict(parse_qsl(raw))
    with pytest.raises(InitDataError) as refused:
        verify(urlencode(change(fields)))
    assert refused.value.reason == reason


def test_init_data_of_another_bot_too_old_or_missing_is_refused() -> None:
    other = sign_init_data("43:OTHER", user=ADA, auth_date=NOW)
    old = sign_init_data(TOKEN, user=ADA, auth_date=NOW - timedelta(seconds=3601))
    for raw, reason in ((other, "invalid"), (old, "expired"), ("", "missing"), ("%%%", "invalid")):
        with pytest.raises(InitDataError) as refused:
            verify(raw)
        assert refused.value.reason == reason, raw


def ticket(**kw: object) -> Ticket:
    fields: dict[str, object] = {
        "kind": "scope",
        "private": False,
        "chat_id": -1001234567890,
        "topic_id": 7,
        "user_id": 1001,
        "expires_at": int(NOW.timestamp()) + 60,
        "workspace": "tg:42:-1001234567890",
        **kw,
    }
    return Ticket(**fields)  # type: ignore[arg-type]


def test_a_ticket_reads_back_only_with_its_key_kind_and_time() -> None:
    key = ticket_key(TOKEN)
    token = issue(ticket(), key)
    assert read(token, key, kind="scope", now=NOW) == ticket()
    for bad in (token[:-2], token + "A", token.replace(token[5], "A" if token[5] != "A" else "B")):
        with pytest.raises(TicketError) as refused:
            read(bad, key, kind="scope", now=NOW)
        assert not refused.value.expired
    with pytest.raises(TicketError):
        read(token, ticket_key("43:OTHER"), kind="scope", now=NOW)
    with pytest.raises(TicketError):
        read(token, key, kind="download", now=NOW)
    with pytest.raises(TicketError) as late:
        read(token, key, kind="scope", now=NOW + timedelta(seconds=60))
    assert late.value.expired


def test_a_deep_link_ticket_fits_telegrams_start_parameter() -> None:
    widest = ticket(kind="link", workspace="", chat_id=-(2**52), topic_id=2**31 - 1, user_id=2**52)
    start = LINK_PREFIX + issue(widest, ticket_key(TOKEN))
    assert len(start) <= 64 and start.replace("-", "").replace("_", "").isalnum()


def test_a_download_ticket_carries_its_nonce_bearer_and_language() -> None:
    key = ticket_key(TOKEN)
    for bearer, language in ((False, "en"), (True, "zh"), (True, "")):
        made = ticket(kind="download", nonce=new_nonce(), bearer=bearer, language=language)
        assert read(issue(made, key), key, kind="download", now=NOW) == made
    assert new_nonce() != new_nonce()
    with pytest.raises(ValueError, match="nonce"):  # a download without one could be reused
        issue(ticket(kind="download"), key)
    with pytest.raises(TicketError):  # a scope ticket is no download's
        read(issue(ticket(), key), key, kind="download", now=NOW)


def test_a_download_ticket_of_the_old_form_is_refused() -> None:
    """0.2's download tickets had no nonce (kind b"d"): signed, unexpired, and still refused."""
    key = ticket_key(TOKEN)
    head = struct.pack(">ccqiqI", b"d", b"g", -1001234567890, 7, 1001, int(NOW.timestamp()) + 60)
    body = head + b"tg:42:-1001234567890"
    mac = hmac.new(key, body, hashlib.sha256).digest()[:16]
    old = base64.urlsafe_b64encode(body + mac).decode().rstrip("=")
    with pytest.raises(TicketError) as refused:
        read(old, key, kind="download", now=NOW)
    assert not refused.value.expired
