"""Fluent strings per language, chosen per reply (no global i18n middleware: the host has one).

A host can change the bot's voice or add languages: `setup(dp, memory, locales=[path])` adds
folders laid out like ours (`<path>/<language>/*.ftl`); their messages override ours with the
same key, and a folder for a new language adds it. `setup(..., language=resolver)` decides the
reply language from the message (default: the user's Telegram language_code).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

from aiogram.types import Message, User
from fluent.runtime import FluentBundle, FluentResource

LANGUAGES = ("en", "zh", "ru", "uk")
DEFAULT = "en"
# Languages whose speakers mostly read one of ours, used when the host has no folder for them
# (a host's `locales/be/` or `language=` resolver says otherwise).
FALLBACKS = {"be": "ru", "kk": "ru"}

LanguageResolver = Callable[[Message], str | None]


def normalize(code: str | None, languages: Iterable[str] = LANGUAGES) -> str | None:
    """zh, zh-hans, zh-hant, zh-CN, zh_TW ... -> zh; be, kk -> ru unless `languages` has them;
    None when not one of `languages`.

    Normalised here because Babel maps zh-hans / zh-hant to no locale when the folder is `zh`.
    """
    if not code:
        return None
    known = tuple(languages)
    base = code.replace("_", "-").split("-", 1)[0].lower()
    if base in known:
        return base
    fallback = FALLBACKS.get(base)
    return fallback if fallback in known else None


def pick_language(language_code: str | None, fallback: str | None = None) -> str:
    return normalize(language_code) or normalize(fallback) or DEFAULT


def _locales_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here / "locales", here.parent / "locales"):  # wheel, then source tree
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("bot-memory locales folder not found")


class Texts:
    """The replies, in our languages and the host's."""

    def __init__(
        self, extra: Iterable[Path | str] = (), resolver: LanguageResolver | None = None
    ) -> None:
        self.folders = [_locales_dir(), *(Path(p) for p in extra)]
        self.resolver = resolver
        found = {d.name for folder in self.folders if folder.is_dir() for d in folder.iterdir()}
        self.languages = tuple(sorted(found | set(LANGUAGES)))
        self._bundles: dict[str, FluentBundle] = {}

    def language(self, message: Message, fallback: str | None = None) -> str:
        if self.resolver is not None:
            chosen = normalize(self.resolver(message), self.languages)
            if chosen:
                return chosen
        return self.for_user(message.from_user, fallback)

    def for_user(self, user: User | None, fallback: str | None = None) -> str:
        """From the user's Telegram language_code (a button press has no message of theirs)."""
        code = user.language_code if user else None
        return normalize(code, self.languages) or normalize(fallback, self.languages) or DEFAULT

    def _bundle(self, language: str) -> FluentBundle:
        if language not in self._bundles:
            bundle = FluentBundle([language], use_isolating=False)
            for folder in self.folders:  # later folders override earlier ones
                for path in sorted((folder / language).glob("*.ftl")):
                    bundle.add_resource(
                        FluentResource(path.read_text(encoding="utf-8")), allow_overrides=True
                    )
            self._bundles[language] = bundle
        return self._bundles[language]

    def __call__(self, language: str, key: str, **args: Any) -> str:
        bundle = self._bundle(language if language in self.languages else DEFAULT)
        message = bundle.get_message(key) if bundle.has_message(key) else None
        if message is None or message.value is None:
            if language != DEFAULT:  # a host's partial `be` falls back to ru, then en
                return self(FALLBACKS.get(language, DEFAULT), key, **args)
            return key
        text, _errors = bundle.format_pattern(message.value, args)
        return str(text)


@cache
def _default() -> Texts:
    return Texts()


def t(language: str, key: str, **args: Any) -> str:
    """A reply in our own strings (no host additions)."""
    return _default()(language, key, **args)
