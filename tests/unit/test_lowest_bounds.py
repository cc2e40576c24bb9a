"""The lowest end `make test-lowest` installs is the lowest end pyproject.toml declares: every
runtime dependency has a lower bound, and .ci/lowest-constraints.txt pins each at exactly it."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def declared_lower_bounds() -> dict[str, Version]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    bounds = {}
    for line in project["dependencies"]:
        req = Requirement(line)
        lows = [Version(s.version) for s in req.specifier if s.operator == ">="]
        assert len(lows) == 1, f"{line!r}: one >= lower bound, so its lowest end can be tested"
        bounds[canonicalize_name(req.name)] = lows[0]
    return bounds


def pinned() -> dict[str, Version]:
    pins = {}
    for raw in (ROOT / ".ci" / "lowest-constraints.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins


def test_the_lowest_constraints_pin_every_declared_lower_bound() -> None:
    assert pinned() == declared_lower_bounds()
