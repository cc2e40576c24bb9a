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


GROUP, ALICE, BOB, CAROL = -100777, 3003, 4004, 5005


def _in_group(user_id: int, text: str) -> dict[str, object]:
    return {"chat_type": "supergroup", "chat_id": GROUP, "user_id": user_id, "text": text}


async def test_one_members_burst_in_a_group_does_not_hold_back_another_member(
    db_url: str,
) -> None:
    """Fair share inside a group: a member's burst (within their bucket) takes its turn beside
    the others' messages, round-robin, instead of queueing ahead of all of them; what is over
    the member's bound is skipped with one notice."""
    async with running(db_url) as env:  # the defaults: 4 in flight, 3 and 12 per member
        env.llm.script(*["delay:0.5"] * 4)  # the burst's first four answers take a while
        for i in range(20):
            env.emu.push_message(**_in_group(ALICE, f"@memory_test_bot question {i}"))
        await env.llm.wait_for_requests(3)  # her share in flight, the rest of the burst waiting
        env.emu.push_message(**_in_group(BOB, "@memory_test_bot remember that the demo is at 3"))

        async def bob_answered() -> bool:
            return any(t.startswith("Noted") for t in await _replies(env, GROUP))

        await wait_until(bob_answered)
        replies = await _replies(env, GROUP)
        # Bob's note was taken at the first free slot: behind at most the four in flight (and
        # one of Alice's taking its turn), not behind her whole backlog.
        assert replies.index("Noted. I'll remember that.") <= 5, replies
        notes = await env.rows("SELECT summary FROM memory_records WHERE origin = 'note'")
        assert [n["summary"].endswith("the demo is at 3") for n in notes] == [True]

        async def alice_drained() -> bool:
            return len(await _replies(env, GROUP)) >= 12 + 1

        await wait_until(alice_drained)
        # Alice's messages beyond her bound (12 in flight or waiting) were skipped, with one
        # notice for the flood; none of them reached the database.
        assert len(await _notices(env, GROUP)) == 1
        recorded = await env.rows(
            "SELECT count(*) FROM messages"
            " WHERE chat_id = $1 AND speaker_id = $2 AND role = 'user'",
            GROUP,
            ALICE,
        )
        assert recorded[0][0] == 12


async def test_one_members_held_messages_leave_a_slot_for_another_member(db_url: str) -> None:
    """A member holds at most `member_max_in_flight` of a group's slots: four of Alice's
    messages whose answers never come cannot take all four, so Bob's message is recorded and
    answered while hers are still held."""
    async with running(db_url) as env:  # the defaults: 4 in flight, 3 per member
        env.llm.script(*["hang"] * 4)
        for i in range(4):
            env.emu.push_message(**_in_group(ALICE, f"@memory_test_bot question {i}"))
        await env.llm.wait_for_requests(3)  # three held; her fourth waits for her own slot
        env.emu.push_message(**_in_group(BOB, "@memory_test_bot remember that the demo is at 3"))

        async def bob_answered() -> bool:
            return any(t.startswith("Noted") for t in await _replies(env, GROUP))

        await wait_until(bob_answered)
        recorded = await env.rows(
            "SELECT speaker_id, count(*) FROM messages"
            " WHERE chat_id = $1 AND role = 'user' GROUP BY speaker_id ORDER BY speaker_id",
            GROUP,
        )
        assert [tuple(r) for r in recorded] == [(ALICE, 3), (BOB, 1)]
        assert env.llm.calls_started == 3  # her fourth still waits behind her own three


async def test_a_busy_group_gets_through_as_before(db_url: str) -> None:
    async with running(db_url) as env:  # the defaults
        for round_ in range(3):
            for user in (ALICE, BOB, CAROL):
                env.emu.push_message(**_in_group(user, f"@memory_test_bot {user} says {round_}"))

        async def all_answered() -> bool:
            return len(await _replies(env, GROUP)) >= 9

        await wait_until(all_answered)
        assert await _notices(env, GROUP) == []
        share = next(m for m in env.dp.update.outer_middleware if type(m).__name__ == "FairShare")

        async def forgotten() -> bool:
            return share._chats == {}

        await wait_until(forgotten)


async def test_the_member_bound_is_for_groups_a_private_burst_is_bounded_by_its_bucket(
    db_url: str,
) -> None:
    async with running(db_url) as env:  # the defaults: 12 per member, a bucket of 20
        for i in range(16):
            env.emu.push_message(chat_id=FLOOD, user_id=FLOOD, text=f"part {i} of my notes")
        await wait_until(lambda: _count(env, 16))
        assert await _notices(env, FLOOD) == []
