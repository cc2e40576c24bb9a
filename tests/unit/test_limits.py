"""Storage's Limits are settings: read from them in one place, their defaults the settings'."""

from __future__ import annotations

from bot_memory.settings import MemorySettings
from bot_memory.storage import Limits


def test_limits_are_read_from_the_settings() -> None:
    settings = MemorySettings(
        database_url="postgresql://unused",
        pending_directory_max=3,
        workspace_max_records=40,
        scope_max_share=0.25,
        inactive_prune_days=9,
        consolidation_max_candidates=7,
    )
    assert Limits.from_settings(settings) == Limits(
        directory_max=3,
        max_records=40,
        max_share=0.25,
        inactive_days=9,
        consolidation_max_candidates=7,
    )


def test_the_default_limits_are_the_settings_defaults() -> None:
    defaults = MemorySettings.model_construct()  # the fields' defaults, no environment read
    assert Limits() == Limits.from_settings(defaults)
    # By hand, as tests do: what is not given is the setting's default.
    assert Limits(max_records=5) == Limits.from_settings(
        defaults.model_copy(update={"workspace_max_records": 5})
    )
