"""Who may read and change memory: bot identity, forget cascades, tool replays, read grants,
chat history, and frozen recall rechecked in flight."""

from __future__ import annotations

import json

import pytest

from bot_memory import control
from bot_memory.access.gate import ItemView, Membership, MemberStatus, Requester
from bot_memory.agent.tools import ToolContext
from bot_memory.intents import recognize
from bot_memory.retention.verify import find_traces
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import ADMIN, MEMBER, act, view

PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=1001, user_id=1001)
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-100500, topic_id=7)


async def said(
    memory: Memory, scope: Scope, text: str, speaker: int = 1001, msg_id: int | None = None
) -> SourceMessage:
    source = await memory.record(scope, text=text, speaker_id=speaker, telegram_message_id=msg_id)
    assert source is not None
    await memory.begin(source)
    return source


async def exchange(memory: Memory, scope: Scope, text: str, speaker: int) -> SourceMessage:
    source = await said(memory, scope, text, speaker)
    await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)
    return source


async def tool(
    memory: Memory, ctx: ToolContext, name: str, args: dict[str, object], call_id: str = "c1"
) -> dict[str, object]:
    return await memory.tools.execute(name, json.dumps(args), ctx, call_id=call_id)


async def test_two_bots_on_one_database_keep_their_own_messages(memory: Memory) -> None:
    other = PRIVATE.model_copy(update={"bot_id": 43})
    a = await said(memory, PRIVATE, "bot A hears this", msg_id=7)
    b = await said(memory, other, "bot B hears that", msg_id=7)  # same chat, same message ID
    assert a.message_id != b.message_id
    await memory.record_edit(PRIVATE.chat_id, 7, "edited in A", bot_id=42)
    rows = await memory.store.pool.fetch("SELECT bot_id, text FROM messages ORDER BY bot_id")
    assert [(r["bot_id"], r["text"]) for r in rows] == [
        (42, "edited in A"),
        (43, "bot B hears that"),
    ]
    # A deletion the host reports must say whose message 7 it was.
    with pytest.raises(ValueError, match="pass bot_id"):
        await memory.remove_messages(PRIVATE.chat_id, [7])
    await memory.remove_messages(PRIVATE.chat_id, [7], bot_id=42)
    rows = await memory.store.pool.fetch("SELECT bot_id, text FROM messages ORDER BY bot_id")
    assert [(r["bot_id"], r["text"]) for r in rows] == [(42, None), (43, "bot B hears that")]


async def test_another_bot_id_sees_nothing_of_the_old_bot(memory: Memory) -> None:
    await exchange(memory, PRIVATE, "my favourite colour is teal", 1001)
    await memory.pipeline.tick()
    assert (await memory.recall(PRIVATE)).mode == "index"
    new_token = PRIVATE.model_copy(update={"bot_id": 43})
    assert (await memory.recall(new_token)).mode == "empty"
    src = await said(memory, new_token, "what do you know?")
    found = await tool(memory, ToolContext(source=src), "query_memories", {})
    assert found == {"results": []}


async def test_a_forget_cascade_that_reaches_others_words_needs_an_admin(
    memory: Memory, llm: FakeOpenAI
) -> None:
    await exchange(memory, GROUP, "my parking spot is B12", 2001)
    await memory.pipeline.tick()
    [own] = (await view(memory)).valid_records(GROUP.key)
    s1 = await exchange(memory, GROUP, "I share B12 on Fridays", 2002)
    llm.script(
        {
            "role": "assistant",
            "content": json.dumps(
                {
                    "title": "Sharing",
                    "summary": "2002 shares 2001's spot on Fridays",
                    "source_ids": [s1.source_id],
                    "memory_ids": [own.id],
                }
            ),
        }
    )
    await memory.pipeline.tick()
    assert len((await view(memory)).valid_records(GROUP.key)) == 2
    request = recognize("forget my parking spot")
    assert request is not None
    src = await said(memory, GROUP, "forget my parking spot", 2001)
    result = await memory.control(request, src, who=MEMBER)
    assert result.outcome == "cascade_not_allowed"  # own record, but 2002's words come with it
    assert len((await view(memory)).valid_records(GROUP.key)) == 2  # all or nothing
    result = await memory.control(request, src, who=ADMIN)
    assert result.outcome == "forgotten" and len(result.memory_ids) == 2


async def test_manage_memory_replays_return_the_first_result(memory: Memory) -> None:
    src = await said(memory, PRIVATE, "remember that my locker is number 12")
    ctx = ToolContext(source=src)
    args = {"action": "remember", "sourceId": src.source_id}
    first = await tool(memory, ctx, "manage_memory", args)
    again = await tool(memory, ctx, "manage_memory", args)  # the same call, replayed
    other_call = await tool(memory, ctx, "manage_memory", args, call_id="c2")
    assert first["outcome"] == "remembered" and again["replayed"] is True
    assert again["memory_ids"] == first["memory_ids"] == other_call["memory_ids"]
    assert len((await view(memory)).records) == 1
    usage = await memory.store.pool.fetch("SELECT kind FROM usage_ledger")
    assert [u["kind"] for u in usage] == ["tool:manage_memory"] * 2  # once per call ID


async def test_a_replay_rechecks_access(memory: Memory) -> None:
    src = await said(memory, GROUP, "turn off memory", speaker=2001)
    args = {"action": "disable-memory", "sourceId": src.source_id}
    admin_gate = memory.gate(GROUP, Requester(user_id=2001, chat_id=GROUP.chat_id))

    async def as_admin(chat_id: int, user_id: int) -> MemberStatus:
        return MemberStatus(status="administrator")

    admin_gate.lookup = as_admin
    ctx = ToolContext(source=src, gate=admin_gate)
    assert (await tool(memory, ctx, "manage_memory", args))["outcome"] == "disabled"
    memory.access.note(42, GROUP.chat_id, 2001, MemberStatus(status="member"))  # demoted
    replay = await tool(memory, ctx, "manage_memory", args)
    assert replay["outcome"] == "not_allowed"


async def test_forget_by_id_must_match_what_the_message_asks(memory: Memory) -> None:
    ids = {}
    for text in ("remember that my locker is number 12", "remember that my bike is red"):
        src = await said(memory, PRIVATE, text)
        result = await tool(
            memory,
            ToolContext(source=src),
            "manage_memory",
            {"action": "remember", "sourceId": src.source_id},
        )
        ids[text.split()[3]] = result["memory_ids"][0]  # type: ignore[index]
    src = await said(memory, PRIVATE, "forget my locker")
    ctx = ToolContext(source=src)
    wrong = await tool(
        memory,
        ctx,
        "manage_memory",
        {"action": "forget", "sourceId": src.source_id, "memoryId": ids["bike"]},
    )
    assert wrong["outcome"] == "mismatch"
    assert ids["bike"] in (await view(memory)).records
    right = await tool(
        memory,
        ctx,
        "manage_memory",
        {"action": "forget", "sourceId": src.source_id, "memoryId": ids["locker"]},
        call_id="c2",
    )
    assert right["outcome"] == "forgotten" and set((await view(memory)).records) == {ids["bike"]}


async def test_read_grants_filter_recall_and_tools(db_url: str, llm: FakeOpenAI) -> None:
    def can_read(requester: Requester, item: ItemView) -> bool:
        return requester.user_id == 2001 or 2001 not in item.speaker_ids

    memory = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="m"),
        can_read=can_read,
    )
    try:
        await exchange(memory, GROUP, "the launch code word is lighthouse", 2001)
        await memory.pipeline.tick()
        await exchange(memory, GROUP, "lunch is at noon on Fridays", 2002)
        await memory.pipeline.tick()
        owner = memory.gate(GROUP, Requester(user_id=2001, chat_id=GROUP.chat_id))
        other = memory.gate(GROUP, Requester(user_id=2002, chat_id=GROUP.chat_id))
        mine = await memory.recall(GROUP, gate=owner)
        assert mine.mode == "index" and len(mine.memory_ids) == 2
        # The index names a record 2002 may not read: a directory of the rest stands in.
        recalled = await memory.recall(GROUP, gate=other)
        assert recalled.mode == "directory" and len(recalled.memory_ids) == 1
        assert "lighthouse" not in (recalled.text or "") and "noon" in (recalled.text or "")
        src = await said(memory, GROUP, "what is the code word?", 2002)
        found = await tool(memory, ToolContext(source=src, gate=other), "query_memories", {})
        assert "lighthouse" not in json.dumps(found) and len(found["results"]) == 1  # type: ignore[arg-type]
        history = await tool(
            memory,
            ToolContext(source=src, gate=other),
            "query_chat_history",
            {"query": "code"},
            call_id="c2",
        )
        assert history == {"excerpts": []}
        turn = memory.turn(src, gate=other)  # the reference agent's prompt history, too
        await memory.agent.answer(turn)
        prompt = json.dumps(llm.chat_requests()[-1]["messages"])
        assert "lighthouse" not in prompt and "noon" in prompt
    finally:
        await memory.close()


async def test_chat_history_tool(memory: Memory) -> None:
    first = await exchange(memory, PRIVATE, "the wifi password hint is the cat's name", 1001)
    await exchange(memory, PRIVATE, "we meet on Tuesdays", 1001)
    src = await said(memory, PRIVATE, "when do we meet?")
    ctx = ToolContext(source=src)
    found = await tool(memory, ctx, "query_chat_history", {"query": "tuesdays"})
    excerpts = found["excerpts"]
    assert [e["text"] for e in excerpts] == ["we meet on Tuesdays"]  # type: ignore[index]
    around = await tool(
        memory, ctx, "query_chat_history", {"sourceIds": [first.source_id]}, call_id="c2"
    )
    assert [e["source_id"] for e in around["excerpts"]][:2] == [  # type: ignore[index]
        first.source_id,
        f"m{first.message_id + 1}",
    ]
    cited = await memory.store.pool.fetchval(
        "SELECT citation_source_ids FROM requests WHERE workspace_id = 'test' AND id = $1",
        src.request_id,
    )
    assert first.source_id in cited
    many = [await exchange(memory, PRIVATE, f"note {i}", 1001) for i in range(20)]
    assert many
    capped = await tool(memory, ctx, "query_chat_history", {"limit": 50}, call_id="c3")
    assert len(capped["excerpts"]) == 12  # type: ignore[arg-type]
    usage = await memory.store.pool.fetch(
        "SELECT kind FROM usage_ledger WHERE kind = 'tool:query_chat_history'"
    )
    assert len(usage) == 3


async def test_non_members_get_no_shared_memory(memory: Memory) -> None:
    await exchange(memory, GROUP, "the retro is on Thursday", 2001)
    await memory.pipeline.tick()
    gone = memory.gate(GROUP, Requester(user_id=2003, chat_id=GROUP.chat_id))

    async def left(chat_id: int, user_id: int) -> MemberStatus:
        return MemberStatus(status="left")

    gone.lookup = left
    assert (await memory.recall(GROUP, gate=gone)).mode == "denied"
    src = await said(memory, GROUP, "remember that I left", 2003)
    found = await tool(memory, ToolContext(source=src, gate=gone), "query_memories", {})
    assert found["results"] == [] and "not a current member" in str(found["error"])
    request = recognize("remember that I left")
    assert request is not None
    outcome = (await memory.control(request, src, gate=gone)).outcome
    assert outcome == "not_member"
    restricted = MemberStatus(status="restricted", is_member=False)
    assert not Membership(member=restricted.member, admin=False, reason="x").member


async def test_a_forget_during_a_request_is_not_shown_again(memory: Memory) -> None:
    note = await said(memory, PRIVATE, "remember that my cat is called Mochi")
    request = recognize(note.text)
    assert request is not None
    await memory.control(request, note)
    await memory.pipeline.tick()
    asking = await said(memory, PRIVATE, "what is my cat called?")
    turn = memory.turn(asking)
    first = await turn.context_messages()
    assert "Mochi" in json.dumps(first)
    # Forgotten while the request runs (another chat window, the /memory screen, ...).
    forget = await said(memory, PRIVATE, "forget my cat")
    forget_request = recognize(forget.text)
    assert forget_request is not None
    assert (await memory.control(forget_request, forget)).outcome == "forgotten"
    again = await turn.context_messages()
    assert "Mochi" not in json.dumps(again)
    found = await turn.execute(
        {"id": "t1", "function": {"name": "query_memories", "arguments": "{}"}}
    )
    assert "Mochi" not in found["content"]
    cited = await memory.store.pool.fetchval(
        "SELECT citation_source_ids FROM requests WHERE workspace_id = 'test' AND id = $1",
        asking.request_id,
    )
    assert note.source_id not in cited


async def test_a_participants_forget_leaves_other_peoples_words_alone(memory: Memory) -> None:
    others = await exchange(memory, GROUP, "the cat of the office is Tom", 2002)
    mine = await exchange(memory, GROUP, "my cat is called Mochi", 2001)
    theirs_open = await said(memory, GROUP, "does the cat need food?", 2002)  # being answered
    forget = await said(memory, GROUP, "forget my cat", 2001)
    await act(memory, forget, who=MEMBER)
    forgotten = {r["message_id"] for r in await memory.store.pool.fetch("SELECT * FROM tombstones")}
    assert mine.message_id in forgotten
    assert others.message_id not in forgotten and theirs_open.message_id not in forgotten
    flagged = await memory.store.pool.fetchval(
        "SELECT answer_forgotten FROM requests WHERE id = $1", theirs_open.request_id
    )
    assert flagged is False
    # An admin's forget reaches everyone's words.
    again = await said(memory, GROUP, "/forget the cat of the office", 2003)
    await act(memory, again, who=ADMIN)
    forgotten = {r["message_id"] for r in await memory.store.pool.fetch("SELECT * FROM tombstones")}
    assert others.message_id in forgotten


async def test_forgetting_works_while_memory_is_off(memory: Memory) -> None:
    note = await said(memory, PRIVATE, "remember that my locker code is 0451")
    made = await act(memory, note)
    off = await said(memory, PRIVATE, "turn off memory")
    assert (await act(memory, off)).outcome == "disabled"
    forget = await said(memory, PRIVATE, "forget my locker code")
    result = await act(memory, forget)
    assert (result.outcome, result.memory_ids) == ("forgotten", made.memory_ids)
    assert await memory.store.pool.fetchval("SELECT count(*) FROM memory_records") == 0


async def test_a_participant_may_forget_their_note_after_others_were_given_it(
    memory: Memory,
) -> None:
    note = await said(memory, GROUP, "remember that my cat is called Mochi", 2001)
    await act(memory, note, who=MEMBER)
    await memory.finish(
        note, status="succeeded", answer_text="Noted", bot_id=42, kind="memory_control"
    )
    other = await said(memory, GROUP, "the standup moved to 10am", 2002)  # given the note
    await memory.turn(other).start()
    await memory.finish(other, status="succeeded", answer_text="ok", bot_id=42)
    await memory.pipeline.tick()
    forget = await said(memory, GROUP, "forget my cat", 2001)
    result = await act(memory, forget, who=MEMBER)
    assert result.outcome == "forgotten"
    left = [r.summary for r in (await view(memory)).valid_records(GROUP.key)]
    assert any("standup" in s for s in left) and not any("Mochi" in s for s in left)


async def test_memory_control_confirms_a_cached_admin_as_the_adapter_does(memory: Memory) -> None:
    # A host calling Memory.control(gate=...) directly: the cache says administrator, Telegram
    # now says member (demoted a minute ago). The admin-only switch is refused.
    src = await said(memory, GROUP, "turn off memory", speaker=2001)
    request = recognize("turn off memory")
    assert request is not None
    asked: list[int] = []

    async def now_a_member(chat_id: int, user_id: int) -> MemberStatus:
        asked.append(user_id)
        return MemberStatus(status="member")

    memory.access.note(42, GROUP.chat_id, 2001, MemberStatus(status="administrator"))
    gate = memory.gate(GROUP, Requester(user_id=2001, chat_id=GROUP.chat_id), now_a_member)
    result = await memory.control(request, src, gate=gate)
    assert result.outcome == "not_allowed" and asked  # Telegram was asked
    assert (await view(memory)).scopes.get(GROUP.key) is None or (
        (await view(memory)).scopes[GROUP.key].enabled
    )

    # Promoted within the cache's lifetime: a cached "member" is asked about again, and the
    # switch is carried out.
    async def now_an_admin(chat_id: int, user_id: int) -> MemberStatus:
        return MemberStatus(status="administrator")

    memory.access.note(42, GROUP.chat_id, 2001, MemberStatus(status="member"))
    gate = memory.gate(GROUP, Requester(user_id=2001, chat_id=GROUP.chat_id), now_an_admin)
    assert (await memory.control(request, src, gate=gate)).outcome == "disabled"


async def test_a_member_forget_takes_what_they_may_and_leaves_the_cascade_into_others(
    memory: Memory, llm: FakeOpenAI
) -> None:
    """Their note goes; their extracted record stays, since its sources are shared with a
    record holding 2002's words (forgetting it would take that one, or leave it built on
    what is forgotten); the preview says the same, and an admin can forget what is left."""
    remember = recognize("remember that my parking spot is B12")
    assert remember is not None
    asked = await memory.record(GROUP, text="remember that my parking spot is B12", speaker_id=2001)
    assert asked is not None
    await memory.begin(asked, kind="memory_control")
    [note] = (await memory.control(remember, asked, who=MEMBER)).memory_ids
    await memory.finish(asked, status="succeeded", answer_text="Noted.", bot_id=42)
    await exchange(memory, GROUP, "my parking spot is by the lift", 2001)
    await memory.pipeline.tick()
    [own] = [r for r in (await view(memory)).valid_records(GROUP.key) if r.id != note]
    assert own.speaker_ids == [2001]
    s1 = await exchange(memory, GROUP, "I share the spot on Fridays", 2002)
    llm.script(
        {
            "role": "assistant",
            "content": json.dumps(
                {
                    "title": "Sharing",
                    "summary": "2002 shares 2001's spot on Fridays",
                    "source_ids": [s1.source_id],
                    "memory_ids": [own.id],
                }
            ),
        }
    )
    await memory.pipeline.tick()
    [shared] = [
        r.id for r in (await view(memory)).valid_records(GROUP.key) if 2002 in r.speaker_ids
    ]

    shown = await control.forget_preview(
        memory.store, GROUP, [note, own.id], actor_id=2001, who=MEMBER
    )
    assert shown.allowed and [r.id for r in shown.reached] == [note]
    assert [r.id for r in shown.left] == [own.id] and shown.going == [note]

    forget = recognize("forget my parking spot")
    assert forget is not None
    src = await said(memory, GROUP, "forget my parking spot", 2001)
    result = await memory.control(forget, src, who=MEMBER)
    # Today's code: "not_allowed", nothing forgotten.
    assert (result.outcome, result.memory_ids, result.left) == (
        "partly_forgotten",
        [note],
        [own.id],
    )
    assert result.changed
    rows = await memory.store.pool.fetch("SELECT id FROM memory_records ORDER BY id")
    assert {r["id"] for r in rows} == {own.id, shared}
    traces = await find_traces(memory.store, "test", texts=["B12"], after="forget")
    assert [x for x in traces if not x.expected] == []  # the note is in no table but messages

    again = await said(memory, GROUP, "forget my parking spot", 2001)
    result = await memory.control(forget, again, who=ADMIN)
    assert result.outcome == "forgotten" and set(result.memory_ids) == {own.id, shared}


async def test_manage_memory_says_what_a_member_forget_left(memory: Memory) -> None:
    remember = recognize("remember that my bike is red")
    assert remember is not None
    asked = await memory.record(GROUP, text="remember that my bike is red", speaker_id=2001)
    assert asked is not None
    await memory.begin(asked, kind="memory_control")
    [note] = (await memory.control(remember, asked, who=MEMBER)).memory_ids
    await memory.finish(asked, status="succeeded", answer_text="Noted.", bot_id=42)
    await exchange(memory, GROUP, "my bike has a basket", 2001)
    await exchange(memory, GROUP, "I borrowed the bike on Monday", 2002)
    await memory.pipeline.tick()
    [shared] = [r.id for r in (await view(memory)).valid_records(GROUP.key) if r.id != note]
    src = await said(memory, GROUP, "forget my bike", 2001)
    gate = memory.gate(GROUP, Requester(user_id=2001, chat_id=GROUP.chat_id))

    async def as_member(chat_id: int, user_id: int) -> MemberStatus:
        return MemberStatus(status="member")

    gate.lookup = as_member
    ctx = ToolContext(source=src, gate=gate)
    answer = await tool(
        memory, ctx, "manage_memory", {"action": "forget", "sourceId": src.source_id}
    )
    assert answer["outcome"] == "partly_forgotten" and answer["memory_ids"] == [note]
    assert answer["left"] == [shared] and "admin" in str(answer["left_because"])
