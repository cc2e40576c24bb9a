"""Literal search that still finds what was said: words, not whole strings.

Both sides are folded the same way (NFKC, so full-width letters are plain ones, then casefolded;
the three apostrophes people type are one), then cut into terms:

- words of alphabetic scripts (Latin, Cyrillic, Greek, ...), a possessive "'s" dropped; a query
  word matches a stored word it begins (whole word or word prefix: "boat" finds "boats",
  "boat's"; "лодк" finds "лодка", "лодку");
- Chinese and Japanese, which have no spaces, by character bigrams (and single characters):
  绿茶 finds 我喜欢喝绿茶; a longer query is each of its bigrams, and each Han character that
  only grammar surrounds is a term of its own (我的猫 is about 猫, 喝什么 about 喝).

What is stored is a PostgreSQL `tsvector` built here, with positions (a quoted query is one
phrase: its terms in that order, side by side) and weights (a title's words are weight A). The
server only compares terms, so every language is cut by the same code; the built-in text search
configurations would keep a Chinese sentence as one word.

Ranking (SQL, retrieval.find): every query word must match when some record holds them all, else
records holding any are returned; more and rarer words rank higher (a word found in every
record tells nothing), a word in the title above one in the summary, then the newest.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

# Scripts written without spaces: Han, kana, and their extensions.
_CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+(?:'[^\W_{_CJK}]+)*)")
_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "‘": "'", "`": "'"})
_PHRASE = re.compile(r'"([^"]+)"|“([^”]+)”|«([^»]+)»|「([^」]+)」')

MAX_LEXEME_CHARS = 64  # a longer run (a hash, a base64 blob) is cut: nobody types it whole
MAX_POSITION = 16_383  # PostgreSQL's largest tsvector position
MAX_POSITIONS_PER_TERM = 255
MAX_QUERY_TERMS = 16

# Words that say nothing about which memory is meant ("what is the name of my boat" is about
# "name" and "boat"). Dropped from a query unless nothing else is left.
STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be been before being below
    between both but by can could did do does doing don't down during each few for from had has
    have having he her here hers herself him himself his how i i'm if in into is it it's its
    itself just let's me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own please same she should so some such than that that's the their
    theirs them themselves then there these they this those through to too under until up very
    was we were what what's when where which while who whom why will with would you your yours
    yourself yourselves tell know remember remind said say told ever
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее
    мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть
    был него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть
    надо ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда
    кто этот того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас
    были куда зачем всех никогда можно при наконец два об другой хоть после над больше тот
    через эти нас про всего них какая много разве три эту моя впрочем хорошо свою этой перед
    иногда лучше чуть том нельзя такой им более всегда конечно всю между моё мою мои моего
    моей моим моих помнишь скажи напомни
    і й та що він на я з як а то все вона так його але ти до у ви за би по тільки її мені було
    від мене ще ні о із йому тепер коли навіть чи вже або бути був нього вас там потім себе
    нічого їй можуть вони тут де є треба ній для ми тебе їх чим була сам без раз теж собі під
    буде тоді хто цей того тому цього який зовсім ним тут цьому майже мій тим щоб неї зараз
    куди навіщо всіх ніколи можна при два про інший хоч після над більше той через ці нас
    всього них яка багато три цю моя моє мою мої мого моєї моїм моїх пам'ятаєш скажи нагадай
    """.split()
)
_CJK_STOP = frozenset("的 了 是 我 你 吗 呢 吧 啊 么 什 在 和 也 就 都 这 那 有".split())
# Pairs that ask rather than name (the English "know", "remember", "tell" among STOPWORDS).
_CJK_STOP_PAIRS = frozenset(
    "知道 记得 記得 告诉 告訴 怎么 怎麼 为什 為什 哪里 哪裡 哪儿 多少 没有 沒有".split()
)
# Han characters never a query term alone: grammar, question words and the letters of the
# pairs above. Any other character outside a content pair is a term of its own ("我的猫" is
# about 猫).
_HAN_GRAMMAR = _CJK_STOP | frozenset(
    "他 她 它 们 們 谁 誰 哪 怎 个 個 过 過 着 著 把 被 给 給 很 还 還 又 嗎 麼 呀 哦 嗯 喔 啦 嘛 "
    "知 道 记 記 得 告 诉 訴 为 為 里 裡 儿 兒 多 少 没 沒 这 這 那 么 麽 吗".split()
)
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")


# What people say that names nothing to look up: a message of these alone costs no search.
SMALL_TALK = frozenset(
    """
    hi hello hey hiya yo thanks thank thx ty ok okay k yes yeah yep no nope sure cool nice great
    lol haha good morning night evening bye goodbye cheers welcome please sorry wow hmm oh ah
    привет здравствуй здравствуйте спасибо пока да нет ок хорошо ладно круто класс ага угу
    привіт дякую так ні добре гаразд
    """.split()
)
_SMALL_TALK_CJK = frozenset(
    "你好 您好 谢谢 謝謝 好的 好 嗯 哈哈 哈哈哈 再见 再見 早 早安 晚安 是的 对 對 不 行".split()
)


def fold(text: str) -> str:
    """Case- and width-folded: what both sides of a comparison are made of."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)


class _Token(NamedTuple):  # a tuple: built for every word of every recorded message
    kind: str  # "word" or "cjk"
    text: str


def _tokens(text: str) -> list[_Token]:
    found: list[_Token] = []
    for cjk, word in _TOKEN.findall(fold(text)):
        if cjk:
            found.append(_Token("cjk", cjk))
        else:
            if word.endswith("'s"):
                word = word[:-2]
            found.append(_Token("word", word[:MAX_LEXEME_CHARS]))
    return found


def terms(text: str) -> list[tuple[str, int]]:
    """(term, position) pairs of a text, positions from 1: each word, and for each run of
    Chinese or Japanese characters every character and every bigram, a bigram at the position
    of its first character (so consecutive bigrams are a phrase)."""
    out: list[tuple[str, int]] = []
    position = 1
    for token in _tokens(text):
        if token.kind == "word":
            out.append((token.text, position))
            position += 1
            continue
        run = token.text
        for i, char in enumerate(run):
            out.append((char, position + i))
            if i + 1 < len(run):
                out.append((run[i : i + 2], position + i))
        position += len(run)
    return out


def tsvector_literal(weighted: Iterable[tuple[str, str]]) -> str:
    """A tsvector's text form from (text, weight) parts, e.g. [(title, "A"), (summary, "D")]:
    positions continue across parts, so a phrase never spans two of them by accident."""
    positions: dict[str, list[str]] = {}
    offset = 0
    for text, weight in weighted:
        found = terms(text)
        for term, position in found:
            at = min(offset + position, MAX_POSITION)
            mark = "" if weight == "D" else weight
            slots = positions.setdefault(term, [])
            if len(slots) < MAX_POSITIONS_PER_TERM:
                slots.append(f"{at}{mark}")
        if found:
            offset = min(offset + max(p for _, p in found) + 1, MAX_POSITION)
    return " ".join(f"{quote_term(term)}:{','.join(at)}" for term, at in sorted(positions.items()))


def record_vector(title: str, summary: str) -> str:
    return tsvector_literal([(title, "A"), (summary, "D")])


def text_vector(text: str) -> str:
    return tsvector_literal([(text, "D")])


def quote_term(lexeme: str) -> str:
    """A term as a tsvector or tsquery lexeme."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


@dataclass(frozen=True)
class Query:
    """A parsed search: one tsquery per term (each must match for a full match), the same
    restricted to titles, and one that matches any term (the candidates)."""

    terms: list[str]
    in_title: list[str]

    @property
    def any(self) -> str:
        return " | ".join(f"({t})" for t in self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms)


def parse_query(text: str | None) -> Query:
    """Terms of a query: each word (a prefix), each CJK bigram (or a single character), and
    each quoted phrase as one term. Words that say nothing are dropped unless nothing else
    is left."""
    if not text or not text.strip():
        return Query([], [])
    phrases = []
    rest = text
    for m in _PHRASE.finditer(text):
        inner = next(g for g in m.groups() if g)
        phrases.append(inner)
        rest = rest.replace(m.group(0), " ")
    found: list[tuple[bool, str, str]] = []  # (says nothing?, any, title)
    for phrase in phrases:
        parts = _phrase_parts(phrase)
        if parts:
            found.append((False, " <-> ".join(parts), " <-> ".join(p + ":A" for p in parts)))
    for token in _tokens(rest):
        if token.kind == "word":
            stop = token.text in STOPWORDS or (len(token.text) == 1 and not token.text.isdigit())
            stem = quote_term(_stem(token.text))
            found.append((stop, f"{stem}:*", f"{stem}:*A"))
            continue
        run = token.text
        if len(run) == 1:
            found.append((run in _CJK_STOP, quote_term(run), quote_term(run) + ":A"))
            continue
        found.extend(_cjk_query_terms(run))
    if any(not stop for stop, _, _ in found):
        found = [f for f in found if not f[0]]
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    for _, any_term, title_term in found:
        if any_term not in seen:
            seen.add(any_term)
            kept.append((any_term, title_term))
    kept = kept[:MAX_QUERY_TERMS]
    return Query([a for a, _ in kept], [t for _, t in kept])


def worth_searching(text: str | None) -> bool:
    """Whether a message names anything to look up: one cheap pass, no database. A greeting,
    thanks, a yes or an emoji does not; a question about anything does."""
    if not text:
        return False
    for token in _tokens(text):
        if token.kind == "word":
            if (
                token.text not in STOPWORDS
                and token.text not in SMALL_TALK
                and (len(token.text) > 1 or token.text.isdigit())
            ):
                return True
        elif token.text not in _SMALL_TALK_CJK and any(c not in _HAN_GRAMMAR for c in token.text):
            return True
    return False


def _cjk_query_terms(run: str) -> list[tuple[bool, str, str]]:
    """A Chinese or Japanese run of a query, in order: each bigram (one holding a grammar
    character, or asking rather than naming, says nothing), and each Han character that no
    content bigram holds and that is not grammar, as a term of its own."""
    out: list[tuple[bool, str, str]] = []
    covered: set[int] = set()
    pairs = [run[i : i + 2] for i in range(len(run) - 1)]
    for i, pair in enumerate(pairs):
        stop = pair in _CJK_STOP_PAIRS or any(c in _CJK_STOP for c in pair)
        if not stop:
            covered |= {i, i + 1}
    for i, char in enumerate(run):
        if i < len(pairs):
            pair = pairs[i]
            stop = pair in _CJK_STOP_PAIRS or any(c in _CJK_STOP for c in pair)
            out.append((stop, quote_term(pair), quote_term(pair) + ":A"))
        if i not in covered and char not in _HAN_GRAMMAR and _HAN.match(char):
            out.append((False, quote_term(char), quote_term(char) + ":A"))
    return out


_CYRILLIC_ENDING = re.compile(r"[аеёиіїйоуыьэюяє]{1,2}$")


def _stem(word: str) -> str:
    """What a query word must begin with: the word itself, less an inflection its other forms
    do not share (a query "boats" finds "boat", "телефона" finds "телефон" and "телефону").
    Only short endings of long enough words: a prefix of two letters would find anything."""
    if len(word) >= 5 and "\u0400" <= word[-1] <= "\u04ff":
        return _CYRILLIC_ENDING.sub("", word) if len(_CYRILLIC_ENDING.sub("", word)) >= 4 else word
    if len(word) >= 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _phrase_parts(phrase: str) -> list[str]:
    """A phrase's terms in order: its words exactly, a CJK run as consecutive bigrams."""
    parts: list[str] = []
    for token in _tokens(phrase):
        if token.kind == "word" or len(token.text) == 1:
            parts.append(quote_term(token.text))
        else:
            parts += [quote_term(token.text[i : i + 2]) for i in range(len(token.text) - 1)]
    return parts


def keywords(question: str) -> str:
    """A question's content words, as a deterministic query (what the evaluation asks
    query_memories with): no stop words, no punctuation, each word once."""
    words: list[str] = []
    for token in _tokens(question):
        if token.kind == "word" and (token.text in STOPWORDS or len(token.text) == 1):
            continue
        if token.text not in words:
            words.append(token.text)
    return " ".join(words)
