"""Message entities as Telegram computes them: UTF-16 offsets, bot commands and @mentions found
in what a user typed."""

from __future__ import annotations

import re
from typing import Final

from bot_memory_aiogram.testing.emulator.wire import JsonDict


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, the unit of Telegram entity offsets."""
    return len(text.encode("utf-16-le")) // 2


def mention_entity(text: str, username: str) -> JsonDict:
    """A ``mention`` entity for the first ``@username`` in ``text`` (UTF-16 offsets).

    ``username`` may be given with or without the leading ``@``.  Raises ``ValueError`` if
    the mention does not occur in ``text``.
    """
    mention = username if username.startswith("@") else f"@{username}"
    index = text.find(mention)
    if index < 0:
        msg = f"{mention!r} does not occur in {text!r}"
        raise ValueError(msg)
    return {"type": "mention", "offset": utf16_len(text[:index]), "length": utf16_len(mention)}


_COMMAND_RE: Final = re.compile(r"(?<![\w/@])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?")
_MENTION_RE: Final = re.compile(r"(?<![\w@/])@[A-Za-z][A-Za-z0-9_]{3,31}(?![\w@])")


def command_entity(text: str) -> JsonDict:
    """A ``bot_command`` entity for the command (``/cmd`` or ``/cmd@bot``) starting ``text``.

    Raises ``ValueError`` when ``text`` does not start with a command.
    """
    match = _COMMAND_RE.match(text)
    if match is None:
        msg = f"{text!r} does not start with a bot command"
        raise ValueError(msg)
    return {"type": "bot_command", "offset": 0, "length": utf16_len(match.group(0))}


def auto_entities(text: str) -> list[JsonDict]:
    """Entities Telegram detects by itself in user text: bot commands and @mentions."""
    entities: list[JsonDict] = []
    spans: list[tuple[int, int]] = []
    for match in _COMMAND_RE.finditer(text):
        spans.append(match.span())
        entities.append(
            {
                "type": "bot_command",
                "offset": utf16_len(text[: match.start()]),
                "length": utf16_len(match.group(0)),
            }
        )
    for match in _MENTION_RE.finditer(text):
        start, end = match.span()
        if any(s <= start < e for s, e in spans):
            continue
        entities.append(
            {
                "type": "mention",
                "offset": utf16_len(text[:start]),
                "length": utf16_len(text[start:end]),
            }
        )
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return entities
