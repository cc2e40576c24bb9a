"""The read model the /memory screen, the Mini App and query_memories share (retrieval.Reader):
pages of what one requester may read, whether the host's read grants decide or not."""

from __future__ import annotations

from datetime import UTC, datetime

from bot_memory.access.gate import ItemView, Requester
from bot_memory.retrieval import Reader
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import ADMIN, MEMBER, act

GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-100, topic_id=0)
HIDDEN_SPEAKER = 7  # the hook keeps what they said from everyone else


async def notes(memory: Memory, n: int) -> list[str]:
    """n notes, every third by HIDDEN_SPEAKER; their IDs, newest first."""
    ids = []
    for i in range(n):
        speaker = HIDDEN_SPEAKER if i % 3 == 0 else 8
        text = f"remember that locker {i} is blue"
        source = await memory.record(GROUP, text=text, speaker_id=speaker, telegram_message_id=i)
        assert source is not None
        result = await act(memory, source, MEMBER)
        assert result.outcome == "remembered", result
        ids.append(result.memory_ids[0])
    return ids[::-1]


async def pages(reader: Reader, size: int) -> list[list[str]]:
    found, offset, now = [], 0, datetime.now(UTC)
    while True:
        page = await reader.page(now, offset=offset, limit=size)
        found.append([r.id for r in page.records])
        if not page.more:
            return found
        offset += size


async def test_pages_are_what_the_search_finds_when_no_grants_decide(memory: Memory) -> None:
    ids = await notes(memory, 7)
    gate = memory.gate(GROUP, Requester(user_id=8, chat_id=GROUP.chat_id))
    reader = Reader(memory.store.search, GROUP, gate)
    assert not reader.grants
    assert await pages(reader, 3) == [ids[0:3], ids[3:6], ids[6:7]]


async def test_with_read_grants_pages_hold_only_what_the_requester_may_read(
    db_url: str, llm: FakeOpenAI
) -> None:
    def can_read(requester: Requester, item: ItemView) -> bool:
        return requester.user_id == HIDDEN_SPEAKER or HIDDEN_SPEAKER not in item.speaker_ids

    memory = await Memory.open(make_settings(db_url, llm_base_url=llm.base_url), can_read=can_read)
    try:
        ids = await notes(memory, 8)
        view = await memory.store.view("test")
        visible = [i for i in ids if HIDDEN_SPEAKER not in view.records[i].speaker_ids]
        assert len(visible) == 5
        other = Reader(
            memory.store.search,
            GROUP,
            memory.gate(GROUP, Requester(user_id=8, chat_id=GROUP.chat_id)),
        )
        assert other.grants
        # Full pages of what they may read, in the search's order, and `more` only while some
        # follow (a page of the search that the grants thin out is read past).
        assert await pages(other, 2) == [visible[0:2], visible[2:4], visible[4:5]]
        assert await pages(other, 5) == [visible]
        now = datetime.now(UTC)
        hidden = [i for i in ids if i not in visible]
        assert await other.one(hidden[0], now) is None  # said by the hidden speaker
        assert (await other.one(visible[0], now)) is not None
        assert [r.id for r in (await other.every(now, most=100)).records] == visible
        speaker = Reader(
            memory.store.search,
            GROUP,
            memory.gate(GROUP, Requester(user_id=HIDDEN_SPEAKER, chat_id=GROUP.chat_id)),
        )
        assert await pages(speaker, 4) == [ids[0:4], ids[4:8]]
    finally:
        await memory.close()


async def test_the_managers_see_memory_kept_while_off_the_tools_do_not(memory: Memory) -> None:
    ids = await notes(memory, 2)
    owner = Requester(user_id=8, chat_id=GROUP.chat_id)
    off = await memory.record(GROUP, text="turn memory off", speaker_id=8)
    assert off is not None
    assert (await act(memory, off, ADMIN)).outcome == "disabled"
    now = datetime.now(UTC)
    managers = await Reader(memory.store.search, GROUP, memory.gate(GROUP, owner)).page(
        now, limit=10
    )
    assert managers.standing == "off" and [r.id for r in managers.records] == ids
    tools = await Reader(
        memory.store.search, GROUP, memory.gate(GROUP, owner), for_tools=True
    ).page(now, limit=10)
    assert tools.standing == "off" and tools.records == []
