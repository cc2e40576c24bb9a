"""Direct memory requests: remember, forget, keep a message out ("don't remember that"), turn
memory on or off, in English, Chinese, Russian and Ukrainian."""

from __future__ import annotations

from typing import Any

from aiogram import Bot, Router
from aiogram.filters import Filter, StateFilter
from aiogram.types import Message

from bot_memory.access import Gate
from bot_memory.control import Outcome, acting
from bot_memory.ingress import storable
from bot_memory.intents import MemoryRequest, recognize
from bot_memory.logs import get_logger
from bot_memory.service import Memory
from bot_memory.storage import SourceMessage
from bot_memory_aiogram.i18n import Texts
from bot_memory_aiogram.middleware.directed import message_flags, replied_to
from bot_memory_aiogram.routers.common import Directed, deliver, in_topic

log = get_logger(__name__)

REPLIES: dict[Outcome, str] = {
    "remembered": "memory-remembered",
    "forgotten": "memory-forgotten",
    "partly_forgotten": "memory-partly-forgotten",
    "nothing_to_forget": "memory-nothing-to-forget",
    "enabled": "memory-enabled",
    "disabled": "memory-disabled",
    "already_enabled": "memory-already-enabled",
    "already_disabled": "memory-already-disabled",
    "not_allowed": "memory-not-allowed",
    "cascade_not_allowed": "memory-cascade-not-allowed",
    "not_member": "memory-not-member",
    "memory_off": "memory-off",
    "unavailable": "memory-unavailable",
    "source_changed": "memory-source-changed",
    "mismatch": "memory-nothing-to-forget",
    "kept_out": "memory-kept-out",
}


TOPIC_REPLIES = frozenset(
    {
        "memory-enabled",
        "memory-disabled",
        "memory-already-enabled",
        "memory-already-disabled",
        "memory-off",
    }
)


def recognized(message: Message) -> MemoryRequest | None:
    """The memory action a message asks for, if any, read from the text as it was recorded."""
    text = storable(message.text or message.caption or "")
    if not text:
        return None
    quoted, forwarded = message_flags(message)
    return recognize(text, quoted=quoted, forwarded=forwarded)


class RecognizedRequest(Filter):
    """Passes a directed message that really asks for a memory action; injects it (as read
    once by the parent router's `ForMemory` when that ran)."""

    async def __call__(
        self, message: Message, memory_request_read: bool = False, **data: Any
    ) -> bool | dict[str, Any]:
        request = data.get("memory_request") if memory_request_read else recognized(message)
        return False if request is None else {"memory_request": request}


def requests_router(*, in_states: bool = False) -> Router:
    """Memory requests. Outside FSM states only (a form's own input is the form's), unless the
    host opts in with setup(..., requests_in_states=True)."""
    router = Router(name="bot_memory.requests")
    router.message.filter(Directed())
    if not in_states:
        router.message.filter(StateFilter(None))
    router.message.register(on_memory_request, RecognizedRequest())
    return router


async def on_memory_request(
    message: Message,
    bot: Bot,
    memory: Memory,
    memory_source: SourceMessage,
    memory_gate: Gate,
    memory_request: MemoryRequest,
    memory_texts: Texts,
) -> None:
    language = memory_texts.language(message, memory_request.language)
    t = memory_texts
    await memory.begin(memory_source, kind="memory_control")
    try:
        who = await memory_gate.membership()  # asked now, when the action needs it
        # "don't remember that" means the message it replies to, if any.
        reply = replied_to(message) if memory_request.action == "keep_out" else None
        result = await acting(
            memory_gate,
            who,
            lambda w: memory.control(memory_request, memory_source, who=w, replied_to=reply),
        )
    except Exception as exc:  # a clear reply and a failed request, never a crashed handler
        log.exception("memory.request_failed", action=memory_request.action)
        text = t(language, "memory-error")
        await deliver(message, bot, memory, memory_source, text, failed=type(exc).__name__)
        return
    log.info(
        "memory.request",
        action=result.action,
        outcome=result.outcome,
        scope=memory_source.scope.key,
        memory_ids=result.memory_ids,
        reason=who.reason,
    )
    key = REPLIES[result.outcome]
    if key in TOPIC_REPLIES and in_topic(message):
        key += "-topic"
    text = t(language, key, count=len(result.memory_ids), left=len(result.left))
    await deliver(message, bot, memory, memory_source, text)
