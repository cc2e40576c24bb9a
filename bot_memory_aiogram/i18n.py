"""Fluent strings per language, chosen per reply (no global i18n middleware: the host has one)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from fluent.runtime import FluentBundle, FluentResource

LANGUAGES = ("en", "zh")
DEFAULT = "en"


def pick_language(language_code: str | None, fallback: str | None = None) -> str:
    """zh, zh-hans, zh-hant, zh-CN, zh_TW ... -> zh; anything unknown -> en.

    Normalised here because Babel maps zh-hans / zh-hant to no locale when the folder is `zh`.
    """
    for code in (language_code, fallback):
        if code:
            base = code.replace("_", "-").split("-", 1)[0].lower()
            if base in LANGUAGES:
                return base
    return DEFAULT


def _locales_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "locales", here.parent / "locales"):  # wheel, then source tree
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("bot-memory locales folder not found")


@cache
def _bundle(language: str) -> FluentBundle:
    bundle = FluentBundle([language], use_isolating=False)
    for path in sorted((_locales_dir() / language).glob("*.ftl")):
        bundle.add_resource(FluentResource(path.read_text(encoding="utf-8")))
    return bundle


def t(language: str, key: str, **args: Any) -> str:
    bundle = _bundle(language if language in LANGUAGES else DEFAULT)
    message = bundle.get_message(key) if bundle.has_message(key) else None
    if message is None or message.value is None:
        if language != DEFAULT:
            return t(DEFAULT, key, **args)
        return key
    text, _errors = bundle.format_pattern(message.value, args)
    return str(text)
