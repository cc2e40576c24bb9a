"""Pure decisions of the pipeline: which conversation goes next, and how much of it fits.

A batch never spans two conversations: a gap of at least the idle window between one exchange's
answer and the next message ends a conversation. So a worker that falls behind (a scope that
gathered several conversations while it was down) plans them one at a time, oldest first, and
makes the records a punctual worker would have made; only a conversation larger than the byte
ceiling is split, at exchange boundaries.

The ceiling counts everything the extraction request carries about a source (its text,
redacted, and its ID, role, speaker, thread and date, as serialized, with room for a user's
text redacted together with the speaker's neighbouring messages), so a request is never more
than the ceiling plus the fixed prompt.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from bot_memory.pipeline.prompts import MAX_BATCH_SOURCES, planned_entry_bytes
from bot_memory.storage import SnapshotSource


@dataclass(frozen=True)
class Exchange:
    """What planning knows of an exchange before reading any text: enough to find where
    conversations end."""

    request_id: int
    started_at: datetime  # the user's message
    ended_at: datetime  # the answer


def first_conversation(exchanges: list[Exchange], idle: timedelta) -> int:
    """How many of these (in order) belong to the first conversation. An idle window of zero
    (tests, a host that wants no waiting) never splits: every moment is idle already."""
    if idle <= timedelta(0):
        return len(exchanges)
    for i in range(1, len(exchanges)):
        if exchanges[i].started_at - exchanges[i - 1].ended_at >= idle:
            return i
    return len(exchanges)


@dataclass(frozen=True)
class Pair:
    """A user message and the assistant's answer to it: the unit a batch holds. The answer is
    left out (None, "") when a forget landed while it was being written: it may repeat what
    was forgotten, while the user's own words, if they do not, are still worth keeping."""

    user: SnapshotSource
    assistant: SnapshotSource | None
    user_text: str
    assistant_text: str

    @property
    def sources(self) -> list[SnapshotSource]:
        return [self.user] if self.assistant is None else [self.user, self.assistant]

    @property
    def request_id(self) -> int:
        return self.user.request_id

    @functools.cached_property
    def size(self) -> int:
        """Bytes this pair adds to the extraction request's sources."""
        texts = (
            [self.user_text] if self.assistant is None else [self.user_text, self.assistant_text]
        )
        return sum(planned_entry_bytes(s, t) for s, t in zip(self.sources, texts, strict=True))


@dataclass(frozen=True)
class Batch:
    pairs: list[Pair]
    through_request: int  # the watermark after this batch: every pair up to here is handled
    skipped: list[Pair] = field(default_factory=list)  # pairs too large to fit on their own
    remaining: int = 0  # pairs left for later batches


def next_batch(pairs: list[Pair], *, max_bytes: int, max_sources: int = MAX_BATCH_SOURCES) -> Batch:
    """The oldest pairs (of one conversation) that fit under max_bytes (and max_sources), in
    order.

    History is not dropped: pairs that do not fit wait for the next batch. Only a pair that
    cannot fit on its own is skipped (and the watermark moves past it). An empty batch with
    nothing skipped means there is nothing to extract.
    """
    chosen: list[Pair] = []
    skipped: list[Pair] = []
    used = 0
    through = 0
    for index, pair in enumerate(pairs):
        if pair.size > max_bytes:
            skipped.append(pair)
            through = pair.request_id
            continue
        sources = sum(len(p.sources) for p in chosen) + len(pair.sources)
        if used + pair.size > max_bytes or sources > max_sources:
            return Batch(chosen, through, skipped, remaining=len(pairs) - index)
        chosen.append(pair)
        used += pair.size
        through = pair.request_id
    return Batch(chosen, through, skipped, remaining=0)
