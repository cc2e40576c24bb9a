"""The reference agent: answers a directed message through the model, with recall and tools.

Hosts with their own agent use the same `Turn` it does (context messages, tools, execute).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot_memory.access import ItemView
from bot_memory.agent.turn import clip
from bot_memory.billing import Charge, Charger
from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.models import ChatModel, Completion, ModelError
from bot_memory.retrieval import RecallContext
from bot_memory.settings import MemorySettings
from bot_memory.storage import SourceMessage, Store

if TYPE_CHECKING:
    from bot_memory.agent.turn import Turn

log = get_logger(__name__)

SYSTEM_PROMPT = """\
You are a helpful assistant in a Telegram chat. Answer briefly, in the user's language.
Messages from group chats are prefixed with the speaker's ID."""


@dataclass(frozen=True)
class AgentAnswer:
    text: str
    recall: RecallContext
    rounds: int


class ReferenceAgent:
    def __init__(
        self,
        store: Store,
        model: ChatModel,
        settings: MemorySettings,
        metrics: Metrics | None = None,
    ) -> None:
        self._store = store
        # An answer's charge is settled for a short while only (the Charger's default), not
        # the worker's settle_retry_seconds: a user waits for this reply.
        self._charger = Charger(
            store, model, settings.workspace_budget_usd, metrics=metrics or Metrics(enabled=False)
        )
        self._settings = settings

    async def answer(self, turn: Turn) -> AgentAnswer:
        """One interactive request. Raises ModelError when no answer could be produced."""
        source = turn.source
        # Recall first: its membership verdict also governs the history, which the start's
        # write reads for the first round (when this answer starts the turn).
        starting = not turn.started
        await turn.start(history=self._settings.agent_history_messages)
        transcript: list[dict[str, Any]] = []
        for round_no in range(1, self._settings.agent_max_tool_rounds + 1):
            # The memory block and the stored history are asked for again each round: what a
            # tool call forgot (or an erasure removed) meanwhile is not shown again.
            history = await self._history(turn, again=round_no > 1 or not starting)
            messages = [
                {"role": "system", "content": SYSTEM_PROMPT},
                # The first round follows the start at once: nothing to ask again yet.
                *await turn.context_messages(recheck=round_no > 1),
                *history,
                turn.user_message(),
                *transcript,
            ]
            completion = await self._call(turn, messages, round_no)
            if not completion.tool_calls:
                return AgentAnswer(
                    text=(completion.content or "").strip() or "…",
                    recall=await turn.start(),  # what this round was given
                    rounds=round_no,
                )
            transcript.append(
                {
                    "role": "assistant",
                    "content": completion.content or "",
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        }
                        for c in completion.tool_calls
                    ],
                }
            )
            transcript.extend([await turn.execute(call) for call in completion.tool_calls])
        log.warning("memory.agent_round_limit", request=source.request_id)
        raise ModelError("the model kept calling tools past the round limit")

    async def _history(self, turn: Turn, *, again: bool) -> list[dict[str, Any]]:
        source = turn.source
        limit = self._settings.agent_message_max_bytes
        if self._settings.agent_history_messages <= 0:
            return []
        items = None if again else turn.history_at_start
        if items is None:
            items = await self._store.history(
                source.scope,
                before_message_id=source.message_id,
                limit=self._settings.agent_history_messages,
                now=datetime.now(UTC),
            )
        shared = not source.scope.is_private
        gate = turn.parts.tools.gate_for(turn.context)
        if turn.recall is not None and turn.recall.mode == "denied":
            # A group's stored conversation is shared memory too: whoever may not read the
            # group now (left, kicked, lookup failed) gets none of it.
            return []
        out = []
        for item in items:
            if shared and not await gate.readable(
                ItemView(
                    kind="message",
                    id=item.source_id,
                    scope_key=source.scope.key,
                    speaker_ids=[item.speaker_id],
                    thread_ids=[item.thread_id],
                )
            ):
                continue  # the host's read grants hold for history as for memories
            text = clip(item.text, limit)
            if item.role == "user" and shared:
                text = f"[speaker {item.speaker_id}] {text}"
            out.append({"role": item.role, "content": text})
        return out

    async def _call(self, turn: Turn, messages: list[dict[str, Any]], round_no: int) -> Completion:
        source = turn.source
        charge = Charge(
            workspace=source.scope.workspace,
            request_id=source.request_id,
            kind="answer",
            key=_call_key(source, round_no),
            max_tokens=self._settings.answer_max_tokens,
        )
        return await self._charger.complete(charge, messages, tools=turn.tools)


def _call_key(source: SourceMessage, round_no: int) -> str:
    """One key per call of a request's turn: a call is sent at most once. An update delivered
    again after its process died mid-turn calls afresh: that process's calls keep their keys
    (their outcome unknown), and this delivery's are numbered after them."""
    if source.earlier_calls == 0:
        return f"req:{source.request_id}:answer:{round_no}"
    return f"req:{source.request_id}:again{source.earlier_calls}:answer:{round_no}"
