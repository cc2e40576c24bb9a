"""`python -m bot_memory run` as a user starts it: env vars only, loopback servers, then SIGINT.

One subprocess (aiogram's import costs seconds), against the Bot API emulator and the fake
OpenAI server running in this test's loop, on a database of the test server.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import sys
from pathlib import Path

import aiohttp
import asyncpg

from bot_memory_aiogram.testing import BotAPIEmulator
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]


async def test_run_answers_extracts_and_recalls_per_scope(db_url: str, tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Qx9" * 30
    async with BotAPIEmulator() as emu, FakeOpenAI(api_key="k") as llm:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("BOT_MEMORY_", "LLM_"))},
            "BOT_TOKEN": emu.token,
            "TELEGRAM_API_URL": emu.base_url,
            "DATABASE_URL": db_url,
            "LLM_BASE_URL": llm.base_url,
            "LLM_API_KEY": "k",
            "LLM_MODEL": "fake-model",
            "BOT_MEMORY_IDLE_WINDOW_SECONDS": "1",
            "BOT_MEMORY_TICK_INTERVAL_SECONDS": "0.5",
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot_memory",
            "run",
            "--log-level",
            "warning",
            cwd=tmp_path,
            env={**env, "PYTHONPATH": str(ROOT)},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            emu.push_message(
                chat_id=11, user_id=11, text=f"my anthropic key is {key}, deploy Monday"
            )
            await emu.wait_for_sent(1, timeout=60)
            emu.push_message(
                chat_id=-100900,
                user_id=21,
                chat_type="supergroup",
                text="@memory_test_bot the budget review is on Thursday",
            )
            await emu.wait_for_sent(2, timeout=30)
            deadline = asyncio.get_running_loop().time() + 30
            while len(llm.requests_by_purpose("memory_consolidation")) < 2:
                assert asyncio.get_running_loop().time() < deadline, "no consolidation"
                await asyncio.sleep(0.1)
            extraction = json.dumps(llm.requests_by_purpose("memory_extraction"))
            assert key not in extraction and "deploy Monday" in extraction

            before = len(llm.chat_requests())
            emu.push_message(chat_id=11, user_id=11, text="when do we deploy?")
            await emu.wait_for_sent(3, timeout=30)
            prompt = json.dumps(llm.chat_requests()[before])
            assert "memory_context" in prompt and "deploy Monday" in prompt
            assert "budget review" not in prompt and key not in prompt
        finally:
            proc.send_signal(signal.SIGINT)
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, out.decode()[-2000:]
        assert b"Traceback" not in out, out.decode()[-2000:]


def free_port() -> int:
    """A free port below Linux's ephemeral range (32768-60999), so that no server another test
    starts on port 0 meanwhile can be handed it before `run` listens on it."""
    rng = random.Random()
    while True:
        port = rng.randint(20_000, 30_000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port


async def test_run_takes_updates_by_webhook(db_url: str, tmp_path: Path) -> None:
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
            "BOT_MEMORY_WEBHOOK_URL": f"http://127.0.0.1:{port}/telegram/hook",
            "BOT_MEMORY_WEBHOOK_PORT": str(port),
            "PYTHONPATH": str(ROOT),
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "bot_memory", "run", "--log-level", "warning"),
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            await emu.wait_for_calls("setWebhook", timeout=60)
            [hook] = emu.calls_to("setWebhook")
            # No secret was configured: one is made, and a post without it is refused.
            assert len(hook.params["secret_token"]) >= 32
            async with aiohttp.ClientSession() as http:
                forged = {"update_id": 1, "message": {"message_id": 1, "date": 0, "text": "hi",
                          "chat": {"id": 12, "type": "private"}}}  # fmt: skip
                async with http.post(hook.params["url"], json=forged) as resp:
                    assert resp.status == 401
            emu.push_message(chat_id=12, user_id=12, text="remember that the boat is Aurora")
            [reply] = await emu.wait_for_sent(1, timeout=30)
            assert reply.params["text"] == "Noted. I'll remember that."
            # Telegram is answered once the update is handled, after the reply went out.
            for _ in range(100):
                if emu.webhook_statuses:
                    break
                await asyncio.sleep(0.05)
            assert set(emu.webhook_statuses) == {200}
            conn = await asyncpg.connect(db_url)
            try:
                kept = await conn.fetchval("SELECT string_agg(summary, ' ') FROM memory_records")
            finally:
                await conn.close()
            assert "Aurora" in kept
            assert not emu.calls_to("getUpdates")  # no polling
        finally:
            proc.send_signal(signal.SIGINT)
            out, _ = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, out.decode()[-2000:]
        assert b"Traceback" not in out, out.decode()[-2000:]


async def test_a_webhook_port_in_use_is_one_line_not_a_traceback(
    db_url: str, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        async with BotAPIEmulator() as emu:
            env = {
                **{
                    k: v for k, v in os.environ.items() if not k.startswith(("BOT_MEMORY_", "LLM_"))
                },
                "BOT_TOKEN": emu.token,
                "TELEGRAM_API_URL": emu.base_url,
                "DATABASE_URL": db_url,
                "BOT_MEMORY_WEBHOOK_URL": f"http://127.0.0.1:{port}/telegram/hook",
                "BOT_MEMORY_WEBHOOK_HOST": "127.0.0.1",
                "BOT_MEMORY_WEBHOOK_PORT": str(port),
                "PYTHONPATH": str(ROOT),
            }
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                *("-m", "bot_memory", "run", "--log-level", "warning"),
                cwd=tmp_path,
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1, (out + err).decode()[-2000:]
    assert b"Traceback" not in out + err, (out + err).decode()[-2000:]
    assert f"bot-memory: cannot serve the webhook on 127.0.0.1:{port}:" in err.decode(), err
    assert not emu.calls_to("setWebhook")
