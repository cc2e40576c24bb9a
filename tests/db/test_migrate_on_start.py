"""Where and whether a start migrates (BOT_MEMORY_MIGRATE_ON_START,
BOT_MEMORY_MIGRATION_DATABASE_URL), the schema checked in one read, and the oldest server
said in one line."""

from __future__ import annotations

import asyncpg
import pytest

from bot_memory.service import Memory
from bot_memory.storage import database
from bot_memory.storage.database import (
    Database,
    SchemaBehind,
    ServerTooOld,
    apply_migrations,
    latest_version,
)
from tests.conftest import make_settings


async def test_a_start_that_may_not_migrate_says_what_to_run(db_url: str) -> None:
    latest = latest_version()
    conn = await asyncpg.connect(db_url)
    try:
        await conn.execute("DELETE FROM schema_migrations WHERE version = $1", latest)
    finally:
        await conn.close()
    with pytest.raises(SchemaBehind) as caught:
        await Memory.open(make_settings(db_url, migrate_on_start=False))
    previous = database.migrations()[-2].version  # numbers may leave a gap while branches land
    assert str(caught.value) == (
        f"the database schema is at {previous}, this version needs {latest}:"
        " run `bot-memory migrate`"
    )


async def test_a_current_schema_opens_without_migrating(db_url: str) -> None:
    memory = await Memory.open(make_settings(db_url, migrate_on_start=False))
    await memory.close()


async def test_migrations_go_to_the_migration_url(db_url: str) -> None:
    """DATABASE_URL unreachable for migrations is fine when the migration URL is given: the
    migration connection is the only one that runs them (here both name the same database,
    and a current schema costs one read)."""
    settings = make_settings(db_url, migration_database_url=db_url)
    db = await Database.open(settings)
    try:
        async with db.pool.acquire() as conn:
            assert await apply_migrations(conn) == []
    finally:
        await db.close()
    broken = make_settings(db_url, migration_database_url="postgresql://x@127.0.0.1:1/none")
    with pytest.raises(database.DatabaseUnavailable, match=r"127\.0\.0\.1:1"):
        await Database.open(broken)


async def test_a_server_older_than_15_is_refused_in_one_line(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from asyncpg.types import ServerVersion

    monkeypatch.setattr(
        asyncpg.Connection,
        "get_server_version",
        lambda self: ServerVersion(14, 11, 0, "final", 0),
    )
    with pytest.raises(ServerTooOld) as caught:
        await Database.open(make_settings(db_url))
    message = str(caught.value)
    assert message.startswith("PostgreSQL 14.11 at ") and "\n" not in message
    assert message.endswith(
        "is older than 15, the oldest this version supports: upgrade the server"
    )


async def test_move_chat_refuses_to_run_outside_a_transaction(db_url: str) -> None:
    from bot_memory.access import tenancy
    from bot_memory.storage import Store

    conn = await asyncpg.connect(db_url)
    try:
        with pytest.raises(RuntimeError, match="inside a transaction"):
            await tenancy.move_chat(
                Store(conn),
                bot_id=1,
                old_chat_id=1,
                new_chat_id=2,
                old_workspace="a",
                new_workspace="b",
            )
    finally:
        await conn.close()


async def test_a_missing_extension_is_one_line_with_the_fix(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    latest = latest_version()
    conn = await asyncpg.connect(db_url)
    try:
        await conn.execute("DELETE FROM schema_migrations WHERE version = $1", latest)
    finally:
        await conn.close()
    plain = database.Migration.sql
    monkeypatch.setattr(
        database.Migration,
        "sql",
        lambda m: "CREATE EXTENSION bm_absent" if m.version == latest else plain(m),
    )
    with pytest.raises(database.ExtensionMissing) as caught:
        await Database.open(make_settings(db_url))
    message = str(caught.value)
    assert message == (
        f"migration {database.migrations()[-1].name} needs the PostgreSQL extension"
        " 'bm_absent', which the server does not have: install it there and start again"
    )


def test_the_fix_for_pgvector_names_the_debian_package() -> None:
    from asyncpg.types import ServerVersion

    class Conn:
        def get_server_version(self) -> ServerVersion:
            return ServerVersion(15, 18, 0, "final", 0)

    for text in (
        'extension "vector" is not available',  # PostgreSQL 16 and later
        'could not open extension control file "/usr/share/postgresql/15/extension/'
        'vector.control": No such file or directory',  # 15
    ):
        assert database._missing_extension(asyncpg.PostgresError(text)) == "vector"
    missing = database.ExtensionMissing(
        database.Migration(19, "019_vectors.sql"),
        "vector",
        Conn(),  # type: ignore[arg-type]
    )
    assert str(missing).endswith(
        "install it there (Debian: apt-get install postgresql-15-pgvector) and start again"
    )
    assert database._missing_extension(asyncpg.PostgresError("syntax error")) is None
