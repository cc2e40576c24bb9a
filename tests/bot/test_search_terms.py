"""What search and forget take from a message, end to end (the real Dispatcher and Bot against
the Bot API emulator and the fake model server): a greeting is no search and adds nothing to
the request's memory block; a Russian or Ukrainian forget finds its memory whatever case its
noun is in, and only that memory."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot_memory.records import MemoryRecord, SourceRef, new_memory_id
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from tests.support.e2e import Env, running

USER = 1001
PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=USER, user_id=USER)
T0 = datetime.now(UTC) - timedelta(days=20)  # within retention


async def add(memory: Memory, title: str, summary: str, at: datetime) -> str:
    source = await memory.record(PRIVATE, text=summary, speaker_id=USER, sent_at=at)
    assert source is not None
    record = MemoryRecord(
        id=new_memory_id(),
        scope_key=PRIVATE.key,
        origin="extracted",
        title=title,
        summary=summary,
        speaker_ids=[USER],
        thread_ids=[0],
        sources=[SourceRef(message_id=source.message_id, hash="h", speaker_id=USER)],
        created_at=at,
        last_used_at=at,
    )
    async with memory.store.locked(PRIVATE.workspace, scope_key=PRIVATE.key) as tx:
        await tx.scope(PRIVATE)
        await tx.add_record(record, at)
    return record.id


def memory_block(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON of the memory block a chat request carried."""
    text = next(
        m["content"]
        for m in body["messages"]
        if isinstance(m.get("content"), str) and "<memory_context>" in m["content"]
    )
    block = text[text.index("<memory_context>") : text.index("</memory_context>")]
    return json.loads(block[block.index("{") : block.rindex("}") + 1])  # type: ignore[no-any-return]


def searches(env: Env) -> float:
    value = env.memory.metrics.registry.get_sample_value("bot_memory_recall_searches_total")
    return float(value or 0.0)


@pytest.fixture
async def quiet(db_url: str) -> AsyncIterator[Env]:
    """No worker beside the bot: the scope stays in its directory (a consolidated index could
    name the hobby record by itself)."""
    async with running(db_url, run_worker=False) as e:
        yield e


async def test_a_chinese_greeting_adds_nothing_to_the_block_and_costs_no_search(
    quiet: Env,
) -> None:
    env = quiet
    # The hobby record is older than the eight the directory shows: only a match brings it.
    hobby = await add(env.memory, "爱好", "我喜欢好看的电影，尤其是好莱坞的", T0)
    for day in range(1, 10):
        await add(env.memory, f"午饭 {day}", f"第{day}天的午饭计划", T0 + timedelta(days=day))
    zh = {"chat_id": USER, "user_id": USER, "language_code": "zh-hans"}

    for n, greeting in enumerate(("你好吗", "你好！谢谢", "好的，再见"), start=1):
        before, searched = len(env.llm.chat_requests()), searches(env)
        await env.say(n, text=greeting, **zh)
        block = memory_block(env.llm.chat_requests()[before])
        assert hobby not in json.dumps(block) and not block.get("matches"), greeting
        assert searches(env) == searched, greeting  # no search ran
    given = await env.rows(
        "SELECT r.recall_memory_ids FROM requests r JOIN messages m"
        " ON m.workspace_id = r.workspace_id AND m.id = r.user_message_id"
        " WHERE m.text = ANY($1::text[])",
        ["你好吗", "你好！谢谢", "好的，再见"],
    )
    assert len(given) == 3 and all(r["recall_memory_ids"] for r in given)  # the directory
    assert all(hobby not in r["recall_memory_ids"] for r in given)

    # A question about it still brings it, and that costs one search.
    before, searched = len(env.llm.chat_requests()), searches(env)
    await env.say(4, text="我喜欢看什么电影？", **zh)
    block = memory_block(env.llm.chat_requests()[before])
    assert [m["id"] for m in block["matches"]] == [hobby]
    assert searches(env) == searched + 1


async def test_a_ukrainian_forget_finds_the_dog_in_another_case(env: Env) -> None:
    uk = {"chat_id": USER, "user_id": USER, "language_code": "uk"}
    sent = await env.say(1, text="запам'ятай, що мій пес Рудько боїться грому", **uk)
    assert sent["text"] == "Добре, запам’ятаю."
    await env.say(2, text="запам'ятай, що я люблю котлети з пюре", **uk)
    await env.say(3, text="запам'ятай, що мій день народження 3 травня", **uk)

    sent = await env.say(4, text="забудь мого пса", **uk)  # пес -> пса: the vowel goes
    assert sent["text"] == "Готово, з пам’яті видалено 1 запис."
    kept = await env.rows("SELECT summary FROM memory_records WHERE valid ORDER BY created_at")
    assert [r["summary"] for r in kept] == [
        "я люблю котлети з пюре",
        "мій день народження 3 травня",
    ]
    sent = await env.say(5, text="забудь мого кота", **uk)  # кота is not котлети
    assert sent["text"] == "Відповідного запису в пам’яті не знайшлося."
    sent = await env.say(6, text="забудь про мій день", **uk)
    assert sent["text"] == "Готово, з пам’яті видалено 1 запис."
    kept = await env.rows("SELECT summary FROM memory_records WHERE valid")
    assert [r["summary"] for r in kept] == ["я люблю котлети з пюре"]


async def test_a_russian_forget_finds_the_dog_in_another_case(env: Env) -> None:
    ru = {"chat_id": USER, "user_id": USER, "language_code": "ru"}
    await env.say(1, text="запомни, что мой пёс Рудько боится грозы", **ru)
    await env.say(2, text="запомни, что я люблю котлеты", **ru)
    sent = await env.say(3, text="забудь моего кота", **ru)
    assert sent["text"] == "Подходящей записи в памяти не нашлось."
    sent = await env.say(4, text="забудь моего пса Рудька", **ru)
    assert sent["text"] == "Готово, из памяти удалена 1 запись."
    kept = await env.rows("SELECT summary FROM memory_records WHERE valid")
    assert [r["summary"] for r in kept] == ["я люблю котлеты"]
