""" "Don't remember that", end to end: the real Dispatcher and Bot over HTTP against the Bot API
emulator and the fake model, in four languages, in private chats and in a group Topic. What was
asked to stay out reaches no extraction request, record, index, recall row, export or later
prompt; a statement like "I don't remember that" is an ordinary message, extracted as before."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot_memory.cli.operations import export
from bot_memory_aiogram.i18n import t
from tests.support.e2e import Env, running

GROUP = -100555
TOPIC = 9
AUTHOR, OTHER = 3001, 3002


@dataclass(frozen=True)
class Speaker:
    code: str
    user: int
    secret: str  # said, then asked not to be remembered
    keep_out: str  # the request, about the message before it
    off_record: str  # a request that carries its own words
    off_secret: str  # those words
    statement: str  # looks like a request, is not one
    fact: str  # an ordinary message


SPEAKERS = [
    Speaker(
        "en",
        1101,
        "my salary is 5000 dollars",
        "don't remember that",
        "off the record: my PIN is 4412",
        "4412",
        "I don't remember that",
        "I like green tea",
    ),
    Speaker(
        "zh",
        1102,
        "我的工资是五千块",
        "别记这个",
        "不要记：我的密码是九九八七",
        "九九八七",
        "我不记得这个",
        "我喜欢喝绿茶",
    ),
    Speaker(
        "ru",
        1103,
        "моя зарплата пять тысяч",
        "не запоминай это",
        "не для протокола: мой пин-код 7321",
        "7321",
        "я не помню это",
        "я люблю зелёный чай",
    ),
    Speaker(
        "uk",
        1104,
        "моя зарплата п'ять тисяч гривень",
        "не запам'ятовуй це",
        "не для протоколу: мій пін-код 6154",
        "6154",
        "я не пам'ятаю це",
        "я люблю зелений чай",
    ),
]


@pytest.fixture
async def env(db_url: str) -> AsyncIterator[Env]:
    # The worker is driven by hand, an hour after the talk: nothing is extracted before the
    # request not to remember arrives (extraction waits for a conversation to go idle).
    async with running(db_url, idle_window_seconds=3600, run_worker=False) as e:
        yield e


async def say(env: Env, **message: Any) -> tuple[int, str]:
    """Push a message; (its Telegram ID, the bot's reply to it)."""
    count = len(env.emu.sent) + 1
    update = env.emu.push_message(**message)
    calls = await env.emu.wait_for_sent(count)
    await env.settled()
    return update["message"]["message_id"], str(calls[count - 1].params.get("text", ""))


async def worker_after_an_hour(env: Env) -> None:
    later = datetime.now(UTC) + timedelta(hours=2)
    for _ in range(4):  # extraction, then consolidation, for every scope
        await env.memory.pipeline.tick(now=later)


async def everything_memory_keeps(env: Env, users: list[int]) -> str:
    """Records, indexes, recall rows and every user's export, as one text."""
    records = await env.rows("SELECT title, summary FROM memory_records")
    scopes = await env.rows("SELECT index_text, recall::text AS recall FROM memory_scopes")
    exported = [line for user in users for line in await export(env.memory.store, user_id=user)]
    return json.dumps(
        [[dict(r) for r in records], [dict(s) for s in scopes], exported], ensure_ascii=False
    )


async def test_dont_remember_that_in_four_languages(env: Env) -> None:
    for s in SPEAKERS:
        chat = {"chat_id": s.user, "user_id": s.user, "language_code": s.code}
        await say(env, text=s.secret, **chat)
        _, reply = await say(env, text=s.keep_out, **chat)
        assert reply == t(s.code, "memory-kept-out", count=0)
        _, reply = await say(env, text=s.off_record, **chat)
        assert reply == t(s.code, "memory-kept-out", count=0)
        _, reply = await say(env, text=s.statement, **chat)
        assert reply.startswith("fake answer:")  # an ordinary message, answered by the model
        await say(env, text=s.fact, **chat)

    await worker_after_an_hour(env)
    extractions = env.llm.requests_by_purpose("memory_extraction")
    assert len(extractions) == len(SPEAKERS)  # one batch per private chat
    sources = [
        entry["text"]
        for body in extractions
        for entry in json.loads(body["messages"][-1]["content"])["sources"]
    ]
    kept = await everything_memory_keeps(env, [s.user for s in SPEAKERS])
    assert await env.rows("SELECT 1 FROM memory_records")
    for s in SPEAKERS:
        confirmation = t(s.code, "memory-kept-out", count=0)
        assert s.keep_out not in sources and s.off_record not in sources, s.code
        for text in (s.secret, s.off_secret, confirmation):
            assert not [x for x in sources if text in x], (s.code, text)
            assert text not in kept, (s.code, text)
        assert s.statement in sources and s.fact in sources, s.code

    # The /memory screen lists records only: the one made of what was not kept out.
    en = SPEAKERS[0]
    _, screen = await say(env, chat_id=en.user, user_id=en.user, text="/memory")
    assert "1 memory" in screen and "5000" not in screen and "4412" not in screen

    # A later prompt does not bring it back either: neither as memory nor as recent history.
    before = len(env.llm.chat_requests())
    await say(env, chat_id=en.user, user_id=en.user, text="what do you know about my money?")
    prompt = json.dumps(env.llm.chat_requests()[before:], ensure_ascii=False)
    assert "green tea" in prompt
    assert "5000" not in prompt and "4412" not in prompt
    assert t("en", "memory-kept-out", count=0) not in prompt


async def test_a_reply_in_a_group_topic_keeps_out_the_exchange_replied_to(env: Env) -> None:
    env.emu.set_chat_member_status(GROUP, AUTHOR, "member")
    env.emu.set_chat_member_status(GROUP, OTHER, "member")
    topic = {"chat_type": "supergroup", "chat_id": GROUP, "is_forum": True, "thread_id": TOPIC}
    salary, _ = await say(env, user_id=AUTHOR, text="@memory_test_bot my salary is 5000", **topic)
    answer_to_salary = env.emu.sent[-1].result["message_id"]
    await say(env, user_id=AUTHOR, text="@memory_test_bot my cat is called Tom", **topic)

    # Another member may not keep someone else's words out.
    _, reply = await say(
        env,
        user_id=OTHER,
        text="@memory_test_bot don't remember that",
        reply_to_message_id=salary,
        **topic,
    )
    assert reply == t("en", "memory-not-allowed")
    # The author may, replying to the bot's answer (directed without a mention).
    _, reply = await say(
        env, user_id=AUTHOR, text="off the record", reply_to_message_id=answer_to_salary, **topic
    )
    assert reply == t("en", "memory-kept-out", count=0)

    await worker_after_an_hour(env)
    sent = json.dumps(env.llm.requests_by_purpose("memory_extraction"), ensure_ascii=False)
    assert "Tom" in sent
    assert "5000" not in sent and "off the record" not in sent
    kept = await everything_memory_keeps(env, [AUTHOR, OTHER])
    assert "Tom" in kept and "5000" not in kept
    # The other member's refused request is an ordinary memory request: never extracted.
    assert "don't remember that" not in sent
