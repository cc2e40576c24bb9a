"""Word search: what query_memories and query_chat_history find, and in what order.

The cutting of words is pure (no database); matching and ranking run in PostgreSQL, so the
rest runs against the real server through the tools, as the model calls them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot_memory.agent.tools import ToolContext
from bot_memory.records import MemoryRecord, SourceRef, new_memory_id
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from bot_memory.terms import keywords, parse_query, record_vector, terms

PRIVATE = Scope(workspace="test", bot_id=42, kind="private", chat_id=5, user_id=5)
OTHER = Scope(workspace="test", bot_id=42, kind="private", chat_id=6, user_id=6)
T0 = datetime(2026, 5, 1, tzinfo=UTC)


# --- cutting words (pure) -----------------------------------------------------------------------


def test_words_are_folded_and_cjk_is_cut_into_bigrams() -> None:
    cut = {t for t, _ in terms("My BOAT's name: Ａｕｒｏｒａ. 我喜欢喝绿茶 пам’ять")}
    assert {"my", "boat", "name", "aurora", "пам'ять"} <= cut
    assert {"绿茶", "喝绿", "茶", "我"} <= cut  # bigrams and single characters
    assert "boat's" not in cut  # a possessive is its word


def test_a_query_is_its_key_words() -> None:
    assert parse_query("What is the name of my boat?").terms == ["'name':*", "'boat':*"]
    assert parse_query("boats").terms == ["'boat':*"]  # a plural finds the singular
    assert parse_query("телефона").terms == ["'телефон':*"]  # and a case ending its stem
    assert parse_query('"green tea" please').terms == ["'green' <-> 'tea'"]
    assert parse_query("绿茶").terms == ["'绿茶'"]
    assert parse_query("the").terms == ["'the':*"]  # nothing else left: kept
    assert not parse_query("  ")
    assert keywords("What is the name of my boat?") == "name boat"


def test_a_stored_vector_keeps_title_weight_and_positions() -> None:
    vector = record_vector("Boat", "my boat")
    assert vector == "'boat':1A,4 'my':3"  # a gap between the parts: no phrase spans them


# --- records, through query_memories -----------------------------------------------------------


async def add(
    memory: Memory, title: str, summary: str, *, scope: Scope = PRIVATE, at: datetime = T0
) -> str:
    """A record with these words (its source a recorded message), returns its ID."""
    source = await memory.record(scope, text=summary, speaker_id=scope.user_id or 5)
    assert source is not None
    record = MemoryRecord(
        id=new_memory_id(),
        scope_key=scope.key,
        origin="extracted",
        title=title,
        summary=summary,
        speaker_ids=[source.speaker_id],
        thread_ids=[0],
        sources=[SourceRef(message_id=source.message_id, hash="h", speaker_id=source.speaker_id)],
        created_at=at,
        last_used_at=at,
    )
    async with memory.store.locked("test", scope_key=scope.key) as tx:
        await tx.scope(scope)
        await tx.add_record(record, at)
    return record.id


async def asker(memory: Memory, scope: Scope = PRIVATE) -> ToolContext:
    source = await memory.record(scope, text="what do you know?", speaker_id=scope.user_id or 5)
    assert source is not None
    await memory.begin(source)
    return ToolContext(source=source)


async def query(memory: Memory, ctx: ToolContext, text: str) -> list[str]:
    result = await memory.tools.execute(
        "query_memories", json.dumps({"query": text}), ctx, call_id=f"q-{text}"
    )
    return [r["title"] for r in result["results"]]  # type: ignore[index]


async def test_words_in_any_order_plurals_and_prefixes(memory: Memory) -> None:
    await add(memory, "Boat", "My boat is called Aurora")
    await add(memory, "Cat", "The cat sleeps on the boats' deck")
    await add(memory, "Lisbon", "Moved to Lisbon in May")
    ctx = await asker(memory)
    assert await query(memory, ctx, "Aurora boat") == ["Boat"]  # every word, any order
    assert await query(memory, ctx, "called boat") == ["Boat"]
    assert set(await query(memory, ctx, "boats")) == {"Boat", "Cat"}  # plural and possessive
    # No record holds every word: those holding any come back, the rarer word first.
    assert await query(memory, ctx, "What is the name of my boat?") == ["Boat", "Cat"]
    assert await query(memory, ctx, "lisbo") == ["Lisbon"]  # a word's beginning is enough
    assert await query(memory, ctx, "sbon") == []  # but not its middle


async def test_chinese_by_bigrams_and_cyrillic_by_stem(memory: Memory) -> None:
    await add(memory, "饮料", "我喜欢喝绿茶，不喝咖啡")
    await add(memory, "Телефон", "Мой номер телефона +7 999 123")
    ctx = await asker(memory)
    assert await query(memory, ctx, "绿茶") == ["饮料"]
    assert await query(memory, ctx, "茶") == ["饮料"]
    assert await query(memory, ctx, "我喜欢什么茶") == ["饮料"]
    assert await query(memory, ctx, "ТЕЛЕФОНУ") == ["Телефон"]  # case and inflection folded
    assert await query(memory, ctx, "номера") == ["Телефон"]


async def test_a_chinese_one_character_noun_is_a_term_of_its_own(memory: Memory) -> None:
    # 猫 sits in no bigram without a grammar character (我的猫, 猫呢, 猫吗): alone it is the
    # subject, and a record holding it is found; 我的 never outranks it.
    await add(memory, "宠物", "猫叫咪咪")
    await add(memory, "生日", "我的生日是三月三日")
    await add(memory, "饮料", "我喜欢喝绿茶")
    ctx = await asker(memory)
    for asked in ("猫", "我的猫", "猫呢", "你知道我的猫吗"):
        assert (await query(memory, ctx, asked))[:1] == ["宠物"], asked
    assert await query(memory, ctx, "我的猫呢") == ["宠物"]
    assert await query(memory, ctx, "喝什么") == ["饮料"]
    assert await query(memory, ctx, "我的") == ["生日"]  # only grammar: the whole query


def test_grammar_and_question_characters_are_never_terms_alone() -> None:
    assert parse_query("我的猫").terms == ["'猫'"]
    assert parse_query("喝什么").terms == ["'喝'"]
    assert parse_query("你知道我的猫吗").terms == ["'猫'"]
    assert parse_query("绿茶").terms == ["'绿茶'"]  # a content bigram stays one term
    assert parse_query("我喜欢什么茶").terms == ["'喜欢'", "'茶'"]
    assert parse_query("わたしのねこ").terms == parse_query("わたしのねこ").terms  # kana: bigrams
    assert all(len(t) > 3 for t in parse_query("わたしのねこ").terms)  # no lone kana


async def test_ranking_rare_words_title_then_newest(memory: Memory) -> None:
    # "Anna" is in every record: it says nothing. "dentist" is in one.
    for day in range(4):
        await add(memory, f"Anna {day}", f"Anna went shopping, day {day}", at=T0 + timedelta(day))
    await add(memory, "Appointment", "Anna has a dentist appointment", at=T0)
    ctx = await asker(memory)
    assert (await query(memory, ctx, "Anna dentist"))[0] == "Appointment"
    # Only full matches when there are some: the other Annas are not listed.
    assert await query(memory, ctx, "Anna dentist") == ["Appointment"]
    # A word in the title counts above the same word in a summary; then the newest.
    await add(memory, "Passport", "renew it in June", at=T0)
    await add(memory, "Travel", "bring the passport", at=T0 + timedelta(days=9))
    await add(memory, "Trip", "passport is in the drawer", at=T0 + timedelta(days=8))
    assert await query(memory, ctx, "passport") == ["Passport", "Travel", "Trip"]


async def test_a_quoted_query_is_one_phrase(memory: Memory) -> None:
    await add(memory, "Drinks", "she likes green tea")
    await add(memory, "Colours", "tea cups, green walls")
    ctx = await asker(memory)
    assert set(await query(memory, ctx, "green tea")) == {"Drinks", "Colours"}
    assert await query(memory, ctx, '"green tea"') == ["Drinks"]


async def test_search_stays_in_its_scope(memory: Memory) -> None:
    await add(memory, "Mine", "my boat Aurora", scope=PRIVATE)
    await add(memory, "Theirs", "their boat Aurora", scope=OTHER)
    ctx = await asker(memory, PRIVATE)
    assert await query(memory, ctx, "boat") == ["Mine"]
    assert await query(memory, ctx, "their") == []


async def test_a_found_record_counts_as_used(memory: Memory) -> None:
    record_id = await add(memory, "Boat", "my boat Aurora", at=T0)
    ctx = await asker(memory)
    assert await query(memory, ctx, "aurora") == ["Boat"]
    used = await memory.store.pool.fetchval(
        "SELECT last_used_at FROM memory_records WHERE id = $1", record_id
    )
    assert used > T0 + timedelta(days=30)  # searched now: pruning starts over


async def test_rows_from_before_search_are_found_and_then_filled(memory: Memory) -> None:
    await add(memory, "Boat", "my boat Aurora")
    await memory.store.pool.execute("UPDATE memory_records SET search = NULL")
    await memory.store.pool.execute("UPDATE messages SET search = NULL")
    ctx = await asker(memory)
    assert await query(memory, ctx, "aurora") == ["Boat"]  # read with the built-in config
    await memory.pipeline.tick()
    left = await memory.store.pool.fetchval(
        "SELECT (SELECT count(*) FROM memory_records WHERE search IS NULL)"
        " + (SELECT count(*) FROM messages WHERE search IS NULL AND text IS NOT NULL)"
    )
    assert left == 0
    assert await query(memory, ctx, "aurora") == ["Boat"]


# --- chat messages, through query_chat_history --------------------------------------------------


async def said(memory: Memory, text: str, *, answer: str) -> SourceMessage:
    source = await memory.record(PRIVATE, text=text, speaker_id=5)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text=answer, bot_id=42)
    return source


async def history(memory: Memory, ctx: ToolContext, text: str) -> list[str]:
    result = await memory.tools.execute(
        "query_chat_history", json.dumps({"query": text}), ctx, call_id=f"h-{text}"
    )
    return [e["text"] for e in result["excerpts"]]  # type: ignore[index]


async def test_history_finds_words_not_strings(memory: Memory) -> None:
    await said(memory, "My boat is called Aurora", answer="Nice name!")
    await said(memory, "我喜欢喝绿茶", answer="好的")
    await said(memory, "Мой номер телефона +7 999", answer="Записал.")
    ctx = await asker(memory)
    # Neither holds both words, each holds one as rare as the other: the newest first.
    assert await history(memory, ctx, "boat name") == ["Nice name!", "My boat is called Aurora"]
    assert await history(memory, ctx, "Aurora boats") == ["My boat is called Aurora"]
    assert await history(memory, ctx, "绿茶") == ["我喜欢喝绿茶"]
    assert await history(memory, ctx, "телефону") == ["Мой номер телефона +7 999"]
    assert await history(memory, ctx, "sailing") == []


async def test_erased_text_takes_its_search_terms(memory: Memory) -> None:
    source = await said(memory, "my boat is called Aurora", answer="ok")
    await memory.privacy_sweep(source_ids=[source.source_id])
    terms_left = await memory.store.pool.fetchval(
        "SELECT search FROM messages WHERE id = $1", source.message_id
    )
    assert terms_left is None
    assert await memory.find_traces("test", texts=["Aurora"]) == []
