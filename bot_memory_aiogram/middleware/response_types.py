"""Keep aiogram's parsed-response classes alive.

aiogram parses every Bot API answer as `Response[T]`, a pydantic generic parametrized on each
call; pydantic keeps a parametrization only while something else refers to it, so one
collected by the garbage collector is built again, schema and all, on the next call (7% of a
busy bot's CPU, measured at 160 updates/s). Memory's session middleware (`AnswerCapture`)
refers to each one once, through `keep_response_type`.
"""

from __future__ import annotations

from typing import Any

from aiogram.methods import TelegramMethod
from aiogram.methods.base import Response

_KEPT: dict[type[Any], Any] = {}  # a method's class -> its Response[...] class


def keep_response_type(method: TelegramMethod[Any]) -> None:
    kind = type(method)
    if kind not in _KEPT:
        _KEPT[kind] = Response[method.__returning__]  # type: ignore[name-defined]
