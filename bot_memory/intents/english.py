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
    Miss,
    Outcome,
    as_request,
    by_first_letter,
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


# ---------------------------------------------------------------------------
# Keeping out: "don't remember that", "off the record: ...", "this is private, don't save it"
# ---------------------------------------------------------------------------

# What a request not to remember opens with (after the prefixes): a negation of a verb of
# keeping, or a phrase that asks for discretion. "don't" alone may be a statement with its "I"
# dropped ("don't remember that at all"), so after it an object is required and only a brief
# remark may follow; the other leads cannot be statements.
_EN_KO_LEAD = re.compile(
    r"(?P<neg>(?:do\s+not|don't|dont|do\s+n't)(?:\s+ever)?\s+)"
    r"|(?P<not>not\s+)"  # after a polite prefix: "could you please not save this"
    r"|(?:there's\s+|there\s+is\s+)?no\s+need\s+to\s+"
    r"|you\s+(?:don't|do\s+not|dont)\s+(?:need|have)\s+to\s+|you\s+need(?:n't|\s+not)\s+"
    r"|i\s+(?:don't|do\s+not|dont)\s+(?:want|need)\s+you\s+to\s+"
    r"|i\s+(?:want|need)\s+you\s+not\s+to\s+"
    r"|i(?:'d|\s+would)\s+(?:like|prefer)\s+(?:it\s+if\s+)?you\s+"
    r"(?:not\s+to|didn't|did\s+not|wouldn't|would\s+not)\s+"
    r"|i(?:'d|\s+would)\s+rather\s+you\s+(?:didn't|did\s+not|not)\s+"
    r"|let's\s+not\s+",
    _I,
)
# Verbs that keep something as it stands ("don't save this"), with a place that may follow.
_EN_KO_KEEP = re.compile(rf"(?:remember|memori[sz]e|save|store|record){WB}", _I)
_EN_KO_RECALL = re.compile(r"remember|memori[sz]e", _I)
# Verbs that keep only with a memory named: "don't put that in your memory".
_EN_KO_INTO = re.compile(rf"(?:keep|add|put|include|commit|enter|save|store|write){WB}", _I)
# "don't write that down", "don't note this".
_EN_KO_WRITE = re.compile(rf"(?:write|jot|note){WB}", _I)
_EN_KO_NOTE_OF = re.compile(rf"(?:make|take)\s+(?:a\s+)?(?:mental\s+)?note\s+of{WB}", _I)
_EN_KO_DOWN = re.compile(rf"\s+down{WB}", _I)
# The message meant: this one or the last one, by a pointing word ("that", "what I just
# said"), or the speaker's own thing ("my salary") for the verbs of remembering.
_EN_KO_POINTING = re.compile(
    r"\s+(?P<o>(?:this|that|these|those|the\s+last|the\s+previous|my\s+last|my\s+previous)\s+"
    r"(?:one|message|messages|part|bit|line|sentence|answer|reply|info|information|detail"
    r"|details|data)"
    r"|(?P<forward>this|these|the\s+following)"
    r"|that|it|those|the\s+above|all\s+(?:of\s+)?(?:this|that)|any(?:thing)?\s+of\s+(?:this|that|it)"
    r"|(?:what|everything)\s+i\s+(?:just\s+)?(?:said|wrote|told\s+you|sent|typed|shared|mentioned)"
    r"(?:\s+(?:here|earlier|before|above|now))?"
    r"(?:\s+about\s+[^\s,.;:!?]+(?:\s+[^\s,.;:!?]+){0,4})?)" + WB,
    _I,
)
_EN_KO_MINE = re.compile(r"\s+my(?:\s+(?!(?:in|to|into|from|for)\s)[^\W\d_][\w'\-]*){1,4}", _I)
_EN_KO_PLACE = re.compile(
    r"\s+(?:in|to|into|from|for)\s+(?:your\s+|the\s+|my\s+)?(?:long[- ]term\s+)?memory"
    r"(?:\s+bank)?" + WB,
    _I,
)
# "don't remember that I'm pregnant": what is not to be remembered is this message's own.
_EN_KO_CLAUSE = re.compile(rf"\s+that\s+(?={_CLAUSE_LEAD})", _I)
# What this message itself says, after the request: "off the record: ...".
_EN_KO_CONTENT = re.compile(r"\s*:\s*", _I)
_EN_KO_CONTENT_LOOSE = re.compile(r"\s*[:,;]\s*|\s*-+\s*", _I)
_EN_KO_ADVERBS = re.compile(
    r"(?:,?\s+(?:for\s+(?:later|the\s+future|next\s+time|now)|forever|anywhere|permanently"
    r"|please|pls|plz|ok|okay|thanks|thank\s+you|thx|as\s+well|too|then|@[A-Za-z0-9_]{3,64})"
    + WB
    + ")*",
    _I,
)
# A brief remark may follow the request ("don't remember that, it's nothing"), after a stop.
_EN_KO_BOUNDARY = re.compile(r"\s*(?:[,.;:!]+|\s-+|-{2,})\s*")
# A second thought a request not to remember may open with: "no wait, don't save that".
_EN_KO_OPENER = re.compile(
    r"(?:(?:no(?!\s+need)|nah|nope|wait|hmm+|um+|uh|oops|whoops|on\s+second\s+thought|actually\s+no"
    r"|never\s*mind|scratch\s+that)"
    rf"{WB}[\s,!.]*)+",
    _I,
)
# ... but not one that shows "don't remember that" was "I don't remember that".
_EN_KO_STATEMENT = re.compile(
    r"(?:sorry|tbh|honestly|to\s+be\s+honest|no\s+idea|not\s+sure|maybe|must\s+have"
    r"|i\s+(?:think|guess|forgot|mean)|i'm\s+afraid|was\s+it|were\s+(?:we|you)|did\s+(?:i|you|we)"
    r"|do\s+you|can\s+you|could\s+you|help|what|who|when|where|why|how|which|lol|lmao|haha"
    r"|either|at\s+all|anymore"
    r"|never|myself)" + WB,
    _I,
)
_EN_OFF_RECORD = re.compile(
    r"(?:(?P<back>(?:that|it|those)(?:'s|\s+is|\s+was|\s+were|\s+are)\s+"
    r"|(?:keep|leave|put)\s+(?:that|it|those)\s+|let's\s+keep\s+(?:that|it)\s+)"
    r"|(?:this|these|everything|all\s+(?:of\s+)?this|what\s+follows|the\s+following)"
    r"(?:'s|\s+is|\s+was|\s+are)?\s+"
    r"|(?:keep|leave|put)\s+(?:this|these|everything|all\s+(?:of\s+)?this)\s+"
    r"|let's\s+keep\s+this\s+)?"
    r"(?:(?:all|strictly|totally|completely|entirely|just|purely|also|so)\s+)*"
    r"off[\s\-]+(?:the[\s\-]+)?record(?![\w'])",
    _I,
)
_EN_NOT_FOR_MEMORY = re.compile(
    r"(?:(?P<back>(?:that|it)(?:'s|\s+is|\s+was)\s+)|(?:this|these)(?:'s|\s+is|\s+are)\s+)?"
    r"not\s+(?:for\s+(?:your\s+|the\s+)?memory"
    r"|to\s+be\s+(?:remembered|saved|stored|recorded|kept|memori[sz]ed))" + WB,
    _I,
)
_EN_KEEP_OUT_OF = re.compile(
    r"(?:keep|leave)\s+(?:(?P<forward>this|these)|that|it|those|all\s+(?:of\s+)?(?:this|that)"
    r"|everything)\s+out\s+of\s+(?:your\s+|the\s+|my\s+)?(?:long[- ]term\s+)?memory"
    r"(?:\s+bank)?" + WB,
    _I,
)
# "this is private, don't save it": discretion asked, and then a request not to keep.
_EN_PRIVATE = re.compile(
    r"(?:(?:this|that|it|these|those)"
    r"(?:'s|\s+is|\s+was|\s+are|\s+stays|\s+remains|\s+(?:should|must|has\s+to)\s+(?:stay|remain))\s+"
    r"(?:(?:very|really|quite|pretty|super|strictly|kind\s+of|kinda|a\s+bit|totally|completely"
    r"|extremely|highly)\s+)?)?"
    r"(?:private|personal|confidential|sensitive|secret|a\s+secret|privileged"
    r"|(?:just\s+)?between\s+(?:us|you\s+and\s+me|the\s+two\s+of\s+us)|for\s+your\s+eyes\s+only"
    r"|not\s+for\s+sharing)"
    r"(?:\s+(?:stuff|info|information|data|details|matter|business))?"
    r"\s*(?:[,.;:!]+|\s-+)\s*(?:(?:so|and|thus|hence|therefore)\s+)?(?:please\s+|pls\s+|kindly\s+)?",
    _I,
)


def _en_kept_out(subject: str) -> MemoryRequest:
    return MemoryRequest("keep_out", "en", subject)


def _en_keep_out_end(c: Ctx, i: int, *, forward: bool, loose: bool = False) -> Outcome:
    """What follows a request not to remember, ending at `i`: this message's own words after a
    colon (a forward request: "off the record: ..."), or nothing but a brief remark."""
    head = c.head
    if forward:
        content = (_EN_KO_CONTENT_LOOSE if loose else _EN_KO_CONTENT).match(head, i)
        if content is not None and (subject := c.subject_from(content.end())):
            return _en_kept_out(subject)
    adverbs = _EN_KO_ADVERBS.match(head, i)
    j = adverbs.end() if adverbs else i
    if not c.subject_from(j):
        return _en_kept_out("")
    after = norm(c.text[j : j + 200])
    stop = _EN_KO_BOUNDARY.match(after)
    if stop is None:
        return None  # "don't remember that guy", "don't remember that at all"
    if not c.polite and _EN_KO_STATEMENT.match(after, stop.end()):
        return None  # "don't remember that, sorry": "I" dropped
    return _en_kept_out("")


def _en_keep_out_verb(c: Ctx, i: int, *, bare: bool) -> Outcome:
    """After a lead ("don't", "no need to", ...): the verb of keeping and what it points at.
    `bare`: the lead was a plain "don't" (no polite form), which needs an object."""
    head = c.head
    if m := _EN_KO_NOTE_OF.match(head, i):
        o = _EN_KO_POINTING.match(head, m.end())
        if o is None:
            return None
        return _en_keep_out_end(c, o.end(), forward=o.group("forward") is not None)
    if m := _EN_KO_KEEP.match(head, i):
        j = m.end()
        if clause := _EN_KO_CLAUSE.match(head, j):
            return _en_kept_out(c.subject_from(clause.end()))  # "don't remember that I ..."
        if content := _EN_KO_CONTENT.match(head, j):  # "don't remember: ..."
            subject = c.subject_from(content.end())
            return _en_kept_out(subject) if subject else None
        forward = True
        if o := _EN_KO_POINTING.match(head, j):
            j, forward = o.end(), o.group("forward") is not None
        elif (o := _EN_KO_MINE.match(head, j)) and not (bare and _EN_KO_RECALL.match(m.group())):
            j, forward = o.end(), False  # not "don't remember my password": "I" dropped
        elif bare:
            return None  # "don't remember", "don't save money"
        if place := _EN_KO_PLACE.match(head, j):
            j = place.end()
        return _en_keep_out_end(c, j, forward=forward)
    if m := _EN_KO_INTO.match(head, i):
        o = _EN_KO_POINTING.match(head, m.end()) or _EN_KO_MINE.match(head, m.end())
        place = _EN_KO_PLACE.match(head, o.end()) if o else None
        if o is not None and place is not None:  # "don't put that in your memory"
            forward = o.re is _EN_KO_POINTING and o.group("forward") is not None
            return _en_keep_out_end(c, place.end(), forward=forward)
        if not _EN_KO_WRITE.match(head, i):
            return None
    if m := _EN_KO_WRITE.match(head, i):
        o = _EN_KO_POINTING.match(head, m.end())
        if o is None:
            return None
        j = o.end()
        if down := _EN_KO_DOWN.match(head, j):
            j = down.end()
        elif m.group().lower() != "note":
            return None  # "don't write that" (a reply, not a note)
        return _en_keep_out_end(c, j, forward=o.group("forward") is not None)
    return NO_TRIGGER  # "don't forget that ..." is the remember rules'


def _en_keep_out_request(c: Ctx, i: int) -> Outcome:
    """A request not to remember, starting at `i` (no discretion phrase before it)."""
    head = c.head
    if m := _EN_OFF_RECORD.match(head, i):
        back = m.group("back") is not None
        return _en_keep_out_end(c, m.end(), forward=not back, loose=True)
    if m := _EN_NOT_FOR_MEMORY.match(head, i):
        return _en_keep_out_end(c, m.end(), forward=m.group("back") is None)
    if m := _EN_KEEP_OUT_OF.match(head, i):
        return _en_keep_out_end(c, m.end(), forward=m.group("forward") is not None)
    lead = _EN_KO_LEAD.match(head, i)
    if lead is None or (lead.group("not") is not None and not c.polite):
        return NO_TRIGGER
    return _en_keep_out_verb(c, lead.end(), bare=lead.group("neg") is not None and not c.polite)


def english_keep_out(c: Ctx) -> Outcome:
    """ "don't remember that", "off the record: ...", "this is private, don't save it"."""
    if c.standing or (c.modal and not c.polite):
        return NO_TRIGGER  # "from now on, don't ...": the switch's; "can you not ...?" asks
    pos = c.pos
    if opener := _EN_KO_OPENER.match(c.head, pos):
        pos = opener.end()
    if m := _EN_PRIVATE.match(c.head, pos):
        after = _en_keep_out_request(
            Ctx(c.text, c.head, m.end(), polite=True, modal=False), m.end()
        )
        return after if isinstance(after, MemoryRequest) else None
    outcome = _en_keep_out_request(c, pos)
    return NO_TRIGGER if opener and isinstance(outcome, Miss) else outcome


EN_RULES: tuple[Callable[[Ctx], Outcome], ...] = (_english_prefix_rules, _english_whole_rules)
# Where a request not to remember may start (see english_keep_out): a cheap gate, so that "I
# can't remember ..." skips those rules; keep it in sync with their openings.
_EN_KEEP_OUT_OPENINGS = [
    r"all\s",
    r"a\s+secret\s",
    rf"between{WB}",
    rf"confidential{WB}",
    rf"completely{WB}",
    rf"don't{WB}",
    rf"dont{WB}",
    rf"do\s+n(?:ot|'t){WB}",
    r"everything\s",
    rf"entirely{WB}",
    r"for\s+your\s",
    rf"hmm+{WB}",
    r"it(?:'s|\s+(?:is|was|stays|remains|should|must|has\s+to))\s",
    r"i(?:'d|\s+would)\s+(?:like|prefer|rather)",
    r"i\s+(?:(?:don't|do\s+not|dont)\s+(?:want|need)|(?:want|need)\s+you\s+not)",
    r"just\s+between",
    rf"keep{WB}",
    rf"let's{WB}",
    rf"leave{WB}",
    rf"never\s*mind{WB}",
    rf"n(?:ot|o|ope|ah){WB}",
    r"off[\s\-]",
    r"on\s+second\s",
    rf"oops{WB}",
    rf"p(?:ut|rivate|ersonal|rivileged|urely){WB}",
    rf"s(?:ensitive|ecret|trictly){WB}",
    r"scratch\s+that",
    r"th(?:is|at|ese|ose)(?:'s|\s+(?:is|was|are|were|stays|remains|should|must|has\s+to))\s",
    r"there(?:'s|\s+is)\s+no\s",
    r"the\s+following\s",
    rf"totally{WB}",
    rf"u(?:m+|h){WB}",
    rf"w(?:ait|hoops){WB}",
    r"what\s+follows\s",
    r"you\s+(?:don't|do\s+not|dont|need)",
]
EN_KEEP_OUT_START = re.compile(by_first_letter(_EN_KEEP_OUT_OPENINGS), _I)
# First word of every English trigger above. A cheap gate so that "I can't remember ..." or a
# URL skips the rule chain; keep it in sync when adding a trigger (the corpus will catch a miss).
_EN_TRIGGERS = (
    "remember memori[sz]e do dont don't never write jot keep bear make take note save store add "
    "put forget delete remove erase clear wipe drop turn switch shut disable deactivate pause "
    "suspend memory stop enable re-enable reenable activate re-activate reactivate resume "
    "unpause start"
).split()
EN_TRIGGER_START = re.compile(by_first_letter([w + WB for w in _EN_TRIGGERS]), _I)
# Either, in one look (the recognizer's gate).
EN_START = re.compile(by_first_letter(_EN_KEEP_OUT_OPENINGS + [w + WB for w in _EN_TRIGGERS]), _I)
