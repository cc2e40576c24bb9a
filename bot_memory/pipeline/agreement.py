"""Do the bot and its workers run with the same settings? What memory's work depends on is
written by each (the bot at start, a worker at every tick) and compared by `status`."""

from __future__ import annotations

from typing import Any

from bot_memory.settings import MemorySettings

# What decides when and how conversations become memories: a worker with other values makes
# other memories (or none yet) from what the bot recorded.
PIPELINE_SETTINGS = (
    "idle_window_seconds",
    "batch_max_bytes",
    "summary_max_bytes",
    "consolidation_max_candidates",
    "index_max_bytes",
    "index_max_ids",
    "existing_memory_in_batch",
    "workspace_max_records",
    "scope_max_share",
    "inactive_prune_days",
    "message_retention_days",
    "workspace_budget_usd",
)


def pipeline_settings(settings: MemorySettings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in PIPELINE_SETTINGS}


def disagreements(
    bots: list[dict[str, Any]], live_workers: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each setting a live worker runs with differently from a bot, with both values."""
    found: list[dict[str, Any]] = []
    for worker in live_workers:
        theirs = worker.get("settings") or {}
        for bot in bots:
            ours = bot.get("settings") or {}
            found.extend(
                {
                    "worker": worker["worker"],
                    "bot_id": bot["bot_id"],
                    "setting": name,
                    "worker_value": theirs[name],
                    "bot_value": ours[name],
                }
                for name in PIPELINE_SETTINGS
                if name in theirs and name in ours and theirs[name] != ours[name]
            )
    return found
