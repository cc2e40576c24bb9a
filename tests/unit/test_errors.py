"""One root: every exception class bot_memory and bot_memory_aiogram define (found by importing
every module) derives from BotMemoryError, except the private ones the errors module names
outside the tree, and that module's docstring draws the tree as the code has it: each class
under its parent, with its other bases and the module that defines it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import warnings

import pytest

import bot_memory
import bot_memory_aiogram
import bot_memory_aiogram.testing
from bot_memory import errors
from bot_memory.errors import BotMemoryError

# Left outside the tree on purpose (the errors module's docstring says why).
OUTSIDE = {"bot_memory.storage.workspace._Undo"}

_LINE = re.compile(r"^(?P<indent> *)(?P<name>\w+)(?:\((?P<bases>[\w, ]*)\))?\s+(?P<module>[\w.]+)$")


def _defined() -> dict[str, type[BaseException]]:
    """'module.Name' -> every exception class a module of the two packages defines."""
    found: dict[str, type[BaseException]] = {}
    for package in (bot_memory, bot_memory_aiogram):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            with warnings.catch_warnings():  # the old module paths warn when first imported
                warnings.simplefilter("ignore", DeprecationWarning)
                module = importlib.import_module(info.name)
            for value in vars(module).values():
                if (
                    inspect.isclass(value)
                    and issubclass(value, BaseException)
                    and value.__module__ == module.__name__
                ):
                    found[f"{module.__name__}.{value.__qualname__}"] = value
    return found


DEFINED = _defined()
DOC = errors.__doc__ or ""


def _tree() -> dict[str, tuple[str | None, list[str], str]]:
    """The docstring's tree: name -> (parent in the tree, other bases, module)."""
    lines = DOC.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("BotMemoryError("))
    tree: dict[str, tuple[str | None, list[str], str]] = {}
    parents: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            break
        match = _LINE.match(line)
        assert match, f"not a line of the tree: {line!r}"
        depth, rest = divmod(len(match["indent"]), 4)
        assert rest == 0 and depth <= len(parents), f"misindented: {line!r}"
        del parents[depth:]
        bases = [b.strip() for b in (match["bases"] or "").split(",") if b.strip()]
        tree[match["name"]] = (parents[-1] if parents else None, bases, match["module"])
        parents.append(match["name"])
    return tree


TREE = _tree()


def test_the_walk_finds_the_exceptions() -> None:
    # A check that can fail: the walk reaches the core, its stages and the adapter.
    for name in (
        "bot_memory.storage.database.DatabaseUnavailable",
        "bot_memory.ingress.recorder.MemoryUnavailable",
        "bot_memory_aiogram.setup.SetupTooLate",
        "bot_memory_aiogram.testing.emulator.wire.EmulatorError",
        *OUTSIDE,
    ):
        assert name in DEFINED, name
    assert len(TREE) == len(DEFINED) - len(OUTSIDE) > 20


def test_every_exception_derives_from_the_root() -> None:
    stray = sorted(
        name
        for name, cls in DEFINED.items()
        if not issubclass(cls, BotMemoryError) and name not in OUTSIDE
    )
    assert stray == [], "add BotMemoryError as a base (and the class to bot_memory/errors)"


def test_what_stays_outside_is_private_and_said_so() -> None:
    outside = DOC.split("Outside the tree:", 1)[1]
    for name in OUTSIDE:
        module, _, short = name.rpartition(".")
        cls = DEFINED[name]
        assert short.startswith("_") and not issubclass(cls, BotMemoryError), name
        assert re.search(rf"^{short}\s+{re.escape(module)}$", outside, re.M), name


def test_the_docstring_draws_the_tree_the_code_has() -> None:
    in_tree = {n: c for n, c in DEFINED.items() if issubclass(c, BotMemoryError)}
    assert sorted(TREE) == sorted(c.__name__ for c in in_tree.values()), "names in the tree"
    for cls in in_tree.values():
        parent, bases, module = TREE[cls.__name__]
        assert module == cls.__module__, cls
        ours = [b for b in cls.__bases__ if issubclass(b, BotMemoryError)]
        others = [b.__name__ for b in cls.__bases__ if not issubclass(b, BotMemoryError)]
        if cls is BotMemoryError:
            assert (parent, bases) == (None, ["Exception"])
            continue
        assert [b.__name__ for b in ours] == [parent], cls
        assert others == bases, cls


def test_each_keeps_its_builtin_base() -> None:
    # `except RuntimeError` (or ValueError, AssertionError) in a host still catches them.
    assert issubclass(bot_memory.DatabaseUnavailable, RuntimeError)
    assert issubclass(bot_memory.SchemaBehind, RuntimeError)
    assert issubclass(bot_memory.MemoryUnavailable, RuntimeError)
    assert issubclass(bot_memory.ModelError, RuntimeError)
    assert issubclass(bot_memory.SettingsFileError, ValueError)
    assert issubclass(bot_memory_aiogram.SetupTooLate, RuntimeError)
    assert issubclass(bot_memory_aiogram.testing.ReplyRefused, AssertionError)
    with pytest.raises(RuntimeError):
        raise bot_memory.SchemaBehind(at=20, needs=24)


def test_the_public_exceptions_are_under_the_root_and_named_as_public() -> None:
    hosts = DOC.split("A host imports", 1)[1].split("\n\n", 1)[0]
    for package in (bot_memory, bot_memory_aiogram, bot_memory_aiogram.testing):
        for name in package.__all__:
            value = getattr(package, name)
            if inspect.isclass(value) and issubclass(value, BaseException):
                assert issubclass(value, BotMemoryError), name
                family = name if name in hosts else TREE[name][0]  # "the ... family"
                assert family is not None and family in hosts, f"{name}: say where it is imported"
