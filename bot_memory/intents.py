"""Recognise direct requests to the bot's memory in the current human message.

``recognize()`` runs on every incoming message, so it is built to be cheap and
conservative:

* A false "remember" stores what the user never asked to keep; a false
  "forget"/"disable" destroys or hides memory.  Every rule therefore
  *whitelists* the shapes it accepts, and anything else -- questions, reported
  speech, idioms, negations, other things being switched -- returns ``None``.
* Requests start at the beginning of the message, after optional prefixes (an
  ``@mention``, a greeting, a time adverbial, a polite form: "hey bot, from now
  on please ..."), so triggers are only looked for in a bounded head of the
  text.  All patterns are anchored and free of nested ambiguous quantifiers,
  and the few end-anchored checks run on a bounded tail or on a bounded whole
  message, so the cost is linear in the message length.
* Matching happens on a normalised copy of the head (full-width punctuation,
  curly quotes, odd spaces and the traditional characters we care about are
  mapped one-to-one), so indices found there are valid in the original text and
  ``subject`` is sliced from the original, unnormalised message.

Pure Python, stdlib only.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Action", "Language", "MemoryRequest", "recognize"]

Action = Literal["remember", "forget", "enable", "disable"]
Language = Literal["en", "zh"]


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
_HEAD = 256
# Whole-message rules (switches, "delete ... memory") only apply to short texts.
_WHOLE_MAX = 300

# Traditional -> simplified, only for characters used in the Chinese patterns.
_TRAD_TO_SIMP = (
    "記记憶忆關关閉闭開开啟启啓启刪删別别請请幫帮這这個个還还說说過过於于復复"
    "謝谢嗎吗們们從从裡里裏里錄录條条點点來来給给讓让煩烦勞劳駕驾對对剛刚後后"
    "暫暂萬万會会為为麼么訴诉"
)


_ODD_SPACES = (
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u200b\u200c\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff"
)


def _build_table() -> dict[int, str]:
    table: dict[int, str] = {cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F)}  # full-width
    for ch in _ODD_SPACES:
        table[ord(ch)] = " "
    for ch in "\u2018\u2019\u201a\u201b\u2032\u00b4`":
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


def _norm(s: str) -> str:
    return s.translate(_TABLE)


# Cheap pre-filter on the raw head: no keyword, no request.  Almost every
# ordinary chat message leaves here.  Plain substring tests are several times
# faster than one case-insensitive alternation regex.
_KEYWORDS = ("rememb", "forget", "memor", "note", "mind", "delet", "eras", "remov", "wipe")
_KEYWORDS_RAW = ("/", "记", "記", "忘")


def _has_keyword(raw_head: str) -> bool:
    for keyword in _KEYWORDS_RAW:
        if keyword in raw_head:
            return True
    low = raw_head.lower()
    for keyword in _KEYWORDS:
        if keyword in low:
            return True
    return False


_I = re.I
# End of an English word.  Apostrophes and hyphens belong to the word, so
# "forget-me-nots" and "the remember-me checkbox" are no triggers.
_WB = r"(?![\w'\-])"


# ---------------------------------------------------------------------------
# Prefixes: @mention, fillers, polite forms, modal questions
# ---------------------------------------------------------------------------

_COMMAND = re.compile(
    r"/(remember|forget|memory_on|memory_off|memory)(?:@[A-Za-z0-9_]+)?(?![\w@/])[\s:]*", _I
)
# "/memory on" / "/memory off": the switch word, then at most a short tail.
_COMMAND_SWITCH = re.compile(rf"(on|off){_WB}", _I)

_ZH_MODAL = r"(?:你|您)?(?:能不能|可不可以|能否|可否|可以|能)"


@dataclass(frozen=True, slots=True)
class _Prefix:
    pattern: str
    polite: bool = False  # a polite form: a trailing '?'/吗 is no question
    modal: bool = False  # "can you ...": a bare capability question is no request
    you: bool = False  # a bare "你": may open a statement about the bot


# Tried repeatedly, in order of the alternation, as one compiled regex (group
# ``p<i>`` is entry i).  Greetings, addressing the bot and time adverbials only
# let the request that follows them through: they never make a request of
# anything else.
_PREFIX_TABLE: tuple[_Prefix, ...] = (
    _Prefix(r"@[A-Za-z0-9_]{3,64}(?![A-Za-z0-9_])[\s,:]*"),
    # "hey bot, ...", "good morning! ..."; "hey Anna, ..." stops at the name.
    _Prefix(
        r"(?:hey|hi|hiya|hello|yo|dear|good\s+(?:morning|afternoon|evening))"
        rf"(?:\s+(?:bot|robot|assistant))?{_WB}[\s,!]*"
    ),
    _Prefix(r"(?:bot|robot|assistant)\s*[,:!][\s,]*"),
    _Prefix(rf"(?:ok|okay|so|also|and|oh|btw|by\s+the\s+way){_WB}[\s,]*"),
    _Prefix(
        r"(?:from\s+(?:now|today)\s+on|going\s+forward|in\s+(?:the\s+)?future"
        rf"|for\s+future\s+reference){_WB}[\s,]*"
    ),
    _Prefix(rf"(?:please|pls|plz|kindly){_WB}[\s,]*", polite=True),
    _Prefix(
        rf"(?:could|can|would|will)\s+you\s+(?:please|kindly){_WB}[\s,]*", polite=True, modal=True
    ),
    _Prefix(r"(?:could|can|would|will)\s+you\s+", modal=True),
    _Prefix(r"i(?:\s+(?:want|need|would\s+like)|'d\s+like)\s+you\s+to\s+", polite=True),
    _Prefix(r"(?:对了|另外|还有|好的|嗯)[\s,]+"),
    _Prefix(
        r"(?:你好|您好|嗨|哈喽|哈啰|嘿|喂|早上好|早安|下午好|晚上好)(?:[\s,]*(?:机器人|小助手|助手))?"
        r"[\s,!~]*"
    ),
    _Prefix(r"(?:机器人|小助手|助手)[\s,:!]+"),
    _Prefix(r"(?:以后|今后|往后|从今以后|从今往后|从(?:现在|今天)(?:起|开始))[\s,]*"),
    _Prefix(r"我(?:要|想|希望|需要)(?:让|请)?(?:你|您)", polite=True),
    _Prefix(r"(?:请|麻烦|劳驾|拜托)(?:你|您)?", polite=True),
    # "你能帮我…吗" is a request, "你能记住…吗" may be a capability question:
    # only the helper/please words make it polite.
    _Prefix(_ZH_MODAL + r"(?:请|麻烦)(?:你|您)?", polite=True, modal=True),
    _Prefix(_ZH_MODAL + r"(?:帮我|替我|帮忙)", polite=True, modal=True),
    _Prefix(_ZH_MODAL, modal=True),
    _Prefix(r"(?:帮我|替我|帮忙|给我)", polite=True),
    # A bare "你…" also opens statements about the bot ("你记得我说过…",
    # "你把我的生日忘了"); the rules that care look at ``you``.
    _Prefix(r"(?:你|您)(?:要)?(?=[记忘别不把删清抹移去关停禁暂开打启恢重从])", you=True),
)
_PREFIX = re.compile("|".join(f"(?P<p{i}>{e.pattern})" for i, e in enumerate(_PREFIX_TABLE)), _I)
_PREFIX_BY_GROUP = {f"p{i}": entry for i, entry in enumerate(_PREFIX_TABLE)}


# ---------------------------------------------------------------------------
# Questions and subject clean-up (bounded tail only)
# ---------------------------------------------------------------------------

# Softening tags that turn "..., ok?" into a request rather than a question.
_TAG_REQUEST = re.compile(
    r"(?:[,.]\s*(?:ok|okay|alright|please|will\s+you|won't\s+you|would\s+you)"
    r"|好吗|好不好|行吗|行不行|可以吗|好嘛)[\s?!.~]*\Z",
    _I,
)
_ZH_QUESTION_END = re.compile(r"(?:吗|呢)[\s.!~]*\Z")

_TRAILING = " \t\r\n\u00a0\u3000.,;:!?。，；：！？…~～、"
_LEADING = " \t\r\n\u00a0\u3000:：,，、—–"
_TAIL_JUNK = re.compile(
    r"(?:[,.!;]\s*(?:please|pls|plz|thanks|thank\s+you|thx|ok|okay|alright|will\s+you"
    r"|won't\s+you|would\s+you)|\s+please|,?\s*(?:谢谢|谢了|多谢|好吗|好不好|行吗|行不行"
    r"|可以吗|拜托了|拜托|好嘛))[\s.!?~]*\Z",
    _I,
)
# After a polite/modal prefix ("你可以帮我记住…吗") the final 吗 is not content.
_TAIL_ZH_Q = re.compile(r"(?:吗|嘛|呢)[\s.!?~]*\Z")


def _is_question(text: str) -> bool:
    tail = _norm(text.rstrip()[-40:])
    if not tail or _TAG_REQUEST.search(tail):
        return False
    return tail.endswith("?") or _ZH_QUESTION_END.search(tail) is not None


def _clean(s: str, *, drop_zh_q: bool = False) -> str:
    """Strip surrounding punctuation and trailing please/thanks/tag-questions."""
    s = s.strip()
    for _ in range(4):
        s = s.rstrip(_TRAILING)
        tail = _norm(s[-32:])
        m = _TAIL_JUNK.search(tail)
        if m is None and drop_zh_q:
            m = _TAIL_ZH_Q.search(tail)
        if m is None:
            break
        s = s[: len(s) - len(tail) + m.start()]
    return s.rstrip(_TRAILING).lstrip(_LEADING)


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Subjects that carry nothing worth storing or searching for.
_JUNK_SUBJECTS = frozenset(
    (
        "it|this|that|these|those|me|you|him|her|them|us|everything|all|all that|all of it"
        "|for me|too|also|as well|then|now|for later|forever|ok|okay|please|again|down"
        "|它|他|她|它们|他们|她们|这|那|这个|那个|这些|那些|这一点|这点|这事|那事|这件事|那件事"
        "|这条|那条|这段|那段|以下|下面|我|你|一切|所有|全部|过去|过去的事|吧|了"
    ).split("|")
)


_JUNK_MAX = max(map(len, _JUNK_SUBJECTS))


def _subject_ok(subject: str) -> bool:
    if len(subject) > _JUNK_MAX:
        return True
    return bool(subject) and _norm(subject).lower() not in _JUNK_SUBJECTS


# ---------------------------------------------------------------------------
# English content rules: what may follow a trigger
# ---------------------------------------------------------------------------

_CLAUSE_LEAD = r"(?:i'm|i've|i'd|i'll|im|i|my|mine|we're|we've|we|our)" + _WB
_CLAUSE_LEAD_RE = re.compile(_CLAUSE_LEAD, _I)
# A noun-phrase object of "forget" must point at the speaker: "our"/"we" there
# is mostly the cancel idiom ("forget our plans for tonight, it's raining").
# A "that"-clause ("forget that we ship v2 on Friday") is fine with "we".
_SELF_LEAD = r"(?:i'm|i've|i'd|i'll|im|i|my|mine)" + _WB
_FIRST_PERSON = re.compile(r"(?<![\w'])(?:" + _SELF_LEAD + r"|me" + _WB + ")", _I)

_EN_SEP = re.compile(r"\s*:\s*|\s+-+\s*")
_EN_THIS_SEP = re.compile(
    r"\s+(?:this|these(?:\s+things?)?|the\s+following(?:\s+things?)?)\s*[:\-,]\s*", _I
)
_EN_THAT = re.compile(rf"\s+that{_WB}[\s,:]*", _I)
_EN_OF = re.compile(r"\s+of\s+", _I)
_EN_CLAUSE = re.compile(rf"(?:\s*,\s*|\s+)(?={_CLAUSE_LEAD})", _I)
# "that" used as a determiner ("remember that time we ...") is reminiscing.
_EN_DET_NOUN = re.compile(
    r"(?:time|times|day|days|night|morning|evening|afternoon|weekend|week|month|year|summer"
    r"|winter|moment|trip|party|guy|girl|man|woman|boy|kid|dude|person|one|place|song|movie"
    r"|film|show|game|joke|episode|video|meme|photo|picture|story|thing|idiot|loser)" + _WB,
    _I,
)
_EN_WORD = re.compile(r"\S+\s+")
_EN_PEOPLE = re.compile(r"(?:guy|girl|man|woman|boy|kid|dude|person|idiot|loser|jerk)" + _WB, _I)
# "forget that I said that" / "forget I asked": the never-mind idiom.
_EN_IDIOM_SUBJECT = re.compile(
    r"(?:i|we)\s+(?:said|asked|mentioned|brought\s+(?:it|that|this)\s+up)"
    r"(?:\s+(?:that|it|this|anything|something|so))?\s*[.!?]*\Z",
    _I,
)
# Bare object pronouns: "forget it", "forget him", "forget I said anything".
_EN_FORGET_PRONOUN = re.compile(r"\s+(?:it|him|her|them|you|me|us|i)" + _WB, _I)
_EN_ABOUT = re.compile(r"\s+about(?=\s)", _I)
_EN_POSSESSIVE = re.compile(r"\s+(?=(?:my|mine)" + _WB + ")", _I)
_EN_QUANTIFIER = re.compile(r"\s+(?=(?:what|whatever|everything|anything|all)\s+\S)", _I)
_EN_DEMONSTRATIVE = re.compile(r"\s+(?=(?:the|that|this|these|those)\s+\S)", _I)
_EN_YOU_KNOW = re.compile(
    r"(?<![\w'])(?:about|you\s+(?:know|remember|learned|have|stored|saved))" + _WB, _I
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
    (re.compile(rf"(?:remember|memori[sz]e){_WB}", _I), _R),
    # Double negative.  "don't forget to X" is a to-do reminder, not a fact.
    (re.compile(rf"(?:do\s+not|don't|dont|do\s+n't)\s+forget{_WB}", _I), _EnContent()),
    (re.compile(rf"(?:keep|bear)\s+(?:(?:this|it)\s+)?in\s+mind{_WB}", _I), _R),
    (re.compile(rf"(?:make|take)\s+(?:a\s+)?note{_WB}", _I), _EnContent(of=True)),
    # "note that X" only as the opening imperative; "Note: X" is too common.
    (re.compile(rf"note(?=\s+that{_WB})", _I), _EnContent(sep=False)),
    (re.compile(rf"note\s+down{_WB}", _I), _R),
    (
        re.compile(
            r"(?:save|store|add|put|keep)\s+(?:(?:this|that|it)\s+)?(?:to|in|into)\s+"
            rf"(?:your\s+|the\s+)?(?:long[- ]term\s+)?memory{_WB}",
            _I,
        ),
        _EnContent(),
    ),
)

_EN_FORGET = re.compile(rf"forget{_WB}", _I)
# "stop remembering my address" forgets one thing; "stop remembering (things)"
# alone is the memory switch (``_EN_DISABLE``).
_EN_STOP_REMEMBERING = re.compile(rf"stop\s+remembering{_WB}", _I)
_EN_REMEMBER_AGAIN = re.compile(rf"remember{_WB}", _I)
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
    r"(?:know|remember|have|stored|saved|learned)" + _WB + ")",
    _I,
)

_ZH_REMEMBER = re.compile(r"(?:帮我|替我|给我)?(?:记下来|记录一下|记录下来|记一下|记下|记住|记好)")
# "记得…" is a request only with a fact about the user ("记得我不吃辣"), never a
# to-do for the listener ("记得带伞"), "记得住" (can remember) or a question.
_ZH_KEEP = re.compile(r"记得(?![住清起牢])")
# Reminiscing: "记得我们那次去三亚", "记得我小时候…".
_ZH_REMINISCE = re.compile(r"那次|那天|那晚|那年|那时|那会|当年|当时|小时候|的时候|第一次")
# Admonitions with nothing to keep: "记得我说过的话".
_ZH_KEEP_EMPTY = re.compile(r"我们?(?:刚才|之前|以前)?(?:跟你|和你|对你)?(?:说|讲|告诉你)过?的话?")
_ZH_TRAILING_PARTICLES = "哦噢啊喔呀哈嘛啦喽咯哟"
_ZH_DONT_FORGET = re.compile(r"(?:千万|可)?(?:别|不要)(?:忘了|忘记|忘掉)")
_ZH_FORGET = re.compile(r"忘记|忘掉|忘了")
_ZH_SEP = re.compile(r"[\s:,\-]+")
_ZH_THIS_SEP = re.compile(r"(?:这个|这些|这一点|这点|这件事|以下|下面)[\s:,\-]+")
# "记住了" (got it), "记住吗", "记住要/不要…" (to-do), "记住你…" (threat).
_ZH_REMEMBER_BAD_LEAD = re.compile(r"[了吗没不要呢你]")
_ZH_INTERJECTION = re.compile(r"[哦啊喔呀哈嘛啦喽咯][\s,:\-]*")
_ZH_SELF_LEAD = re.compile(r"我|咱|关于|有关")
# Objects of 忘记 that point at something the user told the bot.
_ZH_FORGET_LEAD = re.compile(
    r"我|关于|有关|之前|刚才|刚刚|上次|以前|那条|这条|你记得的|你知道的|所有关于"
)
# What the user said: the only object that makes a bare "忘了…" a request
# ("忘了我说过的那件事"), unlike "忘了我的钥匙" ((I) forgot my keys).
_ZH_SAID = re.compile(
    r"我(?:们)?(?:刚才|刚刚|之前|以前|上次|昨天|那天)?(?:跟你|和你|对你)?"
    r"(?:说过|说|讲过|讲|提过|提到过?|告诉过?你|发过?)的"
)
# "把X忘了" without 吧 is mostly "(I) left X behind" ("把我的钥匙忘了"): only
# information, not objects, makes it a request ("把我的生日忘了").
_ZH_INFO_END = re.compile(
    r"(?:生日|地址|住址|电话|号码|手机号|名字|邮箱|年龄|工作|工资|收入|密码|信息|资料|情况"
    r"|事|事情|话|消息|内容|说的|讲的|说过的|讲过的|提过的|告诉你的|习惯|喜好|爱好|偏好"
    r"|病史|过敏)\Z"
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
_EN_SWITCH_TAIL = re.compile(_SUFFIX_EN + r"(?:\s+(?:please|pls|plz))?\s*", _I)
_PLACE_ZH = r"(?:这个|本|该|此|当前)(?:话题|群聊|群|聊天|对话|会话)"
_MEM_ZH = (
    rf"(?:你的|{_PLACE_ZH}(?:里|中|内)?的|这里的|群里的|聊天)?(?:的)?(?:长期)?记忆(?:功能|模式)?"
)
# "在这个话题里关闭记忆", "本群关闭记忆": the place may also come first.
_WHERE_ZH = rf"(?:在?{_PLACE_ZH}(?:里|中|内)?[\s,]*)?"

_EN_DISABLE = re.compile(
    rf"(?:(?:turn|switch|shut)\s+off\s+{_MEM_EN}|(?:turn|switch|shut)\s+{_MEM_EN}\s+off"
    rf"|(?:disable|deactivate|pause|suspend)\s+{_MEM_EN}|memory\s+off"
    r"|stop\s+remembering(?:\s+(?:things|stuff|everything|anything))?(?:\s+about\s+me)?"
    r"|stop\s+remembering\s+(?:what|whatever|everything|anything)\s+(?:i|we)\s+"
    r"(?:say|write|type|tell\s+you))" + _SUFFIX_EN,
    _I,
)
_EN_ENABLE = re.compile(
    rf"(?:(?:turn|switch)\s+(?:back\s+)?on\s+{_MEM_EN}"
    rf"|(?:turn|switch)\s+{_MEM_EN}\s+(?:back\s+)?on"
    rf"|(?:enable|re-?enable|activate|re-?activate|resume|unpause)\s+{_MEM_EN}|memory\s+on"
    r"|start\s+remembering(?:\s+(?:things|stuff|everything))?)" + _SUFFIX_EN,
    _I,
)
_ZH_DISABLE = re.compile(
    rf"{_WHERE_ZH}(?:(?:关闭|关掉|关上|停用|禁用|暂停|停止)(?:一下)?{_MEM_ZH}"
    rf"|把{_MEM_ZH}(?:给)?(?:关闭|关掉|关上|关了|停用|禁用|暂停)(?:一下)?)(?:吧|啦)?"
)
_ZH_ENABLE = re.compile(
    rf"{_WHERE_ZH}(?:(?:开启|打开|启用|恢复|重新开启|重新打开|重新启用|再次开启|再次打开)(?:一下)?{_MEM_ZH}"
    rf"|把{_MEM_ZH}(?:给)?(?:打开|开启|启用|恢复|重新打开|重新开启)(?:一下)?)(?:吧|啦)?"
)

_EN_ERASE_FROM_MEMORY = re.compile(
    r"(?:delete|remove|erase|wipe|drop|clear)\s+(?P<x>.+?)\s+from\s+(?:your\s+|the\s+|my\s+)?"
    r"(?:long[- ]term\s+)?(?:memory|memories)(?:\s+(?:for\s+good|forever|permanently))?",
    _I,
)
_ZH_DELETE_VERB = r"(?:删除|删掉|删了|清除|清掉|抹去|抹掉|移除|去掉)"
_ZH_DELETE_MEMORY_OF = re.compile(
    _ZH_DELETE_VERB + r"(?:一下)?(?P<x>.+?)的?(?:相关的?)?(?:所有|全部|一切)?的?记忆(?:吧)?"
)
_ZH_DELETE_FROM_MEMORY = re.compile(
    r"(?:从(?:你的)?记忆(?:中|里|里面|当中)?" + _ZH_DELETE_VERB + r"(?:掉)?(?P<x>.+)"
    r"|把(?P<y>.+?)从(?:你的)?记忆(?:中|里|里面|当中)?" + _ZH_DELETE_VERB + r"(?:吧)?)"
)
_ZH_BA_FORGET = re.compile(r"把(?P<x>.+?)(?P<verb>忘掉|忘记|忘了)(?P<ba>吧)?")


# ---------------------------------------------------------------------------
# Recogniser
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Ctx:
    text: str
    head: str
    pos: int
    polite: bool
    modal: bool
    you: bool = False  # opened with a bare "你": may be a statement about the bot

    @property
    def soft(self) -> bool:
        """Polite or modal request form: a trailing '?'/吗 is no question."""
        return self.polite or self.modal

    def subject_from(self, start: int) -> str:
        return _clean(self.text[start:], drop_zh_q=self.soft)


def _request(action: Action, language: Language, subject: str) -> MemoryRequest | None:
    if action in ("remember", "forget") and not _subject_ok(subject):
        return None
    return MemoryRequest(action, language, subject)


def _command(text: str, head: str, m: re.Match[str]) -> MemoryRequest | None:
    name = m.group(1).lower()
    if name == "memory":  # "/memory on", "/memory off"; "/memory status" is no switch
        switch = _COMMAND_SWITCH.match(head, m.end())
        if switch is None:
            return None
        rest = text[switch.end() :]
        if len(rest) > _WHOLE_MAX:
            return None
        rest = _clean(rest)
        if rest and not _EN_SWITCH_TAIL.fullmatch(" " + _norm(rest)):
            return None  # "/memory on or off?"
        name = "memory_" + switch.group(1).lower()
    if name == "memory_on":
        return MemoryRequest("enable", "en", "")
    if name == "memory_off":
        return MemoryRequest("disable", "en", "")
    subject = _clean(text[m.end() :])
    if not subject:  # "/forget" alone: nothing to act on
        return None
    # The command itself has no language; reply in the language of its argument.
    language: Language = "zh" if _CJK.search(subject[:200]) else "en"
    return MemoryRequest("remember" if name == "remember" else "forget", language, subject)


class _Miss(enum.Enum):
    """A rule found no trigger of its own: let the next rule try."""

    NO_TRIGGER = enum.auto()


_NO_TRIGGER = _Miss.NO_TRIGGER
_Outcome = MemoryRequest | None | _Miss


def _english_prefix_rules(c: _Ctx) -> _Outcome:
    head, pos = c.head, c.pos
    modal_only = c.modal and not c.polite
    for pattern, content in _EN_REMEMBER_TRIGGERS:
        if m := pattern.match(head, pos):
            start = _en_content(head, m.end(), content, modal_only=modal_only)
            if start is None:
                return None
            subject = c.subject_from(start)
            if _EN_REMEMBER_AGAIN.match(subject):  # "remember: remember ..."
                return None
            return _request("remember", "en", subject)
    if m := _EN_FORGET.match(head, pos):
        start = _en_forget_object(head, m.end())
        if start is None:
            return None
        subject = c.subject_from(start)
        if _EN_IDIOM_SUBJECT.match(_norm(subject)):
            return None
        return _request("forget", "en", subject)
    if m := _EN_DELETE_MEMORY_ABOUT.match(head, pos) or _EN_DELETE_WHAT_YOU_KNOW.match(head, pos):
        return _request("forget", "en", c.subject_from(m.end()))
    if m := _EN_STOP_REMEMBERING.match(head, pos):
        whole = _whole_rest(c)
        if whole is not None and _EN_DISABLE.fullmatch(whole[1]):
            return _NO_TRIGGER  # "stop remembering things about me": the switch
        start = _en_forget_object(head, m.end())
        if start is None:
            return _NO_TRIGGER  # "stop remembering me / the past": no object to forget
        subject = c.subject_from(start)
        if _EN_IDIOM_SUBJECT.match(_norm(subject)):
            return None
        return _request("forget", "en", subject)
    return _NO_TRIGGER


def _zh_fact(subject: str) -> MemoryRequest | None:
    """A Chinese remember request, unless the subject is junk plus a particle."""
    if len(subject) <= _JUNK_MAX + 4 and not _subject_ok(
        _clean(subject.rstrip(_ZH_TRAILING_PARTICLES))
    ):
        return None  # "记住我哦": nothing to keep
    return _request("remember", "zh", subject)


def _chinese_prefix_rules(c: _Ctx) -> _Outcome:
    head, pos = c.head, c.pos
    if (
        c.modal
        and not c.polite
        and (
            _ZH_REMEMBER.match(head, pos)
            or _ZH_FORGET.match(head, pos)
            or _ZH_KEEP.match(head, pos)
        )
    ):
        return None  # "你能记住我的名字吗": capability question, not a request
    if m := _ZH_KEEP.match(head, pos):  # 记得
        if c.you and not c.polite:
            return None  # "你记得我说过…": about the bot, not to it
        i = m.end()
        if sep := _ZH_SEP.match(head, i):
            i = sep.end()
        if intj := _ZH_INTERJECTION.match(head, i):  # "记得哦，我…"
            i = intj.end()
        if not _ZH_SELF_LEAD.match(head, i):
            return None  # "记得带伞", "记得吗", "记得给我打电话"
        subject = c.subject_from(i)
        tail = _norm(subject[-8:].rstrip(_ZH_TRAILING_PARTICLES).rstrip(_TRAILING))
        if (
            # "记得我不吃辣吧": checking, not asking ("我常去的酒吧" is a bar)
            (tail.endswith("吧") and not tail.endswith(("酒吧", "网吧", "網吧")))
            or _ZH_REMINISCE.search(_norm(subject[:40]))
            or (len(subject) <= 24 and _ZH_KEEP_EMPTY.fullmatch(_norm(subject)))
        ):
            return None
        return _zh_fact(subject)
    if m := _ZH_DONT_FORGET.match(head, pos):  # 别忘了 = remember
        i = m.end()
        if sep := _ZH_SEP.match(head, i) or _ZH_THIS_SEP.match(head, i):
            return _request("remember", "zh", c.subject_from(sep.end()))
        # Without a separator only facts about the user ("别忘了我对花生过敏"),
        # not to-dos ("别忘了带钥匙").
        if _ZH_SELF_LEAD.match(head, i):
            return _zh_fact(c.subject_from(i))
        return None
    if m := _ZH_REMEMBER.match(head, pos):
        i = m.end()
        if sep := _ZH_SEP.match(head, i):
            i = sep.end()
        if intj := _ZH_INTERJECTION.match(head, i):
            i = intj.end()
        if sep := _ZH_THIS_SEP.match(head, i):
            i = sep.end()
        # "记住了" / "记住要…" / "记住记住…" are no facts to keep.
        if _ZH_REMEMBER_BAD_LEAD.match(head, i) or _ZH_REMEMBER.match(head, i):
            return None
        return _zh_fact(c.subject_from(i))
    if m := _ZH_FORGET.match(head, pos):
        # Bare "忘了…" is usually "(I) forgot …" with the subject dropped; only
        # "忘了我说过的…" (what the user said) is a request.
        if m.group() == "忘了" and not c.polite and (c.you or not _ZH_SAID.match(head, m.end())):
            return None
        i = m.end()
        if sep := _ZH_SEP.match(head, i):
            i = sep.end()
        if not _ZH_FORGET_LEAD.match(head, i):
            return None  # "忘掉烦恼", "忘记密码了", "忘了吧"
        subject = c.subject_from(i)
        if subject.endswith("吧") and not subject.endswith(("酒吧", "网吧", "網吧")):
            subject = _clean(subject[:-1])
        if subject.endswith("了"):
            return None  # "忘记我的生日了": a statement
        if _norm(subject[:2]) in ("关于", "有关"):
            subject = subject[2:].lstrip(_LEADING)
        return _request("forget", "zh", subject)
    return _NO_TRIGGER


def _strip_zh_mem_owner(x: str) -> tuple[str, bool]:
    """Turn the X of "删除(你)(关于)X(的)记忆" into (X, had_about)."""
    n = _norm(x)
    for lead in ("你的", "你", "掉"):
        if n.startswith(lead):
            x, n = x[len(lead) :], n[len(lead) :]
            break
    about = n.startswith(("关于", "有关"))
    if about:
        x, n = x[2:], n[2:]
    while n.endswith(("的", "相关")):
        cut = 1 if n.endswith("的") else 2
        x, n = x[:-cut], n[:-cut]
    return x.strip(_TRAILING + _LEADING), about


def _whole_rest(c: _Ctx) -> tuple[str, str] | None:
    """The cleaned remainder and its normalised form, if short enough."""
    if len(c.text) - c.pos > 2 * _WHOLE_MAX:  # such requests are short
        return None
    rest = _clean(c.text[c.pos :], drop_zh_q=c.soft)
    if not rest or len(rest) > _WHOLE_MAX:
        return None
    return rest, _norm(rest)


def _english_whole_rules(c: _Ctx) -> _Outcome:
    if (whole := _whole_rest(c)) is None:
        return _NO_TRIGGER
    rest, n = whole
    if _EN_DISABLE.fullmatch(n):
        return MemoryRequest("disable", "en", "")
    if _EN_ENABLE.fullmatch(n):
        return MemoryRequest("enable", "en", "")
    if m := _EN_ERASE_FROM_MEMORY.fullmatch(n):
        subject = rest[m.start("x") : m.end("x")]
        if _EN_FORGET_PRONOUN.match(" " + _norm(subject)):
            return None  # "erase me from your memory"
        return _request("forget", "en", subject)
    return _NO_TRIGGER


def _chinese_whole_rules(c: _Ctx) -> _Outcome:
    if (whole := _whole_rest(c)) is None:
        return _NO_TRIGGER
    rest, n = whole
    if _ZH_DISABLE.fullmatch(n):
        return MemoryRequest("disable", "zh", "")
    if _ZH_ENABLE.fullmatch(n):
        return MemoryRequest("enable", "zh", "")
    if m := _ZH_DELETE_FROM_MEMORY.fullmatch(n):
        group = "x" if m.group("x") is not None else "y"
        subject, _ = _strip_zh_mem_owner(rest[m.start(group) : m.end(group)])
        return _request("forget", "zh", subject)
    if m := _ZH_DELETE_MEMORY_OF.fullmatch(n):
        subject, about = _strip_zh_mem_owner(rest[m.start("x") : m.end("x")])
        if not about and _norm(subject) in ("我", "我们", "咱们"):
            return None  # "删除我的记忆": bulk wipe with no object
        return _request("forget", "zh", subject)
    if m := _ZH_BA_FORGET.fullmatch(n):
        # "把钥匙忘了" is "(I) forgot the keys"; 吧 or a polite prefix makes it
        # an imperative, and the object must be something the user said.
        if m.group("verb") == "忘了" and not (m.group("ba") or c.polite):
            if c.you or not _ZH_INFO_END.search(n, m.start("x"), m.end("x")):
                return None  # "把我的钥匙忘了", "你把我的生日忘了"
        if not _ZH_FORGET_LEAD.match(n, m.start("x")):
            return None
        subject = rest[m.start("x") : m.end("x")]
        if _norm(subject).startswith(("关于", "有关")):
            subject = subject[2:]
        return _request("forget", "zh", subject.strip())
    return _NO_TRIGGER


_EN_RULES: tuple[Callable[[_Ctx], _Outcome], ...] = (_english_prefix_rules, _english_whole_rules)
_ZH_RULES: tuple[Callable[[_Ctx], _Outcome], ...] = (_chinese_prefix_rules, _chinese_whole_rules)

# First word of every English / first character of every Chinese trigger above.
# A cheap gate so that "I can't remember ..." or a URL skips the rule chain;
# keep it in sync when adding a trigger (the test corpus will catch a miss).
_EN_TRIGGER_START = re.compile(
    r"(?:remember|memori[sz]e|do|dont|don't|keep|bear|make|take|note|save|store|add|put|forget"
    r"|delete|remove|erase|clear|wipe|drop|turn|switch|shut|disable|deactivate|pause|suspend"
    r"|memory|stop|enable|re-enable|reenable|activate|re-activate|reactivate|resume|unpause"
    r"|start)" + _WB,
    _I,
)
_ZH_TRIGGER_START = re.compile(
    r"[记帮替给别不千可忘把删清抹移去从关停禁暂开打启恢重再在这本该此当]"
)


def _skip_prefixes(head: str, pos: int) -> tuple[int, bool, bool, bool]:
    polite = modal = you = False
    for _ in range(6):  # bounded: at most a handful of prefixes
        m = _PREFIX.match(head, pos)
        if m is None or m.end() == pos or m.lastgroup is None:
            break
        pos = m.end()
        entry = _PREFIX_BY_GROUP[m.lastgroup]
        polite |= entry.polite
        modal |= entry.modal
        you |= entry.you
    return pos, polite, modal, you


def recognize(text: str, *, quoted: bool = False, forwarded: bool = False) -> MemoryRequest | None:
    """Return the memory request the current message makes, or None.

    ``quoted``/``forwarded`` messages are never the sender's own request.
    When in doubt the answer is None.
    """
    if quoted or forwarded or not text:
        return None
    raw_head = text[:_HEAD]
    if not _has_keyword(raw_head):
        return None
    head = _norm(raw_head)
    pos = len(head) - len(head.lstrip())

    if m := _COMMAND.match(head, pos):
        return _command(text, head, m)

    pos, polite, modal, you = _skip_prefixes(head, pos)
    if pos >= len(head):
        return None
    if m := _COMMAND.match(head, pos):  # "@my_bot /remember ..."
        return _command(text, head, m)
    english = head[pos].isascii()
    if not (_EN_TRIGGER_START if english else _ZH_TRIGGER_START).match(head, pos):
        return None
    # "remember that I like tea?" / "关闭记忆了吗" ask, they do not request;
    # "could you please remember that ...?" is a polite request.
    if not (polite or modal) and _is_question(text):
        return None

    ctx = _Ctx(text, head, pos, polite, modal, you)
    for rule in _EN_RULES if english else _ZH_RULES:
        outcome = rule(ctx)
        if not isinstance(outcome, _Miss):
            return outcome
    return None
