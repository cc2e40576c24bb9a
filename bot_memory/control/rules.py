"""The rules of user control, as plain functions: what a request may do (who may switch
memory, who may forget what, confirming an admin's standing first) and which records a
"forget X" literally names. The actions (`actions`) apply them; nothing here writes.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from bot_memory.access import Gate, Membership
from bot_memory.intents import recognize
from bot_memory.intents.cyrillic import CYRILLIC, MIN_STEM, fold, names_word
from bot_memory.intents.cyrillic import WORD as CYRILLIC_WORD
from bot_memory.records import MemoryRecord
from bot_memory.scopes import Scope

Outcome = Literal[
    "remembered",
    "forgotten",
    "partly_forgotten",  # a member's forget: what they may went, records with others' words left
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
    "source_changed",  # remember: the message was edited, erased or removed since received
    "kept_out",  # "don't remember that": the messages meant stay out of memory
]


@dataclass(frozen=True)
class ControlResult:
    action: str
    outcome: Outcome
    memory_ids: list[str] = field(default_factory=list)
    # Records a forget matched and left: they hold others' words, or their sources do.
    left: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.outcome in (
            "remembered",
            "forgotten",
            "partly_forgotten",
            "enabled",
            "disabled",
            "kept_out",
        )


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
    promoted within the cache's lifetime is an admin at once). A forget that left what only an
    admin may forget is carried on as an admin the same way, and the two said as one."""
    who = await gate.confirmed(who)
    result = await act(who)
    if result.outcome in _ADMIN_REFUSALS and (admin := await gate.promoted(who)):
        result = await act(admin)
    elif result.outcome == "partly_forgotten" and (admin := await gate.promoted(who)):
        rest = await act(admin)
        done = result.memory_ids + [m for m in rest.memory_ids if m not in result.memory_ids]
        left = rest.left if rest.outcome == "partly_forgotten" else []
        result = ControlResult(
            result.action, "partly_forgotten" if left else "forgotten", done, left
        )
    return result


def may_forget(record: MemoryRecord, scope: Scope, actor_id: int, who: Membership) -> bool:
    """A participant may forget records whose statements are all theirs; others need an admin.
    (A forget takes what the actor may and leaves the rest: `actions._reach`.)"""
    if scope.is_private:
        return scope.user_id == actor_id or who.admin
    return who.admin or (bool(record.speaker_ids) and set(record.speaker_ids) == {actor_id})


def may_keep_out(speaker_id: int, scope: Scope, actor_id: int, who: Membership) -> bool:
    """Who may keep an exchange out of memory: its speaker, the private chat's user, an admin
    (as forgetting: what someone else said is theirs)."""
    if scope.is_private:
        return scope.user_id == actor_id or who.admin
    return who.admin or speaker_id == actor_id


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
    """What a note asked to remember, in the user's words: notes are stored so, and those stored
    with the whole message ("remember that X") are shown without the request words."""
    request = recognize(record.summary)
    if request is None or request.action != "remember" or not request.subject:
        return record.summary
    return request.subject
