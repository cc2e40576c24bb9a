"""A worker runs the jobs pinned to the model it calls; others wait for a process that can, and
`bot-memory status` says which worker lacks what."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiogram import Dispatcher, F, Router
from aiogram.types import Message

from bot_memory.cli import commands as cli
from bot_memory.intents import recognize
from bot_memory.models import Pin
from bot_memory.pipeline.pins import lacks, planned_pin, verdict
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory_aiogram import setup
from tests.conftest import make_settings
from tests.support.fake_openai import FakeOpenAI

SCOPE = Scope(workspace="test", bot_id=42, kind="private", chat_id=7, user_id=7)
BOTS = Pin("openai-compatible:api.openai.com", "gpt-4o")
OFFLINE = Pin("offline", "bot-memory-offline-1")


def test_a_worker_runs_its_own_replans_what_the_bot_moved_from_and_leaves_the_rest() -> None:
    assert verdict(BOTS, BOTS, BOTS) == "run"
    assert verdict(BOTS, OFFLINE, BOTS) == "leave"  # started without the bot's settings
    assert verdict(BOTS, OFFLINE, None) == "leave"
    assert verdict(OFFLINE, BOTS, BOTS) == "replan"  # the bot moved to a real model since
    other_model = Pin(BOTS.provider, "gpt-4o-mini")
    assert verdict(BOTS, other_model, BOTS) == "leave"
    assert planned_pin(BOTS, OFFLINE, BOTS) == BOTS
    assert planned_pin(OFFLINE, BOTS, BOTS) == BOTS
    assert planned_pin(None, OFFLINE, None) == OFFLINE
    assert "offline model" in lacks(OFFLINE, BOTS)
    assert "the server openai-compatible:api.openai.com" in lacks(Pin("x:h", "gpt-4o"), BOTS)
    assert "the model gpt-4o " in lacks(other_model, BOTS)


@pytest.fixture
async def bot(db_url: str, llm: FakeOpenAI) -> AsyncIterator[Memory]:
    """The bot's Memory: the fake server's "fake-model" (its worker is not started)."""
    memory = await Memory.open(
        make_settings(db_url, llm_base_url=llm.base_url, llm_api_key="k", llm_model="fake-model")
    )
    yield memory
    await memory.close()


async def finished_exchange(memory: Memory, text: str) -> None:
    source = await memory.record(SCOPE, text=text, speaker_id=7)
    assert source is not None
    await memory.begin(source)
    await memory.finish(source, status="succeeded", answer_text="ok", bot_id=42)


async def waiting_jobs(memory: Memory) -> list[tuple[str, str, str, int]]:
    rows = await memory.store.pool.fetch(
        "SELECT phase, provider, model, claims FROM memory_jobs"
        " WHERE phase IN ('extract', 'consolidate') ORDER BY id"
    )
    return [(r["phase"], r["provider"], r["model"], r["claims"]) for r in rows]


async def status(
    db_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[str, dict[str, object]]:
    monkeypatch.setenv("DATABASE_URL", db_url)
    capsys.readouterr()
    assert await cli.run_command(["status"]) == 0
    text = capsys.readouterr().out
    assert await cli.run_command(["status", "--json"]) == 0
    out = capsys.readouterr().out
    return text, json.loads(out[out.index("{") :])


async def test_a_worker_without_the_bots_model_leaves_its_jobs_and_says_what_it_lacks(
    bot: Memory,
    db_url: str,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # `bot-memory worker` started without the bot's settings: the offline model.
    worker = await Memory.open(make_settings(db_url))
    try:
        await finished_exchange(bot, "we chose Kafka for the event bus")
        report = await worker.pipeline.tick()
        assert report.finished == {}
        # Planned for the bot's model, and left for a process that calls it: no claim spent.
        assert await waiting_jobs(bot) == [("extract", bot.model.provider, "fake-model", 0)]
        assert await bot.store.pool.fetchval("SELECT count(*) FROM memory_records") == 0

        text, report_json = await status(db_url, monkeypatch, capsys)
        assert "waiting for a model no live worker calls" in text
        assert worker.pipeline.worker_id in text and "a model server" in text
        assert f"fake-model at {bot.model.provider}" in text
        [waiting] = report_json["waiting"]  # type: ignore[misc]
        assert (waiting["provider"], waiting["model"], waiting["jobs"]) == (
            bot.model.provider,
            "fake-model",
            1,
        )
        [short] = waiting["lacking"]
        assert short["worker"] == worker.pipeline.worker_id and short["provider"] == "offline"

        # A worker that calls the bot's model (here the bot's own) runs it.
        await bot.pipeline.tick()
        assert len(llm.requests_by_purpose("memory_extraction")) == 1
        assert await bot.store.pool.fetchval("SELECT count(*) FROM memory_records") == 1
        text, report_json = await status(db_url, monkeypatch, capsys)
        assert report_json["waiting"] == [] and "waiting for a model" not in text
    finally:
        await worker.close()


async def test_a_worker_on_another_server_leaves_the_bots_consolidation(
    bot: Memory,
    db_url: str,
    llm: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = "remember that the retro is on Fridays"
    source = await bot.record(SCOPE, text=text, speaker_id=7)
    assert source is not None
    await bot.begin(source, kind="memory_control")
    request = recognize(text)
    assert request is not None
    await bot.control(request, source)
    await bot.finish(source, status="succeeded", answer_text="Noted.", bot_id=42)
    # The same model name on another server (another base URL) is another model.
    async with FakeOpenAI(api_key="k") as elsewhere:
        worker = await Memory.open(
            make_settings(
                db_url, llm_base_url=elsewhere.base_url, llm_api_key="k", llm_model="fake-model"
            )
        )
        try:
            assert worker.model.provider != bot.model.provider
            await worker.pipeline.tick()
            assert elsewhere.requests == []
            assert await waiting_jobs(bot) == [("consolidate", bot.model.provider, "fake-model", 0)]
            shown, _ = await status(db_url, monkeypatch, capsys)
            assert f"the server {bot.model.provider} (it calls {worker.model.provider})" in shown
        finally:
            await worker.close()
    await bot.pipeline.tick()
    assert len(llm.requests_by_purpose("memory_consolidation")) == 1
    assert await waiting_jobs(bot) == []


def host_answering_without_memory(memory: Memory) -> Dispatcher:
    """A host whose own handler answers (its own LLM, say) and never calls memory's model:
    its requests are not pinned, so the bot's recorded model is what its jobs want."""
    dp = Dispatcher()
    router = Router()

    @router.message(F.text)
    async def answer(message: Message) -> None:
        await message.answer("sure")

    dp.include_router(router)
    setup(dp, memory)
    return dp


@pytest.mark.slow  # whole bots over HTTP
async def test_the_bot_records_its_model_at_start_and_a_worker_follows_it(db_url: str) -> None:
    from bot_memory_aiogram.testing import running_bot

    async with running_bot(host_answering_without_memory, database_url=db_url) as bot:
        assert await bot.say("we chose Kafka for the event bus") == "sure"
        wanted = (bot.memory.model.provider, "fake-model")
        # `bot-memory worker` without the bot's settings: it leaves the bot's conversation.
        worker = await Memory.open(make_settings(db_url, workspace=None))
        try:
            await worker.pipeline.tick()
        finally:
            await worker.close()
        assert [(p, m) for _, p, m, _ in await waiting_jobs(bot.memory)] == [wanted]
        assert await bot.memories() == []
    # The bot restarts on another model server; no one writes in that chat again. The job
    # planned for the old server is planned again under the new one (a configuration change).
    async with running_bot(
        host_answering_without_memory, database_url=db_url, llm_model="new-model"
    ) as bot:
        await bot.say("hello", chat_id=2002, user_id=2002)  # another chat: the bot has started
        await bot.idle()
        models = {r.get("model") for r in bot.llm.requests_by_purpose("memory_extraction")}
        assert models == {"new-model"}
        assert any("Kafka" in m for m in await bot.memories())
        assert await waiting_jobs(bot.memory) == []


async def test_status_names_the_settings_a_worker_runs_with_differently_from_the_bot(
    bot: Memory,
    db_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await bot.serve_bot(42)  # the bot at start (setup() does it), its idle window 0
    worker = await Memory.open(make_settings(db_url, idle_window_seconds=1800))
    try:
        await worker.pipeline.tick()
        text, report_json = await status(db_url, monkeypatch, capsys)
        assert report_json["disagreements"] == [
            {
                "worker": worker.pipeline.worker_id,
                "bot_id": 42,
                "setting": "idle_window_seconds",
                "worker_value": 1800.0,
                "bot_value": 0.0,
            }
        ]
        assert "running with other settings than the bot" in text
        assert "idle_window_seconds = 1800.0 (bot 42: 0.0)" in text
    finally:
        await worker.close()
    # A worker with the bot's settings: nothing to say.
    same = await Memory.open(make_settings(db_url))
    try:
        await same.pipeline.tick()
        text, report_json = await status(db_url, monkeypatch, capsys)
        assert report_json["disagreements"] == [] and "other settings" not in text
    finally:
        await same.close()
