"""Single-use tickets: a ticket's nonce is used once, in PostgreSQL, so several processes
answering the same links (the bot's replicas) agree on which use was the first.

The use is one statement (safe behind a transaction pooler); the worker drops a used nonce an
hour after its ticket expired (`Tickets.drop_used`): by then the ticket itself is refused as
expired, whatever the clock of the process that reads it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from bot_memory.storage.handle import Handle

# How long a used nonce outlives its ticket: the processes sharing the database may disagree on
# the time, and a nonce dropped while one of them still takes the ticket would let it be used
# again.
KEPT_PAST_EXPIRY = timedelta(hours=1)


class Tickets:
    """The used tickets' nonces (used_tickets)."""

    def __init__(self, on: Handle) -> None:
        self._on = on

    async def use_once(self, nonce: bytes, expires_at: datetime) -> bool:
        """True for the first use of this nonce, False for every later one (anywhere)."""
        first = await self._on.fetchval(
            "INSERT INTO used_tickets (nonce, expires_at) VALUES ($1, $2)"
            " ON CONFLICT (nonce) DO NOTHING RETURNING true",
            nonce,
            expires_at,
        )
        return first is True

    async def drop_used(self, now: datetime) -> int:
        """Drop the nonces of tickets expired more than KEPT_PAST_EXPIRY ago; how many went."""
        result: str = await self._on.execute(
            "DELETE FROM used_tickets WHERE expires_at < $1", now - KEPT_PAST_EXPIRY
        )
        return int(result.split()[-1])
