"""How stored or user text enters a model request: as JSON that cannot open or close a frame.

JSON escapes quotes and line breaks but not markup: `json.dumps("</memory_context>")` still
holds the tag, so a note could end the frame it is recalled in and have what follows read as
instructions. Here <, > and & are also written as \\u003c, \\u003e and \\u0026: the same string
to any JSON reader, but nothing a user said appears as markup or starts a line of its own.
"""

from __future__ import annotations

import json

_MARKUP = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def data_json(value: object) -> str:
    """`value` as compact JSON whose text holds no <, > or & (they appear only inside strings,
    so escaping them there changes nothing a parser reads)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).translate(
        _MARKUP
    )
