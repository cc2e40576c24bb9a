"""Storage's Limits are settings: read from them in one place, their defaults the settings'."""

from __future__ import annotations

from types import SimpleNamespace

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
    # The fields' defaults, no environment read (model_construct trips on AliasChoices in
    # the lowest pydantic this project allows).
    defaults = {name: field.get_default() for name, field in MemorySettings.model_fields.items()}
    assert Limits() == Limits.from_settings(SimpleNamespace(**defaults))  # type: ignore[arg-type]
    # By hand, as tests do: what is not given is the setting's default.
    changed = SimpleNamespace(**{**defaults, "workspace_max_records": 5})
    assert Limits(max_records=5) == Limits.from_settings(changed)  # type: ignore[arg-type]
