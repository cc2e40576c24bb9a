"""Scope resolution (pure) and isolation of scope keys."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_memory.scopes import Scope, resolve_scope


@pytest.mark.parametrize(
    ("chat_type", "chat_id", "user_id", "thread_id", "expected"),
    [
        ("private", 5, 5, None, "w/1/p/5/5"),
        ("private", 5, 5, 99, "w/1/p/5/5"),  # private Topics share the user's scope
        ("supergroup", -100, 5, None, "w/1/g/-100/0"),  # General / non-forum: topic 0
        ("supergroup", -100, 5, 7, "w/1/g/-100/7"),
        ("group", -9, 6, None, "w/1/g/-9/0"),
        ("channel", -5, None, None, None),
        (None, None, None, None, None),
        ("private", 5, None, None, None),
    ],
)
def test_resolve_scope(
    chat_type: str | None,
    chat_id: int | None,
    user_id: int | None,
    thread_id: int | None,
    expected: str | None,
) -> None:
    scope = resolve_scope(
        workspace="w",
        bot_id=1,
        chat_type=chat_type,
        chat_id=chat_id,
        user_id=user_id,
        thread_id=thread_id,
    )
    assert (scope.key if scope else None) == expected


def test_group_members_share_a_topic_scope() -> None:
    a = resolve_scope(
        workspace="w", bot_id=1, chat_type="supergroup", chat_id=-1, user_id=1, thread_id=3
    )
    b = resolve_scope(
        workspace="w", bot_id=1, chat_type="supergroup", chat_id=-1, user_id=2, thread_id=3
    )
    assert a == b


ids = st.integers(min_value=-(10**13), max_value=10**13)
scopes = st.builds(
    lambda ws, bot, kind, chat, other: Scope(
        workspace=ws,
        bot_id=bot,
        kind=kind,
        chat_id=chat,
        user_id=other if kind == "private" else None,
        topic_id=0 if kind == "private" else other,
    ),
    st.sampled_from(["a", "b", "ws-1", "ws_2"]),
    ids,
    st.sampled_from(["private", "shared"]),
    ids,
    ids,
)


@settings(deadline=None)  # the first example pays pydantic warm-up
@given(scopes, scopes)
def test_distinct_scopes_never_share_a_key(a: Scope, b: Scope) -> None:
    assert (a.key == b.key) == (a == b)


def test_workspace_names_cannot_forge_keys() -> None:
    with pytest.raises(ValueError, match="workspace"):
        Scope(workspace="a/1/p", bot_id=1, kind="private", chat_id=1, user_id=1)
