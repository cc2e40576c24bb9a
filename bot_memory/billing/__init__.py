"""Billing: every model call reserved, put on the ledger before it is sent, and settled after
(`charging`), and the ledger of billed calls itself (`ledger`).

`__all__` is what the other stages and the adapter may use; the rest is the package's own.
"""

from __future__ import annotations

from bot_memory.billing import ledger
from bot_memory.billing.charging import BudgetExhausted, Charge, Charger

__all__ = ["BudgetExhausted", "Charge", "Charger", "ledger"]
