"""Reply language per message, and both locales carrying every string."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot_memory_aiogram.i18n import pick_language, t

LOCALES = Path(__file__).resolve().parents[2] / "locales"


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
        ("ru", None, "ru"),
        ("ru-RU", None, "ru"),
        ("uk", None, "uk"),
        ("uk-UA", None, "uk"),
        ("be", None, "ru"),  # Belarusian and Kazakh users read Russian here
        ("kk", None, "ru"),
        ("de", "uk", "uk"),
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


def test_every_string_exists_in_every_language() -> None:
    assert keys("en")
    for language in ("zh", "ru", "uk"):
        assert keys(language) == keys("en"), language


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


@pytest.mark.parametrize(
    ("count", "ru", "uk"),
    [
        (1, "1 запись", "1 запис"),
        (2, "2 записи", "2 записи"),
        (4, "4 записи", "4 записи"),
        (5, "5 записей", "5 записів"),
        (11, "11 записей", "11 записів"),
        (12, "12 записей", "12 записів"),
        (21, "21 запись", "21 запис"),
        (22, "22 записи", "22 записи"),
        (25, "25 записей", "25 записів"),
        (111, "111 записей", "111 записів"),
        (0, "0 записей", "0 записів"),
    ],
)
def test_russian_and_ukrainian_counts_follow_cldr_plurals(count: int, ru: str, uk: str) -> None:
    status = {"pending": "no", "ran": "no", "when": ""}
    assert t("ru", "screen-status", count=count, **status).startswith(ru + " ·")
    assert t("uk", "screen-status", count=count, **status).startswith(uk + " ·")


def test_russian_and_ukrainian_forget_replies_agree_with_the_count() -> None:
    assert t("ru", "memory-forgotten", count=1) == "Готово, из памяти удалена 1 запись."
    assert t("ru", "memory-forgotten", count=3) == "Готово, из памяти удалены 3 записи."
    assert t("ru", "memory-forgotten", count=21) == "Готово, из памяти удалена 21 запись."
    assert t("ru", "memory-forgotten", count=0) == "Готово, я этого не запомню."
    assert t("uk", "memory-forgotten", count=5) == "Готово, з пам’яті видалено 5 записів."
    assert t("uk", "memory-forgotten", count=0) == "Готово, я цього не запам’ятаю."


def test_a_hosts_own_belarusian_wins_and_falls_back_to_russian(tmp_path: Path) -> None:
    from bot_memory_aiogram.i18n import Texts, normalize

    (tmp_path / "be").mkdir()
    (tmp_path / "be" / "memory.ftl").write_text("memory-remembered = Добра, запомню.\n", "utf-8")
    texts = Texts([tmp_path])
    assert normalize("be", texts.languages) == "be"
    assert texts("be", "memory-remembered") == "Добра, запомню."
    assert texts("be", "memory-enabled") == t("ru", "memory-enabled")  # missing: Russian
