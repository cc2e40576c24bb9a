"""How a memory reads to the people it is about, the same on the chat's /memory screen and on the
memory manager page: a note as the fact in the user's own words (never "remember that ..." or a
leading @mention), who said it by first name (never an ID), dates in the user's language, and a
memory that a newer one replaced marked with when and by what. Pure functions, no I/O.

A date is the `screen-date` string: Fluent's DATETIME in CLDR's medium style ("Mar 3, 2026",
"2026年3月3日", "3 мар. 2026 г."), the style the page's own dates take in the browser (Intl's
dateStyle "medium"), kept on one line; a host's locale files may choose another.
"""

from __future__ import annotations

from datetime import datetime

from bot_memory.control import note_subject
from bot_memory.records import MemoryRecord
from bot_memory.storage import ScopeSummary
from bot_memory_aiogram.i18n import Texts

SPEAKERS_SHOWN = 3  # names on a screen row; the rest as "and N more"


def title(record: MemoryRecord) -> str:
    """A memory's heading: a note's whole fact in the user's words (its stored title is only
    the fact's first characters), an extracted memory's title as the model wrote it."""
    return summary(record) if record.origin == "note" else record.title


def summary(record: MemoryRecord) -> str:
    """What a memory says: a note's fact in the user's words (notes stored with the request
    words, "remember that X", shown without them), an extracted memory's summary."""
    return note_subject(record) if record.origin == "note" else record.summary


def cut(text: str, chars: int) -> str:
    """`text` on one line, at most `chars` characters (an ellipsis where it was cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[: chars - 1].rstrip() + "…"


def speaker_names(record: MemoryRecord, names: dict[int, str]) -> list[str | None]:
    """Who said it, by first name as the bot last saw it; None for someone it has no name for
    (shown as "a member", never as the user's ID)."""
    return [names.get(i) or None for i in record.speaker_ids]


def speakers_line(texts: Texts, language: str, record: MemoryRecord, names: dict[int, str]) -> str:
    """The speakers for a screen row: the first few names, then how many more."""
    someone = texts(language, "screen-someone")
    shown = [n or someone for n in speaker_names(record, names)]
    if len(shown) <= SPEAKERS_SHOWN:
        return ", ".join(shown)
    more = len(shown) - SPEAKERS_SHOWN
    return ", ".join(shown[:SPEAKERS_SHOWN]) + " " + texts(language, "screen-more", count=more)


def day(texts: Texts, language: str, when: datetime) -> str:
    """A date in the user's language, on one line (a line never breaks inside it)."""
    return texts(language, "screen-date", when=when).replace(" ", "\u00a0")


def replaced_mark(
    texts: Texts, language: str, record: MemoryRecord, newer: str | None
) -> str | None:
    """A replaced memory's mark: when, and by what (the newer memory's text when the reader may
    read it and it is still there, else "a newer memory"); None when it was not replaced."""
    if record.replaced_by is None or record.replaced_at is None:
        return None
    when = day(texts, language, record.replaced_at)
    if newer:
        return texts(language, "screen-replaced", when=when, by=newer)
    return texts(language, "screen-replaced-newer", when=when)


def status_line(texts: Texts, language: str, summary: ScopeSummary, *, admin: bool) -> str:
    """The scope's status: for a group's admins how many memories, whether the recall index is
    being rebuilt (never while memory is off: nothing is) and when memory last ran here; for
    everyone else how many, nothing more."""
    if not admin:
        return texts(language, "page-count", count=summary.records)
    last_run = summary.last_run
    return texts(
        language,
        "screen-status",
        count=summary.records,
        pending="yes" if summary.pending and summary.enabled else "no",
        ran="yes" if last_run else "no",
        when=day(texts, language, last_run) if last_run else "",
    )


def share_line(texts: Texts, language: str, summary: ScopeSummary) -> str | None:
    """Said while the scope holds its fair share of the cap or more (others holding memories
    too): past the cap, its least used memories are the first to go."""
    if not summary.at_share:
        return None
    return texts(language, "screen-at-share", held=summary.held, share=summary.share)
