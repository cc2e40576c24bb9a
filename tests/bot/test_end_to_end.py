"""The real Dispatcher and Bot over HTTP against the Bot API emulator and a fake OpenAI server.

Assertions are on what the bot sent (emulator log), what was stored (rows) and what the model
received (fake server log).
"""

from __future__ import annotations

import json
from typing import Any

from bot_memory.scopes import Scope
from tests.support.e2e import Env, wait_until

USER = 1001
GROUP = -100777
TOPIC = 5
ADMIN, MEMBER = 2001, 2002
PRIVATE_SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=USER, user_id=USER)


def mentions(text: str) -> dict[str, Any]:
    return {
        "chat_type": "supergroup",
        "chat_id": GROUP,
        "is_forum": True,
        "thread_id": TOPIC,
        "text": text,
    }


async def test_whole_loop_over_http(env: Env) -> None:
    key = "sk-proj-" + "Zq7" * 16
    env.emu.set_chat_member_status(GROUP, ADMIN, "administrator")

    # 1. A private message is recorded, answered through the model, and stored with its answer.
    sent = await env.say(
        1,
        chat_id=USER,
        user_id=USER,
        text=f"I am planning a trip to Kyoto in April, my key is {key}",
    )
    assert sent["chat_id"] == USER and sent["text"].startswith("fake answer:")
    first_chat = env.llm.chat_requests()[0]
    assert key not in json.dumps(first_chat) and "Kyoto" in json.dumps(first_chat)
    assert {t["function"]["name"] for t in first_chat["tools"]} == {
        "query_memories",
        "manage_memory",
        "query_chat_history",
    }

    # 2. Ordinary group traffic is never stored; a mention in a Topic is, and answered there.
    env.emu.push_message(
        chat_type="supergroup",
        chat_id=GROUP,
        is_forum=True,
        thread_id=TOPIC,
        user_id=MEMBER,
        text="lunch anyone?",
    )
    sent = await env.say(2, user_id=ADMIN, **mentions("@memory_test_bot we ship v2 on Friday"))
    assert sent["chat_id"] == GROUP and sent["message_thread_id"] == TOPIC
    texts = [r["text"] for r in await env.rows("SELECT text FROM messages WHERE role = 'user'")]
    assert "lunch anyone?" not in texts and len(texts) == 2

    # 3. After the idle window the worker extracts and consolidates each scope via the model.
    async def both_consolidated() -> bool:  # answered and recorded, not only sent
        rows = await env.rows("SELECT 1 FROM usage_ledger WHERE kind = 'memory_consolidate'")
        return len(rows) >= 2

    await wait_until(both_consolidated)
    extraction_bodies = env.llm.requests_by_purpose("memory_extraction")
    assert len(extraction_bodies) == 2
    assert all(key not in json.dumps(b) for b in extraction_bodies)
    assert any("[REDACTED]" in json.dumps(b) for b in extraction_bodies)
    for body in extraction_bodies:
        assert body["response_format"]["type"] == "json_schema"
        assert "tools" not in body  # background calls are tool-free
    usage = await env.rows("SELECT kind, outcome FROM usage_ledger WHERE kind LIKE 'memory_%'")
    assert sorted(u["kind"] for u in usage) == ["memory_consolidate"] * 2 + ["memory_extract"] * 2

    # 4. The next private request's prompt holds its own scope's index, nothing of the group's.
    before = len(env.llm.chat_requests())
    await env.say(3, chat_id=USER, user_id=USER, text="What hotel should I book?")
    prompt = json.dumps(env.llm.chat_requests()[before], ensure_ascii=False)
    assert "memory_context" in prompt and "Kyoto" in prompt
    assert "v2 on Friday" not in prompt
    before = len(env.llm.chat_requests())
    await env.say(4, user_id=MEMBER, **mentions("@memory_test_bot any plans?"))
    group_prompt = json.dumps(env.llm.chat_requests()[before], ensure_ascii=False)
    assert "memory_context" in group_prompt and "v2 on Friday" in group_prompt
    assert "Kyoto" not in group_prompt

    # 5. Direct requests are handled without the model, in the user's language.
    before = len(env.llm.chat_requests())
    sent = await env.say(5, chat_id=USER, user_id=USER, text="remember that I like green tea")
    assert sent["text"] == "Noted. I'll remember that."
    sent = await env.say(
        6, user_id=MEMBER, language_code="zh-hans", **mentions("@memory_test_bot 关闭记忆")
    )
    assert sent["text"] == "在这里只有群管理员可以这样做。"
    sent = await env.say(
        7, user_id=ADMIN, language_code="zh-CN", **mentions("@memory_test_bot 关闭记忆")
    )
    assert sent["text"].startswith("本话题的记忆已关闭")  # a forum Topic: "this topic"
    assert len(env.llm.chat_requests()) == before
    notes = await env.rows("SELECT summary FROM memory_records WHERE origin = 'note'")
    assert [n["summary"] for n in notes] == ["I like green tea"]  # the fact, in the user's words


async def test_bad_input_is_logged_not_fatal(env: Env) -> None:
    # A photo without caption: skipped with a log line, nothing stored, the bot goes on.
    env.emu.push_message(chat_id=USER, user_id=USER, photo=True)
    # A 100 KB message is stored whole and answered; the model receives a clipped copy.
    big = "word " * 20_000
    sent = await env.say(1, chat_id=USER, user_id=USER, text=big)
    assert sent["text"].startswith("fake answer:")
    rows = await env.rows("SELECT length(text) AS n FROM messages WHERE role = 'user'")
    assert [r["n"] for r in rows] == [len(big)]
    assert len(json.dumps(env.llm.chat_requests()[-1])) < 20_000

    # An unreadable 200 for the extraction: the server processed (and billed) something we
    # cannot read, so the outcome is unknown and the job stops; nothing stored is lost.
    env.llm.script({"role": "assistant", "content": "fine"}, b"{not json")
    sent = await env.say(2, chat_id=USER, user_id=USER, text="hello again")
    assert sent["text"] == "fine"

    async def job_failed() -> bool:
        rows = await env.rows("SELECT phase, last_error FROM memory_jobs")
        return bool(rows) and rows[0]["last_error"] is not None

    await wait_until(job_failed)
    [job] = await env.rows("SELECT phase, stop_kind, last_error FROM memory_jobs")
    assert (job["phase"], job["stop_kind"]) == ("stopped", "unknown")
    assert "unreadable" in job["last_error"]

    # A model server error on an answer: a clear reply, the request marked failed.
    env.llm.script(500)
    sent = await env.say(3, chat_id=USER, user_id=USER, text="third")
    assert "unavailable" in sent["text"]

    async def third_closed() -> bool:
        rows = await env.rows("SELECT status FROM requests ORDER BY id")
        return [r["status"] for r in rows] == ["succeeded", "succeeded", "failed"]

    await wait_until(third_closed)
    assert len(await env.rows("SELECT id FROM messages")) == 5


async def test_edits_and_forwards_over_http(env: Env) -> None:
    pushed = env.emu.push_message(chat_id=USER, user_id=USER, text="my locker is number 12")
    await env.emu.wait_for_sent(1)

    async def indexed() -> bool:
        return (await env.memory.recall(PRIVATE_SCOPE)).mode == "index"

    await wait_until(indexed)
    # Editing the source makes the memory built on it unavailable at once.
    env.emu.push_edited_message(
        chat_id=USER, message_id=pushed["message"]["message_id"], text="my locker is number 40"
    )

    async def forgotten() -> bool:
        return (await env.memory.recall(PRIVATE_SCOPE)).mode == "empty"

    await wait_until(forgotten)
    [row] = await env.rows("SELECT text, edited_at FROM messages WHERE role = 'user'")
    assert row["text"] == "my locker is number 40" and row["edited_at"] is not None

    # A forwarded "remember that ..." is not a request: the agent answers it instead.
    before = len(env.llm.chat_requests())
    sent = await env.say(
        2, chat_id=USER, user_id=USER, text="remember that I owe Bob $5", forward_from_user_id=555
    )
    assert sent["text"].startswith("fake answer:")
    assert len(env.llm.chat_requests()) == before + 1
    notes = await env.rows("SELECT id FROM memory_records WHERE origin = 'note'")
    assert notes == []
