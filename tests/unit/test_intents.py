"""Table-driven tests for the direct memory-request recogniser, in its four languages.

The corpora live in tests/data/corpus_<language>.py: REQUESTS rows assert action, language and
(unless ANY) the exact subject; CONVERSATION is the false-positive guard, where a single hit
means the bot would store, delete or hide memory nobody asked it to touch.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_memory.intents import MemoryRequest, recognize
from tests.data import corpus_en, corpus_ru, corpus_uk, corpus_zh
from tests.data.corpus import ANY, Row

CORPORA = {"en": corpus_en, "zh": corpus_zh, "ru": corpus_ru, "uk": corpus_uk}
REQUESTS: list[Row] = [row for c in CORPORA.values() for row in c.REQUESTS]
CONVERSATION: list[str] = [text for c in CORPORA.values() for text in c.CONVERSATION]

# (text, quoted, forwarded): otherwise-valid requests that are not the sender's own.
NOT_OWN_MESSAGE = [
    ("remember that I prefer tea", True, False),
    ("forget what I said about my job", False, True),
    ("/remember I like tea", True, False),
    ("/memory_off", False, True),
    ("turn off memory", False, True),
    ("记住我喜欢喝茶", True, False),
    ("关闭记忆", False, True),
    ("删除关于我工作的记忆", True, True),
    ("hey bot, remember that my cat is Mochi", True, False),
    ("stop remembering my address", False, True),
    ("/memory off", False, True),
    ("记得我不吃辣", True, False),
    ("把我的生日忘了", False, True),
    ("请关闭这个话题的记忆", True, False),
    ("запомни, что я люблю чай", True, False),
    ("забудь мой номер телефона", False, True),
    ("выключи память в этой теме", False, True),
    ("запам'ятай, що я люблю каву", True, False),
    ("забудь мій номер", False, True),
    ("увімкни пам'ять у цій темі", True, True),
    ("don't remember that", True, False),
    ("off the record: my salary is 5000", False, True),
    ("别记这个", True, False),
    ("不要记：我的工资是五千", False, True),
    ("не запоминай это", True, False),
    ("не для протокола: моя зарплата 5000", False, True),
    ("не запам'ятовуй це", True, True),
]


def _misses(language: str) -> list[str]:
    corpus = CORPORA[language]
    misses = []
    for text, action, lang, subject in corpus.REQUESTS:
        got = recognize(text)
        want = (action, lang) if subject is ANY else (action, lang, subject)
        have = None if got is None else (got.action, got.language, got.subject)[: len(want)]
        if have != want:
            misses.append(f"{text!r}: {have} != {want}")
    misses += [f"{t!r}: {recognize(t)}" for t in corpus.CONVERSATION if recognize(t) is not None]
    return misses


def test_all_four_corpora_pass() -> None:
    """Every language's requests and conversation, in one run: sizes and results."""
    report = {}
    for language, corpus in CORPORA.items():
        texts = [row[0] for row in corpus.REQUESTS] + corpus.CONVERSATION
        assert len(texts) == len(set(texts)), f"duplicate phrasing in the {language} corpus"
        report[language] = (len(corpus.REQUESTS), len(corpus.CONVERSATION), _misses(language))
    for language in ("ru", "uk"):
        requests, conversation, _ = report[language]
        assert requests >= 150 and conversation >= 150, (language, requests, conversation)
    assert {lang: misses for lang, (_, _, misses) in report.items() if misses} == {}


@pytest.mark.parametrize(("text", "action", "language", "subject"), REQUESTS)
def test_recognised(text: str, action: str, language: str, subject: object) -> None:
    result = recognize(text)
    assert result is not None, text
    assert (result.action, result.language) == (action, language)
    if subject is not ANY:
        assert result.subject == subject


@pytest.mark.parametrize("text", CONVERSATION)
def test_not_a_request(text: str) -> None:
    assert recognize(text) is None


@pytest.mark.parametrize(("text", "quoted", "forwarded"), NOT_OWN_MESSAGE)
def test_quoted_or_forwarded_is_never_a_request(text: str, quoted: bool, forwarded: bool) -> None:
    assert recognize(text) is not None  # the same text would count on its own
    assert recognize(text, quoted=quoted, forwarded=forwarded) is None


def test_subject_keeps_the_full_remainder() -> None:
    body = "my notes: " + "x" * 5000 + " end"
    result = recognize("remember that " + body + ".")
    assert result == MemoryRequest("remember", "en", body)
    zh_body = "我喜欢茶，" * 1000 + "完"
    assert recognize("请记住" + zh_body) == MemoryRequest("remember", "zh", zh_body)
    ru_body = "я люблю чай, " * 1000 + "конец"
    assert recognize("запомни, что " + ru_body) == MemoryRequest("remember", "ru", ru_body)


def test_request_is_frozen() -> None:
    result = recognize("turn off memory")
    assert result == MemoryRequest("disable", "en", "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.action = "enable"  # type: ignore[misc]


ADVERSARIAL = {
    "remember*": "remember " * 12_000,
    "remember that + ?": "remember that " + "?" * 100_000,
    "spaces + trigger": " " * 100_000 + "remember that x",
    "trigger + spaces": "remember" + " " * 100_000,
    "trigger + commas": "remember" + " ," * 50_000,
    "mention": "@" + "a" * 100_000,
    "please*": "please " * 15_000,
    "forget that*": "forget that " * 9_000,
    "记住*": "记住" * 50_000,
    "忘记我*": "忘记我" * 33_000,
    "把*": "把" * 100_000,
    "删除 的* 记忆": "删除" + "的" * 100_000 + "记忆",
    "turn off the*": "turn off " + "the " * 25_000 + "memory",
    "delete x* from memory": "delete " + "x " * 50_000 + "from memory",
    "zh request": "请记住" + "我喜欢茶，" * 20_000,
    "tail junk": "remember that I like tea" + ", please" * 12_000,
    "吗*": "记住" + "吗" * 100_000,
    "hey bot*": "hey bot, " * 12_000 + "remember that x",
    "from now on*": "from now on " * 9_000,
    "stop remembering*": "stop remembering " * 6_000,
    "stop remembering my*": "stop remembering " + "my " * 30_000,
    "/memory + spaces": "/memory" + " " * 100_000 + "on",
    "/memory on + tail": "/memory on " + "for this topic " * 7_000,
    "以后*": "以后" * 50_000,
    "记得我*": "记得我" * 33_000,
    "记得 + 我*": "记得" + "我" * 100_000,
    "把 我的* 忘了": "把" + "我的" * 50_000 + "忘了",
    "忘了我说过的*": "忘了我说过的" * 16_000,
    "这个话题的*": "关闭" + "这个话题的" * 20_000 + "记忆",
    "запомни*": "запомни " * 12_000,
    "забудь, что я*": "забудь, что я " * 7_000,
    "бот, *": "бот, " * 20_000 + "запомни, что x",
    "забудь мой*": "забудь " + "мой " * 25_000,
    "выключи память в этой теме*": "выключи память " + "в этой теме " * 8_000,
    "удали * из памяти": "удали " + "мой " * 25_000 + "из памяти",
    "зaпoмни mixed*": "зaпoмни " + "чтo " * 25_000,
    "пам'ять*": "вимкни " + "пам'ять " * 12_000,
    "не забудь, что *": "не забудь, что " + "?" * 100_000,
    "don't remember that*": "don't remember " + "that " * 20_000,
    "don't + spaces": "don't" + " " * 100_000 + "remember that",
    "off the record*": "off the record " * 7_000,
    "off the record: + colons": "off the record" + ":" * 100_000,
    "this is private,*": "this is private, " * 6_000 + "don't save it",
    "don't remember my*": "please don't remember " + "my " * 30_000,
    "no wait*": "no wait, " * 10_000 + "don't save that",
    "不要*记": "不要" * 50_000 + "记",
    "不要记 这个*": "不要记" + "这个" * 50_000,
    "我的* 不要记": "我的" * 50_000 + "不要记",
    "这是隐私，*": "这是隐私，" * 20_000 + "别记",
    "не * запоминай": "не " * 30_000 + "запоминай",
    "это * не запоминай": "это " * 25_000 + "не запоминай",
    "не для протокола*": "не для протокола " * 6_000,
    "не надо это*": "не надо " + "это " * 25_000 + "запоминать",
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_input_is_recognised_or_not(text: str) -> None:
    # Its cost is measured by bench/bench_intents.py; a pattern that backtracks without bound
    # would hang here.
    recognize(text)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            list("remembrfgtoadphsyuiw ,.:?!-'@/_")
            + list("记住忘掉别了吗请帮我删除的忆关闭开启把，：？")
            + list("запомнибудьчтояйвкл'ʼ’ітєїщ")
        ),
        max_size=60,
    ),
    st.booleans(),
)
def test_random_text_properties(text: str, flagged: bool) -> None:
    result = recognize(text, quoted=flagged)
    if flagged:
        assert result is None
    elif result is not None:
        # The subject is always a verbatim slice of what the user wrote.
        assert result.subject in text
        assert result.subject == result.subject.strip()
        if result.action in ("enable", "disable"):
            assert result.subject == ""
        elif result.action != "keep_out":  # "" there: another message is meant
            assert result.subject


# Pieces requests not to remember are made of, in any order: whatever comes out is a verbatim
# slice, and a request not to remember never comes from a quoted or forwarded message.
KEEP_OUT_PIECES = (
    "don't|remember|save|that|this|my|off the record|:|,|?|I|it's|private|please|no need to"
    "|memory|别|不要|记|这个|：|，|我的|隐私|吗|не|запоминай|это|надо|запоминать|для протокола"
    "|запам'ятовуй|це|мой|адрес|@bot|from now on"
).split("|")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(KEEP_OUT_PIECES), max_size=8), st.booleans())
def test_keep_out_pieces_properties(pieces: list[str], flagged: bool) -> None:
    text = " ".join(pieces)
    result = recognize(text, forwarded=flagged)
    if flagged:
        assert result is None
    elif result is not None and result.action == "keep_out":
        assert result.subject in text
        assert result.subject == result.subject.strip()
