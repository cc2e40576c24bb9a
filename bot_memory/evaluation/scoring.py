"""Scores that need no model: token F1 and exact match, abstention, evidence coverage, size.

Answers are normalized the way SQuAD does (lowercase, punctuation and English articles
removed, whitespace collapsed), punctuation meaning every Unicode punctuation mark so Chinese
text is cleaned too; Chinese, Japanese and Korean characters are one token each, other text
splits on spaces. A question may accept several answers: the best one counts.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping

_CJK = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
)
_TOKEN = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_ARTICLES = frozenset({"a", "an", "the"})

# Saying one does not know, in English or Chinese: a forgotten fact or an unanswerable question
# should get one of these.
_ABSTAIN = re.compile(
    r"\b(i\s+(do\s*n[o'’]?t|can\s*n?[o'’]?t|have\s+no)\s+(know|recall|remember|find|have|"
    r"see|tell)|not\s+sure|no\s+(information|record|memory|memories|mention|idea|details?)|"
    r"nothing\s+(about|in\s+memory|on\s+(that|this)|stored|recorded)|(is|was)\s+not\s+"
    r"(mentioned|recorded|stated|known|available)|not\s+mentioned|unknown|unanswerable|"
    r"(could|can)\s*(not|n't)\s+(find|determine|tell))\b"
    r"|不知道|不清楚|不确定|没有(找到|相关|记录|提到|提及|信息|这方面)|不记得|无法(确定|回答|得知)|未(提到|提及)",
    re.IGNORECASE,
)


def tokens(text: str) -> list[str]:
    """Normalized tokens: lowercase, no punctuation, no English articles; CJK by character."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    return [t for t in _TOKEN.findall(text) if t not in _ARTICLES]


def normalize(text: str) -> str:
    return " ".join(tokens(text))


def exact_match(prediction: str, answers: Iterable[str]) -> float:
    mine = tokens(prediction)
    return 1.0 if any(mine == tokens(a) for a in answers) else 0.0


def f1(prediction: str, answers: Iterable[str]) -> float:
    """Token F1 against the best of the accepted answers."""
    return max((_f1(tokens(prediction), tokens(a)) for a in answers), default=0.0)


def _f1(mine: list[str], gold: list[str]) -> float:
    if not mine or not gold:
        return 1.0 if mine == gold else 0.0
    common = sum((Counter(mine) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision = common / len(mine)
    recall = common / len(gold)
    return 2 * precision * recall / (precision + recall)


def contains(prediction: str, answers: Iterable[str]) -> bool:
    """Whether an accepted answer appears in the prediction, whole tokens, after normalizing."""
    hay = f" {normalize(prediction)} "
    return any(needle and f" {needle} " in hay for needle in (normalize(a) for a in answers))


def abstained(prediction: str) -> bool:
    """The answer says it does not know (or gives nothing)."""
    return not prediction.strip() or _ABSTAIN.search(prediction) is not None


def score(prediction: str, answers: Iterable[str], *, abstain: bool) -> tuple[float, float]:
    """(exact match, F1). A question whose right answer is "I don't know" scores 1 for an
    abstention and 0 for anything else."""
    if abstain:
        hit = 1.0 if abstained(prediction) else 0.0
        return hit, hit
    answers = list(answers)
    return exact_match(prediction, answers), f1(prediction, answers)


def estimate_tokens(text: str | None) -> int:
    """A tokenizer-free estimate: one token per CJK character, one per 4 other characters."""
    if not text:
        return 0
    cjk = len(_CJK_CHAR.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


def utf8_bytes(text: str | None) -> int:
    return len(text.encode("utf-8")) if text else 0


def coverage(
    evidence: Iterable[Iterable[str]],
    messages: Mapping[str, Iterable[int]],
    reached: set[int],
) -> tuple[bool, bool] | None:
    """(all, any): whether every / at least one piece of evidence is among the reached stored
    messages. `messages` maps a dataset turn ID to the stored message IDs it became; a piece of
    evidence is a group of turn IDs, met when any of them was reached. None: no evidence."""
    met = [
        any(m in reached for turn in group for m in messages.get(turn, ())) for group in evidence
    ]
    if not met:
        return None
    return all(met), any(met)


def held_by_one(
    evidence: Iterable[Iterable[str]],
    messages: Mapping[str, Iterable[int]],
    holders: Iterable[set[int]],
) -> bool | None:
    """Whether one of `holders` (each the stored messages one record holds) meets every piece
    of evidence by itself: what a reader of that one record has. None: no evidence."""
    groups = [{m for turn in group for m in messages.get(turn, ())} for group in evidence]
    if not groups:
        return None
    return any(all(group & held for group in groups) for held in holders)


def mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None
