"""What the metrics cost on the message path: aiogram dispatch of a private text update through
bot-memory (outer middleware, routers, the one recording statement, the request's closing)
with metrics counting against the same with them off, in one process and one database, rounds
interleaved (25 of 200 updates each) so both see the same machine. Also one counter increment
by itself.

    .venv/bin/python bench/bench_metrics.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from bench_memory import update

from bot_memory.metrics import Metrics, available
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import BotAPIEmulator

UPDATES = 200
ROUNDS = 25
INCREMENTS = 200_000


async def bench_ingress(memory: Memory, bot: Bot) -> dict[str, float]:
    dp = Dispatcher()
    setup(dp, memory)  # outer middleware + the direct-request router, no reference agent
    on, off = memory.metrics, Metrics(enabled=False)
    base = 10_000_000
    for i in range(200):  # first messages of each chat: workspaces, auto-delete timers
        await dp.feed_update(bot, update(base + i))
    await memory.flush()
    await memory.store.pool.execute("ANALYZE")
    timings: dict[str, list[float]] = {"on": [], "off": []}
    n = base + 1000
    for _ in range(ROUNDS):
        for name, metrics in (("on", on), ("off", off)):
            memory.metrics = metrics  # what the message path counts into
            start = time.perf_counter()
            for _ in range(UPDATES):
                n += 1
                await dp.feed_update(bot, update(n))
            await memory.flush()  # the batched closings are part of a message's cost
            timings[name].append((time.perf_counter() - start) / UPDATES * 1e6)
    memory.metrics = on
    on_us, off_us = statistics.median(timings["on"]), statistics.median(timings["off"])
    return {"ingress_on_us": on_us, "ingress_off_us": off_us, "ingress_ratio": on_us / off_us}


def bench_increment() -> dict[str, float]:
    metrics = Metrics()
    start = time.perf_counter()
    for _ in range(INCREMENTS):
        metrics.message_recorded()
    on = (time.perf_counter() - start) / INCREMENTS * 1e9
    metrics = Metrics(enabled=False)
    start = time.perf_counter()
    for _ in range(INCREMENTS):
        metrics.message_recorded()
    off = (time.perf_counter() - start) / INCREMENTS * 1e9
    return {"increment_on_ns": on, "increment_off_ns": off}


async def run_async() -> dict[str, float]:
    if not available():
        raise SystemExit("bench_metrics needs prometheus-client (pip install -e '.[dev]')")
    with tempfile.TemporaryDirectory(prefix="bm-bench-") as tmp:
        settings = MemorySettings(
            data_dir=Path(tmp), llm_base_url=None, sender_burst_messages=10**9
        )
        memory = await Memory.open(settings)
        emu = BotAPIEmulator()
        await emu.start()
        bot = Bot(emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)))
        try:
            await bot.me()  # cached: dispatch below makes no HTTP calls
            results = await bench_ingress(memory, bot)
        finally:
            await bot.session.close()
            await emu.stop()
            await memory.close()
    results.update(bench_increment())
    return results


def run() -> dict[str, float]:
    return asyncio.run(run_async())


def report(results: dict[str, float]) -> None:
    print(
        f"ingress per update with metrics: {results['ingress_on_us']:.0f} us vs without "
        f"{results['ingress_off_us']:.0f} us -> ratio {results['ingress_ratio']:.3f}; one counter"
        f" increment {results['increment_on_ns']:.0f} ns"
        f" (off: {results['increment_off_ns']:.0f} ns)"
    )


if __name__ == "__main__":
    report(run())
