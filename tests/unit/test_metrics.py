"""The metrics without a database: fixed label sets, one registry per Memory, the documented
series list, and memory without prometheus-client installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

from prometheus_client.parser import text_string_to_metric_families

from bot_memory.metrics import INSTALL_HINT, RECALL_MODES, SERIES, Metrics, exposed_name
from bot_memory.retrieval.recall import RecallMode

ROOT = Path(__file__).resolve().parents[2]


def values(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
    }


def test_recall_modes_are_the_retrievals() -> None:
    assert set(RECALL_MODES) == {*get_args(RecallMode), "other"}


def test_values_outside_a_set_are_counted_as_other() -> None:
    metrics = Metrics()
    metrics.message_skipped("a user's text")
    metrics.tool_call("chat -100777", "ok")
    metrics.model_call("memory_extract", "ok", prompt_tokens=10, completion_tokens=2)
    found = values(metrics)
    assert found[("bot_memory_messages_skipped_total", (("reason", "other"),))] == 1
    assert found[("bot_memory_tool_calls_total", (("outcome", "ok"), ("tool", "other")))] == 1
    calls = ("bot_memory_model_calls_total", (("kind", "extraction"), ("outcome", "ok")))
    assert found[calls] == 1


def test_two_memories_count_apart() -> None:
    first, second = Metrics(), Metrics()
    first.message_recorded()
    assert values(first)[("bot_memory_messages_recorded_total", ())] == 1
    assert values(second)[("bot_memory_messages_recorded_total", ())] == 0


def test_off_counts_nothing_and_says_so() -> None:
    metrics = Metrics(enabled=False)
    metrics.message_recorded()  # returns at once
    try:
        metrics.render()
    except RuntimeError as exc:
        assert "BOT_MEMORY_METRICS_ENABLED" in str(exc)
    else:
        raise AssertionError("render() of metrics that are off")


def test_every_series_is_documented() -> None:
    page = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
    missing = [exposed_name(n) for n in SERIES if f"| `{exposed_name(n)}` |" not in page]
    assert missing == []


def test_memory_works_without_prometheus_client() -> None:
    # A fresh interpreter in which the package cannot be imported: memory's modules load,
    # nothing is counted, and asking for the metrics says what to install, in one line.
    script = """
import sys
sys.modules["prometheus_client"] = None  # import fails as if not installed
import bot_memory.service, bot_memory_aiogram.metrics
from bot_memory.metrics import Metrics, MetricsUnavailable, available
m = Metrics()
assert not available() and not m.enabled
m.message_recorded(); m.model_call("answer", "ok", prompt_tokens=3)
try:
    m.render()
except MetricsUnavailable as exc:
    print(exc)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == INSTALL_HINT
    assert "\n" not in INSTALL_HINT
