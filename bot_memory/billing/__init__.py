"""Billing: every model call reserved, put on the ledger before it is sent, and settled after
(`charging`); the ledger of billed calls itself is storage's (`Store.ledger`).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.billing.charging import BudgetExhausted, Charge, Charger, warn_if_unpriced

__all__ = ["BudgetExhausted", "Charge", "Charger", "warn_if_unpriced"]
