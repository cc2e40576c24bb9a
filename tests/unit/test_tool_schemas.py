"""The memory tools' schemas are their argument models': what a schema lets a model send, the
tool's model accepts, and what the tool's model accepts, it reads as arguments the schema allows.
The bounds of `limit` are query_max_results', the default's or the host's."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import BaseModel, ValidationError

from bot_memory.agent.tools import (
    DEFAULT_MAX_RESULTS,
    MANAGE_MEMORY,
    QUERY_CHAT_HISTORY,
    QUERY_MEMORIES,
    TOOLS,
    HistoryArgs,
    ManageArgs,
    QueryArgs,
    ToolAction,
    bounded,
    tools_for,
)
from bot_memory.settings import MemorySettings

ARGS: dict[str, type[BaseModel]] = {
    "query_memories": QueryArgs,
    "manage_memory": ManageArgs,
    "query_chat_history": HistoryArgs,
}

# The JSON Schema keywords _allows checks, and those it may skip (they say, not constrain).
CHECKED = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "minimum",
    "maximum",
    "items",
    "maxItems",
}
ANNOTATIONS = {"description", "default"}

CASES: dict[str, list[dict[str, Any]]] = {
    "query_memories": [
        {},
        {"query": "boat name"},
        {"id": "mem_ab12cd34ef56", "limit": 1},
        {"limit": DEFAULT_MAX_RESULTS},
        {"limit": 0},
        {"limit": -3},
        {"limit": None},
        {"query": 3},
        {"query": ["boat"]},
        {"q": "boat"},
    ],
    "manage_memory": [
        {"action": "remember", "sourceId": "m1"},
        {"action": "forget", "sourceId": "m1", "memoryId": "mem_ab12cd34ef56"},
        {"action": "enable-memory", "sourceId": "m1"},
        {"action": "disable-memory", "sourceId": "m1"},
        {"action": "enable", "sourceId": "m1"},
        {"action": "Remember", "sourceId": "m1"},
        {"action": "remember"},
        {"sourceId": "m1"},
        {"action": "remember", "source_id": "m1", "sourceId": "m1", "extra": 1},
        {"action": "remember", "sourceId": 1},
    ],
    "query_chat_history": [
        {},
        {"sourceIds": ["m1", "m2"]},
        {"sourceIds": [f"m{i}" for i in range(12)], "limit": 2},
        {"sourceIds": [f"m{i}" for i in range(13)]},
        {"sourceIds": "m1"},
        {"sourceIds": [1]},
        {"query": '"green tea"', "limit": 0},
        {"around": ["m1"]},
    ],
}


def _allows(schema: dict[str, Any], value: object) -> bool:
    """Whether `value` is valid under `schema`, for the keywords in CHECKED."""
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return False
        properties = schema.get("properties", {})
        if any(name not in value for name in schema.get("required", [])):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(properties):
            return False
        return all(_allows(properties[k], v) for k, v in value.items() if k in properties)
    if kind == "string" and not isinstance(value, str):
        return False
    if kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        return False
    if kind == "array":
        if not isinstance(value, list) or len(value) > schema.get("maxItems", len(value)):
            return False
        return all(_allows(schema["items"], v) for v in value)
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "minimum" in schema and value < schema["minimum"]:  # type: ignore[operator]
        return False
    return not ("maximum" in schema and value > schema["maximum"])  # type: ignore[operator]


def _keywords(schema: dict[str, Any]) -> set[str]:
    found = set(schema)
    for child in schema.get("properties", {}).values():
        found |= _keywords(child)
    if isinstance(schema.get("items"), dict):
        found |= _keywords(schema["items"])
    return found


def _accepts(args: type[BaseModel], value: dict[str, Any]) -> BaseModel | None:
    try:
        return args.model_validate(value)
    except ValidationError:
        return None


def _parameters(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"]["parameters"] for t in tools}


def test_the_exported_tools_are_the_default_bound() -> None:
    assert [t["function"]["name"] for t in TOOLS] == list(ARGS)
    assert [QUERY_MEMORIES, MANAGE_MEMORY, QUERY_CHAT_HISTORY] == TOOLS
    assert tools_for(MemorySettings.model_fields["query_max_results"].default) == TOOLS
    assert MemorySettings.model_fields["query_max_results"].default == DEFAULT_MAX_RESULTS


@pytest.mark.parametrize("most", [DEFAULT_MAX_RESULTS, 1, 5, 40])
def test_a_schema_is_what_function_calling_takes(most: int) -> None:
    for name, parameters in _parameters(tools_for(most)).items():
        assert parameters["type"] == "object"
        assert parameters["additionalProperties"] is False
        assert _keywords(parameters) <= CHECKED | ANNOTATIONS, name  # no title, $defs, anyOf
        fields = bounded(ARGS[name], most).model_fields
        aliases = {f.alias or n for n, f in fields.items() if n != "title"}
        assert set(parameters["properties"]) == aliases
        assert parameters.get("required", []) == [
            f.alias or n for n, f in fields.items() if f.is_required()
        ]
    manage = _parameters(TOOLS)["manage_memory"]
    assert {"sourceId", "memoryId"} <= set(manage["properties"])
    assert "sourceIds" in _parameters(TOOLS)["query_chat_history"]["properties"]


@pytest.mark.parametrize("most", [DEFAULT_MAX_RESULTS, 1, 5, 40])
def test_limit_is_bounded_by_query_max_results(most: int) -> None:
    parameters = _parameters(tools_for(most))
    for name in ("query_memories", "query_chat_history"):
        limit = parameters[name]["properties"]["limit"]
        assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, most, most)
        args = bounded(ARGS[name], most)
        assert args.model_validate({}).limit == most  # type: ignore[attr-defined]
        assert args.model_validate({"limit": 1}).limit == 1  # type: ignore[attr-defined]
        with pytest.raises(ValidationError):
            args.model_validate({"limit": 0})
        # More than the most is read as the most (as the tools always capped it), not refused.
        assert args.model_validate({"limit": most + 1}).limit == most  # type: ignore[attr-defined]


def test_the_actions_are_the_literal() -> None:
    action = _parameters(TOOLS)["manage_memory"]["properties"]["action"]
    assert action["enum"] == list(get_args(ToolAction))
    assert get_args(ManageArgs.model_fields["action"].annotation) == get_args(ToolAction)


@pytest.mark.parametrize("most", [DEFAULT_MAX_RESULTS, 3])
@pytest.mark.parametrize("name", list(ARGS))
def test_schema_and_model_accept_the_same(name: str, most: int) -> None:
    parameters = _parameters(tools_for(most))[name]
    args = bounded(ARGS[name], most)
    cases = [*CASES[name]]
    if "limit" in parameters["properties"]:
        cases += [{"limit": most}, {"limit": most + 1}, {"limit": "2"}]
    for case in cases:
        read = _accepts(args, case)
        if _allows(parameters, case):
            assert read is not None, case
        if read is not None:  # what the tool reads is what the schema allows
            assert _allows(parameters, read.model_dump(by_alias=True, exclude_none=True)), case
    schema_valid = [case for case in cases if _allows(parameters, case)]
    assert schema_valid and len(schema_valid) < len(cases)  # the cases test both ways


def test_a_title_is_accepted_and_not_offered() -> None:
    args = ManageArgs.model_validate({"action": "remember", "sourceId": "m1", "title": "VIP"})
    assert "title" not in _parameters(TOOLS)["manage_memory"]["properties"]
    assert "title" not in args.model_dump(by_alias=True)
