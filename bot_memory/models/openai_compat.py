"""Any OpenAI-compatible /chat/completions server, over httpx."""

from __future__ import annotations

import json
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


class OpenAICompatibleModel(ChatModel):
    provider = "openai-compatible"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        timeout_seconds: float = 60.0,
        input_usd_per_mtok: float = 0.0,
        output_usd_per_mtok: float = 0.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(
            input_usd_per_mtok=input_usd_per_mtok, output_usd_per_mtok=output_usd_per_mtok
        )
        self.model = model
        self.provider = f"openai-compatible:{httpx.URL(base_url).host}"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(timeout_seconds, connect=min(timeout_seconds, 10.0)),
            transport=transport,
        )

    async def _complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        output: StructuredOutput | None,
    ) -> Completion:
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if output is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": output.name, "strict": True, "schema": output.schema_},
            }
        try:
            response = await self._client.post("chat/completions", json=body)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ModelError(f"model server unreachable: {exc!r}") from exc
        except httpx.TimeoutException as exc:
            # The request went out: the server may have run it and charged for it.
            raise ModelError(f"model call timed out: {exc!r}", outcome="unknown") from exc
        except httpx.HTTPError as exc:
            raise ModelError(f"model call failed: {exc!r}", outcome="unknown") from exc
        if response.status_code >= 400:
            raise ModelError(f"model server answered {response.status_code}: {_err(response)}")
        try:
            data = response.json()
            choice = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"model server sent an unreadable response: {exc!r}") from exc
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
    try:
        return str(response.json().get("error", {}).get("message", ""))[:200]
    except ValueError:
        return response.text[:200]
