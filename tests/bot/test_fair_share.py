"""One chat's flood cannot stall the others: a chat has a few handlers in flight and a few more
waiting; the rest of a flood is skipped with one short notice and a log line."""

from __future__ import annotations

import logging

import pytest

from tests.support.e2e import running, wait_until

FLOOD, OTHER = 1001, 2002


async def test_a_flooding_chat_is_bounded_and_another_chat_is_answered_at_once(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(db_url, chat_max_in_flight=4, sender_burst_messages=20) as env:
        env.llm.script(*["hang"] * 4)  # the flood's first four answers never come
        with caplog.at_level(logging.INFO, logger="bot_memory_aiogram"):
            for i in range(300):
                env.emu.push_message(chat_id=FLOOD, user_id=FLOOD, text=f"spam {i}")
            await env.llm.wait_for_requests(4)  # four in flight, held
            await wait_until(lambda: _notices(env, FLOOD))
            env.emu.push_message(chat_id=OTHER, user_id=OTHER, text="hello, are you there?")
            await wait_until(lambda: _replies(env, OTHER))
        # The other chat was answered while the flood's handlers were still held; the flood
        # got one notice, and nothing of its excess reached the database.
        assert await _replies(env, FLOOD) == []
        assert len(await _notices(env, FLOOD)) == 1
        recorded = await env.rows("SELECT count(*) FROM messages WHERE chat_id = $1", FLOOD)
        assert recorded[0][0] <= 20 + 1  # the burst (and what a second of refill allows)
        skipped = [r for r in caplog.records if getattr(r, "event", "") == "memory.flood_skipped"]
        assert skipped and "chat_id=1001" in skipped[0].getMessage()
        # Each skipped message is counted (bot_memory_fair_share_drops_total), none recorded.
        registry = env.memory.metrics.registry
        drops = registry.get_sample_value("bot_memory_fair_share_drops_total")
        assert drops is not None and 1 <= drops <= 300 - recorded[0][0]


async def _replies(env, chat_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        c.params["text"]
        for c in env.emu.calls_to("sendMessage")
        if c.params["chat_id"] == chat_id and "Too many" not in c.params["text"]
    ]


async def _notices(env, chat_id: int) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        c.params["text"]
        for c in env.emu.calls_to("sendMessage")
        if c.params["chat_id"] == chat_id and "Too many" in c.params["text"]
    ]


async def test_a_person_sending_a_burst_is_not_a_flood(db_url: str) -> None:
    async with running(db_url) as env:  # the defaults: 4 in flight, 16 waiting
        for i in range(12):  # a forwarded batch, say
            env.emu.push_message(chat_id=FLOOD, user_id=FLOOD, text=f"part {i} of my notes")
        await wait_until(lambda: _count(env, 12))
        assert await _notices(env, FLOOD) == []
        share = next(m for m in env.dp.update.outer_middleware if type(m).__name__ == "FairShare")

        async def forgotten() -> bool:
            return share._chats == {}

        await wait_until(forgotten)  # no chat state kept once the burst is handled


async def _count(env, n: int) -> bool:  # type: ignore[no-untyped-def]
    return len(await _replies(env, FLOOD)) >= n
