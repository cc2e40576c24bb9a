"""The agent side of a request: `turn` (one interactive request as an LLM handler sees it),
`tools` (query_memories, manage_memory, query_chat_history) and `reference` (the reference
agent the demo and `bot-memory run` use).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.agent.reference import SYSTEM_PROMPT, ReferenceAgent
from bot_memory.agent.tools import ToolContext, ToolExecutor
from bot_memory.agent.turn import Turn
from bot_memory.retrieval import record_view  # the read model's; kept importable here

__all__ = ["SYSTEM_PROMPT", "ReferenceAgent", "ToolContext", "ToolExecutor", "Turn", "record_view"]
