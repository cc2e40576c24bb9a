"""What the per-language recognizer corpora share."""

from __future__ import annotations

ANY: object = object()  # subject not asserted for this row

# (text, action, language, subject)
Row = tuple[str, str, str, object]
