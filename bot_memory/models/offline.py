"""The built-in offline model: deterministic, no network, no weights.

It answers the pipeline's two structured calls from the conversation text itself, and chat
requests with short answers (using query_memories when asked about the past), so the whole
loop runs on a fresh machine. It is the default when no LLM server is configured.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot_memory.models.base import (
    CONSOLIDATION,
    EXTRACTION,
    ChatModel,
    Completion,
    StructuredOutput,
    ToolCall,
    Usage,
)

_CJK = re.compile(r"[\u4e00-\u9fff]")
_QUESTION = re.compile(
    r"\?|？|\b(what|which|who|when|where|do you (know|remember)|did i)\b|什么|吗|哪|记得", re.I
)
_TITLE_CHARS = 60
_ADDRESS = re.compile(r"^(\[speaker \d+\]\s*)?(@\w+[\s,:]*)*")  # "[speaker 7] @bot " prefixes
_LINE_CHARS = 300

# Corrections, the plain cases only, each against one fact (a summary line) the same speaker
# stated: a move against where they live; "actually" / "no longer" / "not ... anymore" against
# a fact about the same thing (a content word both hold, never a name or a common word alone).
# The replaced record's other facts are carried over into the new one; a record shown in part,
# or whose facts do not all fit, is kept as it is.
_MOVED = re.compile(
    r"\b(i|we)(\s+have|\s+just|'ve)*\s+moved\s+to\b|我搬到|我们搬到"
    r"|\b(я|мы)\s+(уже\s+)?переехал|\b(я|ми)\s+(вже\s+)?переїхал?",
    re.I,
)
_CORRECTED = re.compile(
    r"\bactually\b|\bno\s+longer\b|(\bnot|n['’]t)\b[^.!?]{1,60}\bany\s*more\b|其实|不再"
    r"|на\s+самом\s+деле|больше\s+не\b|насправді|більше\s+не\b",
    re.I,
)
_HOME = re.compile(
    r"\b(live|lives|living|moved|address)\b|住|搬到|\bживу|\bживём|\bживем|переехал"
    r"|\bмешкаю|переїхал?",
    re.I,
)
_WORD = re.compile(r"[^\W\d_]{3,}")
_NAME = re.compile(r"(?<=[^\s.!?])\s+([A-ZА-ЯЁІЇЄҐ][^\W\d_]+)")  # capitalized, not first
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_CJK_FILLER = set("我你他她它们的了是不再其实也就都很在有和")
_FACT = re.compile(r"^-\s*\[(m\d+)\]\s*speaker\s+(-?\d+):\s*(.*)$")  # this model's lines
_COMMON = {
    # English
    "actually", "anymore", "longer", "speaker", "that", "this", "with", "have", "has", "had",
    "like", "want", "would", "could", "should", "really", "about", "there", "their", "them",
    "they", "what", "when", "where", "which", "who", "from", "your", "you", "just", "also",
    "more", "some", "very", "much", "now", "the", "and", "for", "but", "not", "are", "was",
    "were", "been", "being", "its", "our", "ours", "his", "her", "hers", "she", "him", "one",
    "two", "get", "got", "did", "does", "don", "doesn", "didn", "isn", "wasn", "aren", "can",
    "will", "all", "any", "too", "out", "off", "than", "then", "into", "over", "only", "even",
    "still", "again", "today", "yesterday", "tomorrow", "week", "time", "thing", "things",
    "think", "know", "said", "says", "say", "told", "tell", "going", "went", "make", "made",
    "good", "great", "well", "yes", "yeah", "okay", "called", "name", "named", "day", "days",
    "lot", "way", "new", "old", "see", "saw", "let", "use", "used", "these", "those", "here",
    "because", "since", "after", "before", "other", "every", "each", "many", "most",
    # Russian and Ukrainian
    "самом", "деле", "больше", "теперь", "насправді", "більше", "тепер", "это", "этот", "эта",
    "когда", "тоже", "так", "как", "что", "где", "уже", "ещё", "еще", "мой", "моя", "моё",
    "мое", "мои", "меня", "мне", "мы", "нас", "вас", "они", "его", "она", "для",
    "при", "без", "над", "под", "все", "всё", "вот", "там", "тут", "був", "була",
    "було", "мій", "моє", "мої", "мене", "мені", "вже", "теж", "також", "коли",
    "який", "яка", "яке", "що", "де", "як", "усе", "вони", "він",
    "вона", "його", "неї", "очень", "дуже", "зовсем", "зовсім",
}  # fmt: skip


class OfflineModel(ChatModel):
    provider = "offline"
    model = "bot-memory-offline-1"

    def __init__(
        self, *, summary_max_bytes: int = 4000, index_max_bytes: int = 4500, index_max_ids: int = 12
    ) -> None:
        super().__init__()
        self._summary_max = summary_max_bytes
        self._index_max = index_max_bytes
        self._index_ids = index_max_ids

    async def _complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        output: StructuredOutput | None,
        max_tokens: int | None,
    ) -> Completion:
        if output is not None and output.name == EXTRACTION:
            content: str | None = json.dumps(self._extract(_document(messages)), ensure_ascii=False)
            calls: list[ToolCall] = []
        elif output is not None and output.name == CONSOLIDATION:
            content = json.dumps(self._consolidate(_document(messages)), ensure_ascii=False)
            calls = []
        else:
            content, calls = self._chat(messages, tools or [])
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
        return Completion(
            content=content,
            tool_calls=calls,
            usage=Usage(
                prompt_tokens=max(1, prompt_chars // 4),
                completion_tokens=max(1, len(content or "") // 4),
            ),
            provider=self.provider,
            model=self.model,
        )

    def _extract(self, doc: dict[str, Any]) -> dict[str, Any]:
        # Questions are not facts about anyone: a careful model would not keep them either.
        user_sources = [
            s
            for s in doc.get("sources", [])
            if s.get("role") == "user"
            and s.get("text")
            and not str(s["text"]).rstrip().endswith(("?", "？"))
        ]
        if not user_sources:
            return {"title": "", "summary": "", "source_ids": []}
        title = _shorten(_ADDRESS.sub("", user_sources[0]["text"]), _TITLE_CHARS)
        lines: list[str] = []
        cited: list[str] = []
        size = 0
        for source in user_sources:
            line = (
                f"- [{source['id']}] speaker {source.get('speaker_id')}: "
                f"{_shorten(_ADDRESS.sub('', source['text']), _LINE_CHARS)}"
            )
            if size + len(line.encode()) + 1 > self._summary_max:
                break
            lines.append(line)
            cited.append(str(source["id"]))
            size += len(line.encode()) + 1
        corrections = [
            (s.get("speaker_id"), str(s["text"]))
            for s in user_sources
            if str(s["id"]) in cited and _correcting(s["text"])
        ]
        replaces: list[str] = []
        carried: list[str] = []
        for memory in doc.get("existing_memories", []) if corrections else []:
            if not isinstance(memory, dict) or "id" not in memory or memory.get("shown_in_part"):
                continue
            facts = _facts(memory)
            corrected = [f for f in facts if any(_corrects(c, f) for c in corrections)]
            if not corrected:
                continue
            rest = [f[2] for f in facts if f not in corrected]
            extra = sum(len(line.encode()) + 1 for line in rest)
            if size + extra > self._summary_max:  # what still holds must come along whole
                continue
            lines += rest
            size += extra
            replaces.append(str(memory["id"]))
            if rest:
                carried.append(str(memory["id"]))
        return {
            "title": title,
            "summary": "\n".join(lines),
            "source_ids": cited,
            "memory_ids": carried,
            "replaces": replaces,
        }

    def _consolidate(self, doc: dict[str, Any]) -> dict[str, Any]:
        lines: list[str] = []
        ids: list[str] = []
        size = 0
        for cand in doc.get("candidates", [])[: self._index_ids]:
            gist = _shorten(str(cand.get("summary", "")), 120)
            line = f"- {cand['id']}: {cand.get('title', '')} — {gist}"
            if size + len(line.encode()) + 1 > self._index_max:
                break
            lines.append(line)
            ids.append(str(cand["id"]))
            size += len(line.encode()) + 1
        return {"index": "\n".join(lines), "memory_ids": ids}

    def _chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, list[ToolCall]]:
        last_user = next(
            (str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"),
            "",
        )
        zh = bool(_CJK.search(last_user))
        tool_results = [m for m in messages if m.get("role") == "tool"]
        offered = {t.get("function", {}).get("name") for t in tools}
        if tool_results:
            return _answer_from_results(str(tool_results[-1].get("content") or ""), zh), []
        if "query_memories" in offered and _QUESTION.search(last_user):
            call = ToolCall(id="call_offline_1", name="query_memories", arguments='{"limit": 3}')
            return "", [call]
        quoted = _shorten(_ADDRESS.sub("", last_user), 80)
        return (f"收到：「{quoted}」" if zh else f"Got it: “{quoted}”"), []


def _answer_from_results(raw: str, zh: bool) -> str:
    try:
        results = json.loads(raw).get("results", [])
    except (ValueError, AttributeError):
        results = []
    if not results:
        return "我没有找到相关的记忆。" if zh else "I have nothing about that in memory."
    first = results[0]
    text = f"{first.get('title', '')}: {_shorten(str(first.get('summary', '')), 160)}"
    return f"根据记忆：{text}" if zh else f"From memory: {text}"


def _correcting(text: str) -> bool:
    return bool(_MOVED.search(text) or _CORRECTED.search(text))


_Fact = tuple[object, str, str]  # (speaker ID or None, text, the summary line)


def _facts(memory: dict[str, Any]) -> list[_Fact]:
    """A memory's facts: its summary's lines, each with who said it (this model's lines name
    the speaker; another line is the record's only speaker's, or no one's)."""
    speakers = memory.get("speaker_ids") or []
    alone = speakers[0] if len(speakers) == 1 else None
    facts: list[_Fact] = []
    for line in str(memory.get("summary", "")).splitlines():
        if not line.strip():
            continue
        said = _FACT.match(line.strip())
        if said:
            facts.append((int(said.group(2)), said.group(3), line))
        else:
            facts.append((alone, line, line))
    return facts


def _corrects(correction: tuple[object, str], fact: _Fact) -> bool:
    """The correction is about this fact: the same speaker, and where they live for a move,
    else a content word both hold."""
    speaker, text = correction
    if fact[0] is None or fact[0] != speaker:
        return False
    if _MOVED.search(text) and _HOME.search(fact[1]):
        return True
    return bool(_CORRECTED.search(text) and _keys(text) & _keys(fact[1]))


def _keys(text: str) -> set[str]:
    """Content words: three letters or more, not common, not a name (capitalized inside the
    text); Chinese: pairs of characters that are not fillers."""
    names = {n.casefold() for n in _NAME.findall(text)}
    words = {
        w
        for w in _WORD.findall(text.casefold())
        if w not in _COMMON and w not in names and not _CJK.match(w)
    }
    for run in _CJK_RUN.findall(text):
        words |= {
            run[i : i + 2] for i in range(len(run) - 1) if not (set(run[i : i + 2]) & _CJK_FILLER)
        }
    return words


def _document(messages: list[dict[str, Any]]) -> dict[str, Any]:
    for message in reversed(messages):
        if message.get("role") == "user":
            try:
                doc = json.loads(str(message.get("content") or ""))
            except ValueError:
                return {}
            return doc if isinstance(doc, dict) else {}
    return {}


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
