"""Pure decisions of the pipeline: which scope is due, what goes in a batch."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot_memory.pipeline.jobs import SnapshotSource
from bot_memory.pipeline.prompts import utf8_len


@dataclass(frozen=True)
class ScopeActivity:
    """One scope's requests, as the discovery query sees them."""

    scope_key: str
    scope_kind: str
    newest_succeeded: int | None  # newest succeeded chat request ID
    last_activity: datetime
    busy: bool  # a queued, running or approval-waiting request exists


def is_due(
    activity: ScopeActivity,
    *,
    enabled: bool,
    extracted_through: int,
    now: datetime,
    idle_window: timedelta,
) -> bool:
    """Idle, successful, not yet extracted, and memory on in that scope."""
    return (
        enabled
        and not activity.busy
        and activity.newest_succeeded is not None
        and activity.newest_succeeded > extracted_through
        and activity.last_activity <= now - idle_window
    )


@dataclass(frozen=True)
class Pair:
    """A user message and the assistant's answer to it: the unit a batch holds."""

    user: SnapshotSource
    assistant: SnapshotSource
    user_text: str
    assistant_text: str

    @property
    def size(self) -> int:
        return utf8_len(self.user_text) + utf8_len(self.assistant_text)


def build_batch(pairs: list[Pair], *, max_bytes: int) -> list[Pair]:
    """The most recent pairs that fit under max_bytes, oldest first.

    Recent sources matter most; older ones that do not fit stay out of this batch. An empty
    result means not even the newest pair fits: the batch is skipped.
    """
    chosen: list[Pair] = []
    used = 0
    for pair in reversed(pairs):
        if used + pair.size > max_bytes:
            break
        chosen.append(pair)
        used += pair.size
    chosen.reverse()
    return chosen
