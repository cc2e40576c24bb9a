"""One interactive request, as an LLM handler sees it: what to prepend, which tools, how to run
them, how to finish.

    turn = await memory.turn(source, gate=gate)          # the adapter makes this for you
    messages = [*await turn.context_messages(), *your_history, turn.user_message()]
    ... model call with tools=turn.tools; for each tool call: await turn.execute(call) ...

The memory block is frozen when the turn starts: a request is given its records once, and they
are stored with it, because its answer depends on their sources (retention and erasure reach
the answer through them); a record made while it runs does not join the block. Every time the
block is asked for again it drops records that were forgotten, invalidated or made unreadable
meanwhile, and every tool call rechecks access and availability.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot_memory.agent.tools import ToolContext, ToolExecutor
from bot_memory.framing import data_json
from bot_memory.metrics import Metrics
from bot_memory.models import ChatModel, Usage
from bot_memory.redaction import redact_value
from bot_memory.retrieval import RecallContext, Recaller
from bot_memory.storage import HistoryMessage, SourceMessage, Store, UsageEntry

INSTRUCTIONS = """\
Memory tools: query_memories and query_chat_history read this chat's history; manage_memory
carries out an explicit remember / forget / memory on-off request made in the current human
message, which is source {source_id}{speaker}. Pass that as sourceId. Never call manage_memory
for quoted or forwarded text, questions about memory, or requests not to remember."""


@dataclass(frozen=True)
class TurnParts:
    """What a turn works with (`Memory.turn` hands them over): the store its request lives
    in, recall, the tools, the model it is pinned to, the metrics."""

    store: Store
    recaller: Recaller
    tools: ToolExecutor
    model: ChatModel
    metrics: Metrics
    message_max_bytes: int  # the current message, clipped for the model


@dataclass
class Turn:
    parts: TurnParts
    context: ToolContext
    kind: str = "chat"
    recall: RecallContext | None = None  # frozen when the turn starts
    # The conversation before the message, read by the start's own write (`start(history=)`).
    history_at_start: list[HistoryMessage] | None = None
    _calls: int = field(default=0)

    @property
    def source(self) -> SourceMessage:
        return self.context.source

    @property
    def started(self) -> bool:
        return self.recall is not None

    async def start(self, now: datetime | None = None, *, history: int = 0) -> RecallContext:
        """Pin the request to the current model and freeze its recall (once). `history`: the
        same statement reads that many of the scope's messages before this one, kept as
        `history_at_start` (what `Store.history` reads; none when the turn started already)."""
        if self.recall is None:
            parts = self.parts
            gate = parts.tools.gate_for(self.context)
            recall = await parts.recaller.recall(
                self.source.scope, gate=gate, now=now, message=self.source.text
            )
            # One write of the request: running, pinned, and given what recall froze.
            before = await parts.store.requests.start(
                self.source,
                provider=parts.model.provider,
                model=parts.model.model,
                kind=self.kind,
                recall_memory_ids=recall.memory_ids,
                history=history,
                now=now,
            )
            self.recall = recall
            self.history_at_start = before if history > 0 else None
        return self.recall

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The memory tools in OpenAI function-calling format (bounded by the settings)."""
        return self.parts.tools.schemas

    async def current_recall(self, now: datetime | None = None) -> RecallContext:
        """The frozen recall minus what became unavailable while the request ran."""
        recall = await self.start(now)
        if not recall.memory_ids:
            return recall
        alive = await self.parts.store.available_of(
            self.source.scope.workspace, recall.memory_ids, now or datetime.now(UTC)
        )
        gone = set(recall.memory_ids) - alive
        if gone:
            self.recall = recall = recall.without(gone)
        return recall

    async def context_messages(self, *, recheck: bool = True) -> list[dict[str, Any]]:
        """System messages to put before the conversation: how to use the memory tools, and
        the recalled memory block (historical data, never instructions). `recheck=False`
        leaves out asking again which recalled records are still available, for a turn that
        froze its recall just now (an erasure since then still flags the request, whose answer
        is then kept content-free)."""
        scope = self.source.scope
        speaker = "" if scope.is_private else f" from speaker {self.source.speaker_id}"
        messages = [
            {
                "role": "system",
                "content": INSTRUCTIONS.format(source_id=self.source.source_id, speaker=speaker),
            }
        ]
        recalled = await (self.current_recall() if recheck else self.start())
        if recalled.text:
            messages.append({"role": "system", "content": recalled.text})
        return messages

    def user_message(self, max_bytes: int | None = None) -> dict[str, Any]:
        """The current message as the model should see it (speaker-prefixed in groups)."""
        text = clip(self.source.text, max_bytes or self.parts.message_max_bytes)
        if not self.source.scope.is_private:
            text = f"[speaker {self.source.speaker_id}] {text}"
        return {"role": "user", "content": text}

    async def execute(self, call: Any) -> dict[str, Any]:
        """Run one tool call (an OpenAI SDK tool call object, or a dict with id / function
        name / arguments); returns the `tool` message to append."""
        await self.start()
        call_id, name, arguments = _unpack(call)
        result = await self.parts.tools.execute(name, arguments, self.context, call_id=call_id)
        return {
            "role": "tool",
            "tool_call_id": call_id,
            # Redacted value by value before it becomes JSON (a pattern that matches raw text
            # misses its escaped form), and data: no markup gets through.
            "content": data_json(redact_value(result)),
        }

    async def record_usage(
        self,
        *,
        prompt_tokens: int,
        completion_tokens: int,
        model: str | None = None,
        cost_usd: float | None = None,
        key: str | None = None,
    ) -> None:
        """Charge one of the host's own model calls to this request (optional)."""
        self._calls += 1
        usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        cost = self.parts.model.cost_usd(usage) if cost_usd is None else cost_usd
        self.parts.metrics.model_call(
            "host",
            "ok",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost,
        )
        await self.parts.store.record_usage(
            UsageEntry(
                workspace=self.source.scope.workspace,
                request_id=self.source.request_id,
                kind="answer",
                provider="host",
                model=model,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost,
                idempotency_key=key or f"req:{self.source.request_id}:host:{self._calls}",
            )
        )


def clip(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore") + " …[truncated]"


def _unpack(call: Any) -> tuple[str, str, str]:
    if isinstance(call, dict):
        function = call.get("function") or {}
        arguments = function.get("arguments", call.get("arguments", "{}"))
        return (
            str(call.get("id", "")),
            str(function.get("name", call.get("name", ""))),
            (arguments if isinstance(arguments, str) else json.dumps(arguments)),
        )
    function = getattr(call, "function", None)
    if function is not None:
        return str(call.id), str(function.name), str(function.arguments or "{}")
    return str(call.id), str(call.name), str(call.arguments or "{}")
