"""Pure decisions of the pipeline: what goes in the next extraction batch."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot_memory.pipeline.jobs import SnapshotSource
from bot_memory.pipeline.prompts import utf8_len


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

    @property
    def size(self) -> int:
        return utf8_len(self.user_text) + utf8_len(self.assistant_text)


@dataclass(frozen=True)
class Batch:
    pairs: list[Pair]
    through_request: int  # the watermark after this batch: every pair up to here is handled
    skipped: list[Pair] = field(default_factory=list)  # pairs too large to fit on their own
    remaining: int = 0  # pairs left for later batches


def next_batch(pairs: list[Pair], *, max_bytes: int) -> Batch:
    """The oldest pairs that fit under max_bytes, in order.

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
        if used + pair.size > max_bytes:
            return Batch(chosen, through, skipped, remaining=len(pairs) - index)
        chosen.append(pair)
        used += pair.size
        through = pair.request_id
    return Batch(chosen, through, skipped, remaining=0)
