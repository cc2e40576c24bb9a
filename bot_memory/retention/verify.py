"""Verifiable forgetting: find every place a text or a source ID still appears in a workspace.

The scan is storage's (`bot_memory/storage/traces.py`): generic, it reads the database's own
catalogue and looks in every text, JSON and array column of every table keyed by the workspace,
so a table added later is covered without changing either file. Each trace says whether it is
expected:

- after a forget, the original chat messages keep their text (forgetting removes memory, not
  chat history), tombstones keep the forgotten IDs (that is how extraction is kept from
  restoring them), and answers keep their dependency links, IDs only (so a later expiry,
  removal or sweep of a forgotten message still reaches the answers derived from it);
- after expiry, removal, a sweep or a purge, only the content-free message row (ID and hash) and
  the request that points at it may remain.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from bot_memory.storage import Occurrence, Store

After = Literal["forget", "erase"]


@dataclass(frozen=True)
class Trace:
    table: str
    column: str
    row: str  # the row's primary key
    needle: str  # the text or source ID found
    expected: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "table": self.table,
            "column": self.column,
            "row": self.row,
            "needle": self.needle,
            "expected": self.expected,
        }


async def find_traces(
    store: Store,
    workspace: str,
    *,
    texts: Iterable[str] = (),
    source_ids: Iterable[str] = (),
    after: After = "erase",
) -> list[Trace]:
    texts = [t for t in texts if t]
    ids = sorted({int(s[1:]) for s in source_ids if re.fullmatch(r"m\d+", s)})
    found = await store.traces.find(workspace, texts=texts, message_ids=ids)
    return [Trace(o.table, o.column, o.row, o.needle, _expected(o, after)) for o in found]


def _expected(found: Occurrence, after: After) -> bool:
    table, column, needle = found.table, found.column, found.needle
    is_id = re.fullmatch(r"m\d+", needle) is not None
    if is_id and found.row_itself:
        return True
    if after == "forget":
        # The chat message keeps its text, and so the terms a search finds it by.
        original = table == "messages" and column in ("text", "search")
        return original or table in ("tombstones", "message_deps", "given_sources")
    return False
