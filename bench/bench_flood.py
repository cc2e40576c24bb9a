"""Fair sharing: another chat's reply latency while one chat floods 2,000 messages.

The real bot (Dispatcher polling the Bot API emulator, the reference agent on the fake model
server, the embedded PostgreSQL) answers chat B one message at a time, idle first, then while
chat A sends 2,000 messages at 400 a second (a script: a person writes about one a second).
Reported: B's p99 reply time in both, and their ratio (goal: within 2x); and, apart, the reply
right after all 2,000 arrive in one instant, which pays for parsing and dispatching the burst
(aiogram's work per update, before anything of memory's). `--unbounded` runs the same with the
per-chat limits off (BOT_MEMORY_CHAT_MAX_IN_FLIGHT=0), which is how the bot behaved before.

Run: ``.venv/bin/python bench/bench_flood.py [--unbounded]``
"""

from __future__ import annotations

import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram import ALLOWED_UPDATES, setup
from bot_memory_aiogram.testing import BotAPIEmulator, FakeOpenAI

FLOOD = 2_000
FLOOD_PER_SECOND = 400
SAMPLES = 30
FLOODER = 1001
OTHERS = range(5001, 5041)  # the other chats: people each writing now and then


def replies(emu: BotAPIEmulator, chat_id: int) -> int:
    return sum(1 for c in emu.calls_to("sendMessage") if c.params["chat_id"] == chat_id)


async def reply_times(emu: BotAPIEmulator, n: int, *, start_at: int = 0) -> list[float]:
    """Other chats, in turn, each say something and wait for the answer: n times, seconds
    each (one chat after another, so none of them writes faster than a person)."""
    times = []
    for i in range(start_at, start_at + n):
        other = OTHERS[i % len(OTHERS)]
        before = replies(emu, other)
        start = time.perf_counter()
        emu.push_message(chat_id=other, user_id=other, text=f"a question, number {i}")
        while replies(emu, other) == before:  # noqa: ASYNC110 (1 ms resolution is the point)
            await asyncio.sleep(0.001)
        times.append(time.perf_counter() - start)
    return times


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def run_async(*, bounded: bool = True) -> dict[str, float]:
    logging.getLogger("bot_memory").setLevel(logging.ERROR)
    logging.getLogger("bot_memory_aiogram").setLevel(logging.ERROR)
    emu, llm = BotAPIEmulator(), FakeOpenAI(api_key="k")
    await emu.start()
    await llm.start()
    with tempfile.TemporaryDirectory(prefix="bm-bench-flood-") as tmp:
        settings = MemorySettings(
            data_dir=Path(tmp),
            llm_base_url=llm.base_url,
            llm_api_key="k",
            llm_model="m",
            set_commands=False,
            run_worker=False,
            **({} if bounded else {"chat_max_in_flight": 0}),
        )
        memory = await Memory.open(settings)
        bot = Bot(emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)))
        dp = Dispatcher()
        setup(dp, memory, reference_agent=True)
        polling = asyncio.create_task(
            dp.start_polling(
                bot, handle_signals=False, polling_timeout=1, allowed_updates=ALLOWED_UPDATES
            )
        )
        try:
            await reply_times(emu, len(OTHERS))  # warm: every chat known, connections open
            emu.push_message(chat_id=FLOODER, user_id=FLOODER, text="hello")
            while replies(emu, FLOODER) == 0:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            idle = await reply_times(emu, SAMPLES)
            flood = asyncio.create_task(stream(emu, FLOOD, FLOOD_PER_SECOND))
            flooded: list[float] = []
            while not flood.done():
                flooded += await reply_times(emu, 1, start_at=len(flooded))
            for i in range(FLOOD):  # then all at once
                emu.push_message(chat_id=FLOODER, user_id=FLOODER, text=f"burst {i}")
            [burst] = await reply_times(emu, 1, start_at=7)
        finally:
            await dp.stop_polling()
            await asyncio.wait_for(polling, 30)
            await memory.close()
            await bot.session.close()
            await llm.stop()
            await emu.stop()
    return {
        "flood_idle_p99_ms": p99(idle) * 1000,
        "flood_busy_p99_ms": p99(flooded) * 1000,
        "flood_ratio": p99(flooded) / p99(idle),
        "flood_samples": len(flooded),
        "flood_burst_ms": burst * 1000,
    }


async def stream(emu: BotAPIEmulator, n: int, per_second: int) -> None:
    """Chat A's flood: n messages, per_second of them a second, in 20 steps a second."""
    step = max(1, per_second // 20)
    for start in range(0, n, step):
        for i in range(start, min(n, start + step)):
            emu.push_message(chat_id=FLOODER, user_id=FLOODER, text=f"spam {i}")
        await asyncio.sleep(step / per_second)


def run(*, bounded: bool = True) -> dict[str, float]:
    return asyncio.run(run_async(bounded=bounded))


def report(r: dict[str, float], *, bounded: bool = True) -> None:
    limits = "per-chat limits on" if bounded else "no per-chat limits"
    print(
        f"another chat's reply while one chat floods {FLOOD:,} messages ({limits}):"
        f" {FLOOD_PER_SECOND}/s, p99 {r['flood_busy_p99_ms']:.0f} ms over"
        f" {r['flood_samples']:.0f} replies vs idle p99 {r['flood_idle_p99_ms']:.0f} ms"
        f" -> ratio {r['flood_ratio']:.2f} (goal: within 2); all {FLOOD:,} in one instant:"
        f" the next reply {r['flood_burst_ms']:.0f} ms"
    )


if __name__ == "__main__":
    bounded = "--unbounded" not in sys.argv
    report(run(bounded=bounded), bounded=bounded)
