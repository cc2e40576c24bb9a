"""Which of the records an extraction answer names in `replaces` it may replace.

A replaced record leaves recall, so a correction may only retire what its conversation could
have carried over whole and what its speakers may take back:

- the record was shown whole to the model (one shown in part holds facts the answer could not
  restate: replacing it would lose them);
- everyone whose statements the record holds speaks in the cited conversation (a member's
  correction never retires another member's note or what others said; an admin forgets those).

What is left out is kept, current, beside the new record: when unsure, nothing is replaced.
The commit then rechecks, under the workspace lock, that each one is still there as given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from bot_memory.records import MemoryRecord


@dataclass(frozen=True)
class Replacing:
    kept: list[str]  # the records the answer replaces
    partial: list[str]  # named, but shown in part
    others: list[str]  # named, but holding statements of someone not in the conversation


def may_replace(
    named: Iterable[str],
    given: Mapping[str, MemoryRecord],
    *,
    shown_in_part: set[str],
    speakers: set[int],
) -> Replacing:
    """`given`: the records the batch was shown, by ID; `speakers`: who said what the answer
    cites (user messages only)."""
    kept: list[str] = []
    partial: list[str] = []
    others: list[str] = []
    for rid in dict.fromkeys(named):
        record = given.get(rid)
        if record is None:  # validation refuses an answer naming one it was not given
            continue
        if rid in shown_in_part:
            partial.append(rid)
        elif not set(record.speaker_ids) <= speakers:
            others.append(rid)
        else:
            kept.append(rid)
    return Replacing(kept=kept, partial=partial, others=others)
