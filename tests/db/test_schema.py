"""bot_memory/storage/schema.sql is the schema the migrations add up to: one database built by
the migrations (the suite's template) and one built from schema.sql alone must have the same
catalog (tables and their columns, storage and options, indexes, constraints, triggers,
sequences, and every function's signature and body). A change made in one and not the other
fails here."""

from __future__ import annotations

import difflib
import importlib.resources
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.conftest import with_database

SCHEMA = importlib.resources.files("bot_memory.storage") / "schema.sql"
# What the previous release calls and the current code does not, kept for one release.
SUPERSEDED = importlib.resources.files("bot_memory.storage") / "superseded.sql"

# What a catalog is compared by: each query's rows, as sorted tuples. Columns are compared in
# their order among the live ones (a column a migration dropped leaves a hole schema.sql has
# not), since `SELECT *` and row types follow that order.
CATALOG: dict[str, str] = {
    "tables": """
        SELECT c.relname, c.relkind::text, coalesce(c.reloptions, '{}')::text,
               c.relpersistence::text
        FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm')
    """,
    "columns": """
        SELECT c.relname, row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum), a.attname,
               format_type(a.atttypid, a.atttypmod), a.attnotnull,
               pg_get_expr(d.adbin, d.adrelid), a.attstorage::text, a.attidentity::text,
               a.attgenerated::text, coalesce(a.attcollation::regcollation::text, '')
        FROM pg_class c
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm')
    """,
    "indexes": """
        SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'
    """,
    "constraints": """
        SELECT conrelid::regclass::text, conname, contype::text, pg_get_constraintdef(oid),
               condeferrable, condeferred
        FROM pg_constraint WHERE connamespace = 'public'::regnamespace
    """,
    "triggers": """
        SELECT t.tgrelid::regclass::text, t.tgname, pg_get_triggerdef(t.oid)
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal
    """,
    "sequences": """
        SELECT sequencename, data_type::text, start_value, increment_by, max_value, cycle
        FROM pg_sequences WHERE schemaname = 'public'
    """,
    "functions": """
        SELECT p.proname, pg_get_function_identity_arguments(p.oid), p.prokind::text,
               pg_get_functiondef(p.oid)
        FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
    """,
    "types": """
        SELECT t.typname, t.typtype::text FROM pg_type t
        WHERE t.typnamespace = 'public'::regnamespace AND t.typtype NOT IN ('b', 'c')
          AND t.typarray <> 0
    """,
    "extensions": "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql'",
}

# Made by apply_migrations itself to record what it applied: not part of schema.sql.
BOOKKEEPING = "schema_migrations"


async def catalog(conn: asyncpg.Connection) -> dict[str, list[tuple[Any, ...]]]:
    found = {}
    for name, query in CATALOG.items():
        rows = [tuple(r) for r in await conn.fetch(query)]
        found[name] = sorted(
            (r for r in rows if not any(str(v).startswith(BOOKKEEPING) for v in r[:2])),
            key=repr,
        )
    return found


def differences(
    migrated: dict[str, list[tuple[Any, ...]]], declared: dict[str, list[tuple[Any, ...]]]
) -> list[str]:
    """Each catalog row one side has and the other has not, said readably (a function on both
    sides whose definitions differ, as a diff of them)."""
    out = []
    for name in CATALOG:
        only_a = set(migrated[name]) - set(declared[name])
        only_b = set(declared[name]) - set(migrated[name])
        if name == "functions":
            theirs = {row[:2]: row for row in only_b}
            for row in sorted(only_a, key=repr):
                other = theirs.get(row[:2])
                if other is None:
                    continue
                diff = difflib.unified_diff(
                    row[3].splitlines(),
                    other[3].splitlines(),
                    "migrations",
                    "schema.sql",
                    n=1,
                    lineterm="",
                )
                out.append(f"functions: {row[0]} differs:\n" + "\n".join(diff))
                only_a.discard(row)
                only_b.discard(other)
        out += [f"{name}: only in the migrations: {row}" for row in sorted(only_a, key=repr)]
        out += [f"{name}: only in schema.sql: {row}" for row in sorted(only_b, key=repr)]
    return out


@pytest.fixture
async def declared(pg_server_url: str) -> AsyncIterator[asyncpg.Connection]:
    """An empty database on the suite's server with schema.sql applied, dropped after."""
    name = "bm_schema_" + uuid.uuid4().hex[:12]
    admin = await asyncpg.connect(pg_server_url)
    try:
        await admin.execute(f"CREATE DATABASE {name} TEMPLATE template0")
        conn = await asyncpg.connect(with_database(pg_server_url, name))
        try:
            await conn.execute(SCHEMA.read_text(encoding="utf-8"))
            await conn.execute(SUPERSEDED.read_text(encoding="utf-8"))
            yield conn
        finally:
            await conn.close()
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {name}")
        await admin.close()


@pytest.fixture
async def migrated(db_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A database the migrations built (a clone of the suite's template)."""
    conn = await asyncpg.connect(db_url)
    yield conn
    await conn.close()


async def test_schema_sql_is_what_the_migrations_add_up_to(
    migrated: asyncpg.Connection, declared: asyncpg.Connection
) -> None:
    found = differences(await catalog(migrated), await catalog(declared))
    assert not found, "schema.sql and the migrations disagree:\n" + "\n".join(found)


async def test_every_server_function_is_in_schema_sql_once() -> None:
    """A reader finds each function's body in one place: one CREATE OR REPLACE each, in
    schema.sql or, kept for the previous release, superseded.sql."""
    text = SCHEMA.read_text(encoding="utf-8") + SUPERSEDED.read_text(encoding="utf-8")
    names = [
        line.split("(", 1)[0].rsplit(" ", 1)[-1]
        for line in text.splitlines()
        if line.startswith("CREATE OR REPLACE FUNCTION ")
    ]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert "CREATE FUNCTION" not in text


# Each kind of change the comparison must see, made to the schema.sql database (in a
# transaction rolled back after).
CHANGES = {
    "a function's body": "CREATE OR REPLACE FUNCTION bm_iso(t timestamptz) RETURNS text"
    " LANGUAGE sql STABLE AS $$ SELECT to_char(t, 'YYYY') $$",
    "a function's volatility": "ALTER FUNCTION bm_iso(timestamptz) VOLATILE",
    "a function's setting": "ALTER FUNCTION bm_iso(timestamptz) SET work_mem = '1MB'",
    "a new function": "CREATE FUNCTION bm_x() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$",
    "a column's default": "ALTER TABLE workspaces ALTER COLUMN version SET DEFAULT 1",
    "a column's nullability": "ALTER TABLE messages ALTER COLUMN language SET NOT NULL",
    "a column's type": "ALTER TABLE chats ALTER COLUMN chat_type TYPE varchar(64)",
    "a column's storage": "ALTER TABLE memory_scopes ALTER COLUMN recall SET STORAGE EXTENDED",
    "a new column": "ALTER TABLE tombstones ADD COLUMN note text",
    "a table's options": "ALTER TABLE memory_records RESET (toast_tuple_target)",
    "an index": "DROP INDEX requests_id_idx",
    "an index's definition": "DROP INDEX messages_expiry_idx;"
    " CREATE INDEX messages_expiry_idx ON messages (retain_until)",
    "a check": "ALTER TABLE requests DROP CONSTRAINT requests_kind_check;"
    " ALTER TABLE requests ADD CONSTRAINT requests_kind_check CHECK (kind IN ('chat'))",
    "a foreign key": "ALTER TABLE record_sources"
    " DROP CONSTRAINT record_sources_workspace_id_record_id_fkey",
    "a trigger": "CREATE FUNCTION bm_t() RETURNS trigger LANGUAGE plpgsql AS"
    " $$ BEGIN RETURN NEW; END $$;"
    " CREATE TRIGGER t BEFORE INSERT ON chats FOR EACH ROW EXECUTE FUNCTION bm_t()",
}


@pytest.mark.parametrize("change", sorted(CHANGES))
async def test_the_comparison_sees_each_kind_of_difference(
    migrated: asyncpg.Connection, declared: asyncpg.Connection, change: str
) -> None:
    before = await catalog(migrated)
    tx = declared.transaction()
    await tx.start()
    try:
        await declared.execute(CHANGES[change])
        assert differences(before, await catalog(declared)), change
    finally:
        await tx.rollback()
    assert not differences(before, await catalog(declared))


def test_schema_sql_holds_only_functions_that_run() -> None:
    """Each function in schema.sql is called by the code or by another function there; what
    only the previous release calls is in superseded.sql, until the next release drops it."""
    text = SCHEMA.read_text(encoding="utf-8")
    code = "".join(
        p.read_text(encoding="utf-8")
        for p in (Path(__file__).resolve().parents[2] / "bot_memory").rglob("*.py")
    )
    uncalled = [
        name
        for name in re.findall(r"^CREATE OR REPLACE FUNCTION (\w+)\(", text, re.M)
        if not re.search(rf"\b{name}\(", code) and len(re.findall(rf"\b{name}\(", text)) < 2
    ]
    assert uncalled == []
