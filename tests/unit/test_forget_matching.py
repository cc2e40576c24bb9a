"""Which records a forget subject names, in Russian and Ukrainian: whole words and inflected
forms of their stems, never a longer word that merely starts the same (deleting is final)."""

from __future__ import annotations

import pytest

from bot_memory.control.rules import mentions
from bot_memory.intents import recognize

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
