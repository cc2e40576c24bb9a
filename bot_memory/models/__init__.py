"""Model providers: an OpenAI-compatible server over httpx, or the offline built-in.

`__all__` is what the other stages and the adapter may use (and a host, for a model of its own).
"""

from __future__ import annotations

from bot_memory.logs import get_logger
from bot_memory.models.base import (
    CONSOLIDATION,
    EXTRACTION,
    ChatModel,
    Completion,
    ModelError,
    Outcome,
    Pin,
    StructuredOutput,
    Usage,
)
from bot_memory.models.offline import OfflineModel
from bot_memory.models.prices import price_of
from bot_memory.settings import MemorySettings

__all__ = [
    "CONSOLIDATION",
    "EXTRACTION",
    "ChatModel",
    "Completion",
    "ModelError",
    "OfflineModel",
    "Outcome",
    "Pin",
    "StructuredOutput",
    "Usage",
    "build_model",
]

log = get_logger(__name__)


OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"


def build_model(settings: MemorySettings) -> ChatModel:
    """The configured OpenAI-compatible server (LLM_* or the openai SDK's OPENAI_BASE_URL /
    OPENAI_API_KEY; an API key alone means api.openai.com), else the offline model."""
    base_url = settings.llm_base_url or (OPENAI_BASE_URL if settings.llm_api_key else None)
    if base_url:
        from bot_memory.models.openai_compat import OpenAICompatibleModel

        model = settings.llm_model or DEFAULT_MODEL
        listed = price_of(model)
        overridden = (settings.llm_input_usd_per_mtok, settings.llm_output_usd_per_mtok)
        known = listed is not None or None not in overridden
        input_price, output_price = listed or (0.0, 0.0)
        if settings.llm_input_usd_per_mtok is not None:
            input_price = settings.llm_input_usd_per_mtok
        if settings.llm_output_usd_per_mtok is not None:
            output_price = settings.llm_output_usd_per_mtok
        return OpenAICompatibleModel(
            base_url=base_url,
            api_key=settings.llm_api_key,
            model=model,
            timeout_seconds=settings.llm_timeout_seconds,
            deadline_seconds=settings.llm_call_deadline_seconds,
            input_usd_per_mtok=input_price,
            output_usd_per_mtok=output_price,
            price_known=known,
        )
    log.warning(
        "memory.offline_model",
        detail="no model server is configured (LLM_BASE_URL or OPENAI_BASE_URL / OPENAI_API_KEY):"
        " the built-in offline model writes crude memories and answers",
    )
    return OfflineModel(
        summary_max_bytes=settings.summary_max_bytes,
        index_max_bytes=settings.index_max_bytes,
        index_max_ids=settings.index_max_ids,
    )
