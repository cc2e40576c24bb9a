"""The settings storage keeps to (the directory's length, the workspace cap and its share, the
prune window, consolidation's candidates), read from MemorySettings once."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from bot_memory.records import RECALL_SUMMARY_CHARS
from bot_memory.settings import MemorySettings


def _setting(name: str) -> Any:
    """A limit that is the setting `name`: its default is the setting's, and
    Limits.from_settings reads it."""
    return field(default=MemorySettings.model_fields[name].default, metadata={"setting": name})


@dataclass(frozen=True)
class Limits:
    """The settings storage keeps to; `Limits()` is their defaults."""

    directory_max: int = _setting("pending_directory_max")
    max_records: int = _setting("workspace_max_records")
    # Of max_records, per scope or speaker, while the cap evicts.
    max_share: float = _setting("scope_max_share")
    inactive_days: int = _setting("inactive_prune_days")
    consolidation_max_candidates: int = _setting("consolidation_max_candidates")

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> Limits:
        return cls(**{f.name: getattr(settings, f.metadata["setting"]) for f in fields(cls)})


def limits_document(limits: Limits) -> dict[str, Any]:
    """The limits as a commit's document carries them (`c->'limits'`)."""
    directory_max, summary_chars = recall_limits(limits)
    return {
        "max_records": limits.max_records,
        "max_share": limits.max_share,
        "directory_max": directory_max,
        "summary_chars": summary_chars,
    }


def recall_limits(limits: Limits) -> tuple[int, int]:
    """What a recall row is derived with: the directory's length and a summary's share."""
    return limits.directory_max, RECALL_SUMMARY_CHARS
