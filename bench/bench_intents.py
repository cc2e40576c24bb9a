"""Micro-benchmark for ``bot_memory.intents.recognize``.

Builds a deterministic mixed stream of 2,000 messages (mostly ordinary chat in
English and Chinese, some memory requests, some long messages) and reports the
mean cost per call of ``recognize`` next to a baseline of ONE ``re.search`` of
a trivial pattern over the same messages, in the same process. The same is
measured on a second stream that adds Russian and Ukrainian chat and requests
(the first stream is kept as it was, so its figure compares across versions).

Run: ``.venv/bin/python bench/bench_intents.py``
"""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot_memory.intents import recognize

N_MESSAGES = 2_000
REPEATS = 7  # best-of: the minimum is the least noisy estimate

ORDINARY = [
    "hey, how's it going?",
    "lol that's hilarious",
    "can we move the standup to 10?",
    "I'll be late today, traffic is terrible",
    "did anyone see the game last night",
    "thanks, that worked!",
    "what's the wifi password again",
    "I can't remember where I put the charger",
    "sounds good 👍",
    "let's get pizza for lunch",
    "the build is red again, looking into it",
    "who's joining the call at 3?",
    "https://example.com/docs/getting-started",
    "ok",
    "今天天气不错，我们去吃火锅吧",
    "你吃饭了吗？",
    "明天几点开会？",
    "哈哈哈哈这个太好笑了",
    "我忘了带钥匙，谁在家？",
    "好的，收到",
    "这个bug我来修",
    "周末有人去爬山吗",
    "记忆力越来越差了",
    "谢谢大家！",
]

REQUESTS = [
    "remember that I prefer tea",
    "@my_bot please remember my partner is called Sam",
    "could you please remember that I'm vegetarian?",
    "forget what I said about my job",
    "turn off memory",
    "/remember my size is M",
    "/memory_on",
    "记住我喜欢喝茶",
    "请帮我记一下：我的工号是8823",
    "删除关于我工作的记忆",
    "关闭记忆",
    "do you remember what I said yesterday?",
    "forget it",
    "你还记得我说过什么吗？",
]


ORDINARY_SLAVIC = [
    "привет, как дела?",
    "ахах, смешно",
    "можно перенести созвон на 10?",
    "я сегодня опоздаю, пробки",
    "не помню, куда положил зарядку",
    "ок 👍",
    "кто будет на встрече в 15:00?",
    "пойдём обедать в пиццерию",
    "сборка опять упала, смотрю",
    "дякую, все працює!",
    "привіт, як справи?",
    "де пароль від вайфаю?",
    "забула ключі вдома, хто вдома?",
    "у мене погана пам'ять на імена",
    "давайте в п'ятницю о шостій",
    "зрозумів, зараз зроблю",
]

REQUESTS_SLAVIC = [
    "запомни, что я люблю чай",
    "@my_bot пожалуйста, запомни мой номер: +7 916 123-45-67",
    "забудь, что я говорил про работу",
    "выключи память в этой теме",
    "запам'ятай, що я не їм м'ясо",
    "забудь мій номер телефону",
    "увімкни пам'ять",
    "ты помнишь, что я говорил вчера?",
    "забудь об этом",
    "не запам'ятовуй це",
]


def build_messages(
    n: int = N_MESSAGES, seed: int = 20240501, *, four_languages: bool = False
) -> list[str]:
    rng = random.Random(seed)
    ordinary = ORDINARY + ORDINARY_SLAVIC if four_languages else ORDINARY
    requests = REQUESTS + REQUESTS_SLAVIC if four_languages else REQUESTS
    messages: list[str] = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.80:
            messages.append(rng.choice(ordinary))
        elif roll < 0.95:
            messages.append(rng.choice(requests))
        else:  # long message: a pasted paragraph, up to Telegram's 4,096 chars
            parts = [rng.choice(ordinary) for _ in range(rng.randint(20, 120))]
            text = " ".join(parts)[:4096]
            if rng.random() < 0.3:
                text = "remember that " + text
            messages.append(text)
    return messages


def _per_call_us(fn: Callable[[str], object], messages: list[str]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        for message in messages:
            fn(message)
        best = min(best, time.perf_counter() - started)
    return best / len(messages) * 1e6


def run() -> dict[str, float]:
    messages = build_messages()
    baseline = re.compile(r"remember|记住").search
    ours_us = _per_call_us(recognize, messages)
    baseline_us = _per_call_us(baseline, messages)
    hits = sum(recognize(m) is not None for m in messages)
    four = build_messages(four_languages=True)
    four_us = _per_call_us(recognize, four)
    four_baseline_us = _per_call_us(re.compile(r"remember|记住|запомни").search, four)
    return {
        "messages": float(len(messages)),
        "recognised": float(hits),
        "ours_us_per_call": ours_us,
        "baseline_us_per_call": baseline_us,
        "ratio": ours_us / baseline_us,
        "four_languages_recognised": float(sum(recognize(m) is not None for m in four)),
        "four_languages_us_per_call": four_us,
        "four_languages_baseline_us_per_call": four_baseline_us,
        "four_languages_ratio": four_us / four_baseline_us,
    }


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key:>36}: {value:,.3f}")
