"""Sustained load on a webhook bot: database growth per message, and the reply tail against the
bare bot.

Both parts run the real processes: `bot-memory run` serving a webhook (the reference agent,
built with `setup()`), a separate `bot-memory worker`, the test kit's emulator posting updates as
Telegram does (40 at once, each chat's in order) and its fake model, and the embedded
PostgreSQL; this process offers updates at a fixed rate from 200 chats (120 private chats and 80
forum groups of four members over three topics) and stamps each reply.

growth: one rate for some minutes (default 56 updates/s for 10): questions, notes, forgets,
    edits and /memory screens in private chats, chatter and mentions in the groups. Printed each
    minute: the database's size and each table's, with live and dead rows; at the end, the bytes
    per stored message (all of it, and from minute 2 on), and each table's size against its live
    size (what VACUUM FULL leaves of it).
latency: each offered rate (default 40, 160 and 320/s, 60 s each, questions and chatter only)
    for memory and then for the bare bot: the same aiogram webhook, answering each directed
    message with one call to the same fake model and no memory. Printed: reply p50/p99 from the
    update's arrival at the emulator to the reply's, both bots side by side, their ratio, and
    whether the rate was held (every question answered, the backlog under one second's worth),
    and the cores each process used meanwhile (the bot's, the worker's, PostgreSQL's, and this
    one's: the emulator and the fake model). `--bots` runs one of them alone; `--profile DIR`
    writes a cProfile of the memory bot's process there.

Run: ``.venv/bin/python bench/bench_load.py growth [--minutes 10] [--rate 56]``
     ``.venv/bin/python bench/bench_load.py latency [--rates 40,160,320] [--seconds 60]
     [--bots memory,bare]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot_memory.storage import EmbeddedPostgres  # noqa: E402
from bot_memory_aiogram.testing import BotAPIEmulator, FakeOpenAI  # noqa: E402

PRIVATE = range(10_001, 10_121)  # 120 people talking to the bot
GROUPS = range(-1_000_000_001, -1_000_000_081, -1)  # 80 forum groups
TOPICS = (1, 2, 3)
MEMBERS = 4
THINGS = ("code", "city", "dog", "sister", "car", "team", "train", "dentist", "plant", "gym")
TOKEN = re.compile(r"\bq(\d+)\b")
SECRET = "bench-load-webhook-secret-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------ the offered updates


@dataclass
class Load:
    """What is offered: the mix, the question tokens and when each was pushed."""

    emu: BotAPIEmulator
    mixed: bool  # notes, forgets, edits and screens too (growth), or questions and chatter only
    rng: random.Random = field(default_factory=lambda: random.Random(34))
    asked: dict[int, float] = field(default_factory=dict)  # token -> monotonic push time
    pushed: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    _said: dict[int, list[int]] = field(default_factory=dict)  # chat -> its message ids

    def push(self) -> None:
        self.pushed += 1
        n = self.pushed
        if self.rng.random() < 0.6:
            self._private(n)
        else:
            self._group(n)

    def _count(self, kind: str) -> None:
        self.kinds[kind] = self.kinds.get(kind, 0) + 1

    def _private(self, n: int) -> None:
        chat = self.rng.choice(PRIVATE)
        roll = self.rng.random() if self.mixed else 1.0
        thing = self.rng.choice(THINGS)
        if roll < 0.08:
            self._count("note")
            text = f"remember that my {thing} is {self.rng.choice(('K', 'B', 'Z'))}{n}"
        elif roll < 0.11:
            self._count("forget")
            text = f"forget what I said about my {thing}"
        elif roll < 0.16 and self._said.get(chat):
            self._count("edit")
            earlier = self.rng.choice(self._said[chat][-20:])
            self.emu.push_edited_message(
                chat_id=chat, message_id=earlier, text=f"edited: my {thing} changed ({n})"
            )
            return
        elif roll < 0.18:
            self._count("screen")
            text = "/memory"
        else:
            self._count("question")
            self.asked[n] = time.monotonic()
            text = f"q{n} what do you know about my {thing}?"
        update = self.emu.push_message(chat_id=chat, user_id=chat, text=text, first_name="Pat")
        self._said.setdefault(chat, []).append(int(update["message"]["message_id"]))

    def _group(self, n: int) -> None:
        group = self.rng.choice(GROUPS)
        member = -group * 10 + self.rng.randrange(MEMBERS)
        thing = self.rng.choice(THINGS)
        if self.rng.random() < 0.1:
            self._count("mention")
            self.asked[n] = time.monotonic()
            text = f"@{self.emu.username} q{n} what did we say about the {thing}?"
        else:
            self._count("chatter")
            text = f"the {thing} thing again, number {n}, see you at {n % 24}:00"
        self.emu.push_message(
            chat_id=group,
            user_id=member,
            text=text,
            chat_type="supergroup",
            is_forum=True,
            thread_id=self.rng.choice(TOPICS),
            chat_title=f"Group {-group}",
            first_name=f"Member{member % 10}",
        )

    def reply_times(self) -> tuple[list[float], int]:
        """Seconds from each question's push to its reply, and how many got none."""
        answered: dict[int, float] = {}
        for call in self.emu.sent:
            found = TOKEN.search(str(call.params.get("text", "")))
            if found is not None and int(found.group(1)) in self.asked:
                answered.setdefault(int(found.group(1)), call.at)
        times = [answered[t] - pushed for t, pushed in self.asked.items() if t in answered]
        return times, len(self.asked) - len(answered)


async def offer(load: Load, rate: float, seconds: float, each_minute: Any = None) -> None:
    """`rate` updates a second for `seconds`, in 50 ms steps; `each_minute(i)` at each minute."""
    began = time.monotonic()
    next_minute = 60.0
    start = load.pushed
    while (elapsed := time.monotonic() - began) < seconds:
        while load.pushed - start < int(elapsed * rate):
            load.push()
        if each_minute is not None and elapsed >= next_minute:
            await each_minute(int(next_minute // 60))
            next_minute += 60.0
        await asyncio.sleep(0.05)


def cpu_seconds(pid: int, *, children: bool = False) -> float:
    """CPU time of a process (and of its children, live and exited, when `children`)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    own = (int(fields[11]) + int(fields[12])) / ticks
    if not children:
        return own
    total = own + (int(fields[13]) + int(fields[14])) / ticks
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            parts = stat.read_text().rsplit(")", 1)[1].split()
            if int(parts[1]) == pid:
                total += (int(parts[11]) + int(parts[12])) / ticks
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


# ----------------------------------------------------------------------- the processes


def bot_env(emu: BotAPIEmulator, llm: FakeOpenAI, db_url: str, port: int) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BOT_MEMORY_", "LLM_"))},
        "BOT_TOKEN": emu.token,
        "TELEGRAM_API_URL": emu.base_url,
        "DATABASE_URL": db_url,
        "LLM_BASE_URL": llm.base_url,
        "LLM_API_KEY": "k",
        "LLM_MODEL": "fake-model",
        "BOT_MEMORY_WEBHOOK_URL": f"http://127.0.0.1:{port}/hook",
        "BOT_MEMORY_WEBHOOK_PORT": str(port),
        "BOT_MEMORY_WEBHOOK_SECRET": SECRET,
        "BOT_MEMORY_RUN_WORKER": "false",
        # The pipeline turns over within the run: conversations idle for 20 s are extracted.
        "BOT_MEMORY_IDLE_WINDOW_SECONDS": "20",
        "BOT_MEMORY_TICK_INTERVAL_SECONDS": "5",
        "PYTHONPATH": str(ROOT),
    }


# --pin: the bot alone on the first core; PostgreSQL, the worker and this process (emulator,
# fake model) on the others, as when the database and Telegram are elsewhere.
BOT_CPUS: set[int] | None = None
REST_CPUS: set[int] | None = None


def pin_cores() -> None:
    global BOT_CPUS, REST_CPUS
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs at least 2 cores")
    BOT_CPUS, REST_CPUS = {cpus[0]}, set(cpus[1:])
    os.sched_setaffinity(0, REST_CPUS)


def pin_tree(pid: int, cpus: set[int] | None) -> None:
    """A process and its children (PostgreSQL's server and its backends) onto `cpus`."""
    if cpus is None:
        return
    with contextlib.suppress(OSError):
        os.sched_setaffinity(pid, cpus)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                os.sched_setaffinity(int(stat.parent.name), cpus)


async def spawn(
    env: dict[str, str], log: Path, *argv: str, bot: bool = False
) -> asyncio.subprocess.Process:
    cpus = BOT_CPUS if bot else REST_CPUS
    return await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        stdout=log.open("ab"),
        stderr=asyncio.subprocess.STDOUT,
        preexec_fn=None if cpus is None else (lambda: os.sched_setaffinity(0, cpus)),
    )


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(proc.wait(), 60)
        except TimeoutError:
            proc.kill()
            await proc.wait()


def errors_in(log: Path) -> int:
    text = log.read_text(errors="replace")
    return text.count("Traceback") + len(re.findall(r"\berror\b.*level|\[error", text))


@dataclass
class Rig:
    emu: BotAPIEmulator
    llm: FakeOpenAI
    db_url: str
    tmp: Path
    procs: list[asyncio.subprocess.Process] = field(default_factory=list)

    async def memory_bot(self, *, profile: Path | None = None) -> None:
        port = free_port()
        env = bot_env(self.emu, self.llm, self.db_url, port)
        python = [sys.executable]
        if profile is not None:
            python += ["-m", "cProfile", "-o", str(profile)]
        self.procs.append(
            await spawn(
                env, self.tmp / "bot.log", *python, "-m", "bot_memory", "run",
                "--log-level", "warning", bot=True,
            )
        )  # fmt: skip
        self.procs.append(
            await spawn(
                env, self.tmp / "worker.log", sys.executable, "-m", "bot_memory", "worker",
                "--log-level", "warning",
            )
        )  # fmt: skip
        await self._serving()

    async def bare_bot(self) -> None:
        port = free_port()
        env = bot_env(self.emu, self.llm, self.db_url, port)
        self.procs.append(
            await spawn(env, self.tmp / "bare.log", sys.executable, __file__, "bare-bot", bot=True)
        )
        await self._serving()

    async def _serving(self) -> None:
        before = len(self.emu.calls_to("setWebhook"))
        await self.emu.wait_for_calls("setWebhook", count=before + 1, timeout=120)

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far: each bot process, PostgreSQL's, and this one's (emulator, model)."""
        postmaster = int((self.tmp / "data" / "pg" / "postmaster.pid").read_text().split()[0])
        names = ("bot", "worker")
        return {
            **{name: cpu_seconds(p.pid) for name, p in zip(names, self.procs, strict=False)},
            "postgres": cpu_seconds(postmaster, children=True),
            "bench": cpu_seconds(os.getpid()),
        }

    async def stop(self) -> None:
        for proc in reversed(self.procs):
            await stop(proc)
        self.procs.clear()


async def rig(tmp: Path) -> tuple[Rig, EmbeddedPostgres]:
    emu, llm = BotAPIEmulator(), FakeOpenAI(api_key="k")
    await emu.start()
    await llm.start()
    server = EmbeddedPostgres(tmp / "data")
    db_url = await server.start()
    postmaster = int((tmp / "data" / "pg" / "postmaster.pid").read_text().split()[0])
    pin_tree(postmaster, REST_CPUS)  # backends started later inherit it
    return Rig(emu, llm, db_url, tmp), server


# --------------------------------------------------------------------------- growth


SIZES = """
SELECT s.relname AS name, pg_total_relation_size(s.relid) AS bytes,
       s.n_live_tup AS live, s.n_dead_tup AS dead
FROM pg_stat_user_tables s ORDER BY 2 DESC
"""


async def sizes(conn: asyncpg.Connection) -> tuple[int, int, dict[str, tuple[int, int, int]]]:
    total = int(await conn.fetchval("SELECT pg_database_size(current_database())"))
    messages = int(await conn.fetchval("SELECT count(*) FROM messages"))
    tables = {
        r["name"]: (int(r["bytes"]), int(r["live"]), int(r["dead"]))
        for r in await conn.fetch(SIZES)
    }
    return total, messages, tables


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


async def growth(minutes: float, rate: float) -> None:
    with tempfile.TemporaryDirectory(prefix="bm-bench-load-") as tmp_name:
        tmp = Path(tmp_name)
        r, server = await rig(tmp)
        try:
            await r.memory_bot()
            conn = await asyncpg.connect(r.db_url)
            load = Load(r.emu, mixed=True)
            base = await sizes(conn)
            marks = [base]
            print(f"growth: {rate:g} updates/s for {minutes:g} min, 200 chats")
            print(f"{'min':>3} {'database':>10} {'messages':>9}  largest (size, live/dead rows)")

            async def each_minute(i: int) -> None:
                total, messages, tables = await sizes(conn)
                marks.append((total, messages, tables))
                top = sorted(tables.items(), key=lambda kv: -kv[1][0])[:6]
                shown = ", ".join(f"{n} {mb(b)} {lv}/{d}" for n, (b, lv, d) in top)
                print(f"{i:>3} {mb(total):>10} {messages:>9}  {shown}", flush=True)

            await offer(load, rate, minutes * 60, each_minute)
            await r.emu.wait_idle(timeout=120)
            await asyncio.sleep(5)  # the last replies
            times, unanswered = load.reply_times()
            p50, p99 = percentile(times, 0.5) * 1000, percentile(times, 0.99) * 1000
            await each_minute(len(marks))
            await r.stop()
            total, messages, tables = marks[-1]
            first = marks[min(2, len(marks) - 1)]
            print(
                f"offered {load.pushed} updates {load.kinds}; questions answered"
                f" {len(times)}, unanswered {unanswered}; reply p50"
                f" {p50:.0f} ms, p99 {p99:.0f} ms"
            )
            print(
                f"database {mb(base[0])} -> {mb(total)} for {messages - base[1]} messages:"
                f" {(total - base[0]) / max(1, messages - base[1]):.0f} bytes a message;"
                f" from minute 2 on {(total - first[0]) / max(1, messages - first[1]):.0f}"
            )
            print(
                f"{'table':<28} {'bytes/msg':>9} {'size':>9} {'live size':>9} {'ratio':>5}"
                f" {'rows':>7} {'dead':>7}"
            )
            for name, (size, live, dead) in sorted(tables.items(), key=lambda kv: -kv[1][0]):
                await conn.execute(f'VACUUM FULL "{name}"')
                packed = int(
                    await conn.fetchval("SELECT pg_total_relation_size($1::regclass)", name)
                )
                grown = size - base[2].get(name, (0, 0, 0))[0]
                print(
                    f"{name:<28} {grown / max(1, messages - base[1]):>9.0f} {mb(size):>9}"
                    f" {mb(packed):>9} {size / max(1, packed):>5.1f} {live:>7} {dead:>7}"
                )
            errors = sum(errors_in(tmp / f) for f in ("bot.log", "worker.log"))
            print(f"error lines in the bot's and the worker's logs: {errors}")
            await conn.close()
        finally:
            await r.stop()
            await server.stop()
            await r.llm.stop()
            await r.emu.stop()


# -------------------------------------------------------------------------- latency


async def measure(r: Rig, rate: float, seconds: float, first: int) -> dict[str, float]:
    """One rate; its questions' tokens start after `first` (each rate's replies are its own)."""
    load = Load(r.emu, mixed=False)
    for chat in PRIVATE:  # warm: every chat known
        load.asked[-chat] = time.monotonic()
        r.emu.push_message(chat_id=chat, user_id=chat, text=f"q{-chat} hello", first_name="Pat")
    await r.emu.wait_idle(timeout=120)
    load.asked.clear()
    load.pushed = first
    backlog = 0

    async def watch() -> None:
        nonlocal backlog
        while True:
            backlog = max(backlog, len(r.emu.pending_updates))
            await asyncio.sleep(0.25)

    watching = asyncio.create_task(watch())
    before = r.cpu()
    await offer(load, rate, seconds)
    cpu = {who: (t - before[who]) / seconds for who, t in r.cpu().items()}
    at_end = len(r.emu.pending_updates)
    watching.cancel()
    with contextlib.suppress(TimeoutError):
        await r.emu.wait_idle(timeout=120)
    await asyncio.sleep(2)
    times, unanswered = load.reply_times()
    return {
        "p50": percentile(times, 0.5) * 1000,
        "p99": percentile(times, 0.99) * 1000,
        "unanswered": unanswered,
        "backlog": at_end,
        "held": float(unanswered == 0 and at_end <= rate),
        "answered": len(times),
        **{f"cpu {who}": share for who, share in cpu.items()},
    }


async def latency(
    rates: list[float], seconds: float, profile: Path | None, bots: list[str]
) -> None:
    results: dict[str, dict[float, dict[str, float]]] = {}
    for who in bots:
        with tempfile.TemporaryDirectory(prefix="bm-bench-load-") as tmp_name:
            tmp = Path(tmp_name)
            r, server = await rig(tmp)
            try:
                if who == "memory":
                    await r.memory_bot(profile=profile / "bot.prof" if profile else None)
                else:
                    await r.bare_bot()
                results[who] = {}
                for i, rate in enumerate(rates):
                    results[who][rate] = await measure(r, rate, seconds, first=i * 10_000_000)
                    m = results[who][rate]
                    print(
                        f"{who:>6} {rate:>5g}/s: p50 {m['p50']:.1f} ms, p99 {m['p99']:.1f} ms,"
                        f" {m['answered']:.0f} answered, {m['unanswered']:.0f} not,"
                        f" backlog at the end {m['backlog']:.0f}; cores: "
                        + ", ".join(
                            f"{k[4:]} {v:.2f}" for k, v in m.items() if k.startswith("cpu ")
                        ),
                        flush=True,
                    )
            finally:
                await r.stop()
                await server.stop()
                await r.llm.stop()
                await r.emu.stop()
    if len(results) < 2:
        return
    print(f"reply time from the update to the reply, {seconds:g} s per rate, memory vs bare bot:")
    for rate in rates:
        m, b = results["memory"][rate], results["bare"][rate]
        print(
            f"  {rate:>5g}/s  p50 {m['p50']:6.1f} vs {b['p50']:5.1f} ms"
            f"  p99 {m['p99']:6.1f} vs {b['p99']:5.1f} ms -> ratio {m['p99'] / b['p99']:.1f}"
            f" (goal: at most 3)  held: memory {'yes' if m['held'] else 'NO'},"
            f" bare {'yes' if b['held'] else 'NO'}"
        )


# -------------------------------------------------------------------------- the bare bot


def bare_bot() -> None:
    """The same webhook without memory: each directed message answered by one model call."""
    import httpx
    from aiogram import Bot, Dispatcher
    from aiogram.client.session.aiohttp import AiohttpSession
    from aiogram.client.telegram import TelegramAPIServer
    from aiogram.types import Message
    from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application
    from aiohttp import web

    async def main() -> None:
        api = TelegramAPIServer.from_base(os.environ["TELEGRAM_API_URL"])
        bot = Bot(os.environ["BOT_TOKEN"], session=AiohttpSession(api=api))
        me = await bot.get_me()
        dp = Dispatcher()
        model = httpx.AsyncClient(
            base_url=os.environ["LLM_BASE_URL"],
            headers={"Authorization": f"Bearer {os.environ['LLM_API_KEY']}"},
        )

        @dp.message()
        async def answer(message: Message) -> None:
            text = message.text or ""
            if message.chat.type != "private" and f"@{me.username}" not in text:
                return
            body = {
                "model": os.environ["LLM_MODEL"],
                "messages": [{"role": "user", "content": text}],
            }
            reply = (await model.post("/chat/completions", json=body)).json()
            await message.answer(reply["choices"][0]["message"]["content"])

        app = web.Application()
        SimpleRequestHandler(
            dispatcher=dp, bot=bot, secret_token=SECRET, handle_in_background=False
        ).register(app, path="/hook")
        setup_application(app, dp, bot=bot)
        runner = web.AppRunner(app)
        await runner.setup()
        port = int(os.environ["BOT_MEMORY_WEBHOOK_PORT"])
        await web.TCPSite(runner, "127.0.0.1", port).start()
        await bot.set_webhook(os.environ["BOT_MEMORY_WEBHOOK_URL"], secret_token=SECRET)
        done = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(sig, done.set)
        await done.wait()
        await runner.cleanup()
        await model.aclose()
        await bot.session.close()

    asyncio.run(main())


def rates_of(text: str) -> Iterator[float]:
    for part in text.split(","):
        yield float(part)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="part", required=True)
    g = sub.add_parser("growth")
    g.add_argument("--minutes", type=float, default=10)
    g.add_argument("--rate", type=float, default=56)
    lat = sub.add_parser("latency")
    lat.add_argument("--rates", default="40,160,320")
    lat.add_argument("--seconds", type=float, default=60)
    lat.add_argument("--profile", type=Path)
    lat.add_argument("--bots", default="memory,bare", help="which bots, in this order")
    lat.add_argument("--pin", action="store_true", help="the bot alone on one core")
    sub.add_parser("bare-bot")
    args = parser.parse_args()
    if args.part == "growth":
        asyncio.run(growth(args.minutes, args.rate))
    elif args.part == "latency":
        if args.pin:
            pin_cores()
        asyncio.run(
            latency(list(rates_of(args.rates)), args.seconds, args.profile, args.bots.split(","))
        )
    else:
        bare_bot()


if __name__ == "__main__":
    main()
