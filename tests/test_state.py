"""Pure changes to the workspace record: forgetting, invalidation, pruning, recall rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot_memory.state import (
    MemoryRecord,
    SourceRef,
    WorkspaceState,
    add_record,
    build_recall_row,
    forget,
    invalidate_sources,
    prune,
    set_index,
)

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def record(rid: str, sources: list[str], scope: str = "s", used: datetime = NOW) -> MemoryRecord:
    return MemoryRecord(
        id=rid,
        scope_key=scope,
        origin="extracted",
        title=rid,
        summary=f"about {rid}",
        speaker_ids=[1],
        thread_ids=[0],
        sources=[SourceRef(id=s, hash="h", speaker_id=1) for s in sources],
        created_at=used,
        last_used_at=used,
    )


def test_forget_removes_overlapping_records_and_leaves_tombstones() -> None:
    state = WorkspaceState()
    for r in (record("a", ["m1", "m2"]), record("b", ["m2", "m3"]), record("c", ["m9"])):
        add_record(state, r)
    removed, touched = forget(state, {"a"})
    assert removed == {"a", "b"} and touched == {"s"}
    assert set(state.records) == {"c"}
    assert sorted(state.scopes["s"].tombstones) == ["m1", "m2", "m3"]


def test_invalidation_hides_records_and_resets_an_index_that_names_them() -> None:
    state = WorkspaceState()
    add_record(state, record("a", ["m1"]))
    add_record(state, record("b", ["m2"]))
    set_index(state, "s", "- a\n- b", ["a", "b"], NOW)
    assert invalidate_sources(state, {"m1"}, "source edited") == {"s"}
    assert [r.id for r in state.valid_records("s")] == ["b"]
    assert state.scopes["s"].index.text == "" and state.scopes["s"].index.pending
    row = build_recall_row(state, "s", directory_max=8)
    assert [d.id for d in row.directory] == ["b"] and row.pending


def test_prune_drops_inactive_then_caps() -> None:
    state = WorkspaceState()
    add_record(state, record("old", ["m1"], used=NOW - timedelta(days=31)))
    for i in range(5):
        add_record(state, record(f"r{i}", [f"m{10 + i}"], used=NOW - timedelta(minutes=i)))
    prune(state, NOW, inactive_days=30, max_records=3)
    assert set(state.records) == {"r0", "r1", "r2"}


def test_recall_row_is_scoped() -> None:
    state = WorkspaceState()
    add_record(state, record("a", ["m1"], scope="s1"))
    add_record(state, record("b", ["m2"], scope="s2"))
    row = build_recall_row(state, "s1", directory_max=8)
    assert [d.id for d in row.directory] == ["a"]
    assert [d.id for d in build_recall_row(state, "s2", directory_max=8).directory] == ["b"]
