"""What a job may still work on: checked before every model call and again at commit."""

from __future__ import annotations

from datetime import datetime

from bot_memory.errors import BotMemoryError
from bot_memory.storage import Job, StopKind, Store


class SourcesChanged(BotMemoryError, RuntimeError):
    """The job's input no longer holds (edited, removed, forgotten, memory off): stop it."""

    def __init__(self, message: str, kind: StopKind = "changed") -> None:
        super().__init__(message)
        self.kind: StopKind = kind


async def check_scope_input(store: Store, job: Job, at: datetime) -> None:
    """Raise SourcesChanged unless memory is on in the scope, the bot is there, and every
    snapshot source is retained (its retention boundary still ahead of `at`, the time of the
    check, not of the tick's start), unedited and not forgotten.

    Before every model call, so nothing forgotten, switched off, erased or past its boundary is
    sent to the provider, and again under the workspace lock at commit, so nothing that changed
    during the call is written.
    """
    problem = await store.jobs.input_problem(job, at)
    if problem is not None:
        kind, why = problem
        raise SourcesChanged(why, kind)
