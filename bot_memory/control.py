"""Explicit user control: remember, forget, enable and disable, with who may do what.

The router (a recognized direct request), the manage_memory tool and the /memory screen all end
here, so the rules are written once. Who the actor is comes from a `Membership` checked at the
moment of the action, never from anything recalled. Changes are durable as soon as this
returns, whatever the answer does later.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

import asyncpg

from bot_memory.access import Gate, Membership
from bot_memory.cyrillic import CYRILLIC, MIN_STEM, fold, names_word
from bot_memory.cyrillic import WORD as CYRILLIC_WORD
from bot_memory.intents import MemoryRequest, recognize
from bot_memory.logs import get_logger
from bot_memory.pipeline.discovery import rearm
from bot_memory.pipeline.jobs import stop_jobs_touching
from bot_memory.redaction import redact
from bot_memory.retention import derived_closure, scrub_references
from bot_memory.scopes import Scope
from bot_memory.state import (
    MemoryRecord,
    ScopeState,
    SourceRef,
    content_hash,
    forget_closure,
)
from bot_memory.store import SourceMessage, Store
from bot_memory.workspace import WorkspaceGone, WorkspaceTx

log = get_logger(__name__)

Outcome = Literal[
    "remembered",
    "forgotten",
    "nothing_to_forget",
    "enabled",
    "disabled",
    "already_enabled",
    "already_disabled",
    "not_allowed",
    "cascade_not_allowed",
    "not_member",
    "memory_off",
    "unavailable",
    "mismatch",
]
NOTE_TITLE_CHARS = 60


@dataclass(frozen=True)
class ControlResult:
    action: str
    outcome: Outcome
    memory_ids: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.outcome in ("remembered", "forgotten", "enabled", "disabled")


# --- authorization (pure) -----------------------------------------------------------------------


def may_toggle(scope: Scope, actor_id: int, who: Membership) -> bool:
    """Private users control their own scope; group recall needs a workspace owner/admin.
    (In a private scope only its user, or an operator, is ever an admin.)"""
    if scope.is_private:
        return scope.user_id == actor_id or who.admin
    return who.admin


# Outcomes an admin would not get: refused on a cached standing, they are asked about again.
_ADMIN_REFUSALS = frozenset({"not_allowed", "cascade_not_allowed"})


async def acting(
    gate: Gate, who: Membership, act: Callable[[Membership], Awaitable[ControlResult]]
) -> ControlResult:
    """Run an action (spoken, pressed or a tool call) with this standing. An admin standing from
    the cache is confirmed with Telegram first (a demoted admin keeps no powers); refused as a
    non-admin on a cached standing, it runs once more if Telegram now says admin (someone
    promoted within the cache's lifetime is an admin at once)."""
    who = await gate.confirmed(who)
    result = await act(who)
    if result.outcome in _ADMIN_REFUSALS and (admin := await gate.promoted(who)):
        result = await act(admin)
    return result


def may_forget(record: MemoryRecord, scope: Scope, actor_id: int, who: Membership) -> bool:
    """A participant may forget records whose statements are all theirs; others need an admin."""
    if scope.is_private:
        return scope.user_id == actor_id or who.admin
    return who.admin or (bool(record.speaker_ids) and set(record.speaker_ids) == {actor_id})


# --- literal matching for "forget X" ---------------------------------------------------------

_EN_FILLER = frozenset(
    "the a an that this what about my me i you your said told to of is was it all any "
    "memory memories everything".split()
)
_ZH_FILLER = re.compile(r"关于|關於|的|记忆|記憶|我说过|我說過|那件事|这件事|這件事|所有")
# Russian and Ukrainian words that name nothing (folded: ё as е, one apostrophe).
_SLAVIC_FILLER = frozenset(
    (
        "мой моя мое мои мою моего моей моему моим моих моем моими мне меня мной что чтобы "
        "обо про насчет это этот эта эти эту этого все весь вся всю тебе тебя вам вас "
        "говорил говорила сказал сказала рассказывал рассказывала писал писала память памяти "
        "воспоминание воспоминания запись который которую которое которые свой своя свое свои "
        "свою своего своей своих своем знаешь помнишь для над под без при через после перед "
        "около или как уже еще тоже также "
        "мій моє мої мого моєї моєму моїм моїх моїй моєю моїми мені мене що шо цей цю цього "
        "усе тобі казав казала говорив розповідав розповідала писав сказав пам'ять пам'яті "
        "спогад спогади запис від який яку яке які свій своє свого своєї своїх знаєш пам'ятаєш "
        "під після біля або але вже теж також"
    ).split()
)
_WORD = re.compile(r"[a-z0-9']{3,}")


def mentions(text: str, subject: str) -> bool:
    """Whether a text literally names a subject (all its significant words). Russian and
    Ukrainian words also name their inflected forms ("номера" names "номер")."""
    hay = fold(text)
    subject = fold(subject).strip(" .!?。！？")
    if not subject:
        return False
    if _whole(subject, hay):
        return True
    words = [w for w in _WORD.findall(subject) if w not in _EN_FILLER]
    slavic = [
        w for w in CYRILLIC_WORD.findall(subject) if len(w) >= MIN_STEM and w not in _SLAVIC_FILLER
    ]
    pieces = [
        p
        for p in _ZH_FILLER.split(subject)
        if len(p.strip()) >= 2 and not _WORD.search(p) and not CYRILLIC.search(p)
    ]
    if not words and not slavic and not pieces:
        return False
    hay_words = frozenset(CYRILLIC_WORD.findall(hay)) if slavic else frozenset()
    return (
        all(_whole(w, hay) for w in words)
        and all(names_word(hay_words, w) for w in slavic)
        and all(p.strip() in hay for p in pieces)
    )


def _whole(needle: str, hay: str) -> bool:
    """`needle` in `hay`, as whole words at its Latin and Cyrillic edges (an English plural or
    possessive allowed): "past" is not in "pasta", "cat" is in "cats", "кот" is not in "котел";
    Chinese has no word edges to keep."""
    head = tail = ""
    if needle[:1].isascii() and needle[:1].isalnum():
        head = r"(?<![a-z0-9'])"
    elif CYRILLIC.match(needle):
        head = r"(?<![\w'])"
    if needle[-1:].isascii() and needle[-1:].isalnum():
        tail = r"(?:s|es|'s)?(?![a-z0-9'])"
    elif CYRILLIC.match(needle[-1:]):
        tail = r"(?![\w'])"
    return re.search(head + re.escape(needle) + tail, hay) is not None


def matches(record: MemoryRecord, subject: str) -> bool:
    """Whether a forget subject literally names this record."""
    return mentions(f"{record.title}\n{record.summary}", subject)


def note_subject(record: MemoryRecord) -> str:
    """What a note asked to remember (its message minus the request words)."""
    request = recognize(record.summary)
    return request.subject if request is not None and request.subject else record.summary


# --- the four actions -----------------------------------------------------------------------


async def apply(
    store: Store,
    request: MemoryRequest,
    source: SourceMessage,
    *,
    who: Membership,
    provider: str,
    model: str,
    memory_id: str | None = None,
    title: str | None = None,
    now: datetime | None = None,
) -> ControlResult:
    now = now or datetime.now(UTC)
    scope = source.scope
    if not who.member:
        return ControlResult(request.action, "not_member")
    async with store.locked(scope.workspace, scope_key=scope.key) as tx:
        state = await tx.scope(scope)
        if state.suspended:
            return ControlResult(request.action, "unavailable")
        if request.action in ("enable", "disable"):
            return await _switch(
                tx,
                state,
                request.action == "enable",
                source.speaker_id,
                source.request_id,
                who,
                now,
            )
        if not state.enabled and request.action == "remember":
            # Forgetting works while memory is off: what is stored can always be removed.
            return ControlResult(request.action, "memory_off")
        if request.action == "remember":
            return await _remember(tx, state, source, request, title, provider, model, now)
        return await _forget(
            tx, state, source.speaker_id, source.request_id, request.subject, memory_id, who, now
        )


async def switch(
    store: Store, scope: Scope, enabled: bool, *, actor_id: int, who: Membership, now: datetime
) -> ControlResult:
    """Memory on or off from a button: the same rules as saying it."""
    action = "enable" if enabled else "disable"
    if not who.member:
        return ControlResult(action, "not_member")
    async with store.locked(scope.workspace, scope_key=scope.key) as tx:
        state = await tx.scope(scope)
        if state.suspended:
            return ControlResult(action, "unavailable")
        return await _switch(tx, state, enabled, actor_id, None, who, now)


async def forget_record(
    store: Store, scope: Scope, record_id: str, *, actor_id: int, who: Membership, now: datetime
) -> ControlResult:
    """Forget one record chosen on the screen: the same rules (and cascade) as saying it."""
    if not who.member:
        return ControlResult("forget", "not_member")
    async with store.locked(scope.workspace, scope_key=scope.key) as tx:
        state = await tx.scope(scope)
        if state.suspended and who.reason != "operator":
            return ControlResult("forget", "unavailable")  # an operator may still clean up
        return await _forget(tx, state, actor_id, None, "", record_id, who, now)


async def _switch(
    tx: WorkspaceTx,
    state: ScopeState,
    want: bool,
    actor_id: int,
    request_id: int | None,
    who: Membership,
    now: datetime,
) -> ControlResult:
    scope = state.scope
    action = "enable" if want else "disable"
    if not may_toggle(scope, actor_id, who):
        return ControlResult(action, "not_allowed")
    if state.enabled == want:
        return ControlResult(action, "already_enabled" if want else "already_disabled")
    if request_id is None:  # a button: what was said up to now is on this side of the switch
        request_id = await tx.conn.fetchval(
            "SELECT coalesce(max(id), 0) FROM requests WHERE workspace_id = $1 AND scope_key = $2",
            tx.workspace,
            scope.key,
        )
    state.set_enabled(want, request_id)
    tx.save(state)
    if want:  # what is retained and eligible can be generated again
        await rearm(tx.conn, scope.workspace, scope.key, now)
    else:
        await stop_jobs_touching(tx.conn, scope, None, "memory turned off")
    return ControlResult(action, "enabled" if want else "disabled")


async def _remember(
    tx: WorkspaceTx,
    state: ScopeState,
    source: SourceMessage,
    request: MemoryRequest,
    title: str | None,
    provider: str,
    model: str,
    now: datetime,
) -> ControlResult:
    # One note per message (its ID says which): remembering it again changes nothing.
    record = _note(source, request, title, now)
    await tx.add_record(record, now)
    return ControlResult("remember", "remembered", [record.id])


def note_id(message_id: int) -> str:
    return f"mem_n{message_id}"


def _note(
    source: SourceMessage, request: MemoryRequest, title: str | None, now: datetime
) -> MemoryRecord:
    """Remember saves the user's actual message, redacted; never a model-invented preference."""
    text = redact(source.text)
    heading = " ".join((title or request.subject or text).split())[:NOTE_TITLE_CHARS]
    return MemoryRecord(
        id=note_id(source.message_id),
        scope_key=source.scope.key,
        origin="note",
        title=redact(heading),
        summary=text,
        speaker_ids=[source.speaker_id],
        thread_ids=[source.thread_id],
        sources=[
            SourceRef(
                message_id=source.message_id,
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
    state: ScopeState,
    actor_id: int,
    request_id: int | None,
    subject: str,
    memory_id: str | None,
    who: Membership,
    now: datetime,
) -> ControlResult:
    scope = state.scope
    if memory_id:  # one record named: read that one, not the whole scope
        chosen = [r for r in await tx.records([memory_id]) if r.valid and r.scope_key == scope.key]
        if chosen and subject and not matches(chosen[0], subject):
            # The model named a record the current message does not ask about.
            return ControlResult("forget", "mismatch", [memory_id])
    else:
        chosen = [r for r in await tx.valid_records(scope.key) if matches(r, subject)]
    if not chosen:
        # Not a memory yet, but maybe said and waiting for extraction: that must not become one.
        if memory_id:
            return ControlResult("forget", "nothing_to_forget")
        await _forget_answers_in_flight(tx, scope, request_id, _asker(scope, actor_id, who))
        pending = await _unextracted_mentions(tx, state, [], subject, _asker(scope, actor_id, who))
        if not pending:
            return ControlResult("forget", "nothing_to_forget")
        await tx.add_tombstones(scope.key, pending)
        await stop_jobs_touching(tx.conn, scope, pending, "a source was forgotten")
        await scrub_references(tx, pending)
        return ControlResult("forget", "forgotten", [])
    if not all(may_forget(r, scope, actor_id, who) for r in chosen):
        return ControlResult("forget", "not_allowed", [r.id for r in chosen])
    reached, answers = await _reach(tx, chosen, subject)
    refused = [r for r in reached if r.valid and not may_forget(r, scope, actor_id, who)]
    if refused:
        # The cascade would take someone else's memory with it: all or nothing.
        log.info(
            "memory.forget_refused",
            scope=scope.key,
            reason="cascade reaches records the actor may not forget",
            records=[r.id for r in refused],
        )
        return ControlResult("forget", "cascade_not_allowed", [r.id for r in refused])
    await tx.delete(reached)
    # First flag the answers still being written (this waits for any being committed right
    # now), then look for what was already written: nothing slips between the two.
    await _forget_answers_in_flight(tx, scope, request_id, _asker(scope, actor_id, who))
    doomed = _all_messages(reached) | answers
    doomed |= await _unextracted_mentions(tx, state, reached, subject, _asker(scope, actor_id, who))
    await tx.add_tombstones(scope.key, doomed)
    await stop_jobs_touching(tx.conn, scope, doomed, "a source was forgotten")
    await scrub_references(tx, doomed)
    await rearm(tx.conn, scope.workspace, scope.key, now)
    return ControlResult("forget", "forgotten", [r.id for r in reached])


async def _reach(
    tx: WorkspaceTx, chosen: list[MemoryRecord], subject: str
) -> tuple[list[MemoryRecord], set[int]]:
    """What forgetting these records takes along: they, every record sharing their sources,
    and the answers that repeat them with the records built on those answers."""
    reached = forget_closure(await tx.dependents(_all_messages(chosen)), {r.id for r in chosen})
    # Answers the bot gave with what is forgotten that repeat it (every answer depends on the
    # whole index it was shown, so dependency alone would take unrelated ones), and the
    # records built on those answers, follow.
    given = await derived_closure(tx, _all_messages(reached)) - _all_messages(reached)
    answers = await _repeating(tx, given, reached, subject)
    if answers:
        known = {r.id for r in reached}
        reached += [r for r in await tx.dependents(answers) if r.id not in known]
    return reached, answers


@dataclass(frozen=True)
class ForgetPreview:
    """What forgetting some records would remove, decided now; nothing is changed."""

    chosen: list[str]  # the chosen records that exist in the scope
    reached: list[MemoryRecord]  # they and every record that would go with them
    refused: list[str]  # records among `reached` this actor may not forget

    @property
    def allowed(self) -> bool:
        return bool(self.chosen) and not self.refused


async def forget_preview(
    store: Store, scope: Scope, record_ids: list[str], *, actor_id: int, who: Membership
) -> ForgetPreview:
    """The same reach and rules as forget_record, read only (the Mini App's confirm step)."""
    if not who.member:
        return ForgetPreview([], [], [])
    try:
        async with store.locked(scope.workspace, scope_key=scope.key) as tx:
            chosen = [
                r for r in await tx.records(record_ids) if r.valid and r.scope_key == scope.key
            ]
            reached, _ = await _reach(tx, chosen, "") if chosen else ([], set())
    except WorkspaceGone:
        return ForgetPreview([], [], [])
    refused = [r.id for r in reached if r.valid and not may_forget(r, scope, actor_id, who)]
    return ForgetPreview([r.id for r in chosen], reached, refused)


def _all_messages(records: list[MemoryRecord]) -> set[int]:
    found: set[int] = set()
    for record in records:
        found |= record.message_ids
    return found


def _asker(scope: Scope, actor_id: int, who: Membership) -> int | None:
    """Whose exchanges a forget may reach among what is not extracted yet: a group participant
    only their own (their words and the answers to them), an admin or a private owner all."""
    return None if scope.is_private or who.admin else actor_id


async def _unextracted_mentions(
    tx: WorkspaceTx,
    state: ScopeState,
    removed: list[MemoryRecord],
    subject: str,
    asker: int | None,
) -> set[int]:
    """Messages not yet extracted that state what is being forgotten, so that the next
    extraction cannot bring it back: those that literally name the forget subject, a removed
    note's subject, or a removed record's title, in exchanges of `asker` (None: anyone's).
    Nothing about the subject is stored."""
    rows: list[asyncpg.Record] = await tx.conn.fetch(
        "SELECT m.id, m.text FROM requests r JOIN messages m ON m.workspace_id = r.workspace_id"
        " AND m.id IN (r.user_message_id, r.answer_message_id)"
        " WHERE r.workspace_id = $1 AND r.scope_key = $2 AND r.id > $3 AND r.kind = 'chat'"
        " AND m.text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM tombstones t"
        " WHERE t.workspace_id = $1 AND t.scope_key = $2 AND t.message_id = m.id)"
        " AND ($4::bigint IS NULL OR EXISTS (SELECT 1 FROM messages u WHERE"
        " u.workspace_id = $1 AND u.id = r.user_message_id AND u.speaker_id = $4))",
        tx.workspace,
        state.key,
        state.extracted_through,
        asker,
    )
    names = _forgotten_names(removed, subject)
    return {row["id"] for row in rows if names(row["text"])}


def _forgotten_names(removed: list[MemoryRecord], subject: str) -> Callable[[str], bool]:
    """Whether a text names what is forgotten: the forget subject, a removed note's subject,
    or a removed record's title, literally."""
    subjects = [
        s for s in [subject, *(note_subject(r) for r in removed if r.origin == "note")] if s
    ]
    titles = [r.title.casefold() for r in removed if len(r.title) >= 8]

    def names(text: str) -> bool:
        return any(mentions(text, s) for s in subjects) or any(t in text.casefold() for t in titles)

    return names


async def _repeating(
    tx: WorkspaceTx, answers: set[int], removed: list[MemoryRecord], subject: str
) -> set[int]:
    """The answers among these that repeat what is forgotten (literally)."""
    if not answers:
        return set()
    names = _forgotten_names(removed, subject)
    texts = await tx.conn.fetch(
        "SELECT id, text FROM messages WHERE workspace_id = $1 AND id = ANY($2::bigint[])"
        " AND text IS NOT NULL",
        tx.workspace,
        sorted(answers),
    )
    return {row["id"] for row in texts if names(row["text"])}


async def _forget_answers_in_flight(
    tx: WorkspaceTx, scope: Scope, request_id: int | None, asker: int | None
) -> None:
    """Requests of the scope still being answered (the forget's own included; of `asker` only,
    when given) may be about to repeat what is forgotten; their answers are not in the database
    yet, so they are flagged instead of matched."""
    await tx.conn.execute(
        "UPDATE requests r SET answer_forgotten = true WHERE workspace_id = $1 AND scope_key = $2"
        " AND (id = $3 OR (status IN ('queued', 'running', 'awaiting_approval')"
        " AND ($4::bigint IS NULL OR EXISTS (SELECT 1 FROM messages u WHERE"
        " u.workspace_id = $1 AND u.id = r.user_message_id AND u.speaker_id = $4))))",
        tx.workspace,
        scope.key,
        request_id,
        asker,
    )
