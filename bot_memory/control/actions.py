"""Explicit user control: remember, forget, enable and disable, by the rules in `rules`.

The router (a recognized direct request), the manage_memory tool and the /memory screen all end
here, so the rules are written once. Who the actor is comes from a `Membership` checked at the
moment of the action, never from anything recalled. Changes are durable as soon as this
returns, whatever the answer does later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import cast

from bot_memory.access import Access, Gate, Membership, Requester
from bot_memory.control.rules import (
    ControlResult,
    Outcome,
    acting,
    matches,
    may_forget,
    may_keep_out,
    may_toggle,
    mentions,
    note_subject,
)
from bot_memory.intents import MemoryRequest
from bot_memory.logs import get_logger
from bot_memory.models import Pin
from bot_memory.records import (
    MemoryRecord,
    ScopeState,
    SourceRef,
    content_hash,
    forget_closure,
)
from bot_memory.redaction import redact
from bot_memory.scopes import Scope
from bot_memory.storage import (
    SourceMessage,
    Store,
    WorkspaceGone,
    WorkspaceTx,
)

log = get_logger(__name__)

NOTE_TITLE_CHARS = 60


# --- the actions ------------------------------------------------------------------------------


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
    replied_to: int | None = None,
    now: datetime | None = None,
) -> ControlResult:
    """`replied_to`: Telegram's ID of the message the request replies to (what a "don't
    remember that" means)."""
    now = now or datetime.now(UTC)
    scope = source.scope
    if not who.member:
        return ControlResult(request.action, "not_member")
    if request.action == "remember":
        return await _remember(store, source, request, title, now)
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
        if request.action == "keep_out":  # works while memory is off, as forgetting does
            return await _keep_out(tx, source, request, replied_to, who, now)
        # Forgetting works while memory is off: what is stored can always be removed.
        subject = request.subject
        if memory_id:  # one record named: read that one, not the whole scope
            ids = [memory_id]
        else:
            ids = [r.id for r in await tx.valid_records(scope.key) if matches(r, subject)]
        asker = _asker(scope, source.speaker_id, who)
        may = _may(scope, source.speaker_id, who)
        reach = await _reach(tx, scope, ids, subject, flag=(source.request_id, asker), may=may)
        return await _forget(tx, reach, source.speaker_id, subject, memory_id, who, now)


async def carry_out(
    store: Store,
    access: Access,
    request: MemoryRequest,
    source: SourceMessage,
    *,
    pin: Pin,
    gate: Gate | None = None,
    who: Membership | None = None,
    memory_id: str | None = None,
    replied_to: int | None = None,
    now: datetime | None = None,
) -> ControlResult:
    """A recognized memory request carried out, checking who may, now (Memory.control).

    With a `gate` (or none: the speaker's own), the standing is asked now and an admin-only
    action is granted on a cached "administrator" only after Telegram confirms it (someone
    demoted within the cache's lifetime is no admin); refused as a non-admin on a cached
    standing, it is asked again (someone just promoted is an admin at once), as the adapter's
    paths do (`acting`). `who` is a standing the caller has settled already, used as given."""

    async def act(standing: Membership) -> ControlResult:
        return await apply(
            store,
            request,
            source,
            who=standing,
            provider=pin.provider,
            model=pin.model,
            memory_id=memory_id,
            replied_to=replied_to,
            now=now,
        )

    if who is None:
        scope = source.scope
        gate = gate or Gate(access, scope, Requester(source.speaker_id, scope.chat_id))
        who = await gate.membership()
        result = await acting(gate, who, act)
    else:
        result = await act(who)
    if not result.changed:
        log.info(
            "memory.request_refused" if result.outcome.startswith("not") else "memory.request",
            action=result.action,
            outcome=result.outcome,
            scope=source.scope.key,
            reason=who.reason,
        )
    return result


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
    asker = _asker(scope, actor_id, who)
    if _may_forget_all(scope, actor_id, who):
        # Mostly nothing is left to decide here: then one statement does it all.
        done = await _forget_at_once(store, scope, record_id, asker, now)
        if done is not None:
            return done
    async with store.transaction(scope.workspace) as tx:
        # One trip takes the lock, reads the scope and what forgetting the record reaches, and
        # flags the answers in flight (undone below when nothing is forgotten after all).
        may = _may(scope, actor_id, who)
        reach = await _reach(tx, scope, [record_id], "", flag=(None, asker), may=may)
        if reach.state.suspended and who.reason != "operator":
            tx.undo()
            return ControlResult("forget", "unavailable")  # an operator may still clean up
        return await _forget(tx, reach, actor_id, "", record_id, who, now)


def _may(scope: Scope, actor_id: int, who: Membership) -> Callable[[MemoryRecord], bool]:
    return lambda record: may_forget(record, scope, actor_id, who)


def _may_forget_all(scope: Scope, actor_id: int, who: Membership) -> bool:
    """Whether `may_forget` allows this actor every record of the scope, whoever said it."""
    return (scope.is_private and scope.user_id == actor_id) or who.admin


async def _forget_at_once(
    store: Store, scope: Scope, record_id: str, asker: int | None, now: datetime
) -> ControlResult | None:
    """Forget a record in one statement (`Commits.forget_at_once`), for an actor who may
    forget anything here, when no text has to be read to decide (no answer given with it,
    nothing said since the last extraction): None when there is, and nothing was changed."""
    done = await store.commits.forget_at_once(scope, record_id, asker, now)
    if done is None:
        return None
    outcome, removed = done
    if outcome == "nothing":
        return ControlResult("forget", "nothing_to_forget")
    return ControlResult("forget", "forgotten", removed)


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
        request_id = await tx.planning.newest_request(tx.workspace, scope.key)
    state.set_enabled(want, request_id)
    tx.save(state)
    if want:  # what is retained and eligible can be generated again
        await tx.planning.rearm(scope.workspace, scope.key, now)
    else:
        await tx.jobs.stop_touching(scope, None, "memory turned off")
    return ControlResult(action, "enabled" if want else "disabled")


async def _remember(
    store: Store,
    source: SourceMessage,
    request: MemoryRequest,
    title: str | None,
    now: datetime,
) -> ControlResult:
    """One statement (`Commits.remember`): under the workspace lock, unless the bot left the chat or
    memory is off here, the note is stored and its scope written back.

    A note is the message as it is at that commit, checked under the lock: the text it was
    made from must still be the message's text, retained (not erased by a sweep, removed,
    forgotten, or past its boundary at `now`). A message edited since it was received is
    refused ('source_changed'), not stored in its new form: the request was made on words the
    user has since changed (the edit may have withdrawn it), so memory says so and they can
    ask again. An erased or removed source is refused the same way, so a note never brings
    back text that retention took away."""
    # One note per message (its ID says which): remembering it again changes nothing.
    record = _note(source, request, title, now)
    scope = source.scope
    outcome = await store.commits.remember(scope, record, now)
    if outcome != "remembered":  # memory_off, unavailable or source_changed
        return ControlResult("remember", cast(Outcome, outcome))
    return ControlResult("remember", "remembered", [record.id])


def note_id(message_id: int) -> str:
    return f"mem_n{message_id}"


def _note(
    source: SourceMessage, request: MemoryRequest, title: str | None, now: datetime
) -> MemoryRecord:
    """Remember saves what the user asked to keep, in their own words (the request around it,
    "remember that", a leading @mention, left out), redacted; never a model-invented preference.
    The source message keeps the whole text."""
    text = redact(request.subject or source.text)
    heading = " ".join((title or text).split())[:NOTE_TITLE_CHARS]
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


async def _keep_out(
    tx: WorkspaceTx,
    source: SourceMessage,
    request: MemoryRequest,
    replied_to: int | None,
    who: Membership,
    now: datetime,
) -> ControlResult:
    """ "Don't remember that": the request and the exchange it means (the one replied to, or
    the speaker's previous one; none when the request carries its own words, "off the record:
    ...") become tombstones, with their answers, so no extraction, chat history or later prompt
    uses them. Whose exchange it is decides who may (`may_keep_out`). Records already built on
    them (extracted before, or a note) are forgotten with them, by the rules and the reach of
    a forget: refused whole when that would take someone else's memory."""
    scope = source.scope
    actor = source.speaker_id
    doomed = {source.message_id}
    requests = [source.request_id]
    if not request.subject:
        meant = await tx.forgetting.exchange_meant(
            scope.key,
            request_id=source.request_id,
            speaker_id=actor,
            thread_id=source.thread_id,
            replied_to=None if replied_to is None else (scope.bot_id, scope.chat_id, replied_to),
        )
        if meant is not None:
            if not may_keep_out(meant.speaker_id, scope, actor, who):
                return ControlResult("keep_out", "not_allowed")
            doomed |= meant.message_ids
            requests.append(meant.request_id)
    reached: list[MemoryRecord] = []
    built = [r.id for r in await tx.dependents(doomed) if r.valid and r.scope_key == scope.key]
    if built:
        flag = (source.request_id, _asker(scope, actor, who))
        reach = await _reach(tx, scope, built, "", flag=flag)  # all or nothing: no `may`
        refused = [r.id for r in reach.reached if r.valid and not may_forget(r, scope, actor, who)]
        if refused:
            tx.undo()
            return ControlResult("keep_out", "cascade_not_allowed", refused)
        reached = reach.reached
        doomed |= _all_messages(reached) | reach.answers
    await tx.forgetting.keep_out(
        scope.key, reached, doomed, requests, rearm_at=now if reached else None
    )
    log.info(
        "memory.kept_out",
        scope=scope.key,
        messages=sorted(doomed),
        forgotten=[r.id for r in reached],
    )
    return ControlResult("keep_out", "kept_out", [r.id for r in reached])


async def _forget(
    tx: WorkspaceTx,
    reach: _Reach,
    actor_id: int,
    subject: str,
    memory_id: str | None,
    who: Membership,
    now: datetime,
) -> ControlResult:
    """Decide on what `_reach` read (its answers in flight flagged) and carry it out: one
    more statement, or none (and the flags undone) when nothing is forgotten after all.

    What the actor may forget goes; a chosen record they may not (someone else's words in it),
    or whose sources another such record shares, is left, said in the result for an admin."""
    scope = reach.state.scope
    chosen = reach.chosen
    if memory_id and chosen and subject and not matches(chosen[0], subject):
        # The model named a record the current message does not ask about.
        tx.undo()
        return ControlResult("forget", "mismatch", [memory_id])
    if not chosen:
        if memory_id:
            tx.undo()
            return ControlResult("forget", "nothing_to_forget")
        # Not a memory yet, but maybe said and waiting for extraction: that must not become
        # one. (The answers in flight stay flagged: they may say it too.)
        pending = _mentioning(reach.unextracted, [], subject)
        if not pending:
            return ControlResult("forget", "nothing_to_forget")
        await _carry_out(tx, scope, [], pending, rearm_at=None)
        return ControlResult("forget", "forgotten", [])
    left = [r.id for r in reach.left]
    if len(left) == len(chosen):  # nothing the actor may forget without another's words
        tx.undo()
        if not all(may_forget(r, scope, actor_id, who) for r in chosen):
            return ControlResult("forget", "not_allowed", [r.id for r in chosen])
        _refused_cascade(scope, reach.blocked)
        return ControlResult("forget", "cascade_not_allowed", reach.blocked)
    reached = reach.reached
    refused = [r.id for r in reached if r.valid and not may_forget(r, scope, actor_id, who)]
    if refused:
        # Only through an answer repeating it (the sources were checked in `_reach`): the
        # answer cannot be split, so all or nothing.
        _refused_cascade(scope, refused)
        tx.undo()
        return ControlResult("forget", "cascade_not_allowed", refused)
    doomed = _all_messages(reached) | reach.answers
    doomed |= _mentioning(reach.unextracted, reached, subject)
    await _carry_out(tx, scope, reached, doomed, rearm_at=now)
    gone = [r.id for r in reached]
    if left:
        log.info("memory.forget_partly", scope=scope.key, forgotten=gone, left=left)
        return ControlResult("forget", "partly_forgotten", gone, left)
    return ControlResult("forget", "forgotten", gone)


def _refused_cascade(scope: Scope, records: list[str]) -> None:
    log.info(
        "memory.forget_refused",
        scope=scope.key,
        reason="cascade reaches records the actor may not forget",
        records=records,
    )


async def _carry_out(
    tx: WorkspaceTx,
    scope: Scope,
    reached: list[MemoryRecord],
    doomed: set[int],
    *,
    rearm_at: datetime | None,
) -> None:
    """One statement (`Forgetting.forget`): the reached records go, the forgotten messages
    become tombstones, jobs holding them stop, references to them are scrubbed, and the
    transaction's scopes are written back."""
    await tx.forgetting.forget(scope.key, reached, doomed, rearm_at=rearm_at)


@dataclass(frozen=True)
class _Reach:
    """What forgetting some records takes along, and what else the forget must look at."""

    state: ScopeState  # the scope, as stored (a default one if nothing is)
    chosen: list[MemoryRecord]  # the records named that exist, valid, in the scope
    reached: list[MemoryRecord]  # those that go, every record sharing their sources, the answers'
    answers: set[int]  # answers the bot gave with what is forgotten that repeat it
    unextracted: list[tuple[int, str]]  # messages not extracted yet (read after the flag)
    left: list[MemoryRecord] = field(default_factory=list)  # chosen, but the actor may not
    blocked: list[str] = field(default_factory=list)  # others' records that made them stay


async def _reach(
    tx: WorkspaceTx,
    scope: Scope,
    ids: list[str],
    subject: str,
    *,
    flag: tuple[int | None, int | None] | None,
    may: Callable[[MemoryRecord], bool] | None = None,
) -> _Reach:
    """What forgetting these records takes along: they, every record sharing their sources,
    and the answers that repeat them with the records built on those answers, in one trip
    that takes the workspace lock first (bm_forget_reach). `flag`: (the forget's request,
    whose exchanges) to flag the answers in flight and read what is not extracted yet.

    `may`: whether the actor may forget a record. Then only the chosen records the actor may
    forget whose sources no record they may not forget shares go; the rest are `left`. A
    record's sources go with it, so forgetting one whose sources a record with others' words
    shares would take that record too (or leave it built on what is forgotten): both stay."""
    request_id, asker = flag if flag is not None else (None, None)
    raw = await tx.forgetting.reach(
        scope.key, ids, flag=flag is not None, request_id=request_id, asker=asker
    )
    if raw is None:
        raise WorkspaceGone(f"workspace {tx.workspace!r} does not exist")
    state = raw.state or ScopeState(scope=scope)
    records = raw.records
    chosen = [records[i] for i in dict.fromkeys(ids) if i in raw.chosen]  # as named
    unextracted = raw.unextracted
    if not chosen:
        return _Reach(state, [], [], set(), unextracted)
    pool = [records[i] for i in raw.dependents]
    left: list[MemoryRecord] = []
    blocked: list[str] = []
    reached = forget_closure(pool, {r.id for r in chosen})
    if may is not None and any(r.valid and not may(r) for r in reached):
        # Record by record (an admin's or a private owner's forget never gets here).
        for record in chosen:
            stopping = [r.id for r in forget_closure(pool, {record.id}) if r.valid and not may(r)]
            if stopping:
                left.append(record)
                blocked += [i for i in stopping if i != record.id and i not in blocked]
        going = {r.id for r in chosen} - {r.id for r in left}
        if not going:
            return _Reach(state, chosen, [], set(), unextracted, left, blocked)
        reached = forget_closure(pool, going)
    # Answers the bot gave with what is forgotten that repeat it (every answer depends on the
    # whole index it was shown, so dependency alone would take unrelated ones), and the
    # records built on those answers, follow.
    names = _forgotten_names(reached, subject)
    answers = {answer for answer, text in raw.answers if names(text)}
    if answers:
        known = {r.id for r in reached}
        built = sorted((records[i] for i in raw.answer_dependents), key=lambda r: r.id)
        following = [r for r in built if r.id not in known and r.message_ids & answers]
        if may is not None:
            # An answer a record with others' words is built on stays, with that record.
            for record in following:
                if record.valid and not may(record):
                    answers -= record.message_ids
            following = [r for r in following if r.message_ids & answers]
        reached += following
    return _Reach(state, chosen, reached, answers, unextracted, left, blocked)


@dataclass(frozen=True)
class ForgetPreview:
    """What forgetting some records would remove, and what it would leave, decided now;
    nothing is changed."""

    chosen: list[str]  # the chosen records that exist in the scope
    reached: list[MemoryRecord]  # those that go and every record that would go with them
    refused: list[str]  # records this actor may not forget that a forget would have to take
    left: list[MemoryRecord] = field(default_factory=list)  # chosen records that would stay

    @property
    def allowed(self) -> bool:
        """Whether something goes (what is left is said beside it)."""
        return bool(self.chosen) and bool(self.reached) and not self.refused

    @property
    def going(self) -> list[str]:
        """The chosen records that go."""
        stay = {r.id for r in self.left}
        return [i for i in self.chosen if i not in stay]


async def forget_preview(
    store: Store, scope: Scope, record_ids: list[str], *, actor_id: int, who: Membership
) -> ForgetPreview:
    """The same reach and rules as forget_record, read only (the Mini App's confirm step)."""
    if not who.member:
        return ForgetPreview([], [], [])
    may = _may(scope, actor_id, who)
    try:
        async with store.transaction(scope.workspace) as tx:
            reach = await _reach(tx, scope, record_ids, "", flag=None, may=may)
    except WorkspaceGone:
        return ForgetPreview([], [], [])
    chosen = [r.id for r in reach.chosen]
    refused = [r.id for r in reach.reached if r.valid and not may(r)]
    if reach.left and not reach.reached:  # nothing goes: refused as a forget would be
        refused = [r.id for r in reach.left if not may(r)] or reach.blocked
    return ForgetPreview(chosen, reach.reached, refused, reach.left)


def _all_messages(records: list[MemoryRecord]) -> set[int]:
    found: set[int] = set()
    for record in records:
        found |= record.message_ids
    return found


def _asker(scope: Scope, actor_id: int, who: Membership) -> int | None:
    """Whose exchanges a forget may reach among what is not extracted yet: a group participant
    only their own (their words and the answers to them), an admin or a private owner all."""
    return None if scope.is_private or who.admin else actor_id


def _mentioning(
    messages: list[tuple[int, str]], removed: list[MemoryRecord], subject: str
) -> set[int]:
    """Messages not yet extracted that state what is being forgotten, so that the next
    extraction cannot bring it back: those that literally name the forget subject, a removed
    note's subject, or a removed record's title. Nothing about the subject is stored."""
    names = _forgotten_names(removed, subject)
    return {message_id for message_id, text in messages if names(text)}


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
