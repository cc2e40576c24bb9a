"""Formatted text the bot sends: Telegram's HTML parse mode turned into plain text and entities,
with Telegram's errors for markup it refuses."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Final

from bot_memory_aiogram.testing.emulator.entities import utf16_len
from bot_memory_aiogram.testing.emulator.wire import EmulatorError, JsonDict, bad_request

_HTML_ENTITY_TAGS: Final = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}
_TAG_NAME_RE: Final = re.compile(r"[a-zA-Z][a-zA-Z0-9-]*")
_ATTR_RE: Final = re.compile(
    r"""\s*([a-zA-Z_][a-zA-Z0-9_-]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?"""
)
_HTML_ENTITY_RE: Final = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,6});")
_NAMED_ENTITIES: Final = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}


@dataclass
class _OpenTag:
    name: str
    start16: int
    attrs: dict[str, str]


def _parse_attrs(raw: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for match in _ATTR_RE.finditer(raw):
        name = match.group(1).lower()
        value = next((g for g in match.groups()[1:] if g is not None), "")
        attrs[name] = html.unescape(value)
    return attrs


def parse_html(text: str) -> tuple[str, list[JsonDict]]:
    """Parse Telegram-flavoured HTML into ``(plain_text, entities)``.

    Raises ``EmulatorError`` (400 "can't parse entities: ...") like Telegram does.
    """

    def fail(detail: str) -> EmulatorError:
        return bad_request(f"can't parse entities: {detail}")

    def byte_offset(index: int) -> int:
        return len(text[:index].encode("utf-8"))

    out: list[str] = []
    pos16 = 0
    stack: list[_OpenTag] = []
    entities: list[JsonDict] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "&":
            match = _HTML_ENTITY_RE.match(text, i)
            decoded: str | None = None
            if match is not None:
                ref = match.group(1)
                if ref.startswith(("#x", "#X")):
                    code = int(ref[2:], 16)
                    decoded = chr(code) if 0 < code <= 0x10FFFF else None
                elif ref.startswith("#"):
                    code = int(ref[1:])
                    decoded = chr(code) if 0 < code <= 0x10FFFF else None
                else:
                    decoded = _NAMED_ENTITIES.get(ref)
            if match is not None and decoded is not None:
                out.append(decoded)
                pos16 += utf16_len(decoded)
                i = match.end()
            else:
                out.append("&")
                pos16 += 1
                i += 1
            continue
        if ch != "<":
            out.append(ch)
            pos16 += utf16_len(ch)
            i += 1
            continue
        is_end = text.startswith("</", i)
        name_match = _TAG_NAME_RE.match(text, i + (2 if is_end else 1))
        name = name_match.group(0).lower() if name_match else ""
        if not is_end and name not in _HTML_ENTITY_TAGS:
            raise fail(f'Unsupported start tag "{name}" at byte offset {byte_offset(i)}')
        close = text.find(">", i)
        if close < 0:
            raise fail(f"Can't find end of the tag starting at byte offset {byte_offset(i)}")
        if is_end:
            if not stack:
                raise fail(f"Unexpected end tag at byte offset {byte_offset(i)}")
            top = stack.pop()
            if name != top.name:
                raise fail(
                    f'Unmatched end tag at byte offset {byte_offset(i)}, expected "</{top.name}>", '
                    f'found "</{name}>"'
                )
            entity = _entity_for_tag(top, pos16, stack, entities)
            if entity is not None:
                entities.append(entity)
            i = close + 1
            continue
        if name not in _HTML_ENTITY_TAGS or name_match is None:
            raise fail(f'Unsupported start tag "{name}" at byte offset {byte_offset(i)}')
        attrs = _parse_attrs(text[name_match.end() : close].rstrip("/"))
        if name == "span" and attrs.get("class") != "tg-spoiler":
            raise fail('Tag "span" must have class "tg-spoiler"')
        stack.append(_OpenTag(name=name, start16=pos16, attrs=attrs))
        i = close + 1
    if stack:
        raise fail(f'Can\'t find end tag corresponding to start tag "{stack[-1].name}"')
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return "".join(out), entities


def _entity_for_tag(
    tag: _OpenTag, end16: int, stack: list[_OpenTag], entities: list[JsonDict]
) -> JsonDict | None:
    length = end16 - tag.start16
    entity_type = _HTML_ENTITY_TAGS[tag.name]
    entity: JsonDict = {"type": entity_type, "offset": tag.start16, "length": length}
    if tag.name == "a":
        href = tag.attrs.get("href", "")
        if not href:
            return None
        entity["url"] = href
    elif tag.name == "tg-emoji":
        entity["custom_emoji_id"] = tag.attrs.get("emoji-id", "")
    elif tag.name == "blockquote" and "expandable" in tag.attrs:
        entity["type"] = "expandable_blockquote"
    elif tag.name == "code" and stack and stack[-1].name == "pre":
        language = tag.attrs.get("class", "")
        if language.startswith("language-"):
            stack[-1].attrs["language"] = language.removeprefix("language-")
            return None
    elif tag.name == "pre" and tag.attrs.get("language"):
        entity["language"] = tag.attrs["language"]
    if length <= 0:
        return None
    return entity


def format_text(text: str, parse_mode: Any, entities: Any) -> tuple[str, list[JsonDict]]:
    """A sent text as Telegram stores it: HTML parsed into entities, or the entities given."""
    if isinstance(parse_mode, str) and parse_mode.lower() == "html":
        return parse_html(text)
    if isinstance(entities, list):
        return text, [e for e in entities if isinstance(e, dict)]
    return text, []
