"""Greetings, thanks, farewells and courtesies are no search terms, in the four languages: a
message of them alone is no search (worth_searching) and no query (parse_query), and one that
also asks about something keeps only what it asks about; words that merely share letters with
a courtesy ("my morning run", 好莱坞, "Hello Kitty") are still searched."""

from __future__ import annotations

import pytest

from bot_memory.terms import parse_query, worth_searching

PHATIC = [
    # English
    "hi",
    "Hello!",
    "hey there",
    "hiii",
    "thanks!",
    "thank you so much",
    "Thank you very much!",
    "thaaanks",
    "ok",
    "okay, thanks",
    "OK 👍",
    "bye",
    "goodbye!",
    "bye bye",
    "see you tomorrow",
    "good morning",
    "Good night!",
    "good evening :)",
    "how are you?",
    "hi, how are you doing?",
    "you're welcome",
    "no problem",
    "sorry!",
    "haha",
    "lol",
    "yes please",
    "have a nice day",
    "nice to meet you",
    "what's up?",
    # Chinese
    "你好",
    "你好吗",
    "你好吗？",
    "您好！",
    "你们好",
    "大家好",
    "早上好",
    "早",
    "晚安",
    "好的",
    "好的，谢谢",
    "好的谢谢我知道了",
    "谢谢",
    "谢谢你",
    "谢谢您！",
    "多谢",
    "再见",
    "拜拜",
    "不客气",
    "没关系",
    "对不起",
    "不好意思",
    "哈哈哈",
    "嗯嗯",
    "他好吗",
    "我很好，你呢？",
    "你好，最近好吗",
    # Russian
    "привет",
    "Привет!",
    "приветик",
    "здравствуйте",
    "спасибо",
    "спасибо большое!",
    "Большое спасибо",
    "спасибооо",
    "пока",
    "пока-пока",
    "до свидания",
    "добрый день",
    "Доброе утро!",
    "спокойной ночи",
    "привет, как дела?",
    "как у тебя дела?",
    "ок",
    "окей, спасибо",
    "ладно",
    "пожалуйста",
    "не за что",
    "извините",
    "хахаха",
    "ахахах",
    "всё хорошо, спасибо",
    # Ukrainian
    "привіт",
    "Привіт!",
    "дякую",
    "дуже дякую!",
    "бувай",
    "до побачення",
    "добрий день",
    "Доброго ранку!",
    "на добраніч",
    "як справи?",
    "привіт, як справи?",
    "будь ласка",
    "гаразд",
    "вибачте",
    "все гаразд, дякую",
]


@pytest.mark.parametrize("message", PHATIC)
def test_a_courtesy_is_no_search(message: str) -> None:
    assert not worth_searching(message), message
    assert parse_query(message).terms == [], message


@pytest.mark.parametrize(
    ("message", "asked", "not_asked"),
    [
        ("hi! what's my boat called?", "'boat':*", "'hi':*"),
        ("Good morning, when is my flight?", "'flight':*", "'morning':*"),
        ("thanks! and my passport number?", "'passport':*", "'thank':*"),
        ("你好，我的猫叫什么？", "'猫叫'", "'好'"),
        ("谢谢！我的护照号码是多少？", "'护照'", "'谢谢'"),
        ("请问我的航班是几点", "'航班'", "'请问'"),
        ("Привет! Как зовут моего пса?", "'пса':*", "'привет':*"),
        ("спасибо, а какой у меня номер паспорта?", "'паспорт':*", "'спасиб':*"),
        ("Привіт, як звати мого кота?", "'кота':*", "'привіт':*"),
        ("дякую, а коли мій рейс?", "'рейс':*", "'дякую':*"),
    ],
)
def test_a_courtesy_beside_a_question_leaves_the_question(
    message: str, asked: str, not_asked: str
) -> None:
    terms = parse_query(message).terms
    assert asked in terms and not_asked not in terms, terms
    assert worth_searching(message)


@pytest.mark.parametrize(
    ("query", "term"),
    [
        ("好莱坞", "'好莱'"),
        ("我喜欢好莱坞电影", "'莱坞'"),
        ("我喜欢好看的电影", "'好看'"),
        ("最好的朋友", "'最好'"),  # 好的 in it is no courtesy
        ("我早上吃了面包", "'早上'"),
        ("喂猫", "'喂猫'"),
        ("再见到他", "'见到'"),
        ("Hello Kitty", "'kitty':*"),
        ("Thank You for Smoking", "'smoking':*"),
        ("my morning run", "'morning':*"),
        ("good night's sleep tracker", "'tracker':*"),
        ("свидание в пятницу", "'свидан':*"),
        ("завтра встреча", "'встреч':*"),
        ("добрый доктор", "'добр':*"),
        ("день рождения", "'день':*"),
        ("справи з банком", "'справ':*"),
    ],
)
def test_words_that_share_letters_with_a_courtesy_are_searched(query: str, term: str) -> None:
    assert term in parse_query(query).terms, parse_query(query).terms
    assert worth_searching(query)


def test_a_reply_that_says_little_is_a_term_but_no_search() -> None:
    for reply in ("nice", "cool!", "great", "круто", "чудово", "不错"):
        assert not worth_searching(reply), reply
    assert parse_query("Nice").terms == ["'nice':*"]  # the city, asked about by a tool
    assert parse_query("Great Wall").terms == ["'great':*", "'wall':*"]


def test_grammar_characters_beside_a_courtesy_are_no_terms() -> None:
    assert parse_query("你们好").terms == []  # 们好 is no term
    assert parse_query("我的").terms == ["'我的'"]  # grammar alone: still the whole query
    assert parse_query("我想问一下我的猫叫什么").terms == ["'猫叫'"]
