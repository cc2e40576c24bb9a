"""A webhook bot (`bot-memory run`) killed with SIGKILL in the middle of a burst, then started
again: Telegram (the test kit's emulator) delivers the update it never got an answer for again,
and every directed message is answered once and recorded once, with no note lost."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import asyncpg

from bot_memory_aiogram.testing import BotAPIEmulator
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]
USERS = range(301, 307)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start(env: dict[str, str], cwd: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "bot_memory", "run", "--log-level", "warning"),
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


async def replies_on_record(db_url: str, emu: BotAPIEmulator, count: int) -> None:
    """Until `count` replies were sent and as many requests closed."""
    conn = await asyncpg.connect(db_url)
    try:
        closed = 0
        for _ in range(1000):
            closed = await conn.fetchval(
                "SELECT count(*) FROM requests"
                " WHERE status IN ('succeeded', 'failed', 'unanswered')"
            )
            if len(emu.sent) >= count and closed >= count:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"{len(emu.sent)} replies sent, {closed} requests closed")
    finally:
        await conn.close()


async def test_a_webhook_bot_killed_mid_burst_answers_each_message_once(
    db_url: str, tmp_path: Path
) -> None:
    port = free_port()
    async with BotAPIEmulator() as emu, FakeOpenAI(api_key="k") as llm:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("BOT_MEMORY_", "LLM_"))},
            "BOT_TOKEN": emu.token,
            "TELEGRAM_API_URL": emu.base_url,
            "DATABASE_URL": db_url,
            "LLM_BASE_URL": llm.base_url,
            "LLM_API_KEY": "k",
            "LLM_MODEL": "fake-model",
            "BOT_MEMORY_WEBHOOK_URL": f"http://127.0.0.1:{port}/hook",
            "BOT_MEMORY_WEBHOOK_PORT": str(port),
            "BOT_MEMORY_WEBHOOK_SECRET": "s3cret-token-for-the-crash-test",
            "BOT_MEMORY_RUN_WORKER": "false",
            "PYTHONPATH": str(ROOT),
        }
        proc = await start(env, tmp_path)
        try:
            await emu.wait_for_calls("setWebhook", timeout=60)
            # The burst: each user a note, then a question; the first two questions are
            # answered, the others' model calls hang, and the bot is killed while they wait
            # (recorded, not answered).
            llm.script("fake answer: one", "fake answer: two", *["hold"] * (len(USERS) - 2))
            for user in USERS:
                emu.push_message(
                    chat_id=user, user_id=user, text=f"remember that my code is K{user}"
                )
                emu.push_message(chat_id=user, user_id=user, text="what is my code?")
            await llm.wait_for_requests(len(USERS), timeout=60)
            # Killed with nothing in flight but the held calls, every reply sent (the notes and
            # two answers) on record: a reply Telegram took in the moment before its request
            # closed would be sent again (at least once: the Bot API cannot say whether it was
            # sent; docs/operating.md says so).
            await replies_on_record(db_url, emu, count=len(USERS) + 2)
            proc.send_signal(signal.SIGKILL)
            await asyncio.wait_for(proc.communicate(), 30)
            llm.release()  # its caller is gone
            proc = await start(env, tmp_path)
            await emu.wait_for_sent(2 * len(USERS), timeout=90)
            await asyncio.sleep(0.5)  # nothing more comes
        finally:
            proc.send_signal(signal.SIGINT)
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
        assert b"Traceback" not in out, out.decode()[-2000:]
        replies: dict[int, list[str]] = {}
        for call in emu.sent:
            replies.setdefault(int(call.params["chat_id"]), []).append(str(call.params["text"]))
        assert sorted(replies) == list(USERS)
        assert all(len(said) == 2 for said in replies.values()), replies  # each message once
        conn = await asyncpg.connect(db_url)
        try:
            rows = await conn.fetch(
                "SELECT m.chat_id, m.telegram_message_id, m.text, r.status, r.error FROM messages m"
                " JOIN requests r ON r.workspace_id = m.workspace_id AND r.user_message_id = m.id"
                " WHERE m.role = 'user'"
            )
            notes = await conn.fetch("SELECT summary FROM memory_records WHERE origin = 'note'")
        finally:
            await conn.close()
        assert len(rows) == 2 * len(USERS)  # recorded once each
        assert len({(r["chat_id"], r["telegram_message_id"]) for r in rows}) == len(rows)
        errors = [r["error"] for r in rows if r["error"]]
        assert {r["status"] for r in rows} == {"succeeded"}, errors  # answered, not refused
        assert sorted(n["summary"] for n in notes) == sorted(f"my code is K{u}" for u in USERS)
        assert not emu.dropped_updates
