"""Cyrillic text for Russian and Ukrainian: Latin look-alikes, folding, and word stems.

Two users of it: the request recognizer (``bot_memory.intents``), which needs a strictly
one-to-one mapping so that indices found in the normalised copy are valid in the original,
and the literal matching of a forget subject against stored records
(``bot_memory.control.rules``), which needs inflected forms ("номера", "телефону") to
meet their stem ("номер", "телефон").

Stemming is deliberately shallow: only a known inflectional ending is taken off, and a stored
word matches only as that stem plus a known ending. "кот" meets "кота" and "котом", never
"котёл"; forgetting deletes, so a miss is better than a wrong match. A word with no ending
whose last vowel comes and goes or changes with the case also meets the forms built on its
other stem: "пес" meets "пса", "день" "дня", "кіт" "кота" (`other_stems`), never a pronoun or
preposition that looks like one ("кто" is not a form of "кот").
"""

from __future__ import annotations

import re

from bot_memory.terms import STOPWORDS

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


def stems(word: str) -> list[str]:
    """The word (folded) less each known ending it may end in, longest first, keeping at
    least MIN_STEM letters ("музей": "муз" and "музе", which "музея" is built on)."""
    found = [
        word[:-size]
        for size in range(min(_MAX_ENDING, len(word) - MIN_STEM), 0, -1)
        if word[-size:] in _ENDINGS
    ]
    return found or [word]


def stem_matches(stem_: str, word: str) -> bool:
    """Whether a folded word is this stem plus nothing or a known ending."""
    if not word.startswith(stem_):
        return False
    ending = word[len(stem_) :]
    return not ending or ending in _NOMINAL or (len(stem_) > MIN_STEM and ending in _VERBAL)


# Vowels and consonants (folded: ё is е). A stem ending in a consonant, a vowel of these and a
# consonant may lose or change that vowel once an ending follows.
_VOWELS = "аеиоуыэюяіїє"
_CONSONANT = "[бвгджзйклмнпрстфхцчшщґ]"
_FLEETING = re.compile(rf"(.*?)([еоі]|ї)({_CONSONANT})(ь?)")
_SIBILANTS = "жчшщц"
# Endings after a soft stem ("дня", "днем") and after a hard one ("пса", "псом"); after a
# sibilant either. "о" belongs to the hard ones: a zero ending is also a plural's ("окон",
# "окно").
_SOFT_ENDINGS = frozenset(e for e in _NOMINAL if e[0] in "яюеиіїєь")
_HARD_ENDINGS = frozenset(e for e in _NOMINAL if e[0] not in "яюьєї")
# Words that only look like a case form (кто is not one of кот, все not one of вес, вона not
# one of він): pronouns, prepositions and the like, never what a forget names.
_FUNCTION_WORDS = STOPWORDS | frozenset(
    "весь всё всей всеми ним них ней ній між ніж їм їх твій твоя свій".split()
)


def other_stems(word: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stems a word's other forms are built on when it has no ending and its last vowel
    is one that comes and goes or changes: the fleeting е and о of Russian and Ukrainian
    ("пес"/"пса", "день"/"дня", "палец"/"пальца", "боец"/"бойца", "улей"/"улья",
    "окон"/"окна"), and the Ukrainian і of a closed syllable that is о or е in an open one
    ("кіт"/"кота", "Львів"/"Львова", "піч"/"печі", "лід"/"льоду", "Київ"/"Києва"). With the
    endings they take: a soft stem's (я, ю, е, и, ...) or a hard one's (а, у, о, ом, ...)."""
    if len(word) < 3 or word[-1] in _VOWELS or word in _FUNCTION_WORDS:
        return frozenset(), frozenset()
    m = _FLEETING.fullmatch(word)
    if m is None or not m.group(1):
        return frozenset(), frozenset()
    head, vowel, last, soft = m.groups()
    found: set[str] = set()
    if last == "й":  # улей -> улья, соловей -> соловья
        if vowel != "е" or head[-1] in _VOWELS:
            return frozenset(), frozenset()
        return frozenset({head + "ь"}), _SOFT_ENDINGS
    if vowel in "ео":
        if head[-1] in _VOWELS:
            found.add(head + "й" + last)  # боец -> бойц
        else:
            found |= {head + last, head + "ь" + last}  # пес -> пс, палец -> пальц
    elif vowel == "ї":
        found.add(head + "є" + last)  # Київ -> Києв
    elif head[-1] not in _VOWELS:
        found |= {head + "о" + last, head + "ьо" + last}  # кіт -> кот, лід -> льод
        if soft or last in _SIBILANTS:
            found.add(head + "е" + last)  # піч -> печ, осінь -> осен
    if soft:
        endings = _SOFT_ENDINGS
    elif last in _SIBILANTS:
        endings = _SOFT_ENDINGS | _HARD_ENDINGS
    else:
        endings = _HARD_ENDINGS
    return frozenset(found), endings


def _built_on(bases: frozenset[str], endings: frozenset[str], other: str) -> bool:
    """Whether `other` is one of these stems (other_stems) and an ending."""
    return any(other.startswith(b) and other[len(b) :] in endings for b in bases)


def forms_of_one_word(a: str, b: str) -> bool:
    """Whether two folded words can be forms of one word: the same, or a stem of `a` and an
    ending, or one built on a stem of the other that drops or changes a vowel. Shallow, as
    `stems` is: a longer word that merely starts the same is not one ("кот", "котлета")."""
    return names_word(frozenset({b}), a)


def names_word(hay_words: frozenset[str], word: str) -> bool:
    """Whether one of these folded words is `word` or another form of it (forms_of_one_word)."""
    if word in hay_words:
        return True
    bases = stems(word)
    changing = word not in _FUNCTION_WORDS
    mine, my_endings = other_stems(word) if changing else (frozenset(), frozenset())
    first = word[:1]
    for w in hay_words:
        if not w.startswith(first):  # every form keeps the first letter
            continue
        if any(stem_matches(s, w) for s in bases):
            return True
        if not changing or w in _FUNCTION_WORDS:
            continue
        if mine and _built_on(mine, my_endings, w):
            return True
        if w[-1:] not in _VOWELS:
            theirs, endings = other_stems(w)
            if theirs and _built_on(theirs, endings, word):
                return True
    return False
