"""An update Telegram delivers again (after a non-2xx, a timeout, or a process killed while
handling it) is handled once: answered already, it is dropped before the host's handlers;
recorded but never answered, the handlers run again with the request it opened."""

from __future__ import annotations

import asyncio
import copy
import logging
from datetime import UTC, datetime

import pytest

from bot_memory.scopes import Scope
from tests.support.e2e import Env


def again(update: dict[str, object]) -> dict[str, object]:
    """The same update, delivered once more (a new delivery: the emulator numbers it)."""
    repeat = copy.deepcopy(update)
    repeat.pop("update_id", None)
    return repeat


async def test_an_answered_update_delivered_again_is_not_answered_again(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    first = env.emu.push_message(chat_id=5, user_id=5, text="my cat is called Mochi")
    await env.emu.wait_for_sent(1)
    await env.settled()
    with caplog.at_level(logging.INFO, logger="bot_memory_aiogram"):
        env.emu.push_update(again(first))
        await env.emu.wait_idle(quiet=0.3)
    assert len(env.emu.sent) == 1  # not answered twice
    rows = await env.rows("SELECT status FROM requests")
    assert [r["status"] for r in rows] == ["succeeded"]
    assert len(await env.rows("SELECT 1 FROM messages WHERE role = 'user'")) == 1
    [said] = [r for r in caplog.records if getattr(r, "event", "") == "memory.redelivered"]
    assert "outcome=drop" in said.getMessage()


async def test_an_update_recorded_but_never_answered_is_handled_with_its_request(
    env: Env,
) -> None:
    """The first delivery recorded the message and the process died before answering."""
    first = env.emu.push_message(chat_id=5, user_id=5, text="hello there")
    await env.emu.wait_for_sent(1)
    await env.settled()
    lost = again(first)
    message = lost["message"]
    assert isinstance(message, dict)
    message["message_id"] = int(message["message_id"]) + 100
    message["text"] = "my dog is called Rex"
    scope = Scope(workspace="test", bot_id=env.bot.id, kind="private", chat_id=5, user_id=5)
    recorded = await env.memory.record(
        scope,
        text="my dog is called Rex",
        speaker_id=5,
        telegram_message_id=int(message["message_id"]),
        sent_at=datetime.fromtimestamp(int(message["date"]), UTC),
    )
    assert recorded is not None  # the request it opened stays queued: no answer was sent
    env.emu.push_update(lost)
    await env.emu.wait_for_sent(2)
    await env.settled()
    rows = await env.rows("SELECT id, status FROM requests ORDER BY id")
    assert [(r["id"], r["status"]) for r in rows][-1] == (recorded.request_id, "succeeded")
    assert len(rows) == 2  # no second request for the same message
    texts = await env.rows("SELECT text FROM messages WHERE role = 'user' ORDER BY id")
    assert [t["text"] for t in texts] == ["hello there", "my dog is called Rex"]
    await asyncio.sleep(0)
