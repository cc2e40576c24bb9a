"""How a host hears that something it uses is going: one DeprecationWarning per use, naming
what to use instead. The old form keeps working for one release (CHANGELOG.md says what
changed and when)."""

from __future__ import annotations

import warnings

#: In every deprecation message: the test suite turns warnings carrying it into errors, so the
#: project never uses a form it has deprecated itself.
KEPT_FOR_ONE_RELEASE = "is deprecated (kept for one release)"


def warn_deprecated(old: str, instead: str, *, stacklevel: int = 3) -> None:
    """Warn that `old` is going; `stacklevel` 3 points at the caller of the function that
    calls this (for a module, at the import that loaded it)."""
    warnings.warn(
        f"{old} {KEPT_FOR_ONE_RELEASE}: {instead}", DeprecationWarning, stacklevel=stacklevel
    )
