"""What a host imports stays importable: the public names of `bot_memory`, `bot_memory_aiogram`
and `bot_memory_aiogram.testing` (pinned here, so a removal is a visible change), every import
the README and the pages under docs/ show, and the old forms kept for one release with a
DeprecationWarning."""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

import pytest

import bot_memory
import bot_memory_aiogram
import bot_memory_aiogram.testing
from bot_memory.agent.tools import ToolContext
from bot_memory.scopes import Scope
from bot_memory.service import Memory

ROOT = Path(__file__).resolve().parents[2]
GROUP = Scope(workspace="test", bot_id=42, kind="shared", chat_id=-9, topic_id=0)

# The public API. A name leaves a list only with a CHANGELOG line and, for a release, a
# deprecated form that still works.
PUBLIC = {
    "bot_memory": [
        "BotMemoryError",
        "ChatModel",
        "DatabaseUnavailable",
        "DatabaseUrlInvalid",
        "ExtensionMissing",
        "Gate",
        "ItemView",
        "JsonFormatter",
        "Membership",
        "Memory",
        "MemorySettings",
        "MemoryUnavailable",
        "MetricsUnavailable",
        "ModelError",
        "Requester",
        "SchemaBehind",
        "Scope",
        "ServerTooOld",
        "SettingsFileError",
        "SourceMessage",
        "ToolContext",
        "Turn",
    ],
    "bot_memory_aiogram": [
        "ALLOWED_UPDATES",
        "Directed",
        "MEMORY_FLAG",
        "SetupTooLate",
        "WorkspaceResolver",
        "setup",
    ],
    "bot_memory_aiogram.testing": [
        "ApiCall",
        "BotAPIEmulator",
        "EmulatorError",
        "FakeOpenAI",
        "ReplyRefused",
        "TestBot",
        "command_entity",
        "default_responder",
        "mention_entity",
        "miniapp_headers",
        "running_bot",
        "sign_init_data",
        "utf16_len",
    ],
}
# Old module paths kept for one release: each re-exports what it had, from its new home.
MOVED = {
    "bot_memory_aiogram.emulator": "bot_memory_aiogram.testing.emulator",
    "bot_memory_aiogram.fake_openai": "bot_memory_aiogram.testing.fake_openai",
    "bot_memory_aiogram.loopback": "bot_memory_aiogram.testing.loopback",
}
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
HOST_FILES = [*DOC_FILES, *sorted((ROOT / "examples").rglob("*.py"))]
FROM_IMPORT = re.compile(r"^\s*from (bot_memory[\w.]*) import ([\w, ]+?)\s*(?:#.*)?$", re.M)
DOTTED = re.compile(r"`(bot_memory(?:_aiogram)?(?:\.\w+)+)")


def test_the_public_names_are_pinned() -> None:
    for package in (bot_memory, bot_memory_aiogram, bot_memory_aiogram.testing):
        assert sorted(package.__all__) == PUBLIC[package.__name__], package.__name__
        for name in package.__all__:
            assert getattr(package, name) is not None


def _imports_shown(path: Path) -> list[tuple[str, str]]:
    shown: list[tuple[str, str]] = []
    for module, names in FROM_IMPORT.findall(path.read_text(encoding="utf-8")):
        shown += [(module, name.strip()) for name in names.split(",") if name.strip()]
    return shown


def test_the_docs_show_imports_where_expected() -> None:
    assert {path.name for path in DOC_FILES} >= {"README.md", "host-guide.md", "miniapp.md"}
    readme = _imports_shown(ROOT / "README.md")
    assert ("bot_memory", "Memory") in readme  # the wiring snippet
    assert ("bot_memory_aiogram", "setup") in readme
    assert ("bot_memory_aiogram.testing", "running_bot") in readme
    assert ("bot_memory_aiogram.miniapp", "mount") in _imports_shown(ROOT / "docs" / "miniapp.md")


@pytest.mark.parametrize("path", HOST_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_import_a_host_is_shown_works_and_is_public(path: Path) -> None:
    for module, name in _imports_shown(path):
        where = f"{path.relative_to(ROOT)}: from {module} import {name}"
        assert hasattr(importlib.import_module(module), name), where
        if module in PUBLIC:
            assert name in PUBLIC[module], f"{where} is shown to hosts: make it public"


def test_the_docs_mention_the_json_formatter() -> None:
    mentioned = {m for path in DOC_FILES for m in DOTTED.findall(path.read_text(encoding="utf-8"))}
    assert "bot_memory.JsonFormatter" in mentioned


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_name_the_docs_mention_exists(path: Path) -> None:
    mentioned = DOTTED.findall(path.read_text(encoding="utf-8"))
    for dotted in (m for m in mentioned if m not in MOVED):  # those: the test below
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                found: object = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for attribute in parts[cut:]:
                found = getattr(found, attribute)
            break
        else:
            pytest.fail(f"{path.relative_to(ROOT)} mentions {dotted}, which does not exist")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_still_works_and_warns(old: str) -> None:
    new = importlib.import_module(MOVED[old])
    kept = sys.modules.pop(old, None)
    try:
        with pytest.warns(DeprecationWarning, match=re.escape(old)) as warned:
            __import__(old)  # as `import` does (importlib's own frame is not skipped)
        module = sys.modules[old]
        assert warned[0].filename == __file__  # at the host's import, not inside the shim
        assert module.__all__
        for name in module.__all__:
            assert getattr(module, name) is getattr(new, name)
    finally:
        if kept is not None:
            sys.modules[old] = kept
        else:
            sys.modules.pop(old, None)


async def _switch_off_as(memory: Memory, ctx: ToolContext) -> object:
    arguments = json.dumps({"action": "disable-memory", "sourceId": ctx.source.source_id})
    result = await memory.tools.execute("manage_memory", arguments, ctx, call_id="c1")
    return result.get("outcome")


async def test_tool_context_still_takes_is_admin_with_a_warning(memory: Memory) -> None:
    source = await memory.record(GROUP, text="turn off memory", speaker_id=77)
    assert source is not None
    await memory.begin(source)
    with pytest.warns(DeprecationWarning, match=r"is_admin.*gate=") as warned:
        admin = ToolContext(source=source, is_admin=True)
    assert warned[0].filename == __file__  # points at the host's line, not ours
    # As before: the host's word that the speaker is an admin (no lookup configured here).
    assert await _switch_off_as(memory, admin) == "disabled"

    with pytest.warns(DeprecationWarning, match="is_admin"):
        member = ToolContext(source=source, is_admin=False)
    assert await memory.tools.gate_for(member).membership() == (
        await memory.tools.gate_for(ToolContext(source=source)).membership()
    )


async def test_tool_context_refuses_is_admin_next_to_a_gate(memory: Memory) -> None:
    source = await memory.record(GROUP, text="turn off memory", speaker_id=77)
    assert source is not None
    gate = memory.tools.gate_for(ToolContext(source=source))
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="not both"):
        ToolContext(source=source, gate=gate, is_admin=True)
