"""Explicit user control: remember, forget, enable and disable, with who may do what.

The router (a recognized direct request) and the manage_memory tool both end here, so the rules
are written once. Changes are durable as soon as this returns, whatever the answer does later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from bot_memory.intents import MemoryRequest
from bot_memory.pipeline.consolidation import plan_consolidation
from bot_memory.redaction import redact
from bot_memory.scopes import Scope
from bot_memory.state import (
    MemoryRecord,
    SourceRef,
    add_record,
    content_hash,
    forget,
    new_memory_id,
)
from bot_memory.store import SourceMessage, Store, WorkspaceTx

Outcome = Literal[
    "remembered",
    "forgotten",
    "nothing_to_forget",
    "enabled",
    "disabled",
    "already_enabled",
    "already_disabled",
    "not_allowed",
    "memory_off",
]
NOTE_TITLE_CHARS = 60


@dataclass(frozen=True)
class ControlResult:
    action: str
    outcome: Outcome
    memory_ids: list[str] = field(default_factory=list)


# --- authorization (pure) -----------------------------------------------------------------------


def may_toggle(scope: Scope, actor_id: int, *, is_admin: bool) -> bool:
    """Private users control their own scope; group recall needs a workspace owner/admin."""
    if scope.is_private:
        return scope.user_id == actor_id
    return is_admin


def may_forget(record: MemoryRecord, scope: Scope, actor_id: int, *, is_admin: bool) -> bool:
    """A participant may forget records whose statements are all theirs; others need an admin."""
    if scope.is_private:
        return scope.user_id == actor_id
    return is_admin or (bool(record.speaker_ids) and set(record.speaker_ids) == {actor_id})


# --- literal matching for "forget X" ---------------------------------------------------------

_EN_FILLER = frozenset(
    "the a an that this what about my me i you your said told to of is was it all any "
    "memory memories everything".split()
)
_ZH_FILLER = re.compile(r"关于|關於|的|记忆|記憶|我说过|我說過|那件事|这件事|這件事|所有")
_WORD = re.compile(r"[a-z0-9']{3,}")


def matches(record: MemoryRecord, subject: str) -> bool:
    """Whether a forget subject literally names this record (all its significant words)."""
    hay = f"{record.title}\n{record.summary}".casefold()
    subject = subject.casefold().strip(" .!?。！？")
    if not subject:
        return False
    if subject in hay:
        return True
    words = [w for w in _WORD.findall(subject) if w not in _EN_FILLER]
    pieces = [p for p in _ZH_FILLER.split(subject) if len(p.strip()) >= 2 and not _WORD.search(p)]
    if not words and not pieces:
        return False
    return all(w in hay for w in words) and all(p.strip() in hay for p in pieces)


# --- the four actions -----------------------------------------------------------------------


async def apply(
    store: Store,
    request: MemoryRequest,
    source: SourceMessage,
    *,
    is_admin: bool,
    provider: str,
    model: str,
    memory_id: str | None = None,
    title: str | None = None,
    now: datetime | None = None,
) -> ControlResult:
    now = now or datetime.now(UTC)
    scope = source.scope
    async with store.locked_workspace(scope.workspace) as tx:
        memory = tx.state.scope(scope.key)
        if request.action in ("enable", "disable"):
            if not may_toggle(scope, source.speaker_id, is_admin=is_admin):
                return ControlResult(request.action, "not_allowed")
            want = request.action == "enable"
            if memory.enabled == want:
                return ControlResult(
                    request.action, "already_enabled" if want else "already_disabled"
                )
            memory.set_enabled(want, source.request_id)
            tx.touch(scope.key)
            return ControlResult(request.action, "enabled" if want else "disabled")
        if not memory.enabled:
            return ControlResult(request.action, "memory_off")
        if request.action == "remember":
            record = _note(source, request, title, now)
            add_record(tx.state, record)
            tx.touch(scope.key)
            await _consolidate_later(tx, scope, source, provider, model, "note")
            return ControlResult("remember", "remembered", [record.id])
        return await _forget(tx, scope, source, request, memory_id, is_admin, provider, model)


def _note(
    source: SourceMessage, request: MemoryRequest, title: str | None, now: datetime
) -> MemoryRecord:
    """Remember saves the user's actual message, redacted; never a model-invented preference."""
    text = redact(source.text)
    heading = " ".join((title or request.subject or text).split())[:NOTE_TITLE_CHARS]
    return MemoryRecord(
        id=new_memory_id(),
        scope_key=source.scope.key,
        origin="note",
        title=redact(heading),
        summary=text,
        speaker_ids=[source.speaker_id],
        thread_ids=[source.thread_id],
        sources=[
            SourceRef(
                id=source.source_id,
                hash=content_hash(source.text),
                speaker_id=source.speaker_id,
                thread_id=source.thread_id,
            )
        ],
        cited=[source.source_id],
        created_at=now,
        last_used_at=now,
    )


async def _forget(
    tx: WorkspaceTx,
    scope: Scope,
    source: SourceMessage,
    request: MemoryRequest,
    memory_id: str | None,
    is_admin: bool,
    provider: str,
    model: str,
) -> ControlResult:
    candidates = tx.state.valid_records(scope.key)
    if memory_id:
        chosen = [r for r in candidates if r.id == memory_id]
    else:
        chosen = [r for r in candidates if matches(r, request.subject)]
    if not chosen:
        return ControlResult("forget", "nothing_to_forget")
    allowed = [r for r in chosen if may_forget(r, scope, source.speaker_id, is_admin=is_admin)]
    if not allowed:
        return ControlResult("forget", "not_allowed", [r.id for r in chosen])
    removed, touched = forget(tx.state, {r.id for r in allowed})
    tx.touch(*touched)
    if tx.state.valid_records(scope.key):
        await _consolidate_later(tx, scope, source, provider, model, "forget")
    return ControlResult("forget", "forgotten", sorted(removed))


async def _consolidate_later(
    tx: WorkspaceTx, scope: Scope, source: SourceMessage, provider: str, model: str, reason: str
) -> None:
    """Notes and forgetting trigger consolidation on their own, without an extraction."""
    await plan_consolidation(
        tx.conn,
        workspace=scope.workspace,
        scope_key=scope.key,
        scope_kind=scope.kind,
        state=tx.state,
        origin_request_id=source.request_id,
        provider=provider,
        model=model,
        reason=reason,
    )
