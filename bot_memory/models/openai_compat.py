"""Any OpenAI-compatible /chat/completions server, over httpx (no automatic retries)."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx

from bot_memory.models.base import (
    ChatModel,
    Completion,
    ModelError,
    StructuredOutput,
    ToolCall,
    Usage,
)

# Statuses that say the request was certainly not processed (so nothing was charged).
NOT_PROCESSED = frozenset({400, 401, 403, 404, 409, 413, 415, 422, 429, 503, 529})


def outcome_of_status(status: int) -> str:
    """error: certainly not processed; unknown: it may have been (500, 502, 504, 408, ...)."""
    if status in NOT_PROCESSED:
        return "error"
    if status in (408, 500, 502, 504) or status >= 500:
        return "unknown"
    return "error"


class OpenAICompatibleModel(ChatModel):
    provider = "openai-compatible"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        timeout_seconds: float = 30.0,
        deadline_seconds: float = 60.0,
        input_usd_per_mtok: float = 0.0,
        output_usd_per_mtok: float = 0.0,
        price_known: bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(
            input_usd_per_mtok=input_usd_per_mtok, output_usd_per_mtok=output_usd_per_mtok
        )
        self.model = model
        self.price_known = price_known
        self.base_url = base_url.rstrip("/")
        # The server, so jobs pinned to it are not run on another (a port given is part of it).
        url = httpx.URL(base_url)
        server = f"{url.host}:{url.port}" if url.port is not None else url.host
        self.provider = f"openai-compatible:{server}"
        self._deadline = deadline_seconds
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=self.base_url + "/",
            headers=headers,
            timeout=httpx.Timeout(timeout_seconds, connect=min(timeout_seconds, 10.0)),
            transport=transport or httpx.AsyncHTTPTransport(retries=0),
        )

    async def _complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        output: StructuredOutput | None,
        max_tokens: int | None,
    ) -> Completion:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if output is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": output.name, "strict": True, "schema": output.schema_},
            }
        where = f"model server at {self.base_url}"
        try:
            async with asyncio.timeout(self._deadline):  # connect + send + the whole response
                response = await self._client.post("chat/completions", json=body)
                raw = response.content
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise ModelError(f"{where} unreachable: {exc!r}") from exc
        except TimeoutError as exc:
            raise ModelError(
                f"{where}: no complete answer within {self._deadline:.0f} s", outcome="unknown"
            ) from exc
        except httpx.TimeoutException as exc:
            # The request went out: the server may have run it and charged for it.
            raise ModelError(f"{where} timed out: {exc!r}", outcome="unknown") from exc
        except httpx.HTTPError as exc:  # a dropped connection, a broken response
            raise ModelError(f"{where} failed: {exc!r}", outcome="unknown") from exc
        if response.status_code >= 400:
            raise ModelError(
                f"{where} answered {response.status_code}: {_err(response)}",
                outcome=outcome_of_status(response.status_code),  # type: ignore[arg-type]
            )
        try:
            data = json.loads(raw)
            choice = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            # It answered 200: it processed the request, we just cannot read what it said.
            raise ModelError(
                f"{where} sent an unreadable response: {exc!r}", outcome="unknown"
            ) from exc
        usage = data.get("usage") or {}
        return Completion(
            content=choice.get("content"),
            tool_calls=[
                ToolCall(
                    id=str(tc.get("id", "")),
                    name=str(tc.get("function", {}).get("name", "")),
                    arguments=_arguments(tc.get("function", {}).get("arguments")),
                )
                for tc in choice.get("tool_calls") or []
            ],
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            ),
            provider=self.provider,
            model=self.model,  # the pinned configuration, not the server's alias
        )

    async def aclose(self) -> None:
        await self._client.aclose()


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value or {})


def _err(response: httpx.Response) -> str:
    """The error's type and code, never its message: providers quote the request in it (a
    content-filter refusal names what was said), and this text is logged and stored in job
    rows and the ledger, which outlive forgetting."""
    try:
        error = response.json().get("error") or {}
    except ValueError:
        return "no error details"
    if not isinstance(error, dict):
        return "no error details"
    fields = [str(error.get(k)) for k in ("type", "code") if error.get(k)]
    return re.sub(r"[^\w.:\- ]", "", " ".join(fields))[:100] or "no error details"
