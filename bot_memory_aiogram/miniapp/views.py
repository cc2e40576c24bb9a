"""What the page is sent: records, links and strings as JSON (pure functions, no I/O)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot_memory.access import Membership
from bot_memory.control import may_forget
from bot_memory.records import MemoryRecord
from bot_memory.scopes import Scope
from bot_memory_aiogram import display
from bot_memory_aiogram.i18n import Texts

# The strings the page shows, served in the user's language (the bot's own Fluent files, so
# a host's overrides and added languages apply to the page too). Strings with numbers in them
# are formatted by the API where the number is known.
PAGE_STRINGS = (
    "page-title",
    "screen-title-chat",
    "screen-title-topic",
    "screen-empty",
    "screen-is-off",
    "screen-turn-on",
    "screen-turn-off",
    "screen-refresh",
    "screen-cancel",
    "page-search",
    "page-search-button",
    "page-clear",
    "page-no-match",
    "page-loading",
    "page-more",
    "page-select",
    "page-forget",
    "page-forget-all",
    "page-switch",
    "page-confirm-off",
    "page-confirm-on",
    "page-sources-unlinked",
    "page-not-yours",
    "page-close",
    "page-session-ended",
    "page-error-expired",
    "page-confirm",
    "page-export",
    "page-exported",
    "page-speakers",
    "page-created",
    "page-used",
    "page-until",
    "page-sources",
    "page-note",
    "page-extracted",
    "page-status",
    "page-jobs",
    "page-back",
    "page-error-no-telegram",
    "page-error-busy",
    "page-replaced",
    "screen-someone",
)


# Strings with a count the page knows (how many are selected): sent formatted for every count
# it can show, so Fluent's plural forms apply in every language.
PAGE_COUNTED = ("page-forget-n",)
JOB_PHASES = ("extract", "consolidate", "done", "failed", "stopped")


def strings(texts: Texts, language: str) -> dict[str, str]:
    found = {key: texts(language, key) for key in PAGE_STRINGS}
    # Filled in by the page (app.js `fill`): the number, or a date it formats in the user's
    # language (Intl, like its other dates) and the newer memory's text.
    found["page-source-link"] = texts(language, "page-source-link", n="{n}")
    found["page-replaced-on"] = texts(language, "page-replaced-on", when="{when}")
    found["page-replaced-by"] = texts(language, "page-replaced-by", when="{when}", by="{by}")
    found["page-replaced-by-newer"] = texts(language, "page-replaced-by-newer", when="{when}")
    # A label and its value, a list's separator and the jobs line as each language writes
    # them (Chinese: full-width colon, 、).
    found["page-label"] = texts(language, "page-label", label="{label}", value="{value}")
    found["page-list-separator"] = texts(language, "page-list-separator")
    found["page-jobs-line"] = texts(language, "page-jobs-line", jobs="{jobs}")
    return found


def counted(texts: Texts, language: str, most: int) -> dict[str, list[str]]:
    return {key: [texts(language, key, count=n) for n in range(most + 1)] for key in PAGE_COUNTED}


def jobs_line(texts: Texts, language: str, jobs: dict[str, int]) -> str:
    """The workspace's jobs by phase, in words (never the phases' names)."""
    known = [texts(language, f"page-job-{p}", count=jobs[p]) for p in JOB_PHASES if jobs.get(p)]
    return " · ".join(known) or texts(language, "page-jobs-none")


def message_link(scope: Scope, telegram_message_id: int | None) -> str | None:
    """A t.me link to a message, where Telegram can link one: supergroups only (private chats
    and basic groups have no message links)."""
    if scope.is_private or telegram_message_id is None:
        return None
    chat = str(scope.chat_id)
    if not chat.startswith("-100"):
        return None
    internal = chat[4:]
    if scope.topic_id:
        return f"https://t.me/c/{internal}/{scope.topic_id}/{telegram_message_id}"
    return f"https://t.me/c/{internal}/{telegram_message_id}"


def _when(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value else None


def record_json(
    record: MemoryRecord,
    *,
    scope: Scope,
    actor_id: int,
    who: Membership,
    names: dict[int, str],
    indexed: set[str],
    telegram_ids: dict[int, int],
    max_sources: int,
) -> dict[str, Any]:
    direct = [s for s in record.sources if not s.inherited]
    return {
        "id": record.id,
        # A note as its whole fact in the user's words (without "remember that ...", for notes
        # stored so before), an extracted memory as the model titled and summarised it.
        "title": display.title(record),
        "summary": display.summary(record),
        "origin": record.origin,
        "speakers": display.speaker_names(record, names),  # None: a name the bot never saw
        "created_at": _when(record.created_at),
        "last_used_at": _when(record.last_used_at),
        "until": _when(record.available_until),
        "replaced_by": record.replaced_by,
        "replaced_at": _when(record.replaced_at),
        "indexed": record.id in indexed,
        "may_forget": may_forget(record, scope, actor_id, who),
        "sources": [
            {
                "id": s.id,
                "role": s.role,
                "link": message_link(scope, telegram_ids.get(s.message_id)),
            }
            for s in direct[:max_sources]
        ],
        "more_sources": max(0, len(direct) - max_sources),
    }
