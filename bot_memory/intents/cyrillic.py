"""Cyrillic text for Russian and Ukrainian: Latin look-alikes, folding, and word stems.

Two users of it: the request recognizer (``bot_memory.intents``), which needs a strictly
one-to-one mapping so that indices found in the normalised copy are valid in the original,
and the literal matching of a forget subject against stored records
(``bot_memory.control.rules``), which needs inflected forms ("номера", "телефону") to
meet their stem ("номер", "телефон").

Stemming is deliberately shallow: only a known inflectional ending is taken off, and a stored
word matches only as that stem plus a known ending. "кот" meets "кота" and "котом", never
"котёл"; forgetting deletes, so a miss is better than a wrong match.
"""

from __future__ import annotations

import re

# Latin letters that look like Cyrillic ones, as typed by mistake inside Cyrillic words (a
# Latin "i" for the Ukrainian "і" above all). Upper case too: casefolding comes later.
_LOOKALIKES = {
    "a": "а",
    "A": "А",
    "B": "В",
    "c": "с",
    "C": "С",
    "e": "е",
    "E": "Е",
    "H": "Н",
    "i": "і",
    "I": "І",
    "ï": "ї",
    "Ï": "Ї",
    "k": "к",
    "K": "К",
    "M": "М",
    "o": "о",
    "O": "О",
    "p": "р",
    "P": "Р",
    "T": "Т",
    "x": "х",
    "X": "Х",
    "y": "у",
    "Y": "У",
}
_LOOKALIKE_TABLE = str.maketrans(_LOOKALIKES)
# ё is written as е by most people; every apostrophe Ukrainian keyboards produce becomes '.
_FOLD: tuple[tuple[str, str], ...] = (
    ("ё", "е"),
    ("Ё", "Е"),
    ("\u2019", "'"),
    ("\u02bc", "'"),
    ("\u2018", "'"),
    ("`", "'"),
    ("\u00b4", "'"),
)

CYRILLIC = re.compile(r"[\u0400-\u04ff]")
# A Latin letter right next to a Cyrillic one: the sign of a mixed word.
_MIXED = re.compile(r"[\u0400-\u04ff]'?[A-Za-zïÏ]|[A-Za-zïÏ]'?[\u0400-\u04ff]")
_LATIN = re.compile(r"[A-Za-zïÏ]")
_LETTERS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")  # a word, Ukrainian apostrophes inside


def _fix_word(m: re.Match[str]) -> str:
    word = m.group()
    return word.translate(_LOOKALIKE_TABLE) if CYRILLIC.search(word) else word


def unmix(text: str) -> str:
    """One-to-one: ё as е, one apostrophe, and Latin look-alikes inside Cyrillic words as the
    Cyrillic letters they stand for ("зaпoмни" with Latin a and o is "запомни")."""
    for ch, to in _FOLD:  # str.replace is far cheaper than translate() on non-ASCII text
        if ch in text:
            text = text.replace(ch, to)
    if _LATIN.search(text) is None or _MIXED.search(text) is None:  # mixed words are rare
        return text
    return _LETTERS.sub(_fix_word, text)


def fold(text: str) -> str:
    """For matching, not for slicing: unmixed and casefolded."""
    return unmix(text).casefold()


# --- stems --------------------------------------------------------------------------------------

# Inflectional endings of Russian and Ukrainian nouns and adjectives, and the present-tense
# endings of verbs (after ё -> е and casefolding). The soft sign and й count as endings so that
# "пароль" meets "пароля" and "музей" meets "музея". Past-tense endings are left out: "ел" would
# make "кот" meet "котел".
_NOMINAL = frozenset(
    (
        "а я о е и ы у ю ь й і ї є "
        "ой ей ом ем ам ям ах ях ов ев ий ый ая яя ое ее ые ие ую юю ых их ым им ою ею ия ии ию "
        "ья ье ьи ью ів їв ім іх ої ій єю "
        "ами ями ого его ому ему ыми ими ові еві єві ього ьому іми"
    ).split()
)
# Verb endings only after a stem of four letters or more: "сов" must not meet "совет".
_VERBAL = frozenset("ут ют ат ят ет ит ешь ишь ете ите ем им уть ють ить".split())
_ENDINGS = _NOMINAL | _VERBAL
_MAX_ENDING = max(map(len, _ENDINGS))
MIN_STEM = 3
WORD = re.compile(r"[\u0400-\u04ff][\u0400-\u04ff']*")


def stem(word: str) -> str:
    """The word (folded) without its longest known ending, keeping at least MIN_STEM letters."""
    for size in range(min(_MAX_ENDING, len(word) - MIN_STEM), 0, -1):
        if word[-size:] in _ENDINGS:
            return word[:-size]
    return word


def stem_matches(stem_: str, word: str) -> bool:
    """Whether a folded word is this stem plus nothing or a known ending."""
    if not word.startswith(stem_):
        return False
    ending = word[len(stem_) :]
    return not ending or ending in _NOMINAL or (len(stem_) > MIN_STEM and ending in _VERBAL)


def names_word(hay_words: frozenset[str], word: str) -> bool:
    """Whether one of these folded words is `word` or an inflected form of its stem."""
    if word in hay_words:
        return True
    s = stem(word)
    return any(stem_matches(s, w) for w in hay_words)
