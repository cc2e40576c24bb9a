"""One provider interface for every model call: the pipeline's, the agent's, the tools'.

Inputs are redacted before they are serialized to JSON and outputs after they arrive, here,
once, so no caller can forget. Structured outputs are validated with pydantic before anyone
sees them.
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from bot_memory.errors import BotMemoryError
from bot_memory.redaction import redact, redact_value

Outcome = Literal["error", "unknown"]
M = TypeVar("M", bound=BaseModel)

# The names of the pipeline's two structured calls (StructuredOutput.name): what a model,
# a fake or the offline model reads to know which output is asked for.
EXTRACTION = "memory_extraction"
CONSOLIDATION = "memory_consolidation"


@dataclass(frozen=True)
class Pin:
    """What a request, a job or a worker is pinned to: a provider (server) and a model."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.model} at {self.provider}"


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


class Completion(BaseModel):
    content: str | None = None
    tool_calls: list[ToolCall] = []
    usage: Usage = Usage()
    provider: str
    model: str


class StructuredOutput(BaseModel):
    """A response_format json_schema: the name tells the model (and fakes) what is asked."""

    name: str
    schema_: dict[str, Any]


class ModelError(BotMemoryError, RuntimeError):
    """A model call that produced nothing usable.

    outcome "error": the provider certainly did not process it (unreachable, refused: 400, 401,
    403, 404, 422, 429, or overloaded: 503, 529), or it answered and the answer was invalid.
    outcome "unknown": it may have been processed and charged (a timeout or dropped connection
    after sending, 500, 502, 504, 408, an unreadable 200, cancellation): automatic replay must
    stop.
    """

    def __init__(self, message: str, *, outcome: Outcome = "error", usage: Usage | None = None):
        super().__init__(message)
        self.outcome: Outcome = outcome
        self.usage = usage or Usage()


class ChatModel(ABC):
    provider: str
    model: str
    price_known: bool = True  # False: charges are 0 because nobody said what this model costs

    def __init__(self, *, input_usd_per_mtok: float = 0.0, output_usd_per_mtok: float = 0.0):
        self._in_price = input_usd_per_mtok
        self._out_price = output_usd_per_mtok

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        output: StructuredOutput | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        safe = redact_value(messages)
        assert isinstance(safe, list)
        completion = await self._complete(safe, tools=tools, output=output, max_tokens=max_tokens)
        if completion.content is not None:
            completion.content = redact(completion.content)
        return completion

    async def complete_structured(
        self,
        messages: list[dict[str, Any]],
        output_model: type[M],
        name: str,
        *,
        max_tokens: int | None = None,
    ) -> tuple[M, Completion]:
        """One tool-free call whose answer must validate against output_model."""
        schema = StructuredOutput(name=name, schema_=strict_schema(output_model))
        completion = await self.complete(messages, output=schema, max_tokens=max_tokens)
        try:
            parsed = output_model.model_validate_json(completion.content or "")
        except ValidationError as exc:
            raise ModelError(
                f"{name}: output failed validation: {_first_error(exc)}", usage=completion.usage
            ) from exc
        return parsed, completion

    def cost_usd(self, usage: Usage) -> float:
        return (
            usage.prompt_tokens * self._in_price + usage.completion_tokens * self._out_price
        ) / 1_000_000

    def worst_case_usd(self, request_bytes: int, max_tokens: int) -> float:
        """The most a call can cost: no tokenizer makes more tokens than bytes, and the answer
        is capped by max_tokens."""
        return self.cost_usd(Usage(prompt_tokens=request_bytes, completion_tokens=max_tokens))

    @abstractmethod
    async def _complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        output: StructuredOutput | None,
        max_tokens: int | None,
    ) -> Completion: ...

    async def aclose(self) -> None:
        return None


@functools.cache
def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON schema for OpenAI strict structured outputs: every property required, no extras.

    Length limits are dropped from the schema (not every server supports them) and enforced by
    pydantic on the way back instead.
    """
    schema = model.model_json_schema()

    def tighten(node: dict[str, Any]) -> None:
        for key in ("title", "default", "maxLength", "maxItems", "minLength", "minItems"):
            node.pop(key, None)
        if node.get("type") == "object" and "properties" in node:
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
            for child in node["properties"].values():
                tighten(child)
        if isinstance(node.get("items"), dict):
            tighten(node["items"])
        for child in node.get("$defs", {}).values():
            tighten(child)
        for child in node.get("anyOf", []):
            tighten(child)

    tighten(schema)
    return schema


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "output"
    return f"{where}: {err.get('msg')}"


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
