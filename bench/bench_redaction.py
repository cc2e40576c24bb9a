"""Benchmark for bot_memory.redaction.patterns.redact.

Run: ``.venv/bin/python bench/bench_redaction.py``

Two costs, each next to a baseline of one ``re.search`` of a simple pattern over the same
text, in the same process:

- per short message: a stream of 2,000 chat messages (English, Chinese, Russian; one in 40
  carries a generated, fake credential), the mean cost of one ``redact`` call;
- per KB: ~1 MB of the same chat text as one string.

And the adversarial inputs (text made of what the patterns look for, over and over): the
slowest of them at 100 KB, and how its cost grows from 10 KB to 100 KB (1.0 is linear).
No assertions: this is a measurement.
"""

from __future__ import annotations

import functools
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot_memory.redaction.patterns import REDACTED, redact

_TARGET_BYTES = 1_000_000
_ADVERSARIAL_CHARS = 100_000
_N_MESSAGES = 2_000

_ENGLISH = [
    "Hey, did you see the deploy went out at 12:30:45 last night?",
    "I rotated the API key yesterday, the old token expired anyway.",
    "My password is too short according to the new policy, ugh.",
    "Can you review https://github.com/example/repo/pull/1234 when you get a chance?",
    "The build failed on commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39, see the logs.",
    "Let's meet at 15:00, I'll send the calendar invite to alice@example.com.",
    "We bumped scikit-learn to v1.4.2 and numpy to 1.26.4.",
    "Remember to call get_password() instead of reading the password_hash column.",
    "The request id was 123e4567-e89b-12d3-a456-426614174000 if you need to grep.",
    "Link to the message: https://t.me/c/1234567890/42",
    "**Reminder**: the standup moved to the big room. See `docs/setup.md`.",
    "I think the token budget for the model is 8k, maybe we should summarise earlier.",
]
_CHINESE = [
    "今天下午三点开会，记得带上笔记本电脑。",
    "密码太短了，系统不让我注册。",
    "我昨天把密钥轮换了一下，旧的已经失效。",
    "这个接口返回的令牌有效期是两个小时。",
    "周末要不要一起去爬山？天气预报说是晴天。",
    "代码已经合并到主分支了，版本号是 v2.3.1。",
    "请把会议纪要发到群里，谢谢！",
    "数据库迁移脚本跑完了，耗时大概十二分钟。",
]
_RUSSIAN = [
    "Привет! Созвон в 15:00, ссылку скину в чат.",
    "Пароль от wifi на обороте роутера, глянь сам.",
    "Токен истёк, надо перевыпустить в настройках.",
    "Сборка упала на тестах, смотрю логи.",
    "Ок, спасибо 👍",
]


def _fake(alphabet: str, n: int, rng: random.Random) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _fake_credentials(rng: random.Random) -> list[str]:
    alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return [
        "here is the key " + "sk-" + "proj-" + _fake(alnum, 120, rng) + " please keep it safe",
        "GITHUB_TOKEN=" + "gh" + "p_" + _fake(alnum, 36, rng),
        "aws key " + "AK" + "IA" + _fake(upper, 16, rng) + " in us-east-1",
        "数据库密码：" + _fake(alnum, 14, rng) + "，别外传",
        "DATABASE_URL=postgres://app:" + _fake(alnum, 18, rng) + "@db.internal:5432/app",
        "bot token " + str(rng.randint(10**8, 10**9)) + ":" + "AA" + _fake(alnum, 33, rng),
    ]


def build_corpus(target_bytes: int = _TARGET_BYTES, seed: int = 1) -> str:
    """~``target_bytes`` (UTF-8) of chat lines, about one credential per 20 KB."""
    rng = random.Random(seed)
    lines: list[str] = []
    size = 0
    next_secret = 20_000
    while size < target_bytes:
        line = rng.choice(_CHINESE if rng.random() < 0.35 else _ENGLISH)
        if size >= next_secret:
            line = rng.choice(_fake_credentials(rng))
            next_secret += 20_000
        lines.append(line)
        size += len(line.encode()) + 1
    return "\n".join(lines)


def build_messages(n: int = _N_MESSAGES, seed: int = 2) -> list[str]:
    """Short chat messages, one in 40 with a credential."""
    rng = random.Random(seed)
    lines = _ENGLISH + _CHINESE + _RUSSIAN
    return [
        rng.choice(_fake_credentials(rng)) if i % 40 == 39 else rng.choice(lines) for i in range(n)
    ]


# Text made of what the patterns look for: label words and separators, prefixes, markup.
_ADVERSARIAL_CHUNKS = (
    "password=sk-eyJ.-----BEGIN PRIVATE KEY-----://a:b Authorization: Bearer 密码：",
    "密码是令牌：密钥为",
    '<add key="Password" value="',
    "token:",
    "Authorization: Api-Token ",
    "=gh=sk=xo=AK=ey=MT",
    "пароль: токен — ключ API ",
)


def _repeat(chunk: str, n: int) -> str:
    return (chunk * (n // len(chunk) + 1))[:n]


def _best_of(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def run(repeat: int = 5) -> dict[str, float]:
    # A simple pattern that does not occur, so the baseline scans all of the text.
    baseline_re = re.compile(r"password\s*=\s*hunter2")

    messages = build_messages()
    if any(baseline_re.search(m) for m in messages):
        raise RuntimeError("baseline pattern must not occur in the messages")

    def each_redacted() -> None:
        for m in messages:
            redact(m)

    def each_searched() -> None:
        for m in messages:
            baseline_re.search(m)

    message_us = _best_of(each_redacted, repeat) * 1e6 / len(messages)
    message_baseline_us = _best_of(each_searched, repeat) * 1e6 / len(messages)

    corpus = build_corpus()
    kb = len(corpus.encode()) / 1024
    if baseline_re.search(corpus) is not None:
        raise RuntimeError("baseline pattern must not occur in the corpus")
    redacted = redact(corpus)
    redact_s = _best_of(lambda: redact(corpus), repeat)
    baseline_s = _best_of(lambda: baseline_re.search(corpus), repeat)
    redact_us_per_kb = redact_s * 1e6 / kb
    baseline_us_per_kb = baseline_s * 1e6 / kb

    worst_s, growth = 0.0, 0.0
    for chunk in _ADVERSARIAL_CHUNKS:
        big = _repeat(chunk, _ADVERSARIAL_CHARS)
        small = _repeat(chunk, _ADVERSARIAL_CHARS // 10)
        big_s = _best_of(functools.partial(redact, big), repeat)
        small_s = _best_of(functools.partial(redact, small), repeat)
        if big_s > worst_s:
            worst_s, growth = big_s, big_s / (10 * small_s)

    return {
        "messages": float(len(messages)),
        "redact_us_per_message": message_us,
        "baseline_re_search_us_per_message": message_baseline_us,
        "message_ratio": message_us / message_baseline_us,
        "corpus_kb": kb,
        "redactions": float(redacted.count(REDACTED)),
        "redact_us_per_kb": redact_us_per_kb,
        "baseline_re_search_us_per_kb": baseline_us_per_kb,
        "ratio": redact_us_per_kb / baseline_us_per_kb,
        "adversarial_100kb_ms": worst_s * 1e3,
        "adversarial_growth_10kb_to_100kb": growth,
    }


def main() -> None:
    for key, value in run().items():
        print(f"{key:30s} {value:12.2f}")


if __name__ == "__main__":
    main()
