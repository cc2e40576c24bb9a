"""Counters and gauges for Prometheus, one registry per Memory (`memory.metrics`).

Optional: with prometheus-client installed (`pip install 'bot-memory[metrics]'`) every stage
counts into its Memory's own registry (not the process's default one, so two Memory objects in
one process never collide); without it, or with BOT_MEMORY_METRICS_ENABLED=false, every method
here returns at once and nothing is counted.

No label carries user text or an unbounded value (no chat, user or workspace): every label
value comes from one of the fixed sets below, and a value outside its set is counted as
"other". A counter increment is the whole cost on the message path; the gauges that need the
database (jobs by state, pipeline lag) are read when scraped (`Memory.scrape`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from bot_memory.errors import BotMemoryError

try:
    import prometheus_client as _prom
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
    from prometheus_client.registry import Collector
except ImportError:  # metrics are off; asking for them says so (INSTALL_HINT)
    _prom = None  # type: ignore[assignment]

__all__ = [
    "ALLOWED_LABELS",
    "INSTALL_HINT",
    "SERIES",
    "Metrics",
    "MetricsUnavailable",
    "available",
    "exposed_name",
]

INSTALL_HINT = (
    "metrics need prometheus-client, which is not installed: pip install 'bot-memory[metrics]'"
)

# --- the fixed label values ---------------------------------------------------------------------

SKIP_REASONS = ("duplicate", "non_text", "buffered", "buffer_full", "other")
REQUEST_OUTCOMES = ("answered", "unanswered", "failed", "abandoned", "other")
# retrieval.RecallMode, and "other" (a test keeps them equal: the root may not import retrieval)
RECALL_MODES = ("index", "directory", "off", "empty", "unavailable", "denied", "other")
TOOLS = ("query_memories", "manage_memory", "query_chat_history", "other")
TOOL_OUTCOMES = ("ok", "error", "other")
MODEL_KINDS = ("chat", "extraction", "consolidation", "host", "other")
MODEL_OUTCOMES = ("ok", "error", "unknown", "refused", "other")
DIRECTIONS = ("prompt", "completion")
JOB_STATES = ("extract", "consolidate", "done", "failed", "stopped", "other")
POOLS = ("main", "worker")
DB_OPERATIONS = ("record", "close", "settle", "tick", "scrape", "health", "other")
TICK_OUTCOMES = ("ok", "failed")

# The ledger's kinds (billing.Charge.kind) as metric kinds.
_LEDGER_KINDS = {
    "answer": "chat",
    "memory_extract": "extraction",
    "memory_consolidate": "consolidation",
}

Labels = dict[str, tuple[str, ...]]

# Every series: name (without bot_memory_ and _total) -> (type, help, label -> its values).
# "callback" series are read when scraped (pools; the process-wide redaction count).
SERIES: dict[str, tuple[str, str, Labels]] = {
    "messages_recorded": ("counter", "Directed messages recorded", {}),
    "messages_skipped": (
        "counter",
        "Directed messages not recorded, by reason",
        {"reason": SKIP_REASONS},
    ),
    "requests": ("counter", "Requests closed, by outcome", {"outcome": REQUEST_OUTCOMES}),
    "recalls": ("counter", "Recalls given to a request, by what it got", {"mode": RECALL_MODES}),
    "recall_searches": (
        "counter",
        "Searches run for a request's matches (a message naming nothing to look up runs none)",
        {},
    ),
    "tool_calls": (
        "counter",
        "Memory tool calls, by tool and outcome",
        {"tool": TOOLS, "outcome": TOOL_OUTCOMES},
    ),
    "model_calls": (
        "counter",
        "Model calls, by kind and outcome (refused: over a budget, never sent)",
        {"kind": MODEL_KINDS, "outcome": MODEL_OUTCOMES},
    ),
    "model_tokens": (
        "counter",
        "Tokens of model calls, by kind and direction",
        {"kind": MODEL_KINDS, "direction": DIRECTIONS},
    ),
    "model_spend_usd": ("counter", "Model spend in US dollars, by kind", {"kind": MODEL_KINDS}),
    "model_unknown_outcomes": (
        "counter",
        "Model calls that may have been processed and billed without an answer kept",
        {"kind": MODEL_KINDS},
    ),
    "redactions": (
        "callback_counter",
        "Credential spans redacted (process-wide: the redaction functions are shared)",
        {},
    ),
    "fair_share_drops": (
        "counter",
        "Directed messages skipped by the per-sender fair share (a flood's excess)",
        {},
    ),
    "database_errors": (
        "counter",
        "Database connection errors, by operation",
        {"operation": DB_OPERATIONS},
    ),
    "worker_ticks": (
        "counter",
        "This process's worker ticks, by outcome",
        {"outcome": TICK_OUTCOMES},
    ),
    "worker_last_tick_timestamp_seconds": (
        "gauge",
        "When this process's worker last finished a tick (Unix time; 0: never)",
        {},
    ),
    "jobs": (
        "gauge",
        "Pipeline jobs by state (database-wide, read at scrape)",
        {"state": JOB_STATES},
    ),
    "pipeline_lag_seconds": (
        "gauge",
        "Age of the oldest due job or scope (database-wide, read at scrape; 0: none due)",
        {},
    ),
    "pool_connections": ("callback_gauge", "Database pool connections, by pool", {"pool": POOLS}),
    "pool_idle_connections": (
        "callback_gauge",
        "Idle database pool connections, by pool",
        {"pool": POOLS},
    ),
    "pool_max_connections": (
        "callback_gauge",
        "Database pool size limit, by pool",
        {"pool": POOLS},
    ),
}


def exposed_name(name: str) -> str:
    """The series' name as scraped: bot_memory_<name>, a counter's with _total."""
    return f"bot_memory_{name}" + ("_total" if SERIES[name][0].endswith("counter") else "")


# exposed name -> label -> the values it may take (what the label test walks against).
ALLOWED_LABELS: dict[str, Labels] = {
    exposed_name(name): labels for name, (_, _, labels) in SERIES.items()
}


def available() -> bool:
    """Is prometheus-client installed?"""
    return _prom is not None


class MetricsUnavailable(BotMemoryError, RuntimeError):
    """Metrics were asked for, but prometheus-client is not installed (or they are off)."""


class Metrics:
    """What memory counts. Made by Memory.open; `Metrics(enabled=False)` counts nothing."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled and _prom is not None
        self._callbacks: list[Callable[[], Iterator[Any]]] = []
        self.registry: Any = None
        if not self.enabled:
            return
        self.registry = _prom.CollectorRegistry(auto_describe=True)
        made: dict[str, dict[tuple[str, ...], Any]] = {}
        for name, (kind, doc, labels) in SERIES.items():
            if kind not in ("counter", "gauge"):
                continue  # read when scraped (watch_pools, watch_counter)
            cls = _prom.Counter if kind == "counter" else _prom.Gauge
            family = cls(f"bot_memory_{name}", doc, list(labels), registry=self.registry)
            made[name] = _children(family, labels)
        self._recorded = made["messages_recorded"][()]
        self._skipped = made["messages_skipped"]
        self._requests = made["requests"]
        self._recalls = made["recalls"]
        self._recall_searches = made["recall_searches"][()]
        self._tools = made["tool_calls"]
        self._model_calls = made["model_calls"]
        self._tokens = made["model_tokens"]
        self._spend = made["model_spend_usd"]
        self._unknown = made["model_unknown_outcomes"]
        self._drops = made["fair_share_drops"][()]
        self._db_errors = made["database_errors"]
        self._ticks = made["worker_ticks"]
        self._last_tick = made["worker_last_tick_timestamp_seconds"][()]
        self._jobs = made["jobs"]
        self._lag = made["pipeline_lag_seconds"][()]
        self.registry.register(_Callbacks(self._callbacks))

    # --- read when scraped -------------------------------------------------------------------

    def watch_pools(self, pools: dict[str, Any]) -> None:
        """Pool use, read at each scrape: `pools` maps a POOLS name to an asyncpg pool."""
        if not self.enabled:
            return
        reads: dict[str, Callable[[Any], int]] = {
            "pool_connections": lambda p: p.get_size(),
            "pool_idle_connections": lambda p: p.get_idle_size(),
            "pool_max_connections": lambda p: p.get_max_size(),
        }

        def collect() -> Iterator[Any]:
            for name, read in reads.items():
                family = GaugeMetricFamily(f"bot_memory_{name}", SERIES[name][1], labels=["pool"])
                for pool_name, pool in pools.items():
                    family.add_metric([_one_of(pool_name, POOLS)], float(read(pool)))
                yield family

        self._callbacks.append(collect)

    def watch_counter(self, name: str, read: Callable[[], float]) -> None:
        """A counter of SERIES kept elsewhere (a process-wide one), read at each scrape."""
        if not self.enabled:
            return
        doc = SERIES[name][1]

        def collect() -> Iterator[Any]:
            yield CounterMetricFamily(f"bot_memory_{name}", doc, value=float(read()))

        self._callbacks.append(collect)

    def render(self) -> bytes:
        """The text exposition format (its Content-Type: `content_type`)."""
        if not self.enabled:
            raise MetricsUnavailable(
                INSTALL_HINT if _prom is None else "metrics are off: BOT_MEMORY_METRICS_ENABLED"
            )
        return bytes(_prom.generate_latest(self.registry))

    @property
    def content_type(self) -> str:
        return str(_prom.CONTENT_TYPE_LATEST) if _prom is not None else "text/plain"

    # --- counting ------------------------------------------------------------------------------

    def message_recorded(self) -> None:
        if self.enabled:
            self._recorded.inc()

    def message_skipped(self, reason: str) -> None:
        if self.enabled:
            self._skipped[(_one_of(reason, SKIP_REASONS),)].inc()

    def request_closed(self, status: str, count: int = 1) -> None:
        """Requests closed with a RequestStatus ("succeeded" is counted as answered)."""
        if self.enabled and count > 0:
            outcome = "answered" if status == "succeeded" else status
            self._requests[(_one_of(outcome, REQUEST_OUTCOMES),)].inc(count)

    def recall(self, mode: str) -> None:
        if self.enabled:
            self._recalls[(_one_of(mode, RECALL_MODES),)].inc()

    def recall_search(self) -> None:
        if self.enabled:
            self._recall_searches.inc()

    def tool_call(self, tool: str, outcome: str) -> None:
        if self.enabled:
            self._tools[(_one_of(tool, TOOLS), _one_of(outcome, TOOL_OUTCOMES))].inc()

    def model_call(
        self,
        kind: str,
        outcome: str,
        *,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost_usd: float = 0.0,
    ) -> None:
        """One model call: `kind` a ledger kind (answer, memory_extract, ...) or a metric one."""
        if not self.enabled:
            return
        k = _one_of(_LEDGER_KINDS.get(kind, kind), MODEL_KINDS)
        self._model_calls[(k, _one_of(outcome, MODEL_OUTCOMES))].inc()
        if prompt_tokens > 0:
            self._tokens[(k, "prompt")].inc(prompt_tokens)
        if completion_tokens > 0:
            self._tokens[(k, "completion")].inc(completion_tokens)
        if cost_usd > 0:
            self._spend[(k,)].inc(cost_usd)
        if outcome == "unknown":
            self._unknown[(k,)].inc()

    def fair_share_drop(self) -> None:
        if self.enabled:
            self._drops.inc()

    def database_error(self, operation: str) -> None:
        if self.enabled:
            self._db_errors[(_one_of(operation, DB_OPERATIONS),)].inc()

    def worker_tick(self, *, ok: bool, at: float | None = None) -> None:
        if not self.enabled:
            return
        self._ticks[("ok" if ok else "failed",)].inc()
        if ok and at is not None:
            self._last_tick.set(at)

    def backlog(self, jobs: dict[str, int], lag_seconds: float) -> None:
        """Jobs by state and the pipeline's lag, as read from the database (at scrape)."""
        if not self.enabled:
            return
        counts = dict.fromkeys(JOB_STATES, 0)
        for state, n in jobs.items():
            counts[_one_of(state, JOB_STATES)] += n
        for state, n in counts.items():
            self._jobs[(state,)].set(n)
        self._lag.set(max(lag_seconds, 0.0))


def _one_of(value: str, allowed: tuple[str, ...]) -> str:
    return value if value in allowed else "other"


def _children(family: Any, labels: Labels) -> dict[tuple[str, ...], Any]:
    """Every series of a family made at once (at 0, so dashboards see them from the start),
    looked up by its label values."""
    if not labels:
        return {(): family}
    return {values: family.labels(*values) for values in itertools.product(*labels.values())}


if _prom is not None:

    class _Callbacks(Collector):
        """The series read at scrape time (pools, process-wide counters)."""

        def __init__(self, callbacks: list[Callable[[], Iterator[Any]]]) -> None:
            self._callbacks = callbacks

        def collect(self) -> Iterator[Any]:
            for collect in self._callbacks:
                yield from collect()

        def describe(self) -> list[Any]:
            return []  # read at scrape time: nothing to check for clashes up front
