"""The entry point: a cheap keyword gate, slash commands, the prefixes every language's
request may open with, and the dispatch to the language's rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot_memory.intents.chinese import (
    ZH_KEEP_OUT_START,
    ZH_RULES,
    ZH_TRIGGER_START,
    chinese_keep_out,
)
from bot_memory.intents.common import (
    CJK,
    EMOJI,
    HEAD,
    WB,
    WHOLE_MAX,
    Ctx,
    Language,
    MemoryRequest,
    Miss,
    clean,
    is_question,
    norm,
)
from bot_memory.intents.english import (
    EN_KEEP_OUT_START,
    EN_RULES,
    EN_START,
    EN_SWITCH_TAIL,
    EN_TRIGGER_START,
    english_keep_out,
)
from bot_memory.intents.slavic import language_of, recognize_at

_I = re.I
_WB = WB

# Cheap pre-filter on the raw head: no keyword, no request.  Almost every
# ordinary chat message leaves here.  Plain substring tests are several times
# faster than one case-insensitive alternation regex.
_KEYWORDS = (
    "rememb",
    "save",  # "don't save this"
    "store",
    "record",  # "off the record"
    "forget",
    "memor",
    "note",
    "mind",
    "delet",
    "eras",
    "remov",
    "wipe",
    "down",  # "write down", "jot this down"
    "stop",  # "stop saving what I say"
)
_KEYWORDS_RAW = ("/", "记", "記", "忘", "存")  # 存: "别存这个"
_RAW_GATE = re.compile(r"[/记記忘存\u0400-\u04ff]")
# Russian and Ukrainian stems, tolerant of the Latin look-alikes typed inside Cyrillic words
# (run on the lower-cased head, only when it holds Cyrillic). Every trigger in ``slavic`` holds
# one.
_KEYWORDS_CYRILLIC = re.compile(  # factored by first letter: tried at every position
    r"з(?:[аa](?:п(?:[оoаa]м|и[шсc])|н[оo]т|м(?:[еe]тк|ітк)|б[уyы][длвт])|б[еe]р(?:[еe][жг]|[іi]г)"
    r"|на[еє]ш)"
    r"|п(?:[оo]мни|[аa]м.?[яю]т|р[оo]т[оo]к[оo]л)|у(?:ч[тt]|в[аa][зг])|в(?:\s*виду|р[аa]х|ним[аa]н)"
    r"|р[аa][сc]ч[еeё]т|[сc](?:в[еe]д|[оo]хр[аa]н|п[оo](?:мин|г[аa]д))"
)


_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
# A word with a Cyrillic letter in it (Latin look-alikes may come first: "Oтключи").
_CYRILLIC_WORD = re.compile(r"[^\W\d_]*?[\u0400-\u04ff]")


def _has_keyword(raw_head: str) -> tuple[bool, bool]:
    """Whether the head holds a keyword, and whether it holds Cyrillic."""
    cyrillic = False
    if raw_head.isascii():
        if "/" in raw_head:
            return True, False
    elif m := _RAW_GATE.search(raw_head):  # one scan: a raw keyword, or Cyrillic
        if m.group() in _KEYWORDS_RAW:  # a command or Chinese first: no Cyrillic request
            return True, False
        cyrillic = True
        for keyword in _KEYWORDS_RAW:
            if keyword in raw_head:
                return True, True
    low = raw_head.lower()
    for keyword in _KEYWORDS:
        if keyword in low:
            return True, cyrillic
    # Only a head with Cyrillic in it pays for the look-alike-tolerant search.
    return cyrillic and _KEYWORDS_CYRILLIC.search(low) is not None, cyrillic


# ---------------------------------------------------------------------------
# Prefixes: @mention, fillers, polite forms, modal questions
# ---------------------------------------------------------------------------

_COMMAND = re.compile(
    r"/(remember|forget|memory_on|memory_off|memory)(?:@[A-Za-z0-9_]+)?(?![\w@/])[\s:]*", _I
)
# "/memory on" / "/memory off": the switch word, then at most a short tail.
_COMMAND_SWITCH = re.compile(rf"(on|off){WB}", _I)

_ZH_MODAL = r"(?:你|您)?(?:能不能|可不可以|能否|可否|可以|能)"


@dataclass(frozen=True, slots=True)
class _Prefix:
    pattern: str
    polite: bool = False  # a polite form: a trailing '?'/吗 is no question
    modal: bool = False  # "can you ...": a bare capability question is no request
    you: bool = False  # a bare "你": may open a statement about the bot
    standing: bool = False  # "from now on": an instruction for later, about no one message


# Tried repeatedly, in order of the alternation, as one compiled regex (group
# ``p<i>`` is entry i).  Greetings, addressing the bot and time adverbials only
# let the request that follows them through: they never make a request of
# anything else.
_PREFIX_TABLE: tuple[_Prefix, ...] = (
    _Prefix(r"@[A-Za-z0-9_]{3,64}(?![A-Za-z0-9_])[\s,:]*"),
    _Prefix(EMOJI + r"[\s,!:]*"),  # "🙏 remember that ...", "👋 запомни ..."
    # "hey bot, ...", "good morning! ..."; "hey Anna, ..." stops at the name.
    _Prefix(
        r"(?:hey|hi|hiya|hello|yo|dear|good\s+(?:morning|afternoon|evening))"
        rf"(?:\s+(?:bot|robot|assistant|there))?{WB}[\s,!\-]*"
    ),
    _Prefix(r"(?:bot|robot|assistant)\s*[,:!][\s,]*"),
    _Prefix(rf"(?:ok|okay|so|also|and|oh|btw|by\s+the\s+way|just|actually){WB}[\s,]*"),
    _Prefix(
        r"(?:from\s+(?:now|today)\s+on|going\s+forward|in\s+(?:the\s+)?future"
        rf"|for\s+future\s+reference){WB}[\s,]*",
        standing=True,
    ),
    _Prefix(rf"(?:please|pls|plz|kindly){WB}[\s,]*", polite=True),
    _Prefix(
        rf"(?:could|can|would|will)\s+you\s+(?:please|kindly){WB}[\s,]*", polite=True, modal=True
    ),
    _Prefix(r"(?:could|can|would|will)\s+you\s+", modal=True),
    _Prefix(r"i(?:\s+(?:want|need|would\s+like)|'d\s+like)\s+you\s+to\s+", polite=True),
    _Prefix(r"(?:对了|另外|还有|好的|嗯)[\s,]+"),
    _Prefix(
        r"(?:你好|您好|嗨|哈喽|哈啰|嘿|喂|早上好|早安|下午好|晚上好)(?:[\s,]*(?:机器人|小助手|助手))?"
        r"[\s,!~]*"
    ),
    _Prefix(r"(?:机器人|小助手|助手)[\s,:!]+"),
    _Prefix(
        r"(?:以后|今后|往后|从今以后|从今往后|从(?:现在|今天)(?:起|开始))[\s,]*", standing=True
    ),
    _Prefix(r"我(?:要|想|希望|需要)(?:让|请)?(?:你|您)", polite=True),
    _Prefix(r"(?:请|麻烦|劳驾|拜托)(?:你|您)?", polite=True),
    # "你能帮我…吗" is a request, "你能记住…吗" may be a capability question:
    # only the helper/please words make it polite.
    _Prefix(_ZH_MODAL + r"(?:请|麻烦)(?:你|您)?", polite=True, modal=True),
    _Prefix(_ZH_MODAL + r"(?:帮我|替我|帮忙)", polite=True, modal=True),
    _Prefix(_ZH_MODAL, modal=True),
    # "你必须记住…", "你应该记住…", "一定要记住…": an obligation is an instruction, not a question.
    _Prefix(
        r"(?:你|您)?(?:必须|必需|应该|应当|得|一定要|务必|最好)(?=记|牢记|别忘|不要忘)", polite=True
    ),
    _Prefix(r"(?:帮我|替我|帮忙|给我)", polite=True),
    # A bare "你…" also opens statements about the bot ("你记得我说过…",
    # "你把我的生日忘了"); the rules that care look at ``you``.
    _Prefix(r"(?:你|您)(?:要)?(?=[记忘别不把删清抹移去关停禁暂开打启恢重从])", you=True),
)
_PREFIX = re.compile("|".join(f"(?P<p{i}>{e.pattern})" for i, e in enumerate(_PREFIX_TABLE)), _I)
_PREFIX_BY_GROUP = {f"p{i}": entry for i, entry in enumerate(_PREFIX_TABLE)}


_ZH_START = re.compile(f"{ZH_KEEP_OUT_START.pattern}|{ZH_TRIGGER_START.pattern}")


def _command(text: str, head: str, m: re.Match[str]) -> MemoryRequest | None:
    name = m.group(1).lower()
    if name == "memory":  # "/memory on", "/memory off"; "/memory status" is no switch
        switch = _COMMAND_SWITCH.match(head, m.end())
        if switch is None:
            return None
        rest = text[switch.end() :]
        if len(rest) > WHOLE_MAX:
            return None
        rest = clean(rest)
        if rest and not EN_SWITCH_TAIL.fullmatch(" " + norm(rest)):
            return None  # "/memory on or off?"
        name = "memory_" + switch.group(1).lower()
    if name == "memory_on":
        return MemoryRequest("enable", "en", "")
    if name == "memory_off":
        return MemoryRequest("disable", "en", "")
    subject = clean(text[m.end() :])
    if not subject:  # "/forget" alone: nothing to act on
        return None
    # The command itself has no language; reply in the language of its argument.
    language: Language = (
        "zh"
        if CJK.search(subject[:200])
        else language_of(subject)
        if _CYRILLIC.search(subject[:200])
        else "en"
    )
    return MemoryRequest("remember" if name == "remember" else "forget", language, subject)


def _skip_prefixes(head: str, pos: int) -> tuple[int, bool, bool, bool, bool]:
    polite = modal = you = standing = False
    for _ in range(6):  # bounded: at most a handful of prefixes
        m = _PREFIX.match(head, pos)
        if m is None or m.end() == pos or m.lastgroup is None:
            break
        pos = m.end()
        entry = _PREFIX_BY_GROUP[m.lastgroup]
        polite |= entry.polite
        modal |= entry.modal
        you |= entry.you
        standing |= entry.standing
    return pos, polite, modal, you, standing


def recognize(text: str, *, quoted: bool = False, forwarded: bool = False) -> MemoryRequest | None:
    """Return the memory request the current message makes, or None.

    ``quoted``/``forwarded`` messages are never the sender's own request.
    When in doubt the answer is None.
    """
    if quoted or forwarded or not text:
        return None
    raw_head = text[:HEAD]
    keyword, cyrillic = _has_keyword(raw_head)
    if not keyword:
        return None
    head = norm(raw_head)
    pos = len(head) - len(head.lstrip())

    if m := _COMMAND.match(head, pos):
        return _command(text, head, m)

    pos, polite, modal, you, standing = _skip_prefixes(head, pos)
    if pos >= len(head):
        return None
    if m := _COMMAND.match(head, pos):  # "@my_bot /remember ..."
        return _command(text, head, m)
    if cyrillic and _CYRILLIC_WORD.match(head, pos):
        return recognize_at(text, head, pos, polite=polite, modal=modal)
    english = head[pos].isascii()
    # One look at the opening: a request not to remember ("this is private, ...", "这个别记")
    # has openings of its own, tried first; the other rules' triggers after.
    if not (EN_START if english else _ZH_START).match(head, pos):
        return None
    # "remember that I like tea?" / "关闭记忆了吗" ask, they do not request;
    # "could you please remember that ...?" is a polite request.
    if not (polite or modal) and is_question(text):
        return None

    ctx = Ctx(text, head, pos, polite, modal, you, standing)
    if (EN_KEEP_OUT_START if english else ZH_KEEP_OUT_START).match(head, pos):
        outcome = (english_keep_out if english else chinese_keep_out)(ctx)
        if not isinstance(outcome, Miss):
            return outcome
        if not (EN_TRIGGER_START if english else ZH_TRIGGER_START).match(head, pos):
            return None
    for rule in EN_RULES if english else ZH_RULES:
        outcome = rule(ctx)
        if not isinstance(outcome, Miss):
            return outcome
    return None
