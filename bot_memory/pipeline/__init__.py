"""The background pipeline: due scopes found, jobs claimed with leases, extraction,
consolidation, maintenance, the worker; `priority` (a worker in
the bot's process steps aside while messages are handled) and `serving` (which worker runs a
job, by its model).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.models import Pin
from bot_memory.pipeline.agreement import disagreements, pipeline_settings
from bot_memory.pipeline.consolidation import plan_pending
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.health import health, read_backlog
from bot_memory.pipeline.pins import lacks, live_window
from bot_memory.pipeline.priority import RequestsFirst
from bot_memory.pipeline.worker import Pipeline, Worker

__all__ = [
    "Pin",
    "Pipeline",
    "PipelineContext",
    "RequestsFirst",
    "Worker",
    "disagreements",
    "health",
    "lacks",
    "live_window",
    "pipeline_settings",
    "plan_pending",
    "read_backlog",
]
