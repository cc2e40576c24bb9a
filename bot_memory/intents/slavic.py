"""Russian and Ukrainian requests: their prefixes, the verbs and what may follow them, and the
whole-message switches and deletions. The words are in ``slavic_words``.

The same safety as in English: a request opens the message (after an address, a greeting, a
time adverbial or a polite form), and a question, a negative ("не запоминай"), a reminder
("напомни мне"), an idiom ("забудь", "забей", "забудь об этом"), reported speech ("он сказал
запомни ...") or anything about somebody else stays conversation. A forget must name something
of the speaker's ("мой/мій ...", "что я говорил", "що я казав"); a forget of a thing alone
("забудь прошлое") is advice, not a request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot_memory.intents import slavic_words as w
from bot_memory.intents.common import (
    HEAD,
    NO_TRIGGER,
    TRAILING,
    Language,
    MemoryRequest,
    Miss,
    Outcome,
    as_request,
    clean,
    is_question,
    norm,
)
from bot_memory.intents.cyrillic import unmix


def _c(pattern: str) -> re.Pattern[str]:
    """Compiled for the lower-cased head: no IGNORECASE, which is several times slower here."""
    return re.compile(pattern)


def _lower(text: str) -> str:
    """Lower case, one character for one (the rare letter that lowers to two stays)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(ch if len(ch.lower()) != 1 else ch.lower() for ch in text)


# --- prefixes ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Prefix:
    pattern: str
    polite: bool = False  # a trailing '?' is no question
    modal: bool = False  # "можешь ...": a bare capability question is no request
    infinitive: bool = False  # "прошу запомнить", "можешь запомнить"
    past: bool = False  # "хочу, чтобы ты запомнил"
    standing: bool = False  # "с этого момента": an instruction for later, about no one message


_PREFIX_TABLE: tuple[_Prefix, ...] = (
    _Prefix(r"@[A-Za-z0-9_]{3,64}(?![A-Za-z0-9_])[\s,:]*"),
    _Prefix(rf"(?:{w.FILLER}[\s,!]*)?{w.BOT}[\s,:!.]*"),
    _Prefix(rf"{w.GREETING}(?:[\s,!]+{w.BOT})?[\s,!.)]*"),
    _Prefix(rf"{w.TIME}[\s,]*", standing=True),
    _Prefix(rf"{w.POLITE}[\s,!]*", polite=True),
    _Prefix(rf"(?:{w.ASK})[\s,]*", polite=True, infinitive=True),
    _Prefix(rf"{w.WANT}[\s,]*", polite=True, past=True),
    _Prefix(rf"{w.MODAL_POLITE}[\s,]*", polite=True, modal=True, infinitive=True),
    _Prefix(rf"{w.MODAL_PAST}[\s,]*", modal=True, infinitive=True),
    _Prefix(rf"{w.MODAL}[\s,]*", modal=True, infinitive=True),
    _Prefix(rf"{w.FILLER}[\s,!.]*"),
)
_PREFIX = _c("|".join(f"(?P<p{i}>{e.pattern})" for i, e in enumerate(_PREFIX_TABLE)))
_PREFIX_BY_GROUP = {f"p{i}": entry for i, entry in enumerate(_PREFIX_TABLE)}


@dataclass(slots=True)
class _Ctx:
    text: str  # the original message
    head: str  # its normalised, unmixed head: same indices
    pos: int
    polite: bool = False
    modal: bool = False
    infinitive: bool = False
    past: bool = False
    standing: bool = False

    @property
    def soft(self) -> bool:
        return self.polite or self.modal

    def subject_from(self, start: int) -> str:
        subject = clean(self.text[start:], drop_zh_q=self.soft)
        # A closing bracket or two is a smiley in these languages: "я люблю чай))".
        while subject.endswith(")") and subject.count(")") > subject.count("("):
            subject = subject[:-1].rstrip(TRAILING)
        return subject


def _skip_prefixes(c: _Ctx) -> None:
    for _ in range(8):  # bounded: "бот, слушай, и ещё, пожалуйста, ..."
        m = _PREFIX.match(c.head, c.pos)
        if m is None or m.end() == c.pos or m.lastgroup is None:
            return
        c.pos = m.end()
        entry = _PREFIX_BY_GROUP[m.lastgroup]
        c.polite |= entry.polite
        c.modal |= entry.modal
        c.infinitive |= entry.infinitive
        c.past |= entry.past
        c.standing |= entry.standing


# --- which language ----------------------------------------------------------------------------

_UK_LETTERS = _c(f"[{w.UK_LETTERS}]")
_RU_LETTERS = _c(f"[{w.RU_LETTERS}]")
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


def language_of(text: str) -> Language:
    """Ukrainian or Russian, by the letters and little words only one of them has."""
    return _language(_lower(unmix(norm(text[:HEAD]))))


def _language(head: str) -> Language:
    """The same on a head already normalised, unmixed and lower-cased."""
    uk = len(_UK_LETTERS.findall(head))
    ru = len(_RU_LETTERS.findall(head))
    for word in _WORDS.findall(head):
        if "'" in word:  # пам'ять, м'ясо
            uk += 1
        uk += word in w.UK_WORDS
        ru += word in w.RU_WORDS
    return "uk" if uk > ru else "ru"


# --- remember ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Verb:
    pattern: re.Pattern[str]
    kind: str  # what may follow: see _remember_content


def _verb(imp: str, inf: str, past: str) -> re.Pattern[str]:
    return _c(rf"(?:(?P<imp>{imp})|(?P<inf>{inf})|(?P<past>{past})){w.B}")


_REMEMBER_VERBS = (
    _Verb(_verb(w.REMEMBER_IMP, w.REMEMBER_INF, w.REMEMBER_PAST), "remember"),
    _Verb(_verb(w.DONT_FORGET_IMP, w.DONT_FORGET_INF, w.DONT_FORGET_PAST), "dont_forget"),
    _Verb(_verb(w.NOTE_IMP, w.NOTE_INF, w.NOTE_PAST), "note"),
    _Verb(_verb(w.SAVE_IMP, w.SAVE_INF, w.SAVE_PAST), "save"),
    _Verb(_verb(w.MIND_IMP, w.MIND_INF, w.MIND_PAST), "mind"),
)
_FORGET = _verb(w.FORGET_IMP, w.FORGET_INF, w.FORGET_PAST)
_AFTER_VERB = _c(w.AFTER_VERB)
_POLITE_AFTER_VERB = _c(w.POLITE_AFTER_VERB)
_INTO_MEMORY = _c(w.INTO_MEMORY)

_SEP = _c(r"\s*:\s*|\s+-+\s*")
_THIS_SEP = _c(w.THIS_SEP)
_THAT = _c(
    r"(?:\s*,\s*|\s+)(?:(?:о\s+том|об\s+этом|про\s+те|про\s+то|то|те)\s*,?\s*)?"
    + w.THAT
    + r"[\s,:]*"
)
_CLAUSE = _c(r"(?:\s*[,!.]\s*|\s+)(?=" + w.WE_LEAD + ")")
_WE_LEAD = _c(w.WE_LEAD)
_SAY_LATER = _c(w.SAY_LATER)
_ABOUT_YOU = _c(w.ABOUT_YOU)
# A note-down ("запиши мой номер ...") needs something to write: a number, an address, a colon.
_DATA = _c(r"[\d@:]|\s-+\s")


def _allowed(c: _Ctx, m: re.Match[str]) -> bool:
    if m.group("inf") is not None:
        return c.infinitive
    if m.group("past") is not None:
        return c.past
    return True


def _remember_content(c: _Ctx, i: int, kind: str) -> int | None:
    """Where what is to be kept starts, after the verb; None when nothing is to be kept."""
    h = c.head
    modal_only = c.modal and not c.polite
    start = _content_start(c, i, kind, modal_only)
    if start is None or _ABOUT_YOU.match(h, start) or _SAY_LATER.match(h, start):
        return None  # "запомни, что ты обещал", "запомни, что я тебе скажу"
    return start


def _content_start(c: _Ctx, i: int, kind: str, modal_only: bool) -> int | None:
    h = c.head
    if m := _SEP.match(h, i) or _THIS_SEP.match(h, i):
        if kind == "mind" and not _WE_LEAD.match(h, m.end()):
            return None  # "учти: завтра дождь" is about this answer, not the speaker
        return m.end()
    if m := _THAT.match(h, i):
        j = m.end()
        return None if kind == "mind" and not _WE_LEAD.match(h, j) else j
    if kind in ("dont_forget", "save") or modal_only:
        return None  # "не забудь купить хлеб" is a to-do; "можешь запомнить моё имя?" asks
    if m := _CLAUSE.match(h, i):
        if kind == "note" and not _DATA.search(h, m.end(), m.end() + 100):
            return None  # "запиши мою речь" records, it does not note
        return m.end()
    return None


def _remember(c: _Ctx) -> Outcome:
    h = c.head
    for verb in _REMEMBER_VERBS:
        m = verb.pattern.match(h, c.pos)
        if m is None:
            continue
        if not _allowed(c, m):
            return None
        i = m.end()
        if verb.kind == "save":
            into = _INTO_MEMORY.match(h, i)
            if into is None:
                return None  # "сохрани файл"
            i = into.end()
        after = _AFTER_VERB.match(h, i)
        if after is not None and after.end() > i:
            c.polite |= _POLITE_AFTER_VERB.search(after.group()) is not None
            i = after.end()
        start = _remember_content(c, i, verb.kind)
        if start is None:
            return None
        subject = c.subject_from(start)
        lead = _lower(unmix(norm(subject[:40])))
        if _REMEMBER_AGAIN_AT.match(lead) or _MARK_MY_WORDS.match(lead):
            return None  # "запомни: запомни ...", "запомни мои слова: ты пожалеешь"
        return as_request("remember", _language(c.head), subject)
    return NO_TRIGGER


_REMEMBER_AGAIN_AT = _c(rf"(?:{w.REMEMBER_IMP}){w.B}")
_MARK_MY_WORDS = _c(r"(?:мои|мої)\s+слова" + w.B)


# --- forget ------------------------------------------------------------------------------------

_GAP = _c(r"\s*,\s*|\s+")
_PRONOUN = _c(w.PRONOUN_OBJECT)
_ALL = _c(w.ALL)
_ALL_THAT = _c(r"\s*,?\s*(?:что|що|шо|о\s+ч[её]м|про\s+що)" + w.B)
_ALL_ABOUT_ME = _c(r"\s+" + w.ABOUT_ME)
_FIRST_PERSON = _c(w.FIRST_PERSON)
_ABOUT_ME_ANYWHERE = _c(w.A + w.ABOUT_ME)
_ABOUT = _c(w.ABOUT + r"\s+")
_THAT_OF_ABOUT = _c(r"(?:то|те|том|тому)\s*,?\s*" + w.THAT + r"\s*")
_THAT_WORD = _c(r"(?:(?:то|те)\s*,?\s*)?" + w.THAT + r"[\s,]*")
_NEVER_MIND = _c(w.NEVER_MIND)
_NEVER_MIND_MY = _c(w.NEVER_MIND_MY)
_SAID = _c(w.SAID)
_MY = _c(w.MY)
_WH = _c(w.WH + r"\s+")
_SELF_LEAD = _c(w.SELF_LEAD)
_NOUN_OF_MINE = _c(r"[^\W\d_]+(?:'[^\W\d_]+)?\s+(?=" + w.MY + ")")
_THING_I_GAVE = _c(
    r"(?:(?:тот|ту|то|те|этот|эту|эти|цей|цю|ці|той)\s+)?(?P<noun>[^\W\d_]+)(?:\s+[^\W\d_]+)?"
    r"\s*,?\s*" + w.WHICH + r"\s+(?:я|мне|мені)" + w.B
)
_PEOPLE = _c(w.PEOPLE)


def _forget_object(h: str, i: int) -> int | None:
    """Where the speaker's thing to forget starts, after the verb; None if it is not theirs."""
    if m := _SEP.match(h, i) or _GAP.match(h, i):
        i = m.end()
    else:
        return None
    if m := _ALL.match(h, i):  # "всё, что я говорил", "всё обо мне"
        window = h[i : i + 160]
        if _ALL_THAT.match(h, m.end()) and (
            _FIRST_PERSON.search(window) or _ABOUT_ME_ANYWHERE.search(window)
        ):
            return i
        return i if _ALL_ABOUT_ME.match(h, m.end()) else None
    if m := _THAT_WORD.match(h, i):  # "забудь, что я ...", "забудь то, что я ..."
        j = m.end()
        if _NEVER_MIND.match(h, j):
            return None  # "забудь, что я сказал"
        if _SAID.match(h, j):
            return i  # "что я говорил про ...": the subject keeps its "что"
        return j if _WE_LEAD.match(h, j) else None
    if _PRONOUN.match(h, i):
        return None  # "забудь его", "забудь это"
    if m := _ABOUT.match(h, i):  # "забудь про мой адрес"
        j = m.end()
        if _MY.match(h, j):
            return j
        if (that := _THAT_OF_ABOUT.match(h, j)) and _WE_LEAD.match(h, that.end()):
            return that.end()
        return None  # "забудь про это", "забудь о работе"
    if (m := _WH.match(h, i)) and _SELF_LEAD.match(h, m.end()):
        return m.end()  # "забудь, где я живу" -> "я живу"
    if _MY.match(h, i):
        return i
    if _NOUN_OF_MINE.match(h, i) and not _PEOPLE.match(h, i):
        return i  # "номер моего телефона"
    if (m := _THING_I_GAVE.match(h, i)) and not _PEOPLE.match(h, m.start("noun")):
        return i  # "адрес, который я тебе дал"
    return None


def _forget(c: _Ctx) -> Outcome:
    m = _FORGET.match(c.head, c.pos)
    if m is None:
        return NO_TRIGGER
    if not _allowed(c, m):
        return None
    i = m.end()
    after = _AFTER_VERB.match(c.head, i)
    if after is not None and after.end() > i:
        i = after.end()
    start = _forget_object(c.head, i)
    if start is None:
        return None
    subject = c.subject_from(start)
    if _NEVER_MIND_MY.match(_lower(unmix(norm(subject)))):
        return None  # "забудь мои слова"
    return as_request("forget", _language(c.head), subject)


# --- whole messages: on and off, deleting from memory ------------------------------------------


def _switch(verbs: str, extra: str) -> str:
    return (
        w.WHERE
        + rf"(?:(?:{w.SWITCH_EXTRA})[\s,]+)?"
        + rf"(?:{verbs}{w.SWITCH_SUFFIX}[\s,]+{w.MEMORY}|{w.MEMORY}[\s,]+{verbs}|{extra})"
        + w.SWITCH_SUFFIX
    )


_PAST_OFF = r"(?:выключил|отключил|вимкнув|відключив|виключив)(?:а|и)?" + w.B
_PAST_ON = r"(?:включил|вернул|увімкнув|ввімкнув|включив|повернув)(?:а|и)?" + w.B
_OFF_EXTRA = rf"{w.PAUSE}|{w.STOP}\s+{w.TO_REMEMBER}{w.REMEMBERING_WHAT}"
_ON_EXTRA = (
    rf"{w.START}\s+(?:{w.AGAIN}\s+)?{w.TO_REMEMBER}(?:\s+{w.AGAIN})?"
    rf"|{w.AGAIN}\s+{w.REMEMBER_AGAIN}|{w.REMEMBER_AGAIN}\s+{w.AGAIN}"
)
_DISABLE = _c(_switch(w.OFF_IMP, _OFF_EXTRA))
_ENABLE = _c(_switch(w.ON_IMP, _ON_EXTRA))
# After "можешь"/"прошу" the infinitive, after "хочу, чтобы ты" the past.
_DISABLE_INF = _c(_switch(f"(?:{w.OFF_IMP}|{w.OFF_INF})", _OFF_EXTRA))
_ENABLE_INF = _c(_switch(f"(?:{w.ON_IMP}|{w.ON_INF})", _ON_EXTRA))
_DISABLE_PAST = _c(_switch(f"(?:{w.OFF_IMP}|{_PAST_OFF})", _OFF_EXTRA))
_ENABLE_PAST = _c(_switch(f"(?:{w.ON_IMP}|{_PAST_ON})", _ON_EXTRA))

_DELETE = f"(?:{w.DELETE}|{w.DELETE_INF})"
_ERASE_FROM_MEMORY = _c(
    rf"{_DELETE}\s+(?:{w.FROM_MEMORY}\s+(?P<x>.+?)|(?P<y>.+?)\s+{w.FROM_MEMORY}){w.FOR_GOOD}"
)
_DELETE_MEMORIES_ABOUT = _c(
    rf"{_DELETE}\s+(?:(?:эти|это|эту|мои|все|всі|усі|ці|цей|мої)\s+)?{w.MEMORIES}\s+"
    rf"{w.ABOUT}\s+(?P<x>.+?){w.FOR_GOOD}"
)
# "сотри всё, что ты знаешь обо мне"
_DELETE_WHAT_YOU_KNOW = _c(
    rf"{_DELETE}\s+(?P<x>{w.ALL}\s*,?\s*(?:что|що)\s+(?:.{{0,40}}\s)?{w.YOU_KNOW}.*)"
)
_PRONOUN_WHOLE = _c(rf"(?:{w.PRONOUN_OBJECT}\s*)+")
# "мой старый адрес забудь": the speaker's thing first, then the verb.
_MINE_FORGET = _c(rf"(?P<x>{w.MY}.{{1,80}}?)[\s,]+(?:{w.FORGET_IMP}){w.B}")
# "перестань запоминать мой адрес": no longer keep it, i.e. forget it (without an object of the
# speaker's it is the switch, above).
_STOP_REMEMBERING_MINE = _c(rf"{w.STOP}[\s,]+{w.TO_REMEMBER}[\s,]+(?P<x>{w.MY}.{{1,80}}?)")


# Every whole-message form holds one of these (memory, remembering, forgetting, what you know).
_WHOLE_STEMS = ("памят", "пам'ят", "запомина", "забуд", "воспомин", "спогад", "знае", "знає")


def _whole(c: _Ctx) -> Outcome:
    if len(c.text) - c.pos > 600:  # such requests are short
        return NO_TRIGGER
    if not any(stem in c.head for stem in _WHOLE_STEMS):
        return NO_TRIGGER
    rest = clean(c.text[c.pos :], drop_zh_q=c.soft)
    if not rest or len(rest) > 300:
        return NO_TRIGGER
    start = c.text.find(rest, c.pos)
    if start >= 0 and start + len(rest) <= len(c.head):  # the head already holds it, unmixed
        n = c.head[start : start + len(rest)]
    else:
        n = _lower(unmix(norm(rest)))
    disable, enable = (
        (_DISABLE_PAST, _ENABLE_PAST)
        if c.past
        else (_DISABLE_INF, _ENABLE_INF)
        if c.infinitive
        else (_DISABLE, _ENABLE)
    )
    if disable.fullmatch(n):
        return MemoryRequest("disable", _language(c.head), "")
    if enable.fullmatch(n):
        return MemoryRequest("enable", _language(c.head), "")
    if m := _MINE_FORGET.fullmatch(n) or _STOP_REMEMBERING_MINE.fullmatch(n):
        return as_request("forget", _language(c.head), rest[m.start("x") : m.end("x")])
    m = (
        _ERASE_FROM_MEMORY.fullmatch(n)
        or _DELETE_MEMORIES_ABOUT.fullmatch(n)
        or _DELETE_WHAT_YOU_KNOW.fullmatch(n)
    )
    if m is None:
        return NO_TRIGGER
    group = "x" if m.group("x") is not None else "y"
    x = n[m.start(group) : m.end(group)]
    if _PRONOUN_WHOLE.fullmatch(x) or not (_FIRST_PERSON.search(x)):
        return None  # "сотри это из памяти", "удали воспоминания обо мне", "... тот день"
    subject = rest[m.start(group) : m.end(group)].strip(TRAILING)
    return as_request("forget", _language(c.head), subject)


# --- keeping out: "не запоминай это", "не для протокола: ...", "это личное, не сохраняй" ----------

_KO_LEAD = _c(r"(?:(?:ты|вы|ти|ви)\s+)?(?:(?:лучше|просто|только|уж|краще|тільки|лише)\s+)?не\s+")
_KO_IMP = _c(w.KO_IMP)
_KO_INF = _c(w.KO_INF)
_KO_PAST = _c(w.KO_PAST)
_KO_IMP_INTO = _c(w.KO_IMP_INTO)
_KO_INF_INTO = _c(w.KO_INF_INTO)
_KO_PLACE = _c(w.KO_PLACE)
_KO_NEED_NOT = _c(w.KO_NEED_NOT + r"\s+")
_KO_LETS_NOT = _c(w.KO_LETS_NOT + r"\s+")
_KO_DONT_WANT = _c(w.KO_DONT_WANT + r"\s+")
_KO_OBJECT = _c(r"(?:" + w.KO_POINTING + "|" + w.KO_MINE + ")")
_KO_GAP_OBJECT = _c(r"\s*,?\s*(?P<o>" + w.KO_POINTING + "|(?P<mine>" + w.KO_MINE + "))")
_KO_FORWARD = _c(w.KO_FORWARD)
_KO_OFF_RECORD = _c(w.KO_OFF_RECORD)
_KO_PRIVATE = _c(w.KO_PRIVATE)
_KO_CONTENT = _c(r"\s*:\s*")
_KO_CONTENT_LOOSE = _c(r"\s*[:,;]\s*|\s+-+\s*")
_KO_BOUNDARY = _c(w.KO_BOUNDARY)
_KO_AFTER = _c(w.AFTER_VERB)
_KO_SPACE = _c(r"\s+")
_KO_SPACE_NEED_NOT = _c(r"\s+" + w.KO_NEED_NOT)


def _kept_out(c: _Ctx, subject: str) -> MemoryRequest:
    return MemoryRequest("keep_out", _language(c.head), subject)


def _ko_end(c: _Ctx, i: int, *, forward: bool, loose: bool = False) -> Outcome:
    """What follows a request not to remember, ending at `i`: this message's own words after a
    colon when it points forward ("не запоминай: ...", "не для протокола: ..."), otherwise only
    an end or a brief remark after a stop."""
    h = c.head
    if after := _KO_AFTER.match(h, i):  # "не запоминай, пожалуйста"
        i = after.end()
    content = (_KO_CONTENT_LOOSE if loose else _KO_CONTENT).match(h, i) if forward else None
    if content is not None and (subject := c.subject_from(content.end())):
        return _kept_out(c, subject)
    if not c.subject_from(i):
        return _kept_out(c, "")
    if _KO_BOUNDARY.match(h, i):
        return _kept_out(c, "")  # "не запоминай это, это личное"
    return None  # "не запоминай его номер", "не сохраняй файл"


def _ko_object(c: _Ctx, i: int, *, need: bool) -> tuple[int, bool] | None:
    """After the verb: what is meant (where it ends, whether it points forward), then a place
    ("в память"). None when an object is needed and there is none."""
    h = c.head
    forward = True
    if m := _KO_GAP_OBJECT.match(h, i):
        i = m.end()
        forward = m.group("mine") is None and _KO_FORWARD.fullmatch(m.group("o")) is not None
    elif need:
        return None
    if place := _KO_PLACE.match(h, i):
        i = place.end()
    return i, forward


def _ko_verb(c: _Ctx, i: int, *, forms: tuple[re.Pattern[str], ...]) -> Outcome:
    """The negated verb at `i` (one of `forms`: imperative, infinitive, past) and what follows."""
    h = c.head
    for form in forms:
        if m := form.match(h, i):
            found = _ko_object(c, m.end(), need=False)
            assert found is not None
            return _ko_end(c, found[0], forward=found[1])
    into = (_KO_IMP_INTO, _KO_INF_INTO) if _KO_IMP in forms else (_KO_INF_INTO,)
    for form in into:
        if m := form.match(h, i):  # "не заноси это в память"
            o = _KO_GAP_OBJECT.match(h, m.end())
            place = _KO_PLACE.match(h, o.end() if o else m.end())
            if place is None:
                return None
            return _ko_end(c, place.end(), forward=False)
    return NO_TRIGGER


def _ko_request(c: _Ctx, i: int) -> Outcome:
    h = c.head
    if m := _KO_OFF_RECORD.match(h, i):
        return _ko_end(c, m.end(), forward=True, loose=m.group("lead") is None)
    if m := _KO_NEED_NOT.match(h, i) or _KO_LETS_NOT.match(h, i):
        # "не надо это запоминать": the object may come before the infinitive.
        j = m.end()
        o = _KO_OBJECT.match(h, j)
        if o is not None and (gap := _KO_SPACE.match(h, o.end())):
            verb = _KO_INF.match(h, gap.end())
            if verb is not None:
                return _ko_end(c, verb.end(), forward=_KO_FORWARD.fullmatch(o.group()) is not None)
        return _ko_verb(c, j, forms=(_KO_INF,))
    if m := _KO_DONT_WANT.match(h, i):
        j = m.end()
        o = _KO_OBJECT.match(h, j)
        if o is not None and (gap := _KO_SPACE.match(h, o.end())):
            j = gap.end()
        return _ko_verb(c, j, forms=(_KO_PAST,))
    if m := _KO_LEAD.match(h, i):
        forms = [_KO_IMP]
        if c.infinitive:
            forms.append(_KO_INF)  # "можешь не запоминать это", "прошу не сохранять"
        if c.past:
            forms.append(_KO_PAST)  # "хочу, чтобы ты не запоминал это"
        return _ko_verb(c, m.end(), forms=tuple(forms))
    # "это не запоминай", "мой адрес не сохраняй", "это запоминать не надо".
    if (o := _KO_OBJECT.match(h, i)) and (gap := _KO_SPACE.match(h, o.end())):
        j = gap.end()
        forward = _KO_FORWARD.fullmatch(o.group()) is not None
        if lead := _KO_LEAD.match(h, j):  # "это не запоминай", "можешь это не запоминать"
            k = lead.end()
            verb = (
                _KO_IMP.match(h, k)
                or (_KO_INF.match(h, k) if c.infinitive else None)
                or (_KO_PAST.match(h, k) if c.past else None)
            )
            if verb is not None:
                return _ko_end(c, verb.end(), forward=forward)
        if (verb := _KO_INF.match(h, j)) and (need := _KO_SPACE_NEED_NOT.match(h, verb.end())):
            return _ko_end(c, need.end(), forward=forward)
        if (need := _KO_NEED_NOT.match(h, j)) and (verb := _KO_INF.match(h, need.end())):
            return _ko_end(c, verb.end(), forward=forward)
    return NO_TRIGGER


def _keep_out(c: _Ctx) -> Outcome:
    h = c.head
    if not h.startswith(("не ", "без "), c.pos) and " не " not in h and " без " not in h:
        return NO_TRIGGER  # every request not to remember negates: the rest of chat skips these
    if c.standing:
        return NO_TRIGGER  # "с этого момента не запоминай ...": the switch's, if anything
    if m := _KO_PRIVATE.match(c.head, c.pos):
        after = _ko_request(
            _Ctx(c.text, c.head, m.end(), polite=True, infinitive=c.infinitive, past=c.past),
            m.end(),
        )
        return after if isinstance(after, MemoryRequest) else None
    return _ko_request(c, c.pos)


def recognize_at(
    text: str, head: str, pos: int, *, polite: bool, modal: bool
) -> MemoryRequest | None:
    """The request a Cyrillic message makes from `pos` of its normalised head, or None."""
    c = _Ctx(text, _lower(unmix(head)), pos, polite=polite, modal=modal)
    _skip_prefixes(c)
    if c.pos >= len(c.head):
        return None
    if not c.soft and is_question(text):
        return None  # "запомни, что я люблю чай?" asks
    for rule in (_keep_out, _remember, _forget, _whole):
        outcome = rule(c)
        if not isinstance(outcome, Miss):
            return outcome
    return None
