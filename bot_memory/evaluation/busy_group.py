"""The busy group (`--busy-group`): what is asked about lies under newer chatter.

Each conversation asked about is played in a group Topic, then two other conversations of the
dataset are talked in the same Topic after it (other people, each with a speaker ID of their
own), and only then are its questions asked. By then the Topic's index names the newest records,
mostly the chatter's, so what the request's block carries of the first conversation comes from
the question's matches, and what `query_memories` finds from its search.

The chatter keeps its own order and the spacing of turns within a session; its sessions follow
one another CHATTER_SESSION_GAP apart (more than the bot's idle window, so each is extracted on
its own, as a session alone is), starting that long after the conversation asked about ends. So
the two other conversations are talked over days, not months: inactivity pruning (30 days
unused) does not enter into it, the index and the matches do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta

from bot_memory.evaluation.formats import Conversation, Dataset, DatasetError, Turn

OTHERS = 2  # conversations talked after the one asked about
CHATTER_SESSION_GAP = timedelta(hours=1)


def arrange(
    dataset: Dataset, *, pool: Sequence[Conversation] | None = None, others: int = OTHERS
) -> Dataset:
    """Each of the dataset's conversations followed by the next `others` of `pool` (default:
    the dataset's own; the ones after it in order, wrapping round), their questions and forgets
    left out: one group Topic per conversation asked about."""
    pool = list(pool if pool is not None else dataset.conversations)
    arranged = []
    for conv in dataset.conversations:
        place = next((i for i, c in enumerate(pool) if c.id == conv.id), -1)
        rest = pool[place + 1 :] + pool[: max(place, 0)] if place >= 0 else pool
        chatter = [c for c in rest if c.id != conv.id and c.turns][:others]
        if not chatter:
            raise DatasetError(
                f"{dataset.name}: --busy-group needs other conversations to talk after"
                f" {conv.id!r}, and the dataset has none"
            )
        arranged.append(talked_after(conv, chatter))
    return replace(dataset, conversations=tuple(arranged))


def talked_after(conv: Conversation, chatter: Sequence[Conversation]) -> Conversation:
    """`conv` with every turn of `chatter` after its own, in the same group Topic."""
    turns = list(conv.turns)
    speakers = list(conv.speakers)
    dates = dict(conv.session_dates)
    clock = turns[-1].at if turns else None
    for other in chatter:
        names = _names(other, taken=set(speakers))
        speakers += [name for name in names.values() if name not in speakers]
        session = None
        for turn in other.turns:
            if turn.session != session:  # a session starts the gap after what came before
                session, start = turn.session, turn.at
                base = (clock or turn.at) + CHATTER_SESSION_GAP
                dates[f"{other.id}/{turn.session}"] = base
            at = base + (turn.at - start)
            turns.append(
                Turn(
                    id=f"{other.id}/{turn.id}",
                    speaker=names.get(turn.speaker, turn.speaker),
                    text=turn.text,
                    at=at,
                    session=f"{other.id}/{turn.session}",
                    answer=turn.answer,
                    chatter=other.id,
                )
            )
            clock = at
    return replace(
        conv,
        kind="shared",
        speakers=tuple(speakers),
        turns=tuple(turns),
        session_dates=dates,
        talked_after=tuple(c.id for c in chatter),
    )


def _names(conv: Conversation, *, taken: set[str]) -> dict[str, str]:
    """The chatter's speakers, renamed where the Topic already has someone of that name (two
    people, two speaker IDs)."""
    people = list(conv.speakers) + sorted({t.speaker for t in conv.turns} - set(conv.speakers))
    return {name: f"{name} ({conv.id})" if name in taken else name for name in people}
