"""Text as PostgreSQL can keep it.

Telegram delivers any string a client sent, and some cannot be stored: a NUL character (the
`text` type refuses it) and a lone half of a UTF-16 surrogate pair (not valid UTF-8). Such a
message used to fail to record, and went unanswered. It is cleaned once, before anything is
stored or hashed: NUL goes, a lone surrogate becomes U+FFFD, the replacement character.
"""

from __future__ import annotations

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` without what PostgreSQL refuses (unchanged, and not copied, when it is fine)."""
    if "\x00" in text:
        text = text.replace("\x00", "")
    if _LONE_SURROGATE.search(text):
        text = _LONE_SURROGATE.sub("\ufffd", text)
    return text
