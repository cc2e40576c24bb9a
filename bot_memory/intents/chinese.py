"""Chinese requests (simplified and traditional): the trigger tables and the rules."""

from __future__ import annotations

import re
from collections.abc import Callable

from bot_memory.intents.common import (
    JUNK_MAX,
    LEADING,
    NO_TRIGGER,
    TRAILING,
    Ctx,
    MemoryRequest,
    Outcome,
    as_request,
    clean,
    norm,
    subject_ok,
    whole_rest,
)

_ZH_REMEMBER = re.compile(
    r"(?:帮我|替我|给我)?(?:记下来|记录一下|记录下来|记一下|记一笔(?=[\s:,\-])|记下|记住|记好|记录(?=\s*:))"
)
# "保存到记忆：…": into memory, and only with a separator.
_ZH_SAVE_TO_MEMORY = re.compile(
    r"(?:帮我)?(?:保存|存|添加|加|放|存进|写)(?:到|进|入)(?:你的)?(?:长期)?记忆(?:里|中|里面)?[\s:,\-]+"
)
# "把这个记下来：…", "把我的新地址记住".
_ZH_BA_REMEMBER = re.compile(
    r"把(?P<x>.+?)(?:给我)?(?:记下来|记下|记住|记一下|记好)(?:吧)?(?P<sep>[\s:,\-]+)?"
)
_ZH_THIS = re.compile(r"(?:这个|这些|这一点|这点|这件事|以下|下面)\Z")
# "记得…" is a request only with a fact about the user ("记得我不吃辣"), never a
# to-do for the listener ("记得带伞"), "记得住" (can remember) or a question.
_ZH_KEEP = re.compile(r"(?:记得|记着|牢记)(?![住清起牢])")
# Reminiscing: "记得我们那次去三亚", "记得我小时候…".
_ZH_REMINISCE = re.compile(r"那次|那天|那晚|那年|那时|那会|当年|当时|小时候|的时候|第一次")
# Admonitions with nothing to keep: "记得我说过的话".
_ZH_KEEP_EMPTY = re.compile(r"我们?(?:刚才|之前|以前)?(?:跟你|和你|对你)?(?:说|讲|告诉你)过?的话?")
_ZH_TRAILING_PARTICLES = "哦噢啊喔呀哈嘛啦喽咯哟"
_ZH_DONT_FORGET = re.compile(r"(?:千万|可)?(?:别|不要)(?:忘了|忘记|忘掉)")
_ZH_FORGET = re.compile(r"忘记掉|忘记|忘掉|忘了")
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

_PLACE_ZH = r"(?:这个|本|该|此|当前)(?:话题|群聊|群|聊天|对话|会话)"
_MEM_ZH = (
    rf"(?:你的|{_PLACE_ZH}(?:里|中|内)?的|这里的|群里的|聊天)?(?:的)?(?:长期)?记忆(?:功能|模式)?"
)
# "在这个话题里关闭记忆", "本群关闭记忆": the place may also come first.
_WHERE_ZH = rf"(?:在?{_PLACE_ZH}(?:里|中|内)?[\s,]*)?"

# "先关闭记忆", "暂时把记忆关掉": for now.
_FOR_NOW_ZH = r"(?:先|暂时|先暂时|暂且)?"
_ZH_DISABLE = re.compile(
    rf"{_WHERE_ZH}{_FOR_NOW_ZH}(?:(?:关闭|关掉|关上|停用|禁用|暂停|停止)(?:一下)?{_MEM_ZH}"
    rf"|把{_MEM_ZH}(?:给)?{_FOR_NOW_ZH}(?:关闭|关掉|关上|关了|关一下|停用|禁用|暂停)(?:一下)?)"
    r"(?:吧|啦)?"
)
_ZH_ENABLE = re.compile(
    rf"{_WHERE_ZH}(?:(?:开启|打开|启用|恢复|重新开启|重新打开|重新启用|再次开启|再次打开)(?:一下)?{_MEM_ZH}"
    rf"|把{_MEM_ZH}(?:给)?(?:打开|开启|启用|恢复|重新打开|重新开启|开一下)(?:一下)?)(?:吧|啦)?"
)
# "记忆先关掉", "记忆关掉吧": the memory first, and only with 先/暂时 or 吧 ("记忆关了" tells).
_ZH_MEMORY_FIRST = ("记忆", "你的记忆", "长期记忆")
_ZH_MEMORY_FIRST_SWITCH = re.compile(
    r"(?:你的)?(?:长期)?记忆(?:功能|模式)?(?:(?P<off>(?:先|暂时)(?:关闭|关掉|关上|关一下)(?:吧|啦)?"
    r"|(?:关闭|关掉|关上)吧)|(?:先|再)(?:打开|开启)(?:吧|啦)?|(?:打开|开启)吧)"
)

_ZH_DELETE_VERB = r"(?:删除|删掉|删了|清除|清掉|抹去|抹掉|移除|去掉)"
_ZH_DELETE_MEMORY_OF = re.compile(
    _ZH_DELETE_VERB + r"(?:一下)?(?P<x>.+?)的?(?:相关的?)?(?:所有|全部|一切)?的?记忆(?:吧)?"
)
# "把关于我前任的记忆删掉"
_ZH_BA_DELETE_MEMORY_OF = re.compile(
    r"把(?P<x>.+?)的?(?:相关的?)?(?:所有|全部|一切)?的?记忆(?:给)?" + _ZH_DELETE_VERB + r"(?:吧)?"
)
_ZH_DELETE_FROM_MEMORY = re.compile(
    r"(?:从(?:你的)?记忆(?:中|里|里面|当中)?" + _ZH_DELETE_VERB + r"(?:掉)?(?P<x>.+)"
    r"|把(?P<y>.+?)从(?:你的)?记忆(?:中|里|里面|当中)?" + _ZH_DELETE_VERB + r"(?:吧)?)"
)
_ZH_BA_FORGET = re.compile(r"把(?P<x>.+?)(?P<verb>忘掉|忘记|忘了)(?P<ba>吧)?")
# "不要再记着我的地址了", "别再记住我的生日": no longer keep it, i.e. forget it.
_ZH_NO_LONGER_KEEP = re.compile(
    r"(?:不要|不用|不必|别|甭)再(?:继续)?(?:记着|记住|记得|记下|记)(?:着)?(?P<x>我.+?)(?:了|啦|吧)?[。.!！]*"
)


def _zh_fact(subject: str) -> MemoryRequest | None:
    """A Chinese remember request, unless the subject is junk plus a particle."""
    if len(subject) <= JUNK_MAX + 4 and not subject_ok(
        clean(subject.rstrip(_ZH_TRAILING_PARTICLES))
    ):
        return None  # "记住我哦": nothing to keep
    return as_request("remember", "zh", subject)


def _chinese_prefix_rules(c: Ctx) -> Outcome:
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
    if m := _ZH_NO_LONGER_KEEP.fullmatch(head, pos):
        x = c.text[m.start("x") : m.end("x")].rstrip("了啦吧")
        if len(x) > 1 and _ZH_SELF_LEAD.match(x):  # "别再记着我了": nothing named
            return as_request("forget", "zh", clean(x))
        return None
    first = head[pos]
    if first in "帮保存添加放写" and (m := _ZH_SAVE_TO_MEMORY.match(head, pos)):  # "保存到记忆：…"
        return as_request("remember", "zh", c.subject_from(m.end()))
    if first == "把" and (m := _ZH_BA_REMEMBER.match(head, pos)):  # "把这个记下来：…"
        x = head[m.start("x") : m.end("x")]
        if _ZH_THIS.fullmatch(x) and m.group("sep"):
            return _zh_fact(c.subject_from(m.end()))
        if (
            _ZH_SELF_LEAD.match(x)
            and not _ZH_KEEP_EMPTY.fullmatch(x)
            and not c.subject_from(m.end())
        ):
            return _zh_fact(c.text[m.start("x") : m.end("x")])
        return None
    if m := _ZH_KEEP.match(head, pos):  # 记得, 记着, 牢记
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
        tail = norm(subject[-8:].rstrip(_ZH_TRAILING_PARTICLES).rstrip(TRAILING))
        if (
            # "记得我不吃辣吧": checking, not asking ("我常去的酒吧" is a bar)
            (tail.endswith("吧") and not tail.endswith(("酒吧", "网吧", "網吧")))
            or _ZH_REMINISCE.search(norm(subject[:40]))
            or (len(subject) <= 24 and _ZH_KEEP_EMPTY.fullmatch(norm(subject)))
        ):
            return None
        return _zh_fact(subject)
    if m := _ZH_DONT_FORGET.match(head, pos):  # 别忘了 = remember
        i = m.end()
        if sep := _ZH_SEP.match(head, i) or _ZH_THIS_SEP.match(head, i):
            return as_request("remember", "zh", c.subject_from(sep.end()))
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
            subject = clean(subject[:-1])
        if subject.endswith("了"):
            return None  # "忘记我的生日了": a statement
        if norm(subject[:2]) in ("关于", "有关"):
            subject = subject[2:].lstrip(LEADING)
        return as_request("forget", "zh", subject)
    return NO_TRIGGER


def _strip_zh_mem_owner(x: str) -> tuple[str, bool]:
    """Turn the X of "删除(你)(关于)X(的)记忆" into (X, had_about)."""
    n = norm(x)
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
    return x.strip(TRAILING + LEADING), about


def _chinese_whole_rules(c: Ctx) -> Outcome:
    if (whole := whole_rest(c)) is None:
        return NO_TRIGGER
    rest, n = whole
    if _ZH_DISABLE.fullmatch(n):
        return MemoryRequest("disable", "zh", "")
    if _ZH_ENABLE.fullmatch(n):
        return MemoryRequest("enable", "zh", "")
    if n.startswith(_ZH_MEMORY_FIRST) and (m := _ZH_MEMORY_FIRST_SWITCH.fullmatch(n)):
        return MemoryRequest("disable" if m.group("off") else "enable", "zh", "")
    if m := _ZH_DELETE_FROM_MEMORY.fullmatch(n):
        group = "x" if m.group("x") is not None else "y"
        subject, _ = _strip_zh_mem_owner(rest[m.start(group) : m.end(group)])
        return as_request("forget", "zh", subject)
    m = _ZH_DELETE_MEMORY_OF.fullmatch(n)
    if m is None and n[:1] == "把":
        m = _ZH_BA_DELETE_MEMORY_OF.fullmatch(n)
    if m is not None:
        subject, about = _strip_zh_mem_owner(rest[m.start("x") : m.end("x")])
        if not about and norm(subject) in ("我", "我们", "咱们"):
            return None  # "删除我的记忆": bulk wipe with no object
        return as_request("forget", "zh", subject)
    if m := _ZH_BA_FORGET.fullmatch(n):
        # "把钥匙忘了" is "(I) forgot the keys"; 吧 or a polite prefix makes it
        # an imperative, and the object must be something the user said.
        if (
            m.group("verb") == "忘了"
            and not (m.group("ba") or c.polite)
            and (c.you or not _ZH_INFO_END.search(n, m.start("x"), m.end("x")))
        ):
            return None  # "把我的钥匙忘了", "你把我的生日忘了"
        if not _ZH_FORGET_LEAD.match(n, m.start("x")):
            return None
        subject = rest[m.start("x") : m.end("x")]
        if norm(subject).startswith(("关于", "有关")):
            subject = subject[2:]
        return as_request("forget", "zh", subject.strip())
    return NO_TRIGGER


# --- keeping out: "别记这个", "这个不要记", "这是隐私，别保存" ------------------------------

# A negation that asks ("别", "不要", "不用"); never "不再" (no longer keep: a forget) or a bare
# "不" ("不记得" is "(I) don't remember").
_ZH_KO_NEG = (
    r"(?:千万|可|就|也|都|请|麻烦)?(?:别|不要|不用|不必|甭|无需|无须|请勿|勿|不需要|没必要)(?!再)"
)
# Verbs of keeping. A bare 记 is not "记错" (misremember), "记仇/记恨" (hold a grudge), "记挂"
# (miss), "记在心上" (take to heart) or "记得" (recall).
_ZH_KO_VERB = (
    r"(?:(?:记|保存|存|写|放|加|录)(?:进|到|入)(?:你的)?(?:长期)?记忆(?:里|中|里面)?"
    r"|记住|记下来|记下|记录下来|记录|记着|保存下来|保存|存下来|存起来|存档|存储|录入|写下来|写下"
    r"|记(?![错仇恨挂性忆得号账者住下着在进到录])|存(?![钱款货疑活进到入]))"
)
# What is meant: a pointing word ("这个", "刚才那句"), or the speaker's own ("我的地址").
_ZH_KO_OBJECT = (
    r"(?:(?:这|那)(?:个|条|句|段|些|件|一条)(?:话|消息|内容|信息|事|事情)?|这事|那事|这点|这一点"
    r"|它们|它|(?:刚才|刚刚|上面|之前)的"
    r"|(?:我)?(?:刚才|刚刚|之前|上面)(?:说|讲|发|写|提)的(?:那句话|那些话|话|内容|消息|那条|这条)?"
    r"|(?:刚才|刚刚|上面)(?:的)?(?:那句话|那句|那条|这条|这段|那段|这些|那些|话|内容|消息)"
    r"|上一条(?:消息)?|以上(?:的)?(?:内容|的话)?|以下(?:的)?(?:内容|话)?|下面(?:的)?(?:内容|话)?"
    r"|我说的这些|我的[^\s,，。.!！?？:：、~了哦啊吧呀哈不别]{1,8})"
)
_ZH_KO_TAIL = r"[了哦噢啊啦吧呀哈喔嘛喽咯哟]*"
# "别把这个记下来", "别记这个", "不要记住", "我不想让你记住这个".
_ZH_KO_ASK = re.compile(
    rf"(?:我(?:不想|不希望|不要|不愿意|不需要)(?:让|叫)?(?:你|您)(?:去)?|{_ZH_KO_NEG}(?:给我)?)"
    rf"(?:把(?P<ba>{_ZH_KO_OBJECT})(?:给)?)?(?P<verb>{_ZH_KO_VERB})(?:给我)?"
    rf"(?P<object>{_ZH_KO_OBJECT})?{_ZH_KO_TAIL}"
)
# "这个不要记", "我的地址别存了".
_ZH_KO_TOPIC = re.compile(
    rf"(?P<object>{_ZH_KO_OBJECT})(?:就|也|都|可|千万)?(?:[,，]\s*)?(?:请|麻烦你)?(?:你)?"
    rf"{_ZH_KO_NEG}(?:给我)?(?P<verb>{_ZH_KO_VERB}){_ZH_KO_TAIL}"
)
# "这是隐私，别记": discretion asked first.
_ZH_KO_PRIVATE = re.compile(
    r"(?:(?:这|这个|这些|这件事|那|那个|以上|刚才说的)(?:是|属于|算是|都是))?(?:我的)?(?:个人)?"
    r"(?:隐私|私事|私人的事|私人信息|私人问题|秘密|机密|私下说的话?|悄悄话|私密的事|私密信息)"
    r"(?:哦|啊|啦|呀)?\s*[,，.。!！;；]\s*(?:所以|那就|就)?(?:请|麻烦)?(?:你)?"
)
_ZH_KO_CONTENT = re.compile(r"\s*[:：]\s*")
_ZH_KO_BOUNDARY = re.compile(r"\s*[,，.。!！;；~]\s*")


def _zh_keep_out_end(c: Ctx, m: re.Match[str], *, forward: bool) -> Outcome:
    """After "别记这个" etc.: this message's own words after a colon when the request points
    forward ("以下不要记：…", "不要记：…"), else only an end or a brief remark after a stop."""
    i = m.end()
    if forward and (content := _ZH_KO_CONTENT.match(c.head, i)):
        subject = c.subject_from(content.end())
        if subject:
            return MemoryRequest("keep_out", "zh", subject)
    if not c.subject_from(i):
        return MemoryRequest("keep_out", "zh", "")
    if _ZH_KO_BOUNDARY.match(c.head, i) or i >= len(c.head):
        return MemoryRequest("keep_out", "zh", "")  # "别记这个，没什么"
    return None  # "别记这个公式", "不要记住我"


def _zh_forward(m: re.Match[str], *groups: str) -> bool:
    """Whether a request points at what follows (no object, or 以下/下面)."""
    objects = [m.group(g) for g in groups if m.group(g) is not None]
    return all(o.startswith(("以下", "下面")) for o in objects)


def _zh_keep_out_at(c: Ctx, i: int) -> Outcome:
    head = c.head
    if m := _ZH_KO_ASK.match(head, i):
        return _zh_keep_out_end(c, m, forward=_zh_forward(m, "ba", "object"))
    if m := _ZH_KO_TOPIC.match(head, i):
        return _zh_keep_out_end(c, m, forward=_zh_forward(m, "object"))
    return NO_TRIGGER


def chinese_keep_out(c: Ctx) -> Outcome:
    """ "别记这个", "这个不要记", "不要记：…", "这是隐私，别保存"."""
    if c.standing:
        return NO_TRIGGER  # "以后别记…": a standing instruction, the switch's if anything
    # "能不能别记这个" asks for it (a modal with a negation is a request, not a capability).
    if m := _ZH_KO_PRIVATE.match(c.head, c.pos):
        after = _zh_keep_out_at(c, m.end())
        return after if isinstance(after, MemoryRequest) else None
    return _zh_keep_out_at(c, c.pos)


ZH_RULES: tuple[Callable[[Ctx], Outcome], ...] = (_chinese_prefix_rules, _chinese_whole_rules)
ZH_TRIGGER_START = re.compile(
    r"[记帮替给别不千可忘把删清抹移去从关停禁暂开打启恢重再在这本该此当先保存添加放写牢]"
)
# Where a request not to remember may start (see chinese_keep_out).
ZH_KEEP_OUT_START = re.compile(
    r"[别不甭无勿千可就也都这那它刚之上以下隐私秘机个]|请勿|没必要|我(?:不想|不希望|不要|不愿意|不需要|的|刚|说)"
)
