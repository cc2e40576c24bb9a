"""Command menus: /memory, /remember, /forget, /memory_on, /memory_off in private and group
chats, in the default language, Chinese, Russian and Ukrainian. Merged into whatever commands the
bot already has, never replacing them; BOT_MEMORY_SET_COMMANDS=false leaves menus to the host
entirely.

Telegram shows a user the list for their language when there is one, else the default list. So a
language list we create starts from the host's default list: its users keep the host's commands."""

from __future__ import annotations

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
)

from bot_memory.logs import get_logger
from bot_memory_aiogram.i18n import Texts

log = get_logger(__name__)

COMMANDS = {
    "memory": "command-memory",
    "remember": "command-remember",
    "forget": "command-forget",
    "memory_on": "command-memory-on",
    "memory_off": "command-memory-off",
}
SCOPES = (BotCommandScopeAllPrivateChats(), BotCommandScopeAllGroupChats())
# "" is Telegram's default for every language without its own list.
LANGUAGES = ("", "zh", "ru", "uk")


async def set_commands(bot: Bot, texts: Texts) -> int:
    """Add memory's commands to each menu that lacks them; returns how many menus changed."""
    changed = 0
    for scope in SCOPES:
        hosts: list[BotCommand] | None = None  # the host's default list, before ours
        for code in LANGUAGES:
            language = code or "en"
            try:
                current = await bot.get_my_commands(scope=scope, language_code=code or None)
                if not code:
                    hosts = [c for c in current if c.command not in COMMANDS]
                elif not current and hosts:
                    current = hosts  # a new language list keeps the host's commands
                names = {c.command for c in current}
                ours = [
                    BotCommand(command=name, description=texts(language, key))
                    for name, key in COMMANDS.items()
                    if name not in names
                ]
                if not ours:
                    continue
                await bot.set_my_commands(
                    [*current, *ours], scope=scope, language_code=code or None
                )
                changed += 1
            except Exception as exc:  # any answer at all: memory never stops the host's bot
                log.warning(
                    "memory.commands_not_set",
                    scope=scope.type,
                    language=language,
                    error=str(exc)[:200]
                    if isinstance(exc, TelegramAPIError)
                    else type(exc).__name__,
                )
    return changed
