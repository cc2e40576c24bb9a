"""What every language's rules share: the request type, one-to-one normalisation, subject
clean-up, question detection and the context a rule reads."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Literal

# "keep_out": a request not to remember ("don't remember that", "off the record: ..."). Its
# subject is empty when it points at another message (the one replied to, or the speaker's
# previous one), and is what the message itself says when the request opens it.
Action = Literal["remember", "forget", "enable", "disable", "keep_out"]
Language = Literal["en", "zh", "ru", "uk"]


@dataclass(frozen=True, slots=True)
class MemoryRequest:
    action: Action
    language: Language
    subject: str


# ---------------------------------------------------------------------------
# Normalisation (strictly one character -> one character, so indices survive)
# ---------------------------------------------------------------------------

# Triggers sit in the first few dozen characters; this is a generous bound for
# "@a_long_bot_name, could you please ..." followed by the trigger itself.
HEAD = 256
# Whole-message rules (switches, "delete ... memory") only apply to short texts.
WHOLE_MAX = 300

# Traditional -> simplified, only for characters used in the Chinese patterns.
_TRAD_TO_SIMP = (
    "記记憶忆關关閉闭開开啟启啓启刪删別别請请幫帮這这個个還还說说過过於于復复"
    "謝谢嗎吗們们從从裡里裏里錄录條条點点來来給给讓让煩烦勞劳駕驾對对剛刚後后"
    "暫暂萬万會会為为麼么訴诉著着話话寫写進进隱隐儲储機机"
)


_ODD_SPACES = (
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u200b\u200c\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff"
)


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F)}  # full-width
    for ch in _ODD_SPACES:
        table[ord(ch)] = " "
    for ch in "\u2018\u2019\u201a\u201b\u2032\u00b4\u02bc`":
        table[ord(ch)] = "'"
    for ch in "\u201c\u201d\u201e\u201f\u2033\u300c\u300d\u300e\u300f\u00ab\u00bb":
        table[ord(ch)] = '"'
    for ch in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212":
        table[ord(ch)] = "-"
    table.update({ord("。"): ".", ord("、"): ",", ord("…"): ".", ord("～"): "~"})
    for trad, simp in zip(_TRAD_TO_SIMP[::2], _TRAD_TO_SIMP[1::2], strict=True):
        table[ord(trad)] = simp
    return table


_TABLE = _build_table()
# translate() looks every character up in a dict, which is slow on non-ASCII text; a text holds
# few distinct characters to map, so one scan finds them and str.replace maps each.
_MAPPED = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_TABLE)) + "]")
_MAP = {chr(cp): to for cp, to in _TABLE.items()}


def norm(s: str) -> str:
    for ch in set(_MAPPED.findall(s)):
        s = s.replace(ch, _MAP[ch])
    return s


_I = re.I
# A run of emoji (and their joiners and variation selectors) a message may open with.
EMOJI = r"[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D]+"
# End of an English word.  Apostrophes and hyphens belong to the word, so
# "forget-me-nots" and "the remember-me checkbox" are no triggers.
WB = r"(?![\w'\-])"


def by_first_letter(alternatives: list[str]) -> str:
    """One alternation of these patterns, each opening with a literal letter, grouped by that
    letter: a regex engine that tries alternatives one by one rejects a text after trying a
    branch per letter, not one per pattern (for the openings tried on every message)."""
    groups: dict[str, list[str]] = {}
    for alternative in alternatives:
        first = alternative[0].lower()
        if not first.isalpha():
            raise ValueError(f"an alternative must open with a letter: {alternative!r}")
        groups.setdefault(first, []).append(alternative[1:])
    return "(?:" + "|".join(f"{ch}(?:{'|'.join(rest)})" for ch, rest in groups.items()) + ")"


# ---------------------------------------------------------------------------
# Questions and subject clean-up (bounded tail only)
# ---------------------------------------------------------------------------

# Softening tags that turn "..., ok?" into a request rather than a question.
_TAG_REQUEST = re.compile(
    r"(?:[,.]\s*(?:ok|okay|alright|please|will\s+you|won't\s+you|would\s+you"
    r"|хорошо|ладно|ок|окей|договорились|ага|лады|пожалуйста|добре|гаразд|домовились"
    r"|будь[\s\-]+ласка)"
    r"|好吗|好不好|行吗|行不行|可以吗|好嘛)[\s?!.~]*\Z",
    _I,
)

TRAILING = " \t\r\n\u00a0\u3000.,;:!?。，；：！？…~～、"
LEADING = " \t\r\n\u00a0\u3000:：,，、—–"
_TAIL_JUNK = re.compile(
    r"(?:[,.!;]\s*(?:please|pls|plz|thanks|thank\s+you|thx|ok|okay|alright|will\s+you"
    r"|won't\s+you|would\s+you)|\s+please"
    r"|,?\s*(?:谢谢|谢了|多谢|好吗|好不好|行吗|行不行"
    r"|可以吗|拜托了|拜托|好嘛))[\s.!?~]*\Z",
    _I,
)
# The same in Russian and Ukrainian, tried (on the lower-cased tail) instead of the above when
# the tail ends in a Cyrillic word.
_TAIL_JUNK_CYRILLIC = re.compile(
    r"(?:[,.!;]\s*(?:пожалуйста|пж|плиз|плз|спасибо|спс|благодарю|ок|окей|хорошо|ладно|ага|лады"
    r"|договорились|будь[\s\-]+ласка|дякую|гаразд|добре|домовились|заранее\s+спасибо"
    r"|наперед\s+дякую)|\s+(?:пожалуйста|плиз|пж|будь[\s\-]+ласка))[\s.!?~]*\Z"
)
# After a polite/modal prefix ("你可以帮我记住…吗") the final 吗 is not content.
_TAIL_ZH_Q = re.compile(r"(?:吗|嘛|呢)[\s.!?~]*\Z")


def is_question(text: str) -> bool:
    tail = norm(text.rstrip()[-40:])
    if not tail.endswith("?") and not tail.rstrip(" .!~").endswith(("吗", "呢")):
        return False
    return _TAG_REQUEST.search(tail) is None


def clean(s: str, *, drop_zh_q: bool = False) -> str:
    """Strip surrounding punctuation and trailing please/thanks/tag-questions."""
    s = s.strip()
    for _ in range(4):
        s = s.rstrip(TRAILING)
        tail = norm(s[-32:])
        if "\u0400" <= tail[-1:] <= "\u04ff":  # ends in a Cyrillic word
            low = tail.lower()
            m = _TAIL_JUNK_CYRILLIC.search(low) if len(low) == len(tail) else None
        else:
            m = _TAIL_JUNK.search(tail)
        if m is None and drop_zh_q:
            m = _TAIL_ZH_Q.search(tail)
        if m is None:
            break
        s = s[: len(s) - len(tail) + m.start()]
    return s.rstrip(TRAILING).lstrip(LEADING)


CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Subjects that carry nothing worth storing or searching for.
_JUNK_SUBJECTS = frozenset(
    (
        "it|this|that|these|those|me|you|him|her|them|us|everything|all|all that|all of it"
        "|for me|too|also|as well|then|now|for later|forever|ok|okay|please|again|down"
        "|它|他|她|它们|他们|她们|这|那|这个|那个|这些|那些|这一点|这点|这事|那事|这件事|那件事"
        "|这条|那条|这段|那段|以下|下面|我|你|一切|所有|全部|过去|过去的事|吧|了"
        "|это|то|всё|все|это всё|всё это|это все|все это|эту|этот|этого|меня|тебя|его|её|ее|их"
        "|нас|вас|себе|себя|навсегда|пожалуйста|ок|окей|хорошо|ладно|что|вот|вот это|тоже"
        "|сейчас|мой|моё|мое|мои|це|те|усе|все це|це все|цю|цей|цього|мене|тебе|його|її|їх|собі"
        "|назавжди|будь ласка|добре|гаразд|що|ось|ось це|теж|зараз|мій|моє|мої"
    ).split("|")
)


JUNK_MAX = max(map(len, _JUNK_SUBJECTS))


def subject_ok(subject: str) -> bool:
    if len(subject) > JUNK_MAX:
        return True
    return bool(subject) and norm(subject).lower() not in _JUNK_SUBJECTS


@dataclass(slots=True)
class Ctx:
    text: str
    head: str
    pos: int
    polite: bool
    modal: bool
    you: bool = False  # opened with a bare "你": may be a statement about the bot
    # Opened with "from now on" / "以后": a standing instruction, never about one message.
    standing: bool = False

    @property
    def soft(self) -> bool:
        """Polite or modal request form: a trailing '?'/吗 is no question."""
        return self.polite or self.modal

    def subject_from(self, start: int) -> str:
        return clean(self.text[start:], drop_zh_q=self.soft)


def as_request(action: Action, language: Language, subject: str) -> MemoryRequest | None:
    if action in ("remember", "forget") and not subject_ok(subject):
        return None
    return MemoryRequest(action, language, subject)


class Miss(enum.Enum):
    """A rule found no trigger of its own: let the next rule try."""

    NO_TRIGGER = enum.auto()


NO_TRIGGER = Miss.NO_TRIGGER
Outcome = MemoryRequest | None | Miss


def whole_rest(c: Ctx) -> tuple[str, str] | None:
    """The cleaned remainder and its normalised form, if short enough."""
    if len(c.text) - c.pos > 2 * WHOLE_MAX:  # such requests are short
        return None
    rest = clean(c.text[c.pos :], drop_zh_q=c.soft)
    if not rest or len(rest) > WHOLE_MAX:
        return None
    return rest, norm(rest)
