"""Pure decisions over records and scopes: forgetting, invalidation; recall rows as rendered
(the rows themselves are derived on the server: tests/db/test_workspace_commits.py)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from bot_memory.records import (
    MemoryRecord,
    RecallEntry,
    RecallRow,
    ScopeState,
    SourceRef,
    depending_on,
    forget_closure,
)
from bot_memory.retrieval.recall import render
from bot_memory.scopes import Scope

NOW = datetime(2026, 11, 30, tzinfo=UTC)
SCOPE = Scope(workspace="w", bot_id=1, kind="private", chat_id=5, user_id=5)


def record(
    rid: str,
    sources: list[int],
    *,
    used: datetime = NOW,
    inherited: list[int] = (),  # type: ignore[assignment]
    until: datetime | None = None,
) -> MemoryRecord:
    refs = [SourceRef(message_id=m, hash="h", speaker_id=1) for m in sources]
    refs += [SourceRef(message_id=m, hash="h", speaker_id=1, inherited=True) for m in inherited]
    return MemoryRecord(
        id=rid,
        scope_key=SCOPE.key,
        origin="extracted",
        title=rid,
        summary=f"about {rid}",
        speaker_ids=[1],
        thread_ids=[0],
        sources=refs,
        created_at=used,
        last_used_at=used,
        available_until=until,
    )


def test_forget_reaches_direct_overlap_only_whatever_the_order() -> None:
    # a overlaps b (m2); b overlaps c (m3); c does not overlap a. Forgetting a takes b, keeps c:
    # the cascade is the selected records plus every record overlapping them, not a walk.
    pool = [record("a", [1, 2]), record("b", [2, 3]), record("c", [3, 4]), record("d", [9])]
    for _ in range(20):
        random.shuffle(pool)
        assert [r.id for r in forget_closure(pool, {"a"})] == ["a", "b"]


def test_forget_reaches_records_built_with_the_forgotten_one() -> None:
    # e carried a fact over from a: it inherited a's dependencies, so it is reached directly.
    pool = [record("a", [1]), record("e", [7], inherited=[1]), record("f", [8])]
    assert [r.id for r in forget_closure(pool, {"a"})] == ["a", "e"]


def test_dependents_follow_inherited_sources() -> None:
    pool = [record("a", [1]), record("e", [7], inherited=[1])]
    assert [r.id for r in depending_on(pool, {1})] == ["a", "e"]
    assert [r.id for r in depending_on(pool, {7})] == ["e"]


def entry(rid: str, *, until: datetime | None = None) -> RecallEntry:
    return RecallEntry(id=rid, title=rid, summary=f"about {rid}", speaker_ids=[1], until=until)


def recall_row(
    index_text: str = "",
    index: list[RecallEntry] = (),  # type: ignore[assignment]
    directory: list[RecallEntry] = (),  # type: ignore[assignment]
    *,
    pending: bool = False,
    enabled: bool = True,
    suspended: bool = False,
) -> RecallRow:
    """A recall row as the server writes one (written out, not derived)."""
    return RecallRow(
        enabled=enabled,
        suspended=suspended,
        pending=pending,
        index_text=index_text,
        memory_ids=[e.id for e in index],
        index_entries=list(index),
        directory=list(directory),
    )


def test_recall_row_falls_back_to_a_directory_while_pending() -> None:
    a, b = entry("a"), entry("b")
    row = recall_row("- a", [a], [b, a])
    assert render(row, SCOPE, now=NOW).mode == "index"
    recalled = render(recall_row("- a", [a], [b, a], pending=True), SCOPE, now=NOW)
    assert recalled.mode == "directory" and recalled.memory_ids == ["b", "a"]


def test_recall_hides_records_whose_sources_expired_before_the_worker_erased_them() -> None:
    a, b = entry("a", until=NOW + timedelta(minutes=1)), entry("b")
    row = recall_row("- a\n- b", [a, b], [b, a])
    assert render(row, SCOPE, now=NOW).mode == "index"
    later = render(row, SCOPE, now=NOW + timedelta(minutes=2))
    assert later.mode == "directory" and later.memory_ids == ["b"]


def test_recall_in_flight_drops_what_was_forgotten() -> None:
    a, b = entry("a"), entry("b")
    frozen = render(recall_row("- a: cat\n- b", [a, b], [b, a]), SCOPE, now=NOW)
    after = frozen.without({"a"})
    assert after.mode == "directory" and after.memory_ids == ["b"]
    assert "cat" not in (after.text or "") and frozen.without(set()) is frozen


def test_switched_off_and_suspended_scopes_recall_nothing() -> None:
    assert render(recall_row(pending=True, enabled=False), SCOPE, now=NOW).mode == "off"
    recalled = render(recall_row(pending=True, suspended=True), SCOPE, now=NOW)
    assert recalled.mode == "unavailable" and recalled.text is None


def test_what_was_said_while_off_stays_off() -> None:
    state = ScopeState(scope=SCOPE)
    state.set_enabled(False, 10)
    assert state.was_off(11)
    state.set_enabled(True, 20)
    assert state.was_off(15) and not state.was_off(21) and not state.was_off(9)
    state.advance(25)
    assert state.off_ranges == []


def test_a_forget_subject_names_whole_words() -> None:
    from bot_memory.control.rules import mentions

    assert not mentions("my favourite food is pasta", "the past")  # "past" is not "pasta"
    assert not mentions("my favourite food is pasta", "past")
    assert mentions("I have two cats", "my cat") and mentions("my cat's name is Mochi", "cat")
    assert mentions("I like green tea a lot", "green tea")
    assert mentions("我喜欢绿茶", "绿茶")  # Chinese has no word edges
