"""The workers' own rows (worker_ticks): when each last ticked and what it calls, for
`bot-memory status` and the health check; a clean stop leaves no row."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from bot_memory.models import Pin
from bot_memory.storage.handle import Handle


class Workers:
    def __init__(self, on: Handle) -> None:
        self._on = on

    async def ticked(self, worker_id: str, pin: Pin, settings: dict[str, Any]) -> None:
        """This worker ticked now, calling `pin`, with the settings its work depends on."""
        await self._on.execute(
            "INSERT INTO worker_ticks (worker_id, provider, model, settings)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (worker_id) DO UPDATE SET"
            " last_tick_at = now(), provider = EXCLUDED.provider, model = EXCLUDED.model,"
            " settings = EXCLUDED.settings",
            worker_id,
            pin.provider,
            pin.model,
            json.dumps(settings),
        )

    async def stopped(self, worker_id: str) -> None:
        """A clean stop: the worker's row goes (a crashed or stuck one's shows as silent)."""
        await self._on.execute("DELETE FROM worker_ticks WHERE worker_id = $1", worker_id)

    async def forget_silent(self, silent_for: timedelta) -> None:
        """Rows of workers silent for that long are history."""
        await self._on.execute(
            "DELETE FROM worker_ticks WHERE last_tick_at < now() - $1::interval", silent_for
        )

    async def last_tick_age(self) -> float | None:
        """Seconds since any worker sharing the database last ticked (None: none has)."""
        age = await self._on.fetchval(
            "SELECT extract(epoch FROM now() - max(last_tick_at)) FROM worker_ticks"
        )
        return None if age is None else float(age)
