"""The import structure, read statically (no module is imported): no circle among what modules
import when they load; the core (`bot_memory`) never imports the aiogram layer or aiogram (only
`bot_memory.__main__` wires the adapter's entry points); and the core's stages import only
downward, in the order of STAGES below.

Counted: imports a module runs when it is loaded (module level, class bodies, `try`/`if`).
Not counted: imports inside functions (run when called: the CLI starts the aiogram entry points
that way) and under `if TYPE_CHECKING:` (annotations only)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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
    assert "bot_memory.agent" in GRAPH["bot_memory.service"]  # `from bot_memory.agent import Turn`
    assert "bot_memory_aiogram.demo" not in GRAPH["bot_memory.__main__"]  # inside a function
    assert "bot_memory_aiogram.demo.main" in ALL_IMPORTS["bot_memory.__main__"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_round_a_circle_when_loaded() -> None:
    assert _circles(GRAPH) == []


def test_the_core_never_loads_the_aiogram_layer() -> None:
    for name in (m for m in MODULES if m.split(".")[0] == "bot_memory"):
        reached = _reached(name)
        leaks = sorted(m for m in reached if m.split(".")[0] in ("bot_memory_aiogram", "aiogram"))
        assert leaks == [], f"{name} loads {leaks}"


# The core's stages, lowest first: a module imports only from its own stage or lower ones (an
# import under TYPE_CHECKING, for annotations, is not counted; one inside a function is). The
# leaves at the root come first, the host API (`Memory`) and the tools that drive it last.
STAGES: list[tuple[str, ...]] = [
    (
        "bot_memory.errors",
        "bot_memory.logs",
        "bot_memory.deprecation",
        "bot_memory.scopes",
        "bot_memory.settings_file",
        "bot_memory.settings",
        "bot_memory.records",
        "bot_memory.terms",
        "bot_memory.framing",
        "bot_memory.metrics",
    ),
    ("bot_memory.redaction", "bot_memory.intents"),
    ("bot_memory.models",),
    ("bot_memory.storage",),
    ("bot_memory.access",),
    ("bot_memory.ingress", "bot_memory.billing"),
    ("bot_memory.retention",),
    ("bot_memory.pipeline",),
    ("bot_memory.retrieval", "bot_memory.control"),
    ("bot_memory.agent",),
    ("bot_memory.service", "bot_memory"),
    ("bot_memory.cli", "bot_memory.evaluation"),
    ("bot_memory.__main__",),
]
RANK = {name: rank for rank, names in enumerate(STAGES) for name in names}
ROOT_FILES_AT_MOST = 12


def _every_import(body: list[ast.stmt]) -> Iterator[str]:
    """Absolute imports anywhere in these statements, functions included, TYPE_CHECKING not:
    `from a.b import c` as "a.b.c", `import a.b` as "a.b"."""
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _every_import(node.orelse)
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _every_import(inner)


ALL_IMPORTS = {
    name: set(_every_import(ast.parse(path.read_text(encoding="utf-8")).body))
    for name, (path, _) in MODULES.items()
}


def _stage(dotted: str) -> str | None:
    """The stage a module (or a name in it) belongs to: its longest listed prefix."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in RANK:
            return ".".join(parts[:n])
    return None


def _against_the_flow(imports: dict[str, set[str]]) -> list[str]:
    found = []
    for name, targets in sorted(imports.items()):
        if not name.startswith("bot_memory.") and name != "bot_memory":
            continue
        own = _stage(name)
        assert own is not None, f"{name} belongs to no stage: add it to STAGES"
        for target in sorted(targets):
            if target.split(".")[0] != "bot_memory":
                continue
            theirs = _stage(target)
            if theirs is not None and RANK[theirs] > RANK[own]:
                found.append(f"{name} ({own}) imports {target} ({theirs})")
    return found


def test_the_stage_rule_can_fail() -> None:
    assert _against_the_flow({"bot_memory.storage.store": {"bot_memory.agent.tools.x"}}) == [
        "bot_memory.storage.store (bot_memory.storage) imports bot_memory.agent.tools.x"
        " (bot_memory.agent)"
    ]
    assert _against_the_flow({"bot_memory.agent.tools": {"bot_memory.storage.store.Store"}}) == []


def test_a_lower_stage_never_imports_a_higher_one() -> None:
    assert _against_the_flow(ALL_IMPORTS) == []


def test_only_the_entry_point_wires_the_adapter() -> None:
    for name, targets in ALL_IMPORTS.items():
        if name.split(".")[0] != "bot_memory" or name == "bot_memory.__main__":
            continue
        leaks = sorted(t for t in targets if t.split(".")[0] in ("bot_memory_aiogram", "aiogram"))
        assert leaks == [], f"{name} imports {leaks}"


def test_the_core_root_holds_the_host_api_and_the_leaves_only() -> None:
    root = sorted(p.name for p in (ROOT / "bot_memory").glob("*.py"))
    assert len(root) <= ROOT_FILES_AT_MOST, root
    every_module = {m for m in MODULES if m.split(".")[0] == "bot_memory"}
    assert {m for m in every_module if _stage(m) is None} == set()


def _package_surface() -> dict[str, set[str]]:
    """Each core package -> the names its `__init__` lists in `__all__` (read statically)."""
    surface: dict[str, set[str]] = {}
    for name, (path, is_package) in MODULES.items():
        if not is_package or name.count(".") != 1 or not name.startswith("bot_memory."):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                surface[name] = set(ast.literal_eval(node.value))
    return surface


SURFACE = _package_surface()


def test_every_stage_says_what_the_others_may_use() -> None:
    packages = {m for m, (_, is_package) in MODULES.items() if is_package and m.count(".") == 1}
    core = {p for p in packages if p.startswith("bot_memory.")}
    assert core - set(SURFACE) == set(), "a package without __all__"
    reached_in = []
    for name, targets in sorted(ALL_IMPORTS.items()):
        for target in sorted(targets):
            parts = target.split(".")
            package = ".".join(parts[:2])
            if package not in SURFACE or name.startswith(package) or len(parts) == 2:
                continue  # its own package, or the package itself (`from bot_memory import x`)
            # `from bot_memory.storage import Store`, or a module the package lists as public
            # (`from bot_memory.intents.cyrillic ...`)
            if parts[2] not in SURFACE[package]:
                reached_in.append(f"{name} imports {target}")
    assert reached_in == []


# --- only storage speaks SQL ---------------------------------------------------------------------

# A string that opens a statement: SQL here is written in capitals, prose is not.
_STATEMENT = re.compile(
    r"^\s*\(?\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|ALTER|DROP|TRUNCATE|LOCK|VACUUM"
    r"|ANALYZE|COPY|BEGIN|COMMIT|ROLLBACK|SET|SHOW|EXPLAIN|GRANT|REVOKE)\s+\S"
)
# What runs a statement on a pool or a connection; `execute` also names other things (a tool
# call's), so it counts when handed a statement's constant (a literal counts as a statement).
_RUNS = {"fetch", "fetchrow", "fetchval", "executemany", "acquire", "cursor"}
_RUNS_PREFIX = "copy_"
_HANDLES = {"pool", "worker_pool", "conn", "connection"}


def _text_of(node: ast.expr) -> str | None:
    """The text of a string literal, an f-string's literal parts, or a `+` of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text_of(node.left)
    return None


def _speaks_sql(tree: ast.AST) -> list[str]:
    """Where a module holds a statement, runs one, reaches a pool or connection, or imports the
    driver: each as 'line: what', in line order."""
    found: set[tuple[int, str]] = set()
    inside: set[int] = set()  # parts of an f-string or a `+` already looked at as a whole
    for node in ast.walk(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.JoinedStr | ast.BinOp | ast.Constant):
            text = _text_of(node)
            if text is not None:
                inside.update(id(n) for n in ast.walk(node))
                if _STATEMENT.match(text):
                    found.add((node.lineno, f"statement {text.split()[0]}"))
                continue
        if isinstance(node, ast.Attribute):
            if node.attr in _RUNS | _HANDLES or node.attr.startswith(_RUNS_PREFIX):
                found.add((node.lineno, f".{node.attr}"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            first = node.args[0] if node.args else None
            named = first.id if isinstance(first, ast.Name) else None
            if node.func.attr == "execute" and named is not None and named.isupper():
                found.add((node.lineno, f".execute({named})"))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            if any((n or "").split(".")[0] == "asyncpg" for n in names):
                found.add((node.lineno, "imports asyncpg"))
    return [f"{line}: {what}" for line, what in sorted(found)]


def _outside_storage() -> dict[str, list[str]]:
    found = {}
    for name, (path, _) in MODULES.items():
        if name == "bot_memory.storage" or name.startswith("bot_memory.storage."):
            continue
        where = _speaks_sql(ast.parse(path.read_text(encoding="utf-8")))
        if where:
            found[name] = where
    return found


def test_the_sql_rule_can_fail() -> None:
    source = (
        "import asyncpg\n"
        "Q = 'SELECT id FROM memory_records WHERE workspace_id = $1'\n"
        "async def f(store, tools, conn):\n"
        "    await store.pool.fetchval(f'UPDATE {Q} SET x = 1')\n"
        "    await tools.execute('query_memories', {})\n"
        "    await conn.execute('DELETE FROM chats')\n"
        "    await tools.execute(Q)\n"
        "    print('Select a memory to forget')\n"
    )
    assert _speaks_sql(ast.parse(source)) == [
        "1: imports asyncpg",
        "2: statement SELECT",
        "4: .fetchval",
        "4: .pool",
        "4: statement UPDATE",
        "6: statement DELETE",
        "7: .execute(Q)",
    ]


def test_only_storage_speaks_sql() -> None:
    found = _outside_storage()
    assert found == {}, "\n".join(
        f"{name}: {', '.join(where)}" for name, where in sorted(found.items())
    )
