"""Published prices of common models, in dollars per million tokens (input, output).

They turn token usage into charges, so budgets mean something without configuration. Prices
change: these are the list prices as published by each provider in mid-2025 (PRICES_AS_OF), for
the plain (non-cached, non-batch) API. Override them with BOT_MEMORY_LLM_INPUT_USD_PER_MTOK and
BOT_MEMORY_LLM_OUTPUT_USD_PER_MTOK; a model not listed here and not overridden costs 0 and the
bot warns at start while budgets are set.
"""

from __future__ import annotations

PRICES_AS_OF = "2025-08"

# Longest matching prefix wins; gateway prefixes ("openai/", "anthropic/", ...) are ignored.
PRICES: dict[str, tuple[float, float]] = {
    # OpenAI
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    # Anthropic (through OpenAI-compatible gateways)
    "claude-opus-4": (15.00, 75.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-haiku-4": (1.00, 5.00),
    # DeepSeek
    "deepseek-chat": (0.27, 1.10),
    "deepseek-reasoner": (0.55, 2.19),
    # Qwen (Alibaba Cloud Model Studio, international)
    "qwen-max": (1.60, 6.40),
    "qwen-plus": (0.40, 1.20),
    "qwen-turbo": (0.05, 0.20),
    "qwen3-max": (1.20, 6.00),
}


def price_of(model: str) -> tuple[float, float] | None:
    """(input, output) dollars per million tokens, or None when the model is not listed."""
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p in PRICES if name.startswith(p)), key=len, default=None)
    return None if best is None else PRICES[best]
