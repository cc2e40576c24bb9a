"""The reference agent: answers a directed message through the model, with recall and tools.

Hosts with their own agent use the same pieces (recall, TOOLS, ToolExecutor) instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import structlog

from bot_memory.charging import Charge, Charger
from bot_memory.models.base import ChatModel, Completion, ModelError
from bot_memory.recall import RecallContext, recall
from bot_memory.settings import MemorySettings
from bot_memory.store import SourceMessage, Store
from bot_memory.tools import TOOLS, ToolContext, ToolExecutor

log = structlog.get_logger(__name__)

SYSTEM_PROMPT = """\
You are a helpful assistant in a Telegram chat. Answer briefly, in the user's language.
Messages from group chats are prefixed with the speaker's ID. The current message's source ID
is given; pass it as sourceId when you call manage_memory for an explicit request in it."""


@dataclass(frozen=True)
class AgentAnswer:
    text: str
    recall: RecallContext
    rounds: int


class ReferenceAgent:
    def __init__(
        self, store: Store, model: ChatModel, tools: ToolExecutor, settings: MemorySettings
    ) -> None:
        self._store = store
        self._charger = Charger(store, model, settings.workspace_budget_usd)
        self._tools = tools
        self._settings = settings

    async def answer(self, ctx: ToolContext) -> AgentAnswer:
        """One interactive request. Raises ModelError when no answer could be produced."""
        source = ctx.source
        frozen = await recall(self._store, source.scope)  # frozen for this request
        await self._store.set_recall(source.request_id, frozen.memory_ids)
        messages = await self._prompt(source, frozen)
        for round_no in range(1, self._settings.agent_max_tool_rounds + 1):
            completion = await self._call(source, messages, round_no)
            if not completion.tool_calls:
                return AgentAnswer(
                    text=(completion.content or "").strip() or "…", recall=frozen, rounds=round_no
                )
            messages.append(
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
            for call in completion.tool_calls:
                result = await self._tools.execute(call.name, call.arguments, ctx, call_id=call.id)
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "content": json.dumps(result, ensure_ascii=False),
                    }
                )
        raise ModelError("the model kept calling tools past the round limit")

    async def _prompt(self, source: SourceMessage, frozen: RecallContext) -> list[dict[str, Any]]:
        system = f"{SYSTEM_PROMPT}\nThe current message's source ID: {source.source_id}"
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        if frozen.text:
            messages.append({"role": "system", "content": frozen.text})
        limit = self._settings.agent_message_max_bytes
        history = await self._store.history(
            source.scope.key,
            source.scope.workspace,
            before_message_id=source.message_id,
            limit=self._settings.agent_history_messages,
        )
        shared = not source.scope.is_private
        for item in history:
            text = _clip(item.text, limit)
            if item.role == "user" and shared:
                text = f"[speaker {item.speaker_id}] {text}"
            messages.append({"role": item.role, "content": text})
        current = _clip(source.text, limit)
        if shared:
            current = f"[speaker {source.speaker_id}] {current}"
        messages.append({"role": "user", "content": current})
        return messages

    async def _call(
        self, source: SourceMessage, messages: list[dict[str, Any]], round_no: int
    ) -> Completion:
        charge = Charge(
            workspace=source.scope.workspace,
            request_id=source.request_id,
            kind="answer",
            key=f"req:{source.request_id}:answer:{round_no}",
        )
        return await self._charger.complete(charge, messages, tools=TOOLS)


def _clip(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore") + " …[truncated]"
