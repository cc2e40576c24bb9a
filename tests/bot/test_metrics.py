"""/metrics and /healthz over HTTP after a scripted conversation: the numbers, the labels (only
fixed values, never a chat, a user or a text), and health turning 503 with the database gone."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot_memory.metrics import ALLOWED_LABELS, SERIES, exposed_name
from bot_memory_aiogram.metrics import serve
from tests.support.e2e import Env, wait_until

pytestmark = pytest.mark.slow

USER = 1001
KEY = "sk-proj-" + "Zq7" * 16  # a credential in a message: redacted before the model sees it


def parse(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Exposed sample name -> sorted labels -> value (created timestamps left out)."""
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.endswith("_created"):
                continue
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def value(samples: dict[str, Any], name: str, **labels: str) -> float:
    return float(samples[name].get(tuple(sorted(labels.items())), 0.0))


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


async def test_metrics_and_health_over_http(env: Env) -> None:
    runner = await serve(env.memory, host="127.0.0.1", port=0)
    try:
        host, port = runner.addresses[0][:2]
        base = f"http://{host}:{port}"
        await _conversation(env, base)
    finally:
        await runner.cleanup()


async def _conversation(env: Env, base: str) -> None:
    # 1. A directed message answered by the reference agent (a chat model call).
    sent = await env.say(1, chat_id=USER, user_id=USER, text=f"I plan a trip to Kyoto, key {KEY}")
    assert sent["text"].startswith("fake answer:")

    # 2. The worker's tick extracts it (and consolidates the scope).
    async def consolidated() -> bool:
        rows = await env.rows("SELECT 1 FROM usage_ledger WHERE kind = 'memory_consolidate'")
        return len(rows) >= 1

    await wait_until(consolidated)
    # 3. Remember and forget, answered without the model; a photo without text is skipped.
    sent = await env.say(2, chat_id=USER, user_id=USER, text="remember that I like green tea")
    assert sent["text"] == "Noted. I'll remember that."
    await env.say(3, chat_id=USER, user_id=USER, text="forget that I like green tea")
    env.emu.push_message(chat_id=USER, user_id=USER, photo=True)

    async def settled() -> bool:
        samples = parse((await get(f"{base}/metrics"))[1])
        closed = sum(samples.get("bot_memory_requests_total", {}).values())
        skipped = value(samples, "bot_memory_messages_skipped_total", reason="non_text")
        return closed >= 3 and skipped == 1

    await wait_until(settled)
    await env.memory.worker.stop()  # nothing moves while the numbers are compared

    status, text = await get(f"{base}/metrics")
    assert status == 200
    samples = parse(text)
    ledger = {
        (r["kind"], r["outcome"]): r["n"]
        for r in await env.rows(
            "SELECT kind, outcome, count(*) AS n FROM usage_ledger"
            " WHERE provider IS NOT NULL GROUP BY kind, outcome"
        )
    }
    assert value(samples, "bot_memory_messages_recorded_total") == 3
    assert value(samples, "bot_memory_messages_skipped_total", reason="non_text") == 1
    assert value(samples, "bot_memory_requests_total", outcome="answered") == 3
    assert value(samples, "bot_memory_requests_total", outcome="failed") == 0
    assert value(samples, "bot_memory_recalls_total", mode="empty") == 1  # the first request
    # Model calls as the ledger has them: one answer, the worker's extraction and consolidation.
    assert value(samples, "bot_memory_model_calls_total", kind="chat", outcome="ok") == 1
    for kind, ledger_kind in (
        ("extraction", "memory_extract"),
        ("consolidation", "memory_consolidate"),
    ):
        assert (
            value(samples, "bot_memory_model_calls_total", kind=kind, outcome="ok")
            == ledger[(ledger_kind, "ok")]
        )
    assert ledger[("memory_extract", "ok")] == 1
    for kind in ("chat", "extraction"):
        for direction in ("prompt", "completion"):
            assert (
                value(samples, "bot_memory_model_tokens_total", kind=kind, direction=direction) > 0
            )
    assert value(samples, "bot_memory_model_unknown_outcomes_total", kind="chat") == 0
    assert value(samples, "bot_memory_redactions_total") >= 1  # the key, in the model's input
    assert value(samples, "bot_memory_worker_ticks_total", outcome="ok") >= 1
    assert value(samples, "bot_memory_pool_max_connections", pool="main") == (
        env.memory.settings.db_pool_max
    )
    assert value(samples, "bot_memory_jobs", state="done") >= 1
    assert value(samples, "bot_memory_pipeline_lag_seconds") >= 0

    # Every series is there, and every label value is one of its fixed set: no chat ID, user
    # ID, workspace or text ever becomes a label.
    assert {exposed_name(name) for name in SERIES} <= set(samples)
    for name, series in samples.items():
        allowed = ALLOWED_LABELS[name]
        for labels in series:
            for label, label_value in labels:
                assert label in allowed, (name, label)
                assert label_value in allowed[label], (name, label, label_value)
    for forbidden in (str(USER), "test", "Kyoto", "green tea"):
        assert f'"{forbidden}"' not in text

    # Health: the database answers and the worker ticked; then the database goes away.
    status, body = await get(f"{base}/healthz")
    assert status == 200, body
    await env.memory.db.pool.close()
    status, body = await get(f"{base}/healthz")
    assert status == 503 and '"database": {"ok": false' in body
    samples = parse((await get(f"{base}/metrics"))[1])
    assert value(samples, "bot_memory_database_errors_total", operation="health") >= 1
