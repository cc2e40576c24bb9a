"""The import structure, read statically (no module is imported): no circle among what modules
import when they load, and the core (`bot_memory`) never loads the aiogram layer or aiogram.

Counted: imports a module runs when it is loaded (module level, class bodies, `try`/`if`).
Not counted: imports inside functions (run when called: the CLI starts the aiogram entry points
that way) and under `if TYPE_CHECKING:` (annotations only)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot_memory", "bot_memory_aiogram")


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _loaded_imports(body: list[ast.stmt], name: str, is_package: bool) -> Iterator[str]:
    """The modules these statements import when they run at load time."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _loaded_imports(node.orelse, name, is_package)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield submodule if submodule in MODULES else base
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    yield from _loaded_imports(inner, name, is_package)


def _graph() -> dict[str, set[str]]:
    """Module -> what it imports when loaded (every import, ours and others')."""
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = set(_loaded_imports(tree.body, name, is_package)) - {name}
    return graph


GRAPH = _graph()


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), in our modules only."""
    ours = {name: {m for m in targets if m in graph} for name, targets in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(ours[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(ours):
        if node not in index:
            visit(node)
    return circles


def _reached(start: str) -> set[str]:
    """Everything loading `start` loads, ours and others' (top-level names for others')."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(GRAPH.get(name, ()))
    return seen


def test_the_reader_sees_the_package_layout() -> None:
    # A check that can fail: the reader finds the modules and the imports it should.
    assert "bot_memory_aiogram.testing.emulator.server" in MODULES
    assert "bot_memory.service" not in GRAPH["bot_memory.agent.turn"]
    assert "bot_memory.agent.turn" in GRAPH["bot_memory.service"]
    assert "bot_memory_aiogram.demo" not in GRAPH["bot_memory.cli.commands"]  # inside main() only
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_round_a_circle_when_loaded() -> None:
    assert _circles(GRAPH) == []


def test_the_core_never_loads_the_aiogram_layer() -> None:
    for name in (m for m in MODULES if m.split(".")[0] == "bot_memory"):
        reached = _reached(name)
        leaks = sorted(m for m in reached if m.split(".")[0] in ("bot_memory_aiogram", "aiogram"))
        assert leaks == [], f"{name} loads {leaks}"
