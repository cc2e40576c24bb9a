"""Literal search that still finds what was said: words, not whole strings.

Both sides are folded the same way (NFKC, so full-width letters are plain ones, then casefolded;
the three apostrophes people type are one), then cut into terms:

- words of alphabetic scripts (Latin, Cyrillic, Greek, ...), a possessive "'s" dropped; a query
  word matches a stored word it begins (whole word or word prefix: "boat" finds "boats",
  "boat's"; "лодк" finds "лодка", "лодку");
- Chinese and Japanese, which have no spaces, by character bigrams (and single characters):
  绿茶 finds 我喜欢喝绿茶; a longer query is each of its bigrams, and each Han character that
  only grammar surrounds is a term of its own (我的猫 is about 猫, 喝什么 about 喝).

Greetings, thanks, farewells and courtesies (PHATIC and the lists beside it, in English,
Chinese, Russian and Ukrainian) are never query terms: "hello kitty" is about "kitty", 你好吗 is
about nothing (not 好), and a message made of them asks for no search (worth_searching). Only
the query side leaves them out: stored terms keep every word.

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
from collections.abc import Iterable, Iterator
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
_CJK_STOP = frozenset("的 了 是 我 你 您 吗 呢 吧 啊 么 什 在 和 也 就 都 这 那 有".split())
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


# Greetings, thanks, farewells and courtesies (phatic words: they keep a conversation going and
# name nothing). Never a search term, not even when nothing else is left: a message made of them
# (and stop words) costs no search. Folded, ё as е, a letter typed three times or more as one
# ("hiii", "спасибооо"); laughter ("haha", "ахаха") by _LAUGHTER.
PHATIC = frozenset(
    """
    hi hello hey hiya heya howdy yo sup greetings thanks thank thx thanx tnx ty tysm cheers
    bye goodbye byebye cya ciao ok okay okey okie kk alright please pls plz sorry welcome tks np
    gm gn
    yes yeah yep yup yea nope nah lol lmao rofl omg wow oops yay ugh huh hm hmm oh ah uh um
    привет приветик приветики приветствую здравствуй здравствуйте здрасте здрасьте здарова
    салют хай хелло спасибо спасибки спасибочки пасиб пасибо спс благодарю мерси пожалуйста
    плиз пжлст пж чао споки
    пока покеда прощай прощайте ок окей окэй ладно ага угу неа извини извините прости простите
    сорри вау ого ой хм
    привіт привітик вітаю здрастуй здрастуйте дякую дякуємо спасибі бувай бувайте па добраніч
    добридень вибач вибачте пробач пробачте перепрошую гаразд привітики дяки дякс смачного
    """.split()
)
# Courtesies of several words, one of which alone may name something ("morning", "день").
_PHATIC_PHRASE_TEXT = """
    good morning|good afternoon|good evening|good night|good day|good bye|bye bye|thank you|
    thank you so much|thank you very much|thanks so much|thanks very much|thanks a lot|
    many thanks|and you|you too|same to you|me too|see you|see ya|see you later|see you soon|
    see you tomorrow|talk to you later|take care|have a nice day|have a good day|
    have a great day|have a good one|nice to meet you|pleased to meet you|good to see you|
    how are you|how are you doing|how's it going|how is it going|how do you do|what's up|
    whats up|how have you been|long time no see|hi there|hello there|hey there|you're welcome|
    youre welcome|no problem|no worries|never mind|excuse me|my pleasure|sounds good|got it|
    all good|sweet dreams|
    добрый день|добрый вечер|доброе утро|доброй ночи|спокойной ночи|с добрым утром|
    доброго дня|доброго утра|доброго вечера|хорошего дня|хорошего вечера|удачного дня|
    доброго времени суток|приятного аппетита|добрых снов|до свидания|до встречи|до завтра|
    до скорого|до связи|всего доброго|
    всего хорошего|всего наилучшего|как дела|как делишки|как твои дела|как ваши дела|
    как у тебя дела|как у вас дела|как поживаешь|как поживаете|как жизнь|как сам|как ты|
    как вы|что нового|как настроение|большое спасибо|спасибо большое|огромное спасибо|
    не за что|рад познакомиться|рада познакомиться|приятно познакомиться|без проблем|
    нет проблем|все хорошо|все нормально|все ок|сладких снов|
    добрий день|добрий ранок|добрий вечір|доброго ранку|доброго вечора|доброї ночі|
    на добраніч|гарного дня|гарного вечора|вдалого дня|до побачення|до зустрічі|
    до зв'язку|всього доброго|всього найкращого|на все добре|як справи|як ти|як ви|
    як твої справи|як ваші справи|як у тебе справи|як у вас справи|як життя|як ся маєш|
    як ся маєте|що нового|як настрій|дуже дякую|щиро дякую|дякую дуже|велике дякую|
    велике спасибі|нема за що|немає за що|будь ласка|радий познайомитися|
    рада познайомитися|приємно познайомитися|все добре|усе добре|все гаразд|усе гаразд|
    солодких снів|будь ласочка|здоровенькі були
"""
_LAUGHTER = re.compile(r"a?(?:h[ae]){2,}h?|а?(?:х[аеи]){2,}х?")
_REPEATED = re.compile(r"(.)\1{2,}")
# Replies that say little: a message of them (with phatic and stop words) costs no search, but
# inside a query they are ordinary terms ("Nice" is a city, "Great Wall" a wall).
SMALL_TALK = frozenset(
    """
    cool nice great good fine sure awesome perfect right exactly true agreed noted gotcha morning
    evening night
    отлично круто класс супер понятно ясно норм нормально
    добре чудово класно зрозуміло зрозумів зрозуміла понял поняла
    """.split()
)
# Chinese and Japanese courtesies, found inside a run of characters: a character that only one
# of them holds is no term, nor a pair of such characters (你好吗 is not about 好). A pair holding
# one of them and a character of content still is (最好的 is about 最好).
_PHATIC_CJK = frozenset(
    """
    你好 您好 你们好 你們好 大家好 各位好 你好吗 你好嗎 您好吗 最近好吗 嗨 哈喽 哈啰 哈罗
    早 早安 早上好 上午好 中午好 下午好 晚上好 晚安 谢谢 謝謝 多谢 多謝 谢了 感谢 感謝
    不客气 不客氣 不用谢 不用謝 对不起 對不起 抱歉 不好意思 再见 再見 拜拜 回头见 回頭見
    明天见 明天見 回见 回見 下次见 下次見 拜 午安 在吗 在嗎 在不在 么么哒 辛苦了 辛苦啦 麻烦了
    麻烦你 麻煩你 麻烦您 请问 請問 想问 问一下 問一下 打扰一下
    打扰了 哈哈 呵呵 嘻嘻 嘿嘿 嘿 喂 嗯 嗯嗯 哦 噢 喔 好久不见 好久不見 幸会 幸會
    こんにちは こんばんは おはよう ありがとう ありがとうございます さようなら すみません
    """.split()
)
# Replies a run may be made of (with the courtesies and grammar) to say nothing; inside a longer
# run they are read as usual (好的 in 最好的朋友 is part of 最好).
_SMALL_TALK_CJK = frozenset(
    """
    好 好的 好吧 好啊 好呀 好滴 好嘞 对 對 对的 對的 是的 没错 沒錯 不错 不錯 行 行吧 可以
    没事 沒事 没关系 沒關係 没问题 沒問題 很好 挺好 还好 還好 还行 還行 明白 收到 知道了
    当然 當然 不 不是 嗯呢 你呢 您呢 好哒 不用了 辛苦
    """.split()
)
_COURTESY_CJK = _PHATIC_CJK | _SMALL_TALK_CJK
_COURTESY_CHARS = frozenset("".join(_COURTESY_CJK))
_CJK_PHRASE_CHARS = max(map(len, _COURTESY_CJK))


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
    is left; greetings and courtesies are never terms."""
    found = list(_query_terms(text))
    if any(kind != "stop" for kind, _, _ in found):
        found = [f for f in found if f[0] != "stop"]
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    for _, any_term, title_term in found:
        if any_term not in seen:
            seen.add(any_term)
            kept.append((any_term, title_term))
    kept = kept[:MAX_QUERY_TERMS]
    return Query([a for a, _ in kept], [t for _, t in kept])


def worth_searching(text: str | None) -> bool:
    """Whether a message names anything to look up: a term of content, the way parse_query
    cuts it; no database. A greeting, thanks, a yes or an emoji does not; a question about
    anything does."""
    if not text:
        return False
    if _PHRASE.search(text):  # rare: a quote is content when it holds a word
        return any(kind == "content" for kind, _, _ in _query_terms(text))
    for kind, token in _kinds(_tokens(text)):
        if kind == "content":
            return True
        if kind == "cjk" and any(k == "content" for k, _, _ in _cjk_query_terms(token)):
            return True
    return False


# A query's term: (kind, tsquery, the same in titles). Kinds: "content"; "small" (a reply that
# says little: a term, but no reason to search); "stop" (a term only when nothing else is left).
_Term = tuple[str, str, str]


def _query_terms(text: str | None) -> Iterator[_Term]:
    """A query's terms in order."""
    if not text or not text.strip():
        return
    rest = text
    for m in _PHRASE.finditer(text):
        rest = rest.replace(m.group(0), " ")
        parts = _phrase_parts(next(g for g in m.groups() if g))
        if parts:
            yield ("content", " <-> ".join(parts), " <-> ".join(p + ":A" for p in parts))
    for kind, token in _kinds(_tokens(rest)):
        if kind == "cjk":
            yield from _cjk_query_terms(token)
        else:
            stem = quote_term(_stem(token))
            yield (kind, f"{stem}:*", f"{stem}:*A")


def _kinds(tokens: list[_Token]) -> Iterator[tuple[str, str]]:
    """Each word that is a term with its kind ("content", "small", "stop"), and each CJK run
    as ("cjk", run); greetings and courtesies, of one word or several, left out."""
    skip_to = 0
    for i, token in enumerate(tokens):
        if token.kind == "cjk":
            yield "cjk", token.text
            continue
        word = token.text
        if i < skip_to:
            continue
        key = word.replace("ё", "е") if "ё" in word else word
        if key in _PHRASE_STARTS and (size := _phatic_phrase_at(tokens, i)):
            skip_to = i + size
            continue
        if word in PHATIC:
            continue
        if word in STOPWORDS or (len(word) == 1 and not word.isdigit()):
            yield "stop", word
        elif not _is_phatic(word):
            yield ("small" if _is_small_talk(word) else "content"), word


def _phatic_phrase_at(tokens: list[_Token], i: int) -> int:
    """How many words of a courtesy of several words ("good morning") start at `i` (0: none)."""
    words: list[str] = []
    for t in tokens[i : i + _PHRASE_WORDS]:
        if t.kind != "word":
            break
        words.append(t.text.replace("ё", "е"))
    for size in range(len(words), 1, -1):
        if tuple(words[:size]) in _PHATIC_PHRASES:
            return size
    return 0


_STRETCHED = re.compile(r"(.)\1")


def _forms(word: str) -> tuple[str, ...]:
    """A word as a phatic list holds it: ё as е, and a stretched one ("hiii", "coool",
    "ahh") as typed plainly."""
    if "ё" in word:
        word = word.replace("ё", "е")
    if _STRETCHED.search(word) is None:
        return (word,)
    return (
        word,
        _REPEATED.sub(r"\1", word),
        _REPEATED.sub(r"\1\1", word),
        _STRETCHED.sub(r"\1", word),
    )


def _is_phatic(word: str) -> bool:
    return any(f in PHATIC or _LAUGHTER.fullmatch(f) for f in _forms(word))


def _is_small_talk(word: str) -> bool:
    return any(f in SMALL_TALK for f in _forms(word))


# Each phrase as its words are cut ("what's up" is "what", "up").
_PHATIC_PHRASES = frozenset(
    tuple(t.text.replace("ё", "е") for t in _tokens(phrase))
    for phrase in _PHATIC_PHRASE_TEXT.split("|")
)
_PHRASE_WORDS = max(map(len, _PHATIC_PHRASES))
_PHRASE_STARTS = frozenset(p[0] for p in _PHATIC_PHRASES)


def _cjk_query_terms(run: str) -> list[_Term]:
    """A Chinese or Japanese run of a query, in order: each bigram (one holding a grammar
    character, or asking rather than naming, says nothing; one made of courtesy and grammar
    is none), and each Han character that no content bigram holds and that is neither grammar
    nor part of a courtesy, as a term of its own. A run of courtesies, replies and grammar
    alone ("你好吗", "好的谢谢") has no terms."""
    if _only_courtesy(run):
        return []
    if len(run) == 1:
        alone = "stop" if run in _HAN_GRAMMAR else "content"
        return [(alone, quote_term(run), quote_term(run) + ":A")]
    courtesy = _courtesy_positions(run)
    out: list[_Term] = []
    covered: set[int] = set()
    kinds: list[str | None] = []
    for i in range(len(run) - 1):
        pair = run[i : i + 2]
        quiet = [run[j] in _HAN_GRAMMAR or j in courtesy for j in (i, i + 1)]
        kind: str | None
        if all(quiet) and (i in courtesy or i + 1 in courtesy):
            kind = None  # 你好, 们好: courtesy and grammar
        elif pair in _CJK_STOP_PAIRS or any(c in _CJK_STOP for c in pair) or all(quiet):
            kind = "stop"
        else:
            kind = "content"
            covered |= {i, i + 1}
        kinds.append(kind)
    for i, char in enumerate(run):
        if i < len(kinds) and (pair_kind := kinds[i]) is not None:
            pair = quote_term(run[i : i + 2])
            out.append((pair_kind, pair, pair + ":A"))
        if i not in covered and i not in courtesy and char not in _HAN_GRAMMAR and _HAN.match(char):
            out.append(("content", quote_term(char), quote_term(char) + ":A"))
    return out


def _courtesy_positions(run: str) -> set[int]:
    """The characters of a run that the courtesies in it hold (overlapping ones too: 想问 and
    问一下 in 我想问一下)."""
    marked: set[int] = set()
    for i in range(len(run)):
        for size in range(min(_CJK_PHRASE_CHARS, len(run) - i), 0, -1):
            if run[i : i + size] in _PHATIC_CJK:
                marked.update(range(i, i + size))
                break
    return marked


def _only_courtesy(run: str) -> bool:
    """Whether a run is made of courtesies and replies, grammar characters between them, and
    nothing else (at least one courtesy or reply)."""
    if any(c not in _COURTESY_CHARS and c not in _HAN_GRAMMAR for c in run):
        return False  # the usual case, at a glance
    # reach[i]: run[:i] can be cut so; with a courtesy or reply among the pieces.
    reach: list[tuple[bool, bool]] = [(True, False)] + [(False, False)] * len(run)
    for i in range(len(run)):
        ok, said = reach[i]
        if not ok:
            continue
        if run[i] in _HAN_GRAMMAR:
            reach[i + 1] = (True, reach[i + 1][1] or said)
        for size in range(1, min(_CJK_PHRASE_CHARS, len(run) - i) + 1):
            if run[i : i + size] in _COURTESY_CJK:
                reach[i + size] = (True, True)
    return reach[-1] == (True, True)


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
