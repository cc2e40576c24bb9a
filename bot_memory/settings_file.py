"""The settings file a host may keep, so its bot and `bot-memory worker` read the same values.

BOT_MEMORY_SETTINGS (or the command line's `--settings`) names it. A `.toml` file holds settings
by field name or environment name (`idle_window_seconds = 600`, `DATABASE_URL = "..."`), at its
top level or in a `[bot_memory]` table when the host keeps its own keys there too; any other
file is read as `.env` lines (`BOT_MEMORY_IDLE_WINDOW_SECONDS=600`), where other programs'
lines are ignored. The environment wins over the file, and settings passed in code over both.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, DotEnvSettingsSource, PydanticBaseSettingsSource

from bot_memory.errors import BotMemoryError

SETTINGS_FILE_VARIABLE = "BOT_MEMORY_SETTINGS"
PREFIX = "bot_memory_"
TABLE = "bot_memory"


class SettingsFileError(BotMemoryError, ValueError):
    """The settings file is missing, or names a setting that does not exist. `detail` says
    what, without naming how the file was given (the command line names its flag)."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"{SETTINGS_FILE_VARIABLE}: {detail}")
        self.detail = detail


def settings_file_source(settings_cls: type[BaseSettings]) -> PydanticBaseSettingsSource | None:
    """The source for the file BOT_MEMORY_SETTINGS names, if it names one."""
    named = os.environ.get(SETTINGS_FILE_VARIABLE)
    if not named:
        return None
    path = Path(named).expanduser()
    if not path.is_file():
        raise SettingsFileError(f"{path} is not a file")
    if path.suffix.lower() == ".toml":
        return TomlSettings(settings_cls, path)
    return DotEnvSettingsSource(settings_cls, env_file=path)


class TomlSettings(PydanticBaseSettingsSource):
    """A TOML file's settings under their field names; a key that names no setting is an
    error (a misspelt limit would otherwise be silently the default)."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        with path.open("rb") as f:
            document = tomllib.load(f)
        table = document.get(TABLE)
        items = table if isinstance(table, dict) else document
        names = field_names(settings_cls.model_fields)
        self.values: dict[str, Any] = {}
        for key, value in items.items():
            field = names.get(key.lower())
            if field is None:
                raise SettingsFileError(f"{path} has no setting named {key!r}")
            self.values[field] = value

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.values)


def field_names(fields: dict[str, FieldInfo]) -> dict[str, str]:
    """Every lower-case name a setting goes by (field, BOT_MEMORY_ field, aliases) -> field."""
    names: dict[str, str] = {}
    for name, info in fields.items():
        names[name] = names[PREFIX + name] = name
        alias = info.validation_alias
        if isinstance(alias, AliasChoices):
            for choice in alias.choices:
                if isinstance(choice, str):
                    names[choice.lower()] = name
    return names
