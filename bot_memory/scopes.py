"""Visibility scopes: who may see which memories.

Private: workspace + bot + private chat + user, across that user's Topics.
Shared: workspace + bot + group + Topic (0 for General and non-forum groups).
Neither imports the other: a scope's key is its whole identity.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

ScopeKind = Literal["private", "shared"]

PRIVATE_CHAT_TYPES = frozenset({"private"})
GROUP_CHAT_TYPES = frozenset({"group", "supergroup"})


class Scope(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace: str
    bot_id: int
    kind: ScopeKind
    chat_id: int
    user_id: int | None = None  # private scopes only
    topic_id: int = 0  # shared scopes only

    @field_validator("workspace")
    @classmethod
    def _plain_workspace(cls, value: str) -> str:
        if not value or "/" in value:
            raise ValueError("workspace must be non-empty and contain no '/' (it is part of keys)")
        return value

    @property
    def key(self) -> str:
        if self.kind == "private":
            return f"{self.workspace}/{self.bot_id}/p/{self.chat_id}/{self.user_id}"
        return f"{self.workspace}/{self.bot_id}/g/{self.chat_id}/{self.topic_id}"

    @property
    def is_private(self) -> bool:
        return self.kind == "private"


def resolve_scope(
    *,
    workspace: str,
    bot_id: int,
    chat_type: str | None,
    chat_id: int | None,
    user_id: int | None,
    thread_id: int | None,
) -> Scope | None:
    """The scope an update belongs to, or None when memory does not apply (channels, no chat).

    thread_id is ignored in private chats (private Topics share the user's one scope) and is
    `thread_id or 0` in groups, because the General topic and non-forum groups have none.
    """
    if chat_id is None or chat_type is None:
        return None
    if chat_type in PRIVATE_CHAT_TYPES:
        if user_id is None:
            return None
        return Scope(
            workspace=workspace, bot_id=bot_id, kind="private", chat_id=chat_id, user_id=user_id
        )
    if chat_type in GROUP_CHAT_TYPES:
        return Scope(
            workspace=workspace,
            bot_id=bot_id,
            kind="shared",
            chat_id=chat_id,
            topic_id=thread_id or 0,
        )
    return None
