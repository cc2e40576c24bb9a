"""Where a text or a source ID still appears in a workspace: the scan behind verifiable
forgetting (whether each place is expected is retention's: `bot_memory/retention/verify.py`).

The scan is generic: it reads the database's own catalogue and looks in every text, JSON and
array column of every table keyed by the workspace, so a table added later is covered without
changing this file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import asyncpg

from bot_memory.storage.handle import Handle, connection
from bot_memory.terms import quote_term, terms

# Record IDs and UUIDs (claim tokens inside other strings). Not any hex run: a hex secret a
# user said must stay findable.
_HEX_IDS = r"mem_[0-9a-f]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_ID_COLUMNS = {"message_id", "source_message_id", "user_message_id", "answer_message_id"}
# References to the content-free row itself: kept by design after any erasure.
_ROW_ITSELF = {
    ("messages", "id"),
    ("requests", "user_message_id"),
    ("requests", "answer_message_id"),
}


@dataclass(frozen=True)
class Occurrence:
    """One row where a text or a source ID was found."""

    table: str
    column: str
    row: str  # the row's primary key
    needle: str  # the text or source ID found
    row_itself: bool  # the column references the message row itself (kept by design)


class Traces:
    """The scan, on the pool (`Store.traces`): every statement on one connection."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def find(
        self, workspace: str, *, texts: list[str], message_ids: list[int]
    ) -> list[Occurrence]:
        """Every row of the workspace where one of these texts, or one of these messages'
        source IDs ("m123"), appears: in text, JSON and array columns (digests, tokens and
        record IDs left out), in search terms, and in the columns that hold message IDs."""
        found: list[Occurrence] = []
        async with connection(self._on) as conn:
            tables = await _tables(conn)
            for table, (key_columns, columns) in tables.items():
                where = "id = $1" if table == "workspaces" else "workspace_id = $1"
                key = " || '/' || ".join(f"{c}::text" for c in key_columns) or "'?'"
                for column, kind in columns:
                    row_itself = (table, column) in _ROW_ITSELF
                    for condition, needle, args in _probes(table, column, kind, texts, message_ids):
                        rows = await conn.fetch(
                            f"SELECT {key} AS k FROM {table} WHERE {where} AND {condition}",
                            workspace,
                            *args,
                        )
                        found.extend(
                            Occurrence(table, column, r["k"], needle, row_itself) for r in rows
                        )
        return found


def _probes(
    table: str, column: str, kind: str, texts: list[str], ids: list[int]
) -> list[tuple[str, str, list[object]]]:
    """What finds each text and source ID in this column: (condition, needle, arguments)."""
    probes: list[tuple[str, str, list[object]]] = []
    if kind in ("text", "json", "array"):
        # Digests, tokens and record IDs are hex: a word like "Ada" or "cafe" would be
        # found in them by chance. They hold no content: left out of text probes.
        value = (
            f"regexp_replace(regexp_replace(lower({column}::text),"
            f" '\"[a-z_]*(hash|fingerprint|token)\": ?\"[^\"]*\"', '', 'g'),"
            f" '{_HEX_IDS}', '', 'g')"
        )
        digest = column.endswith(("hash", "fingerprint")) or column == "idempotency_key"
        for text in texts if not digest else []:
            escaped = json.dumps(text, ensure_ascii=False)[1:-1]
            probes.append(
                (
                    f"(strpos({value}, lower($2)) > 0 OR strpos({value}, lower($3)) > 0)",
                    text,
                    [text, escaped],
                )
            )
        probes.extend(
            (f"{column}::text ~ $2", f"m{mid}", [rf"(^|[^0-9A-Za-z_])m{mid}([^0-9]|$)"])
            for mid in ids
        )
    elif kind == "terms":
        # Search terms of a text (terms.py), all of them: its words are stored there.
        for text in texts:
            query = " & ".join(sorted({quote_term(t) for t, _ in terms(text)}))
            if query:
                probes.append((f"{column} @@ $2::tsquery", text, [query]))
    elif kind == "int" and (column in _ID_COLUMNS or (table, column) in _ROW_ITSELF):
        probes.extend((f"{column} = $2", f"m{mid}", [mid]) for mid in ids)
    return probes


async def _tables(conn: asyncpg.Connection) -> dict[str, tuple[list[str], list[tuple[str, str]]]]:
    """Tables keyed by the workspace: (primary key columns, [(column, kind)])."""
    rows = await conn.fetch(
        """
        SELECT c.table_name, c.column_name, c.data_type, c.udt_name,
               c.column_name = ANY(ARRAY(
                   SELECT a.attname FROM pg_index i
                   JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                   WHERE i.indrelid = (quote_ident(c.table_name))::regclass AND i.indisprimary
               )) AS is_key
        FROM information_schema.columns c
        JOIN information_schema.tables t ON t.table_schema = c.table_schema
            AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
        WHERE c.table_schema = current_schema()
          AND (c.table_name = 'workspaces' OR EXISTS (
              SELECT 1 FROM information_schema.columns w WHERE w.table_schema = c.table_schema
              AND w.table_name = c.table_name AND w.column_name = 'workspace_id'))
        ORDER BY c.table_name, c.ordinal_position
        """
    )
    tables: dict[str, tuple[list[str], list[tuple[str, str]]]] = {}
    for r in rows:
        keys, columns = tables.setdefault(r["table_name"], ([], []))
        if r["is_key"]:
            keys.append(r["column_name"])
        kind = _kind(r["data_type"], r["udt_name"])
        if kind is not None and r["column_name"] != "workspace_id":
            columns.append((r["column_name"], kind))
    return tables


def _kind(data_type: str, udt: str) -> str | None:
    if data_type in ("text", "character varying"):
        return "text"
    if data_type in ("json", "jsonb"):
        return "json"
    if data_type == "ARRAY" and udt in ("_text", "_varchar"):
        return "array"
    if data_type == "ARRAY" and udt in ("_int8", "_int4"):
        return "array"
    if data_type in ("bigint", "integer"):
        return "int"
    if data_type == "tsvector":
        return "terms"
    return None
