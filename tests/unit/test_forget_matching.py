"""Which records a forget subject names, in Russian and Ukrainian: whole words and inflected
forms of their stems, never a longer word that merely starts the same (deleting is final)."""

from __future__ import annotations

import pytest

from bot_memory.control.rules import mentions
from bot_memory.intents import recognize
from bot_memory.intents.cyrillic import forms_of_one_word

NOTE = "запомни: мой номер телефона +7 916 123-45-67"


@pytest.mark.parametrize(
    ("record", "subject"),
    [
        (NOTE, "мой номер телефона"),  # the whole phrase the note holds
        (NOTE, "мой номер"),  # a whole-word prefix of the phrase
        (NOTE, "номера моего телефона"),  # inflected: номера -> номер, телефона
        ("мой номер телефона +7 916", "номер телефону"),
        ("запомни, что мой кот Барсик", "моего кота"),
        ("запомни, что я живу в Москве", "я живу в Москве"),
        ("запомни, что я живу в Москве", "что я говорил про Москву"),
        ("Запомни: моя машина — серый Солярис", "мою машину"),
        ("запам'ятай, що моя адреса Хрещатик, 5", "мою адресу"),
        ("запам’ятай мій пароль від пошти", "мій пароль"),  # apostrophes fold
        ("запамʼятай: мій номер 0671234567", "мiй номер"),  # Latin i in the subject
        ("мой старый пароль — qwerty", "мой пароль"),
        ("Запомни, что у меня аллергия на арахис", "у меня аллергия"),
        ("запомни: мой бывший муж Олег", "о моём бывшем"),
        ("запомни, что мама приезжает в пятницу", "про мою маму"),
    ],
)
def test_names(record: str, subject: str) -> None:
    assert mentions(record, subject)


@pytest.mark.parametrize(
    ("record", "subject"),
    [
        ("мой котёл сломался", "мой кот"),  # "кот" is not "котёл"
        ("совет директоров в пятницу", "сов"),
        ("запомни, что я люблю чай", "мой номер телефона"),
        ("мой номер паспорта 4510 123456", "мой номер телефона"),  # every word must be there
        ("запомни: я работаю в Яндексе", "что я говорил"),  # nothing but filler
        ("запам'ятай, що в мене кіт", "мій кітель"),
    ],
)
def test_does_not_name(record: str, subject: str) -> None:
    assert not mentions(record, subject)


def test_a_spoken_forget_reaches_its_note() -> None:
    request = recognize("забудь мой номер телефона")
    assert request is not None and request.action == "forget"
    assert mentions(NOTE, request.subject)
    request = recognize("забудь номер мого телефону")
    assert request is not None
    assert mentions("запам'ятай: мій номер телефону 0671234567", request.subject)


# --- forms whose stem changes with the case ------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "subject"),
    [
        # A fleeting vowel: there in the nominative, gone once an ending follows.
        ("запам'ятай, що мій пес Рудько боїться грому", "мого пса"),
        ("запам'ятай, що мій пес Рудько боїться грому", "Рудька"),
        ("запам'ятай, що мій пес Рудько боїться грому", "про мого пса Рудька"),
        ("запомни, что мой пёс Рудько боится грозы", "моего пса"),
        ("запомни, что мой пёс Рудько боится грозы", "псом"),
        ("я гулял с псом Рудьком", "мой пёс"),  # the other way round
        ("мой день рождения 3 мая", "дня рождения"),
        ("мій день народження 3 травня", "дня народження"),
        ("у меня болит палец на ноге", "пальца"),
        ("мой отец живёт в Твери", "моего отца"),
        ("мой лев из Лего", "льва"),
        ("запомни, что у меня аллергия на лёд", "льда"),
        ("кусок торта в холодильнике", "куска торта"),
        ("мой сон про море", "сна про море"),
        ("боец Иван", "бойца Ивана"),
        ("улей на даче", "про улья"),
        ("пять ложек сахара в чай", "ложка сахара"),  # a plural's zero ending: ложек
        ("двое окон на кухне", "окно"),
        ("мій кінець тижня", "кінця тижня"),
        # Ukrainian і in a closed syllable is о or е in an open one.
        ("запам'ятай, що мій кіт Мурчик любить рибу", "мого кота"),
        ("запам'ятай, що мій кіт Мурчик любить рибу", "кота Мурчика"),
        ("я жив у Львові", "Львів"),  # a form of Львів (Львов-і), and back
        ("мій переїзд до Львова", "Львів"),
        ("мій рейс до Києва", "Київ"),
        ("мій кінь Грім", "коня"),
        ("у мене болить ніс", "носа"),
        ("стара піч на дачі", "печі"),
        ("моя осінь у Карпатах", "осені"),
        # Soft signs and ё / е.
        ("мой пароль от почты", "пароля"),
        ("мой пароль от почты", "паролем"),
        ("мой музей в Твери", "музей"),
        ("запомни мою ёлку", "елку"),
        ("мой ёжик Колючка", "ежика"),
    ],
)
def test_names_a_form_whose_stem_changes(record: str, subject: str) -> None:
    assert mentions(record, subject), (record, subject)


@pytest.mark.parametrize(
    ("record", "subject"),
    [
        ("я люблю котлеты с пюре", "кота"),  # кот is not котлеты
        ("я люблю котлети з пюре", "мого кота"),
        ("кто-то звонил вечером", "кот"),  # кто is no form of кот
        ("все мои вещи в шкафу", "мой вес"),  # все is no form of вес
        ("мой котёл сломался", "кота"),
        ("мой котел сломался", "кот"),
        ("дно озера", "день"),  # дно is not a form of день
        ("песня про море", "пса"),
        ("песок на пляже", "пес"),
        ("моя песня", "мой пес"),
        ("кета на ужин", "мій кіт"),  # кіт is кот-, never кет-
        ("бачив лося на галявині", "мій ліс"),  # ліс: лос- takes no soft ending
        ("сено в сарае", "сон"),
        ("вона прийшла пізно", "він"),
        ("вода в пляшці", "від"),
    ],
)
def test_does_not_name_a_word_sharing_a_short_prefix(record: str, subject: str) -> None:
    assert not mentions(record, subject), (record, subject)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("пес", "пса"),
        ("пес", "псу"),
        ("пес", "псом"),
        ("пес", "псів"),
        ("день", "дня"),
        ("день", "днем"),
        ("день", "дні"),
        ("палец", "пальцем"),
        ("палець", "пальця"),
        ("кіт", "кота"),
        ("кіт", "котові"),
        ("лід", "льоду"),
        ("рік", "року"),
        ("стіл", "столом"),
        ("сестер", "сестра"),
        ("писем", "письмо"),
        ("девушек", "девушка"),
    ],
)
def test_forms_of_one_word_both_ways(a: str, b: str) -> None:
    assert forms_of_one_word(a, b) and forms_of_one_word(b, a)
