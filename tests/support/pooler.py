"""Debian's PostgreSQL and PgBouncer for tests: a throwaway cluster, and a pooler in
transaction mode in front of a server, each on a loopback port, each run as the `postgres`
user when the tests run as root (neither will run as root)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

PGBOUNCER_PATHS = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")


def pgbouncer_binary() -> str | None:
    found = shutil.which("pgbouncer")
    if found:
        return found
    return next((p for p in PGBOUNCER_PATHS if os.access(p, os.X_OK)), None)


def postgres_bin(major: int | None = None) -> Path | None:
    """Debian's /usr/lib/postgresql/<major>/bin (the oldest installed if no major given)."""
    found = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if major is not None:
        found = [p for p in found if p.parent.name == str(major)]
    return found[0] if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _as_postgres(argv: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


def _own_dir(prefix: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix=prefix))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    return root


def _wait_port(port: int, seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} in {seconds}s: {text}")


@dataclass
class Cluster:
    """A throwaway PostgreSQL data directory (fsync off), stopped and deleted by stop()."""

    root: Path
    bin: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @classmethod
    def start(cls, bin_dir: Path) -> Cluster:
        root = _own_dir("bm-pg-")
        port = free_port()
        data = root / "data"
        subprocess.run(
            _as_postgres(
                [
                    str(bin_dir / "initdb"),
                    *("-D", str(data), "-U", "postgres", "--auth=trust"),
                    *("-E", "UTF8", "--locale=C.UTF-8", "-N"),
                ]
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
        options = (
            f"-c port={port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root}"
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            " -c max_connections=300"
        )
        subprocess.run(
            _as_postgres(
                [
                    str(bin_dir / "pg_ctl"),
                    *("-D", str(data), "-l", str(root / "log"), "-w"),
                    *("-t", "60", "-o", options, "start"),
                ]
            ),
            check=True,
            capture_output=True,
            timeout=90,
        )
        return cls(root=root, bin=bin_dir, port=port)

    def stop(self) -> None:
        subprocess.run(
            _as_postgres(
                [
                    str(self.bin / "pg_ctl"),
                    *("-D", str(self.root / "data"), "-m", "immediate", "-w", "stop"),
                ]
            ),
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class Bouncer:
    """PgBouncer in transaction mode; every database name goes to the same-named database."""

    root: Path
    process: subprocess.Popen[bytes]
    port: int
    user: str
    password: str | None

    def url(self, database: str) -> str:
        creds = self.user if self.password is None else f"{self.user}:{self.password}"
        return f"postgresql://{creds}@127.0.0.1:{self.port}/{database}"

    @classmethod
    def start(cls, server_url: str, *, pool_size: int = 6) -> Bouncer:
        binary = pgbouncer_binary()
        if binary is None:
            raise FileNotFoundError("pgbouncer")
        parts = urlsplit(server_url)
        if not parts.hostname or parts.hostname.startswith("/"):
            raise ValueError("PgBouncer here needs a server on TCP")
        user = unquote(parts.username or "postgres")
        password = unquote(parts.password) if parts.password else None
        root = _own_dir("bm-pgbouncer-")
        port = free_port()
        (root / "users.txt").write_text(f'"{user}" "{password or ""}"\n')
        (root / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={parts.hostname} port={parts.port or 5432}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {root / 'users.txt'}\n"
            f"pool_mode = transaction\ndefault_pool_size = {pool_size}\n"
            "max_client_conn = 1000\nmax_db_connections = 0\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {root / 'log'}\npidfile = {root / 'pid'}\n"
            "server_reset_query =\nserver_check_delay = 0\n"
        )
        if os.geteuid() == 0:
            for name in ("users.txt", "pgbouncer.ini"):
                shutil.chown(root / name, "postgres", "postgres")
        process = subprocess.Popen(
            _as_postgres([binary, str(root / "pgbouncer.ini")]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_port(port, 20, "pgbouncer", root / "log")
        except BaseException:
            process.kill()
            raise
        return cls(root=root, process=process, port=port, user=user, password=password)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.root, ignore_errors=True)
