"""What /healthz and /metrics read of the database and the worker: the health check (the
database answers, a worker ticked recently) and the backlog gauges."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.pipeline.pins import live_window
from bot_memory.pipeline.worker import Pipeline, Worker
from bot_memory.storage import Store, is_connection_error

log = get_logger(__name__)


async def health(
    store: Store,
    pipeline: Pipeline,
    worker: Worker,
    *,
    timeout: float,  # noqa: ASYNC109  (each of its two reads is bounded by it)
    metrics: Metrics,
) -> tuple[bool, dict[str, Any]]:
    """(healthy?, details): the database answers within `timeout`, and a worker ticked
    recently (this process's, or any sharing the database) -- within the window
    `bot-memory status` calls a worker live."""
    window = live_window(pipeline.ctx.settings.tick_interval_seconds).total_seconds()
    started = time.monotonic()
    database: dict[str, Any] = {"ok": False}
    try:
        await asyncio.wait_for(store.ping(), timeout)
        database["ok"] = True
    except Exception as exc:
        metrics.database_error("health")
        database["error"] = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
    database["seconds"] = round(time.monotonic() - started, 4)
    last = pipeline.last_tick_at
    ticks: dict[str, Any] = {
        "ok": False,
        "in_process": worker.running,
        "window_seconds": window,
        "last_tick_age_seconds": None if last is None else round(time.time() - last, 3),
    }
    if last is not None and time.time() - last <= window:
        ticks["ok"] = True
    elif database["ok"]:
        try:  # a worker of its own process (bot-memory worker), sharing the database
            age = await asyncio.wait_for(store.workers.last_tick_age(), timeout)
        except Exception as exc:
            metrics.database_error("health")
            ticks["error"] = type(exc).__name__
        else:
            if age is not None:
                ticks["last_tick_age_seconds"] = round(age, 3)
                ticks["ok"] = age <= window
    ok = bool(database["ok"] and ticks["ok"])
    return ok, {"ok": ok, "database": database, "worker": ticks}


async def read_backlog(
    store: Store,
    *,
    timeout: float,  # noqa: ASYNC109  (the statement's own)
    metrics: Metrics,
) -> None:
    """The gauges that need the database (jobs by state, pipeline lag), read now for a
    scrape; the counters are still worth one when the database is away."""
    try:
        found = await store.jobs.backlog(timeout=timeout)
    except Exception as exc:
        if is_connection_error(exc) or isinstance(exc, TimeoutError):
            metrics.database_error("scrape")
        log.warning("memory.metrics_backlog_failed", error=repr(exc)[:200])
    else:
        metrics.backlog(found.jobs, found.lag_seconds)
