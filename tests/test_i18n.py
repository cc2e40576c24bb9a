"""Reply language per message, and both locales carrying every string."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot_memory_aiogram.i18n import pick_language, t

LOCALES = Path(__file__).resolve().parent.parent / "locales"


@pytest.mark.parametrize(
    ("code", "fallback", "expected"),
    [
        ("zh", None, "zh"),
        ("zh-hans", None, "zh"),
        ("zh-hant", None, "zh"),
        ("zh-CN", None, "zh"),
        ("zh_TW", None, "zh"),
        ("en", None, "en"),
        ("en-GB", None, "en"),
        ("ru", None, "en"),
        (None, None, "en"),
        (None, "zh", "zh"),
        ("", "zh", "zh"),
        ("fr", "zh", "zh"),
    ],
)
def test_pick_language(code: str | None, fallback: str | None, expected: str) -> None:
    assert pick_language(code, fallback) == expected


def keys(lang: str) -> set[str]:
    text = "".join(p.read_text(encoding="utf-8") for p in (LOCALES / lang).glob("*.ftl"))
    return set(re.findall(r"^([a-z][a-z0-9-]*) =", text, re.M))


def test_every_string_exists_in_both_languages() -> None:
    assert keys("en") == keys("zh") and keys("en")


def test_plural_and_fallback() -> None:
    assert t("en", "memory-forgotten", count=1) == "Done: I forgot one memory."
    assert t("en", "memory-forgotten", count=3) == "Done: I forgot 3 memories."
    assert t("zh", "memory-forgotten", count=3) == "好的，已忘记 3 条记忆。"
    never = {"count": 0, "pending": "no", "ran": "no", "when": ""}
    assert (
        t("en", "screen-status", **never)
        == "0 memories · the index is up to date · not run here yet"
    )
    assert t("zh", "screen-status", **never).endswith("尚未运行")
    assert t("de", "memory-enabled") == t("en", "memory-enabled")
