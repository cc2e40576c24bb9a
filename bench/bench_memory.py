"""Ingress, recall, commits and access checks, as ratios against raw baselines measured in the
same process.

(a) ingress: aiogram dispatch of a private text update through bot-memory's outer middleware
    and routers (workspace and scope, directed check, recognizer, one INSERT ... INSERT
    statement) against bare dispatch to a handler doing one raw asyncpg INSERT.
(b) recall: Memory.recall(scope) in a workspace holding 256 memory records (~3 KB each),
    against a raw single-row SELECT; and with the request's message, whose matches are searched
    (every record holds some of its words: the search's worst case), its p95 against the raw
    read's p95.
(c) commit: one "remember" (lock the workspace, insert the note and its source, evict past the
    256-record cap, rewrite the scope's recall row, plan a consolidation) against one small raw
    UPDATE; likewise one forget by ID (the record, its cascade, tombstones) and one extraction
    commit (a job whose model answer is checkpointed: checks, record, recall row, consolidation
    planned), each in a workspace at the cap.
(d) membership: the group membership check of a request when the cache holds the answer,
    against a plain dict lookup.

    .venv/bin/python bench/bench_memory.py
"""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import Message, Update

from bot_memory.access.gate import Membership, MemberStatus, Requester
from bot_memory.control.actions import forget_record
from bot_memory.intents import recognize
from bot_memory.pipeline.discovery import plan_due
from bot_memory.pipeline.prompts import ExtractionOutput
from bot_memory.records import MemoryRecord, SourceRef
from bot_memory.retention.sweeps import expire_due
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import BotAPIEmulator

UPDATES = 2000
RECALLS = 2000
RECORDS = 256
COMMITS = 200
FORGETS = 24  # 5 rounds of notes within one speaker's share of the cap (128)
EXTRACTIONS = 30
EXPIRIES = 24  # likewise
MEMBERSHIP = 20_000


def update(i: int) -> Update:
    return Update.model_validate(
        {
            "update_id": i,
            "message": {
                "message_id": i,
                "date": 1_700_000_000,
                "chat": {"id": 5000 + i % 50, "type": "private", "first_name": "U"},
                "from": {
                    "id": 5000 + i % 50,
                    "is_bot": False,
                    "first_name": "U",
                    "language_code": "en",
                },
                "text": f"hello there, this is message number {i} about the project plan",
            },
        }
    )


WORDS = (
    "plan trip kyoto april hotel quiet release friday notes budget review deploy staging "
    "customer invoice meeting agenda draft design migrate schema retry backoff lease token "
    "vegetarian ryokan passport expires team decision owner admin topic general"
).split()


def prose(rng: random.Random, size: int, words: Callable[[], str] | None = None) -> str:
    """Record-like text that PostgreSQL cannot compress away (numbers and IDs mixed in), its
    words from WORDS (every record holds every one of them) or from `words`."""
    pick = words or (lambda: rng.choice(WORDS))
    parts: list[str] = []
    while sum(len(p) + 1 for p in parts) < size:
        parts.append(pick() if rng.random() < 0.6 else f"{rng.getrandbits(40):x}")
    return " ".join(parts)[:size]


def vocabulary(rng: random.Random, n: int = 5000) -> Callable[[], str]:
    """Words drawn as people's are: n made-up words, the k-th as often as 1/k (Zipf), so a
    query's content words are held by a few records, not by all."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    made = sorted({"".join(rng.choices(syllables, k=rng.randint(2, 4))) for _ in range(n * 2)})
    rng.shuffle(made)
    weights = list(itertools.accumulate(1 / (k + 1) for k in range(n)))
    return lambda: rng.choices(made[:n], cum_weights=weights)[0]


async def timed(n: int, step: Callable[[int], Awaitable[Any]]) -> float:
    """Median of 5 rounds of n calls, in microseconds per call."""
    rounds = []
    for r in range(5):
        start = time.perf_counter()
        for i in range(n):
            await step(r * n + i)
        rounds.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(rounds)


async def p95(n: int, step: Callable[[int], Awaitable[Any]]) -> float:
    """The 95th percentile of n calls (after n // 10 to warm up), in microseconds."""
    for i in range(n // 10):
        await step(i)
    times = []
    for i in range(n):
        start = time.perf_counter()
        await step(i)
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.quantiles(times, n=20)[-1]


async def bench_ingress(memory: Memory, bot: Bot) -> dict[str, float]:
    pool = memory.store.pool
    await pool.execute(
        "CREATE TABLE IF NOT EXISTS bench_raw (id bigserial PRIMARY KEY,"
        " chat_id bigint, user_id bigint, text text)"
    )
    bare = Dispatcher()

    @bare.message()
    async def raw_insert(message: Message) -> None:
        assert message.from_user is not None
        await pool.execute(
            "INSERT INTO bench_raw (chat_id, user_id, text) VALUES ($1, $2, $3)",
            message.chat.id,
            message.from_user.id,
            message.text,
        )

    ours = Dispatcher()
    setup(ours, memory)  # outer middleware + the direct-request router, no reference agent

    base = 10_000_000
    # Warm up both sides: a chat's first message asks Telegram for its auto-delete timer and
    # creates its workspace, once; then ANALYZE, as autovacuum would have done in a database
    # that has been running (a fresh one plans its first thousands of inserts without stats).
    for i in range(200):
        await bare.feed_update(bot, update(3 * base + i))
        await ours.feed_update(bot, update(4 * base + i))
    await pool.execute("ANALYZE")
    baseline = await timed(UPDATES, lambda i: bare.feed_update(bot, update(base + i)))
    ours_us = await timed(UPDATES, lambda i: ours.feed_update(bot, update(2 * base + i)))
    recorded = await pool.fetchval("SELECT count(*) FROM messages")
    assert recorded >= UPDATES * 5, "the middleware did not record"
    return {
        "ingress_baseline_us": baseline,
        "ingress_ours_us": ours_us,
        "ingress_ratio": ours_us / baseline,
    }


async def fill(
    memory: Memory,
    scope: Scope,
    index_line_chars: int = 360,
    words: Callable[[], str] | None = None,
    rng: random.Random | None = None,
) -> None:
    """256 records of ~3 KB in the scope's workspace, the first 12 indexed."""
    now = datetime.now(UTC)
    rng = rng or random.Random(7)
    async with memory.store.locked(scope.workspace, create=True) as tx:
        for i in range(RECORDS):
            await tx.add_record(
                MemoryRecord(
                    id=f"mem_{i:012d}",
                    scope_key=scope.key,
                    origin="extracted",
                    title=f"record {i}",
                    summary=prose(rng, 3000, words),
                    speaker_ids=[9],
                    thread_ids=[0],
                    sources=[
                        SourceRef(message_id=i * 2 + k, hash="0" * 32, speaker_id=9)
                        for k in range(2)
                    ],
                    created_at=now,
                    last_used_at=now,
                ),
                now,
            )
        state = await tx.scope(scope)
        ids = [f"mem_{i:012d}" for i in range(12)]
        state.index.text = "\n".join(f"- {m}: " + "x" * index_line_chars for m in ids)
        state.index.memory_ids, state.index.built_at, state.index.pending = ids, now, False
        tx.save(state)


async def bench_recall(memory: Memory) -> dict[str, float]:
    scope = Scope(workspace="bench-recall", bot_id=1, kind="private", chat_id=9, user_id=9)
    await fill(memory, scope)
    pool = memory.store.pool
    raw = await timed(
        RECALLS,
        lambda _: pool.fetchval("SELECT version FROM workspaces WHERE id = $1", scope.workspace),
    )
    ours = await timed(RECALLS, lambda _: memory.recall(scope))
    assert (await memory.recall(scope)).mode == "index"

    def asked(i: int) -> str:
        return f"what did we say about the {WORDS[i % len(WORDS)]} {WORDS[i * 7 % len(WORDS)]}?"

    # An index of ~2.2 KB (a full one, 4.5 KB, leaves the block's 6,000 bytes little room).
    asking = Scope(workspace="bench-matches", bot_id=1, kind="private", chat_id=9, user_id=9)
    await fill(memory, asking, index_line_chars=160)
    assert len((await memory.recall(asking, message=asked(1))).matches) >= 2, "nothing matched"
    raw_p95 = await p95(
        RECALLS,
        lambda _: pool.fetchval("SELECT version FROM workspaces WHERE id = $1", asking.workspace),
    )
    matched_p95 = await p95(RECALLS, lambda i: memory.recall(asking, message=asked(i)))
    # The same with words as people use them: a query's words are in some records, not all.
    rng = random.Random(11)
    words = vocabulary(rng)
    typical = Scope(workspace="bench-typical", bot_id=1, kind="private", chat_id=9, user_id=9)
    await fill(memory, typical, index_line_chars=160, words=words, rng=rng)
    questions = [f"what did we say about the {words()} and {words()}?" for _ in range(RECALLS)]
    typical_p95 = await p95(
        RECALLS, lambda i: memory.recall(typical, message=questions[i % RECALLS])
    )
    return {
        "recall_baseline_us": raw,
        "recall_ours_us": ours,
        "recall_ratio": ours / raw,
        "matches_baseline_p95_us": raw_p95,
        "matches_ours_p95_us": matched_p95,
        "matches_ratio": matched_p95 / raw_p95,
        "typical_ours_p95_us": typical_p95,
        "typical_ratio": typical_p95 / raw_p95,
    }


async def bench_commit(memory: Memory) -> dict[str, float]:
    scope = Scope(workspace="bench-commit", bot_id=1, kind="private", chat_id=8, user_id=8)
    await fill(memory, scope)
    pool = memory.store.pool
    await pool.execute("CREATE TABLE IF NOT EXISTS bench_small (id int PRIMARY KEY, n bigint)")
    await pool.execute("INSERT INTO bench_small VALUES (1, 0) ON CONFLICT DO NOTHING")
    sources = []
    for i in range(5 * COMMITS):
        text = f"remember that box {i} is on shelf {i % 17}"
        source = await memory.record(scope, text=text, speaker_id=8)
        assert source is not None
        sources.append(source)
    request = recognize(sources[0].text)
    assert request is not None
    raw = await timed(
        COMMITS, lambda _: pool.execute("UPDATE bench_small SET n = n + 1 WHERE id = 1")
    )
    ours = await timed(COMMITS, lambda i: memory.control(request, sources[i]))
    count = await pool.fetchval(
        "SELECT count(*) FROM memory_records WHERE workspace_id = $1", scope.workspace
    )
    assert count == RECORDS, "the cap holds"
    return {"commit_baseline_us": raw, "commit_ours_us": ours, "commit_ratio": ours / raw}


async def bench_forget(memory: Memory) -> dict[str, float]:
    """One forget by ID (as the screen's button does) in a workspace at the cap."""
    scope = Scope(workspace="bench-forget", bot_id=1, kind="private", chat_id=5, user_id=5)
    await fill(memory, scope)
    notes = []
    for i in range(5 * FORGETS):  # within the cap and the speaker's share of it
        text = f"remember that parcel {i} is in locker {i % 11}"
        source = await memory.record(scope, text=text, speaker_id=5)
        assert source is not None
        request = recognize(text)
        assert request is not None
        notes.append((await memory.control(request, source)).memory_ids[0])
        await memory.finish(  # as the adapter closes a note's request
            source, status="succeeded", answer_text="Noted.", bot_id=1, kind="memory_control"
        )
    owner = Membership(member=True, admin=True, reason="private-owner")
    raw = await timed(
        FORGETS,
        lambda _: memory.store.pool.execute("UPDATE bench_small SET n = n + 1 WHERE id = 1"),
    )

    async def forget(i: int) -> None:
        result = await forget_record(
            memory.store, scope, notes[i], actor_id=5, who=owner, now=datetime.now(UTC)
        )
        assert result.outcome == "forgotten"

    ours = await timed(FORGETS, forget)
    return {"forget_baseline_us": raw, "forget_ours_us": ours, "forget_ratio": ours / raw}


async def bench_extraction_commit(memory: Memory) -> dict[str, float]:
    """One extraction job run from its checkpointed model answer, in a workspace at the cap."""
    scope = Scope(workspace="bench-extract", bot_id=1, kind="private", chat_id=4, user_id=4)
    await fill(memory, scope)
    pool, ctx = memory.store.pool, memory.pipeline.ctx
    later = datetime.now(UTC) + timedelta(hours=1)  # past every idle window
    samples = []
    for i in range(EXTRACTIONS):
        source = await memory.record(
            scope, text=f"we moved stand-up to {i} past nine", speaker_id=4
        )
        assert source is not None
        await memory.begin(source)
        await memory.finish(source, status="succeeded", answer_text="noted", bot_id=1)
        await plan_due(ctx, later)
        await pool.execute(  # other benches' index rebuilds are not what is measured here
            "UPDATE memory_jobs SET phase = 'done' WHERE phase IN ('extract', 'consolidate')"
            " AND NOT (workspace_id = $1 AND phase = 'extract')",
            scope.workspace,
        )
        job = await ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
        assert job is not None and job.phase == "extract"
        answer = ExtractionOutput(
            title=f"stand-up {i}",
            summary=f"Stand-up is at {i} past nine.",
            source_ids=[s.id for s in job.snapshot.sources],
        )
        await ctx.store.jobs.save_checkpoint(job, "extract", answer.model_dump())
        start = time.perf_counter()
        phase = await memory.pipeline.run_job(job, later)
        samples.append((time.perf_counter() - start) * 1e6)
        assert phase == "done", phase
    raw = await timed(
        EXTRACTIONS, lambda _: pool.execute("UPDATE bench_small SET n = n + 1 WHERE id = 1")
    )
    ours = statistics.median(samples)
    return {"extract_baseline_us": raw, "extract_ours_us": ours, "extract_ratio": ours / raw}


async def bench_expiry(memory: Memory) -> dict[str, float]:
    """One expiry pass that erases one message and the note built on it, in a workspace at the
    cap, against the same small raw UPDATE and against one remember commit."""
    scope = Scope(workspace="bench-expiry", bot_id=1, kind="private", chat_id=6, user_id=6)
    await fill(memory, scope)
    pool = memory.store.pool
    start = datetime.now(UTC) + timedelta(days=1)
    for i in range(5 * EXPIRIES):  # within the cap and the share: every note is still there
        text = f"remember that crate {i} is in bay {i % 13}"
        source = await memory.record(scope, text=text, speaker_id=6)
        assert source is not None
        request = recognize(text)
        assert request is not None
        await memory.control(request, source)
        await pool.execute(
            "UPDATE messages SET retain_until = $3 WHERE workspace_id = $1 AND id = $2",
            scope.workspace,
            source.message_id,
            start + timedelta(seconds=i),
        )
    raw = await timed(
        EXPIRIES, lambda _: pool.execute("UPDATE bench_small SET n = n + 1 WHERE id = 1")
    )

    async def one_pass(i: int) -> None:
        report = await expire_due(memory.store, start + timedelta(seconds=i, milliseconds=500))
        assert report.messages == 1 and report.records == 1

    ours = await timed(EXPIRIES, one_pass)
    return {"expiry_baseline_us": raw, "expiry_ours_us": ours, "expiry_ratio": ours / raw}


async def bench_membership(memory: Memory) -> dict[str, float]:
    group = Scope(workspace="bench-g", bot_id=1, kind="shared", chat_id=-7, topic_id=0)

    async def lookup(chat_id: int, user_id: int) -> MemberStatus:
        return MemberStatus(status="member")

    gate = memory.gate(group, Requester(user_id=5, chat_id=-7), lookup)
    assert (await gate.membership()).member  # fills the cache
    plain = {(1, -7, 5): "member"}

    async def dict_lookup(_: int) -> object:
        return plain.get((1, -7, 5))

    raw = await timed(MEMBERSHIP, dict_lookup)
    ours = await timed(MEMBERSHIP, lambda _: gate.membership())
    return {"member_baseline_us": raw, "member_ours_us": ours, "member_ratio": ours / raw}


async def run_async() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bm-bench-") as tmp:
        # Per-chat workspaces; 50 chats each send hundreds of messages as fast as they can, a
        # flood by the fair-share rules: those run (their cost is measured) but do not limit.
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
            results.update(await bench_recall(memory))
            results.update(await bench_commit(memory))
            results.update(await bench_forget(memory))
            results.update(await bench_extraction_commit(memory))
            results.update(await bench_expiry(memory))
            results.update(await bench_membership(memory))
        finally:
            await bot.session.close()
            await emu.stop()
            await memory.close()
    return results


def run() -> dict[str, float]:
    return asyncio.run(run_async())


def report(results: dict[str, float]) -> None:
    print(
        f"ingress per update: ours {results['ingress_ours_us']:.0f} us vs bare dispatch + raw "
        f"INSERT {results['ingress_baseline_us']:.0f} us -> ratio {results['ingress_ratio']:.2f}"
        " (goal 1.5)"
    )
    print(
        f"recall per request ({RECORDS} records of ~3 KB in the workspace): ours "
        f"{results['recall_ours_us']:.0f} us vs raw single-row SELECT "
        f"{results['recall_baseline_us']:.0f} us -> ratio {results['recall_ratio']:.2f}"
    )
    print(
        f"recall with the message's matches, p95: ours {results['matches_ours_p95_us']:.0f} us"
        f" vs raw single-row SELECT p95 {results['matches_baseline_p95_us']:.0f} us -> ratio "
        f"{results['matches_ratio']:.1f} (every record holds the message's words; goal: within"
        " 3 ms)"
    )
    print(
        f"recall with the message's matches, words as people use them (Zipf), p95: ours "
        f"{results['typical_ours_p95_us']:.0f} us -> ratio {results['typical_ratio']:.1f}"
    )
    print(
        f"remember commit at the {RECORDS}-record cap: ours {results['commit_ours_us']:.0f} us"
        f" vs small raw UPDATE {results['commit_baseline_us']:.0f} us -> ratio "
        f"{results['commit_ratio']:.1f} (goal 4)"
    )
    for key, what in (("forget", "forget by ID"), ("extract", "extraction commit")):
        print(
            f"{what} at the {RECORDS}-record cap: ours {results[key + '_ours_us']:.0f} us vs small"
            f" raw UPDATE {results[key + '_baseline_us']:.0f} us -> ratio"
            f" {results[key + '_ratio']:.1f} (goal 5)"
        )
    print(
        f"expiry pass erasing one message and its record, workspace at the cap: ours "
        f"{results['expiry_ours_us']:.0f} us vs small raw UPDATE "
        f"{results['expiry_baseline_us']:.0f} us -> ratio {results['expiry_ratio']:.1f}"
        f" (goal 6; {results['expiry_ours_us'] / results['commit_ours_us']:.2f}x one remember"
        " commit)"
    )
    print(
        f"membership check (cache hit): ours {results['member_ours_us']:.2f} us vs dict lookup "
        f"{results['member_baseline_us']:.2f} us -> ratio {results['member_ratio']:.1f}"
    )


if __name__ == "__main__":
    report(run())
