"""English requests: what may follow a trigger, the trigger tables and the rules."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bot_memory.intents.common import (
    NO_TRIGGER,
    WB,
    Ctx,
    MemoryRequest,
    Outcome,
    as_request,
    norm,
    whole_rest,
)

_I = re.I
_WB = WB

# ---------------------------------------------------------------------------
# English content rules: what may follow a trigger
# ---------------------------------------------------------------------------

_CLAUSE_LEAD = r"(?:i'm|i've|i'd|i'll|im|i|my|mine|we're|we've|we|our)" + WB
_CLAUSE_LEAD_RE = re.compile(_CLAUSE_LEAD, _I)
# A noun-phrase object of "forget" must point at the speaker: "our"/"we" there
# is mostly the cancel idiom ("forget our plans for tonight, it's raining").
# A "that"-clause ("forget that we ship v2 on Friday") is fine with "we".
_SELF_LEAD = r"(?:i'm|i've|i'd|i'll|im|i|my|mine)" + WB
_FIRST_PERSON = re.compile(r"(?<![\w'])(?:" + _SELF_LEAD + r"|me" + WB + ")", _I)

_EN_SEP = re.compile(r"\s*:\s*|\s+-+\s*")
_EN_THIS_SEP = re.compile(
    r"\s+(?:this|these(?:\s+things?)?|the\s+following(?:\s+things?)?)\s*[:\-,]\s*", _I
)
_EN_THAT = re.compile(rf"\s+that{WB}[\s,:]*", _I)
_EN_OF = re.compile(r"\s+of\s+", _I)
_EN_CLAUSE = re.compile(rf"(?:\s*,\s*|\s+)(?={_CLAUSE_LEAD})", _I)
# "that" used as a determiner ("remember that time we ...") is reminiscing.
_EN_DET_NOUN = re.compile(
    r"(?:time|times|day|days|night|morning|evening|afternoon|weekend|week|month|year|summer"
    r"|winter|moment|trip|party|guy|girl|man|woman|boy|kid|dude|person|one|place|song|movie"
    r"|film|show|game|joke|episode|video|meme|photo|picture|story|thing|idiot|loser)" + WB,
    _I,
)
_EN_WORD = re.compile(r"\S+\s+")
_EN_PEOPLE = re.compile(r"(?:guy|girl|man|woman|boy|kid|dude|person|idiot|loser|jerk)" + WB, _I)
# "forget that I said that" / "forget I asked": the never-mind idiom.
_EN_IDIOM_SUBJECT = re.compile(
    r"(?:i|we)\s+(?:said|asked|mentioned|brought\s+(?:it|that|this)\s+up)"
    r"(?:\s+(?:that|it|this|anything|something|so))?\s*[.!?]*\Z",
    _I,
)
# Bare object pronouns: "forget it", "forget him", "forget I said anything".
_EN_FORGET_PRONOUN = re.compile(r"\s+(?:it|him|her|them|you|me|us|i)" + WB, _I)
_EN_ABOUT = re.compile(r"\s+about(?=\s)", _I)
_EN_POSSESSIVE = re.compile(r"\s+(?=(?:my|mine)" + WB + ")", _I)
_EN_QUANTIFIER = re.compile(r"\s+(?=(?:what|whatever|everything|anything|all)\s+\S)", _I)
_EN_DEMONSTRATIVE = re.compile(r"\s+(?=(?:the|that|this|these|those)\s+\S)", _I)
_EN_YOU_KNOW = re.compile(
    r"(?<![\w'])(?:about|you\s+(?:know|remember|learned|have|stored|saved))" + WB, _I
)


@dataclass(frozen=True, slots=True)
class _EnContent:
    sep: bool = True  # "remember: X" / "remember this: X"
    that: bool = True  # "remember that X"
    clause: bool = False  # "remember I / my / we ..."
    of: bool = False  # "make a note of X"


def _en_content(head: str, i: int, rule: _EnContent, *, modal_only: bool) -> int | None:
    """Index where the subject starts after an English remember-trigger, or None."""
    if rule.sep and (m := _EN_SEP.match(head, i) or _EN_THIS_SEP.match(head, i)):
        return m.end()
    if rule.that and (m := _EN_THAT.match(head, i)):
        return None if _EN_DET_NOUN.match(head, m.end()) else m.end()
    if rule.of and (m := _EN_OF.match(head, i)):
        return m.end()
    # A bare modal question ("can you remember my name?") is not a request.
    if rule.clause and not modal_only and (m := _EN_CLAUSE.match(head, i)):
        return m.end()
    return None


def _en_forget_object(head: str, i: int) -> int | None:
    """Index of the object after "forget", or None if it is no memory request."""
    if m := _EN_SEP.match(head, i) or _EN_THIS_SEP.match(head, i):
        return m.end()
    if _EN_FORGET_PRONOUN.match(head, i):
        return None
    about = _EN_ABOUT.match(head, i)
    if about:
        i = about.end()
        if _EN_FORGET_PRONOUN.match(head, i):  # "forget about it / me"
            return None
    if (m := _EN_THAT.match(head, i)) and _CLAUSE_LEAD_RE.match(head, m.end()):
        return m.end()  # "forget that I live in Paris" -> "I live in Paris"
    if m := _EN_POSSESSIVE.match(head, i):
        return m.end()
    window = head[i : i + 160]
    if m := _EN_QUANTIFIER.match(head, i):
        # "forget everything I told you" yes; "forget everything, let's go" no.
        if _FIRST_PERSON.search(window) or _EN_YOU_KNOW.search(window, 1):
            return m.end()
        return None
    if m := _EN_DEMONSTRATIVE.match(head, i):
        # "forget the address I gave you" yes; "forget the party" / "that guy" no.
        second = _EN_WORD.match(head, m.end())
        if second and _EN_PEOPLE.match(head, second.end()):
            return None
        return m.end() if _FIRST_PERSON.search(window) else None
    return None


# ---------------------------------------------------------------------------
# Trigger tables
# ---------------------------------------------------------------------------

_R = _EnContent(clause=True)
_EN_REMEMBER_TRIGGERS: tuple[tuple[re.Pattern[str], _EnContent], ...] = (
    (re.compile(rf"(?:remember|memori[sz]e){WB}", _I), _R),
    # Double negative.  "don't forget to X" is a to-do reminder, not a fact.
    (re.compile(rf"(?:do\s+not|don't|dont|do\s+n't)\s+forget{WB}", _I), _EnContent()),
    (
        re.compile(rf"(?:never|(?:do\s+not|don't|dont)\s+ever)\s+forget{WB}", _I),
        _EnContent(),
    ),
    (re.compile(rf"(?:keep|bear)\s+(?:(?:this|it)\s+)?in\s+mind{WB}", _I), _R),
    (re.compile(rf"(?:make|take)\s+(?:a\s+)?(?:mental\s+)?note{WB}", _I), _EnContent(of=True)),
    # "note that down: X"; alone it is conversation.
    (re.compile(rf"(?:note|write|jot)\s+(?:this|that|it)\s+down{WB}", _I), _EnContent(that=False)),
    # "note that X" only as the opening imperative; "Note: X" is too common.
    (re.compile(rf"note(?=\s+that{WB})", _I), _EnContent(sep=False)),
    (re.compile(rf"note\s+down{WB}", _I), _R),
    # "write down my thoughts" may be about paper: only "write down that ..." / "write down: ...".
    (re.compile(rf"(?:write|jot)\s+down{WB}", _I), _EnContent()),
    (
        re.compile(
            r"(?:save|store|add|put|keep)\s+(?:(?:this|that|it)\s+)?(?:to|in|into)\s+"
            rf"(?:your\s+|the\s+)?(?:long[- ]term\s+)?memory{WB}",
            _I,
        ),
        _EnContent(),
    ),
)

# Between a remember verb and what to keep.
_EN_AFTER_VERB = re.compile(
    r"(?:,?\s+(?:for\s+(?:the\s+)?future|for\s+next\s+time|for\s+later|going\s+forward"
    rf"|from\s+now\s+on|for\s+me|forever|always){WB})*",
    _I,
)
_EN_FORGET = re.compile(rf"forget{WB}", _I)
# "stop remembering my address" forgets one thing; "stop remembering (things)"
# alone is the memory switch (``_EN_DISABLE``).
# "stop" with a continuous verb of keeping: "stop saving what I say" is the switch; with an
# object of the user's only "stop remembering my address" forgets it ("stop saving my work"
# is about autosave, not memory).
_EN_KEEPING = r"(?:remembering|saving|storing|keeping|recording|logging|tracking|memori[sz]ing)"
_EN_STOP_REMEMBERING = re.compile(rf"stop\s+(?:remembering|memori[sz]ing){WB}", _I)
_EN_REMEMBER_AGAIN = re.compile(rf"remember{WB}", _I)
_EN_DELETE_MEMORY_ABOUT = re.compile(
    r"(?:delete|remove|erase|clear|wipe|drop)\s+"
    r"(?:the\s+|my\s+|any\s+|all\s+(?:the\s+|my\s+)?|your\s+|that\s+|this\s+|those\s+"
    r"|these\s+)?(?:saved\s+|stored\s+)?(?:memory|memories)\s+"
    r"(?:you\s+(?:have|saved|stored|kept)\s+)?"
    r"(?:(?:that\s+)?(?:says|said)\s+|about\s+|of\s+|on\s+|regarding\s+"
    r"|concerning\s+|related\s+to\s+|that\s+|where\s+)",
    _I,
)
_EN_DELETE_WHAT_YOU_KNOW = re.compile(
    r"(?:delete|remove|erase|wipe)\s+(?=(?:what|everything|anything|whatever)\s+you\s+"
    r"(?:know|remember|have|stored|saved|learned)" + WB + ")",
    _I,
)

# Whole-message patterns, matched against the cleaned, normalised remainder.
_PLACE_EN = r"(?:chat|group|group\s+chat|conversation|topic|thread)"
_MEM_EN = (
    rf"(?:(?:this|the)\s+{_PLACE_EN}'s\s+)?"
    rf"(?:(?:the|your|this|chat|bot|conversation|group|topic|thread|long[- ]term)\s+)*memory"
    r"(?:\s+(?:feature|function|mode|recall|system))?"
)
_SUFFIX_EN = (
    rf"(?:\s+(?:for\s+now|(?:in|for)\s+(?:this|the\s+current)\s+{_PLACE_EN}|here|in\s+here"
    r"|now|for\s+a\s+while|from\s+now\s+on|again|for\s+me|back))*"
)
# What "stop saving/recording/..." may name and still be the switch: memories in general, or
# what is said here.
_EN_WHAT_WE_SAY = (
    r"(?:(?:any\s+|new\s+)?memories|things|stuff|everything|anything"
    r"|(?:what|whatever|everything|anything)\s+(?:i|we)\s+(?:say|write|type|send|tell\s+you)"
    r"|(?:my|our)\s+(?:messages|chats?|conversations?|words)"
    r"|(?:this|the|our)\s+(?:chat|conversation|group)(?:\s+history)?)"
    r"(?:\s+(?:about\s+me|of\s+me|of\s+what\s+i\s+say))?"
)
EN_SWITCH_TAIL = re.compile(_SUFFIX_EN + r"(?:\s+(?:please|pls|plz))?\s*", _I)
_EN_DISABLE = re.compile(
    rf"(?:(?:turn|switch|shut)\s+off\s+{_MEM_EN}|(?:turn|switch|shut)\s+{_MEM_EN}\s+off"
    rf"|(?:disable|deactivate|pause|suspend)\s+{_MEM_EN}|memory\s+off"
    r"|stop\s+remembering(?:\s+(?:things|stuff|everything|anything))?(?:\s+about\s+me)?"
    r"|stop\s+(?:making|creating)\s+(?:any\s+|new\s+)?memories"
    r"(?:\s+(?:about\s+me|of\s+me|of\s+what\s+i\s+say))?"
    rf"|stop\s+{_EN_KEEPING}\s+{_EN_WHAT_WE_SAY})" + _SUFFIX_EN,
    _I,
)
_EN_ENABLE = re.compile(
    rf"(?:(?:turn|switch)\s+(?:back\s+)?on\s+{_MEM_EN}"
    rf"|(?:turn|switch)\s+{_MEM_EN}\s+(?:back\s+)?on"
    rf"|(?:enable|re-?enable|activate|re-?activate|resume|unpause)\s+{_MEM_EN}|memory\s+on"
    r"|start\s+remembering(?:\s+(?:things|stuff|everything))?)" + _SUFFIX_EN,
    _I,
)
_EN_ERASE_FROM_MEMORY = re.compile(
    r"(?:delete|remove|erase|wipe|drop|clear)\s+(?P<x>.+?)\s+from\s+(?:your\s+|the\s+|my\s+)?"
    r"(?:long[- ]term\s+)?(?:memory|memories)(?:\s+(?:for\s+good|forever|permanently))?",
    _I,
)


def _english_prefix_rules(c: Ctx) -> Outcome:
    head, pos = c.head, c.pos
    modal_only = c.modal and not c.polite
    for pattern, content in _EN_REMEMBER_TRIGGERS:
        if m := pattern.match(head, pos):
            after = _EN_AFTER_VERB.match(head, m.end())  # "remember for the future that ..."
            i = after.end() if after else m.end()
            start = _en_content(head, i, content, modal_only=modal_only)
            if start is None:
                return None
            subject = c.subject_from(start)
            if _EN_REMEMBER_AGAIN.match(subject):  # "remember: remember ..."
                return None
            return as_request("remember", "en", subject)
    if m := _EN_FORGET.match(head, pos):
        start = _en_forget_object(head, m.end())
        if start is None:
            return None
        subject = c.subject_from(start)
        if _EN_IDIOM_SUBJECT.match(norm(subject)):
            return None
        return as_request("forget", "en", subject)
    if m := _EN_DELETE_MEMORY_ABOUT.match(head, pos) or _EN_DELETE_WHAT_YOU_KNOW.match(head, pos):
        return as_request("forget", "en", c.subject_from(m.end()))
    if m := _EN_STOP_REMEMBERING.match(head, pos):
        whole = whole_rest(c)
        if whole is not None and _EN_DISABLE.fullmatch(whole[1]):
            return NO_TRIGGER  # "stop remembering things about me": the switch
        start = _en_forget_object(head, m.end())
        if start is None:
            return NO_TRIGGER  # "stop remembering me / the past": no object to forget
        subject = c.subject_from(start)
        if _EN_IDIOM_SUBJECT.match(norm(subject)):
            return None
        return as_request("forget", "en", subject)
    return NO_TRIGGER


def _english_whole_rules(c: Ctx) -> Outcome:
    if (whole := whole_rest(c)) is None:
        return NO_TRIGGER
    rest, n = whole
    if _EN_DISABLE.fullmatch(n):
        return MemoryRequest("disable", "en", "")
    if _EN_ENABLE.fullmatch(n):
        return MemoryRequest("enable", "en", "")
    if m := _EN_ERASE_FROM_MEMORY.fullmatch(n):
        subject = rest[m.start("x") : m.end("x")]
        if _EN_FORGET_PRONOUN.match(" " + norm(subject)):
            return None  # "erase me from your memory"
        return as_request("forget", "en", subject)
    return NO_TRIGGER


EN_RULES: tuple[Callable[[Ctx], Outcome], ...] = (_english_prefix_rules, _english_whole_rules)
# First word of every English / first character of every Chinese trigger above.
# A cheap gate so that "I can't remember ..." or a URL skips the rule chain;
# keep it in sync when adding a trigger (the test corpus will catch a miss).
EN_TRIGGER_START = re.compile(
    r"(?:remember|memori[sz]e|do|dont|don't|never|write|jot|keep|bear|make|take|note|save|store"
    r"|add|put|forget"
    r"|delete|remove|erase|clear|wipe|drop|turn|switch|shut|disable|deactivate|pause|suspend"
    r"|memory|stop|enable|re-enable|reenable|activate|re-activate|reactivate|resume|unpause"
    r"|start)" + WB,
    _I,
)
