"""The bot's command menus: ``setMyCommands`` / ``getMyCommands`` / ``deleteMyCommands`` per
scope type and language, kept in ``commands`` for a test to read."""

from __future__ import annotations

from typing import Any

from bot_memory_aiogram.testing.emulator.records import EmulatorRecords
from bot_memory_aiogram.testing.emulator.wire import Handler, JsonDict


class CommandMethods(EmulatorRecords):
    def _methods(self) -> dict[str, Handler]:
        return {
            **super()._methods(),
            "setMyCommands": self._set_my_commands,
            "getMyCommands": self._get_my_commands,
            "deleteMyCommands": self._delete_my_commands,
        }

    @staticmethod
    def _commands_key(params: JsonDict) -> str:
        scope = params.get("scope")
        scope_type = scope.get("type", "default") if isinstance(scope, dict) else "default"
        return f"{scope_type}:{params.get('language_code') or ''}"

    async def _set_my_commands(self, params: JsonDict) -> Any:
        commands = params.get("commands")
        self.commands[self._commands_key(params)] = commands if isinstance(commands, list) else []
        return True

    async def _get_my_commands(self, params: JsonDict) -> Any:
        return self.commands.get(self._commands_key(params), [])

    async def _delete_my_commands(self, params: JsonDict) -> Any:
        self.commands.pop(self._commands_key(params), None)
        return True
