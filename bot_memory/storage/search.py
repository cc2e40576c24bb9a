"""What the two read tools (and the memory screens, and recall's matches) find: records and chat
excerpts, in one statement each.

A query is cut into terms by `terms.parse_query`; PostgreSQL compares them with the terms
stored beside each record and message (`search` columns) and ranks what it finds:

- a full match (every term) when any record holds them all, else whatever holds any;
- more terms, and rarer ones, first: each term weighs ln(1 + (N - n + 0.5) / (n + 0.5)) for
  n of the scope's N items holding it (BM25's weight), so a name found everywhere counts for
  little; a term in a record's title counts twice;
- then the newest.

Everything happens in one statement per call and inside the scope: a search never sees
another scope's rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from bot_memory.records import RECALL_SUMMARY_CHARS, MemoryRecord, RecallEntry
from bot_memory.scopes import Scope
from bot_memory.storage.handle import Handle
from bot_memory.storage.rows import RECORD_COLUMNS, RECORD_SOURCES, record_from_row
from bot_memory.terms import Query, parse_query

# The scope's standing: 'gone' (no workspace), 'unavailable' (the bot left), 'off', or 'ok'.
_STANDING = (
    "sw AS (SELECT CASE WHEN w.id IS NULL THEN 'gone' WHEN s.suspended"
    " THEN 'unavailable' WHEN s.enabled IS FALSE THEN 'off' ELSE 'ok' END AS standing"
    " FROM (SELECT $1::text AS ws) x LEFT JOIN workspaces w ON w.id = x.ws"
    " LEFT JOIN memory_scopes s ON s.workspace_id = x.ws AND s.scope_key = $2)"
)
_RECORD = RECORD_COLUMNS + ", " + RECORD_SOURCES
_AVAILABLE = (
    "r.workspace_id = $1 AND r.scope_key = $2 AND r.valid"
    " AND (r.available_until IS NULL OR r.available_until > $3)"
)
# Rows from before the search columns (filled by the worker meanwhile) are read with the
# built-in configuration.
_RECORD_TERMS = (
    "coalesce(r.search, to_tsvector('simple', normalize(r.title || ' ' || r.summary, NFKC)))"
)
_MESSAGE_TERMS = "coalesce(m.search, to_tsvector('simple', normalize(m.text, NFKC)))"


def _ranking(terms: int, titles: int, *, limit: int, offset: int) -> str:
    """CTEs over `candidates(id, at, search, cur)` ending in `top(id, score, at, cur)`: the page
    of best matches, those with `cur` (current, not history) first, each group ranked alone.
    `$terms` and `$titles` are text arrays of tsqueries (a term, and the same term in titles
    only). Every step is materialized: computed once, not once per row. Each candidate is
    matched against the terms where it is read, and only which terms it holds is kept (negative:
    in its title too): a search vector is a few KB, and copying every one into a materialized
    step cost more than matching it; the weights and scores are then read off those short
    arrays, one row per candidate (a row per candidate and term, joined and grouped again, cost
    a fifth more)."""
    return f"""
    terms AS MATERIALIZED (
        SELECT x.q::tsquery AS q, x.t::tsquery AS t, x.n
        FROM unnest(${terms}::text[], ${titles}::text[]) WITH ORDINALITY AS x(q, t, n)
    ), scoped AS MATERIALIZED (
        SELECT c.id, c.at, c.cur,
            ARRAY(SELECT CASE WHEN c.search @@ x.t THEN -x.n ELSE x.n END
                  FROM terms x WHERE c.search @@ x.q) AS hits
        FROM candidates c
    ), weights AS MATERIALIZED (
        -- Each term's weight from how many candidates hold it, of how many there are.
        SELECT x.n, ln(1 + (k.total - k.holding + 0.5) / (k.holding + 0.5)) AS w
        FROM terms x CROSS JOIN LATERAL (
            SELECT count(*)::float8 AS total,
                count(*) FILTER (WHERE x.n = ANY(s.hits) OR -x.n = ANY(s.hits))::float8 AS holding
            FROM scoped s) k
    ), ranked AS MATERIALIZED (
        SELECT s.id, s.at, s.cur, cardinality(s.hits) AS hits,
            (SELECT sum(w.w * CASE WHEN -w.n = ANY(s.hits) THEN 2 ELSE 1 END) FROM weights w
             WHERE w.n = ANY(s.hits) OR -w.n = ANY(s.hits)) AS score
        FROM scoped s WHERE cardinality(s.hits) > 0
    ), best AS MATERIALIZED (
        SELECT cur, max(hits) AS hits FROM ranked GROUP BY cur
    ), top AS MATERIALIZED (
        -- Full matches when there are any, else every partial one (in each group).
        SELECT k.id, k.score, k.at, k.cur FROM ranked k JOIN best USING (cur)
        WHERE k.hits = cardinality(${terms}::text[]) OR best.hits < cardinality(${terms}::text[])
        ORDER BY k.cur DESC, k.score DESC, k.at DESC, k.id DESC LIMIT ${limit} OFFSET ${offset}
    )"""


def _search(readable: str, available: str, shown: str, *, current: str = "true") -> str:
    """A query's ranked matches among a scope's records ($1 workspace, $2 scope, $3 now, $4 and
    $5 the terms, $6 limit, $7 offset, $8 IDs left out), each shown as `shown` of `r`, after
    the scope's standing; those `current` holds for first."""
    return f"""
        WITH {_STANDING},
        candidates AS (
            SELECT r.id, r.created_at AS at, {_RECORD_TERMS} AS search, {current} AS cur
            FROM memory_records r, sw WHERE sw.standing IN {readable} AND {available}
              AND r.id <> ALL($8::text[])
        ), {_ranking(4, 5, limit=6, offset=7)}
        SELECT sw.standing, r.* FROM sw LEFT JOIN LATERAL (
            SELECT {shown} FROM top t
            JOIN memory_records r ON r.workspace_id = $1 AND r.id = t.id
            ORDER BY t.cur DESC, t.score DESC, t.at DESC, t.id DESC
        ) r ON true
        """


# A scope's retained messages a tool may show: not the current one, not forgotten, not an
# answer left out by a forget.
_RETAINED = """
    m.workspace_id = $1 AND m.scope_key = $2 AND m.text IS NOT NULL AND m.id <> $3
    AND (m.retain_until IS NULL OR m.retain_until > now())
    AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.workspace_id = $1
                    AND t.scope_key = $2 AND t.message_id = m.id)
    AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.workspace_id = $1
                    AND q.answer_message_id = m.id AND q.answer_forgotten)
"""
_EXCERPT = "m.id, m.role, m.speaker_id, m.thread_id, m.text, m.sent_at"


@dataclass(frozen=True)
class Excerpt:
    """A retained message as the history tool shows it."""

    id: int
    role: Literal["user", "assistant"]
    speaker_id: int
    thread_id: int
    text: str
    sent_at: datetime


class Search:
    """On the pool (`Store.search`) or inside the workspace lock (`WorkspaceTx.search`: a tool's
    read and its citation happen under the lock, as erasure does)."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def matches(
        self,
        scope: Scope,
        *,
        query: str,
        now: datetime,
        limit: int,
        excluded: Sequence[str] = (),
    ) -> tuple[str, list[RecallEntry]]:
        """What `records` finds for a query (memory on, available, not replaced), as recall
        shows a record (bm_recall_entry, as the index's entries are built): recall's matches for
        the current message, without reading whole records to cut them down."""
        parsed = parse_query(query)
        if not parsed:
            return "ok", []
        rows = await self._on.fetch(
            _search(
                "('ok')",
                _AVAILABLE + " AND r.replaced_by IS NULL",
                "r.id, bm_recall_entry($1, r, $9)::text AS entry",
            ),
            scope.workspace,
            scope.key,
            now,
            parsed.terms,
            parsed.in_title,
            limit,
            0,
            list(excluded),
            RECALL_SUMMARY_CHARS,
        )
        standing = rows[0]["standing"] if rows else "ok"
        entries = [RecallEntry.model_validate_json(r["entry"]) for r in rows if r["id"] is not None]
        return standing, entries

    async def records(
        self,
        scope: Scope,
        *,
        query: str | None,
        record_id: str | None,
        now: datetime,
        limit: int,
        offset: int = 0,
        while_off: bool = False,
        replaced: bool = False,
        history: bool = False,
        excluded: Sequence[str] = (),
    ) -> tuple[str, list[MemoryRecord]]:
        """A scope's available records with its standing ("ok", "off", "unavailable", "gone"):
        one by ID, the best matches of a query (ranked), or all, newest first. Nothing while
        memory is off in the scope, unless `while_off` (the /memory screen and the Mini App
        list, search, forget and export what is kept: off means not used and not added to, never
        hidden). A record a later one replaced is left out, unless `replaced` (the /memory
        screen and the Mini App show it, marked); with `history`, the replaced records a query
        matches come after the current ones (query_memories: what held before). `excluded`
        records are left out of a query's matches (recall's block already names them: fetching
        them only to skip them costs their whole rows)."""
        readable = "('ok', 'off')" if while_off else "('ok')"
        parsed = parse_query(query) if record_id is None else Query([], [])
        history = history and bool(parsed)
        available = _AVAILABLE if replaced or history else _AVAILABLE + " AND r.replaced_by IS NULL"
        if parsed:
            current = "r.replaced_by IS NULL" if history else "true"
            rows = await self._on.fetch(
                _search(readable, available, _RECORD, current=current),
                scope.workspace,
                scope.key,
                now,
                parsed.terms,
                parsed.in_title,
                limit,
                offset,
                list(excluded),
            )
        else:
            rows = await self._on.fetch(
                f"""
                WITH {_STANDING}
                SELECT sw.standing, r.* FROM sw LEFT JOIN LATERAL (
                    SELECT {_RECORD} FROM memory_records r
                    WHERE sw.standing IN {readable} AND {available}
                      AND ($4::text IS NULL OR r.id = $4)
                    ORDER BY r.created_at DESC, r.id DESC LIMIT $5 OFFSET $6
                ) r ON true
                """,
                scope.workspace,
                scope.key,
                now,
                record_id,
                limit,
                offset,
            )
        standing = rows[0]["standing"] if rows else "ok"
        return standing, [record_from_row(r) for r in rows if r["id"] is not None]

    async def excerpts(
        self,
        scope: Scope,
        *,
        current_message_id: int,
        around: list[int],
        query: str | None,
        limit: int,
    ) -> tuple[list[Excerpt], bool]:
        """Retained messages of the scope: those around given message IDs (each with its
        neighbours), else the best matches of a query, else the newest; at most `limit`. With
        whether they are ranked (best first) rather than in time order (oldest first)."""
        parsed = parse_query(query)
        if not around and parsed:
            ranked = await self._on.fetch(
                f"""
                WITH candidates AS (
                    SELECT m.id, m.id AS at, {_MESSAGE_TERMS} AS search, true AS cur
                    FROM messages m
                    WHERE {_RETAINED}
                ), {_ranking(4, 5, limit=6, offset=7)}
                SELECT {_EXCERPT} FROM top t JOIN messages m ON m.workspace_id = $1 AND m.id = t.id
                ORDER BY t.score DESC, t.at DESC, t.id DESC
                """,
                scope.workspace,
                scope.key,
                current_message_id,
                parsed.terms,
                parsed.in_title,  # messages have no title: never weighed twice
                limit,
                0,
            )
            return [_excerpt(r) for r in ranked], True
        rows = await self._on.fetch(
            f"""
            WITH kept AS (
                SELECT {_EXCERPT}, lag(m.id) OVER w AS prev_id, lead(m.id) OVER w AS next_id
                FROM messages m WHERE {_RETAINED}
                WINDOW w AS (ORDER BY m.id)
            )
            SELECT id, role, speaker_id, thread_id, text, sent_at FROM kept
            WHERE cardinality($4::bigint[]) = 0
               OR id = ANY($4) OR prev_id = ANY($4) OR next_id = ANY($4)
            ORDER BY id DESC LIMIT $5
            """,
            scope.workspace,
            scope.key,
            current_message_id,
            around,
            limit,
        )
        return [_excerpt(r) for r in reversed(rows)], False


def _excerpt(row: Mapping[str, Any]) -> Excerpt:
    return Excerpt(
        id=row["id"],
        role=row["role"],
        speaker_id=row["speaker_id"],
        thread_id=row["thread_id"],
        text=row["text"],
        sent_at=row["sent_at"],
    )
