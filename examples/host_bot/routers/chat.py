"""The catch-all LLM handler, with the openai SDK against any OpenAI-compatible server."""

from __future__ import annotations

from typing import Any

from aiogram import F, Router
from aiogram.types import Message
from openai import NOT_GIVEN, AsyncOpenAI

from bot_memory import MemorySettings, Turn  # memory

SYSTEM = "You are a helpful assistant. Answer briefly, in the user's language."


async def chat(message: Message, llm: MemorySettings, memory_turn: Turn | None = None) -> None:
    client = AsyncOpenAI(base_url=llm.llm_base_url, api_key=llm.llm_api_key or "none")
    messages: list[Any] = [{"role": "system", "content": SYSTEM}]
    if memory_turn is None:  # memory does not apply here (or PostgreSQL is away)
        messages.append({"role": "user", "content": message.text})
    else:
        messages += await memory_turn.context_messages()  # memory
        messages.append(memory_turn.user_message())  # memory
    for _ in range(4):
        response = await client.chat.completions.create(
            model=llm.llm_model or "gpt-4o-mini",
            messages=messages,
            tools=memory_turn.tools if memory_turn else NOT_GIVEN,  # memory
        )
        reply = response.choices[0].message
        if not reply.tool_calls or memory_turn is None:
            break
        messages.append(reply.model_dump(exclude_none=True))
        for call in reply.tool_calls:
            messages.append(await memory_turn.execute(call))  # memory
    await message.answer(reply.content or "…")  # the answer is recorded by itself


def router() -> Router:
    r = Router(name="chat")
    r.message.register(chat, F.text)
    return r
