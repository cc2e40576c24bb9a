"""Which worker runs a job: the one that calls the model its bot pinned.

A request is pinned to the provider (server) and model its bot called, and each bot records the
model its process started with (setup()); the memory jobs made from a request are pinned to the
same. A worker runs a job pinned to what it calls itself. A job pinned to something else is
either stale or someone else's:

- stale, when the scope's bot calls what this worker calls now (the model its process last
  started with, else its newest request's): the bot has moved to this configuration since, so
  the job is planned again under it (a model or server change);
- someone else's otherwise: a process configured as the bot is should run it (a worker started
  without the bot's settings would run the offline model, or another server), so it is left
  alone, unclaimed, and `bot-memory status` says which live worker lacks what.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from bot_memory.models import Pin

OFFLINE = "offline"

Verdict = Literal["run", "replan", "leave"]


def verdict(job: Pin, mine: Pin, scope_now: Pin | None) -> Verdict:
    """What a worker calling `mine` does with a job pinned to `job`, when the job's scope's
    newest request is pinned to `scope_now` (None: no request pinned yet).
    Jobs.claim_next (storage) applies the same rule in SQL."""
    if job == mine:
        return "run"
    if scope_now == mine:
        return "replan"
    return "leave"


def planned_pin(origin: Pin | None, mine: Pin, scope_now: Pin | None) -> Pin:
    """The pin of a job planned now by a worker calling `mine`, for work charged to a request
    pinned to `origin` (None: the host answered it without memory's model): the origin's, or
    what the bot calls now, unless the bot has moved to this worker's model since."""
    wanted = origin or scope_now
    if wanted is None or verdict(wanted, mine, scope_now) != "leave":
        return mine
    return wanted


def lacks(worker: Pin, wanted: Pin) -> str:
    """What a worker calling `worker` lacks to run a job pinned to `wanted`, said plainly."""
    if worker.provider == OFFLINE:
        return f"a model server: it runs the offline model (the job wants {wanted})"
    if worker.provider != wanted.provider:
        return f"the server {wanted.provider} (it calls {worker.provider})"
    return f"the model {wanted.model} (it calls {worker.model} on that server)"


def live_window(tick_interval_seconds: float) -> timedelta:
    """A worker that has not ticked for this long is taken for stopped (or stuck)."""
    return timedelta(seconds=3 * tick_interval_seconds + 60)
