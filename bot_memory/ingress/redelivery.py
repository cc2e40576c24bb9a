"""What to do with an update Telegram delivers again (after a non-2xx answer, a timeout, or a
process killed while handling it): the message was recorded the first time, and its request
says how far the first delivery got.

- answered (the request succeeded): drop it before the host's handlers; answering again would
  say the same thing twice;
- still open, and not being handled in this process: the first delivery died with its process;
  run the handlers again with that request;
- open and being handled here: the first delivery is still running (Telegram timed out
  waiting); drop it;
- closed without an answer (unanswered, failed): the handlers run again without memory, as for
  a message memory cannot use.
"""

from __future__ import annotations

from typing import Literal

Redelivery = Literal["drop", "again", "without_memory"]

_OPEN = ("queued", "running", "awaiting_approval")


def on_redelivery(status: str, *, handling_here: bool) -> Redelivery:
    if status == "succeeded":
        return "drop"
    if status in _OPEN:
        return "drop" if handling_here else "again"
    return "without_memory"
