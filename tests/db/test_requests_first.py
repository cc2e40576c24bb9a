"""A worker in the bot's process steps aside while messages are handled, within a bound."""

from __future__ import annotations

import asyncio

from bot_memory.pipeline.priority import RequestsFirst
from bot_memory.service import Memory
from bot_memory.storage.gated import GatedPool


async def test_the_worker_waits_until_no_message_is_in_flight() -> None:
    gate = RequestsFirst(max_wait_seconds=30)
    with gate.handling():
        with gate.handling():  # two messages at once
            waiting = asyncio.create_task(gate.step_aside())
            await asyncio.sleep(0)
            assert not waiting.done()
        await asyncio.sleep(0)
        assert not waiting.done()  # one is still being handled
    await asyncio.wait_for(waiting, 5)  # released by the last one, not by the bound


async def test_a_steady_stream_slows_the_worker_but_never_stops_it() -> None:
    gate = RequestsFirst(max_wait_seconds=0.01)
    with gate.handling():
        await asyncio.wait_for(gate.step_aside(), 5)  # the bound passed


async def test_with_nothing_in_flight_the_worker_goes_on_at_once() -> None:
    gate = RequestsFirst(max_wait_seconds=30)
    await asyncio.wait_for(gate.step_aside(), 1)


async def test_the_worker_in_the_bots_process_uses_the_gated_pool(memory: Memory) -> None:
    pool = memory.pipeline.ctx.store.pool
    assert isinstance(pool, GatedPool)
    memory.requests_first.max_wait = 30  # (default 20 ms)
    with memory.requests_first.handling():
        waiting = asyncio.create_task(pool.fetchval("SELECT 1"))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # held while a message is handled
    assert await asyncio.wait_for(waiting, 5) == 1
