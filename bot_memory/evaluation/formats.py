"""Evaluation datasets, read from a local path (nothing is downloaded), as one shape.

Three formats, chosen by `load(path)` from the file (or forced with `format=`):

**LoCoMo** (`locomo10.json`: a list of samples; or one file per conversation, each one sample:
the file, a folder of them, or a .zip of them). Each sample's `conversation` (or the sample
itself, as the per-conversation `locomo10_v2` files have it; one with no `sample_id` is named by
its file) holds `speaker_a`, `speaker_b` and sessions `session_1`, `session_1_date_time`, ...
whose turns have `speaker`, `dia_id` and `text` (a shared photo's `blip_caption` is appended as
"[shares a photo: ...]"). Two people talk, so a sample runs as a group Topic with one speaker
ID per person; every turn is a user message directed at the bot, and since only requests with
an answer become memories, each is answered with a short acknowledgement. The `qa` list gives
`question`, `answer`, `category` (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and `evidence` dialog IDs; adversarial questions have no answer in the
conversation, so the right answer is to say so (they are scored as abstentions).

**LongMemEval** (`longmemeval_s.json`, `_m`, `_oracle`: a list of items). Each item is one
private conversation with one question: `haystack_sessions` (lists of `{role, content}`, with
`has_answer` on evidence turns), `haystack_dates`, `haystack_session_ids`, `question`,
`answer`, `question_type`, `question_date` and `answer_session_ids`. Each user turn is paired
with the assistant turns that follow it up to the next user turn (joined), which become its
recorded answer; a user turn with none gets the acknowledgement, and assistant turns before a
session's first user turn are dropped. Evidence is the `has_answer` turns of the answer
sessions, else each answer session as a whole (any one of its turns counts). Questions whose ID
ends in `_abs` have no answer in the history: category "abstention", scored as abstentions.

**Our JSON Lines** (`*.jsonl`): one JSON object per line, each with a `type`; blank lines are
skipped. A conversation's lines come in time order after its header:

    {"type": "conversation", "id": "c1", "kind": "private", "language": "en"}
    {"type": "session", "conversation": "c1", "date": "2024-03-01T09:00:00+00:00"}
    {"type": "turn", "conversation": "c1", "id": "t1", "speaker": "Mia",
     "text": "My locker code is 4471.", "answer": "Noted."}
    {"type": "question", "conversation": "c1", "id": "q1", "text": "What is my locker code?",
     "answer": "4471", "category": "single-fact", "evidence": ["t1"]}
    {"type": "forget", "conversation": "c1", "id": "f1", "text": "forget my locker code"}
    {"type": "question", "conversation": "c1", "id": "q2", "text": "What is my locker code?",
     "answer": "4471", "category": "forget", "evidence": ["t1"], "forget": "f1"}

- conversation: `id`; `kind` "private" (one user) or "shared" (a group Topic; default when
  more than one person speaks); `language` ("en", "zh"; optional); `speakers` (names, to fix
  the order speaker IDs are given in; optional).
- session: `date` (ISO 8601; UTC when no offset) of the turns that follow; each turn is
  TURN_SECONDS after the one before, and never earlier than its session.
- turn: `id`, `speaker` (a name), `text`, `answer` (the bot's reply; optional), `at` (an ISO
  time for this turn; optional).
- question: `id`, `text`, `answer` (a string, or a list of accepted answers), `category`
  (default "general"), `evidence` (turn IDs stating the answer), `abstain` (true: the right
  answer is "I don't know"), `asker` (a speaker name; default the user in a private chat and an
  operator in a group), `forget` (the forget line it checks).
- forget: `id`, `text` (said as is, e.g. "forget my locker code" / "忘记我的储物柜密码"),
  `speaker` (default the user in a private chat, the operator, a workspace admin, in a group),
  `traces` (texts that must be gone from memory afterwards; default the answers of the
  questions checking it, so give distinctive ones when those are common words).
  Questions naming it are asked before it, scored like any other, and again after it, when
  they must go unanswered.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from bot_memory.errors import BotMemoryError

Kind = Literal["private", "shared"]
Format = Literal["locomo", "longmemeval", "jsonl"]

TURN_SECONDS = 20  # between consecutive turns of a session (datasets give session times only)
LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
NOT_MENTIONED = "Not mentioned in the conversation."


class DatasetError(BotMemoryError, ValueError):
    """The file is not one of the formats, or breaks one of its rules (says where)."""


@dataclass(frozen=True)
class Turn:
    """A user message and the bot's recorded answer to it."""

    id: str
    speaker: str
    text: str
    at: datetime
    session: str
    answer: str | None = None
    answer_ids: tuple[str, ...] = ()  # dataset IDs of the assistant turns in `answer`
    chatter: str | None = None  # the conversation it comes from, when talked after (busy_group)


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    answers: tuple[str, ...]
    category: str = "general"
    # Each group is one piece of evidence: met when any of its turn IDs was recorded into it.
    evidence: tuple[tuple[str, ...], ...] = ()
    abstain: bool = False
    asker: str | None = None
    forget: str | None = None
    asked_at: datetime | None = None


@dataclass(frozen=True)
class Forget:
    id: str
    text: str
    speaker: str | None = None
    traces: tuple[str, ...] = ()  # texts that must be gone; default: its questions' answers


@dataclass(frozen=True)
class Conversation:
    id: str
    kind: Kind
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    forgets: tuple[Forget, ...] = ()
    language: str | None = None
    session_dates: dict[str, datetime] = field(default_factory=dict)
    talked_after: tuple[str, ...] = ()  # conversations talked after it in its Topic (busy_group)


@dataclass(frozen=True)
class Dataset:
    name: str
    format: Format
    conversations: tuple[Conversation, ...]

    @property
    def question_count(self) -> int:
        return sum(len(c.questions) for c in self.conversations)


def load(path: Path | str, format: Format | None = None) -> Dataset:  # noqa: A002 (as --format)
    """Read a dataset file (or a folder or .zip of LoCoMo files, one conversation each); the
    format is told by its content (or forced)."""
    path = Path(path)
    if path.is_dir() or path.suffix == ".zip":
        return _load_many(path, format)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from exc
    if format is None:
        format = detect(path, raw)  # noqa: A001
    if format == "jsonl":
        conversations = read_jsonl(raw, where=str(path))
    else:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise DatasetError(f"{path}: not JSON: {exc}") from exc
        conversations = (
            read_locomo(data, name=path.stem) if format == "locomo" else read_longmemeval(data)
        )
    if not conversations:
        raise DatasetError(f"{path}: no conversations")
    return Dataset(name=path.stem, format=format, conversations=tuple(conversations))


def _load_many(path: Path, format: Format | None) -> Dataset:  # noqa: A002
    """LoCoMo as one file per conversation: every .json in a folder or a .zip, by name."""
    try:
        if path.is_dir():
            files = [(p.name, p.read_text(encoding="utf-8")) for p in sorted(path.glob("*.json"))]
        else:
            with zipfile.ZipFile(path) as archive:
                names = sorted(
                    n for n in archive.namelist() if n.endswith(".json") and "__MACOSX" not in n
                )
                files = [(n, archive.read(n).decode("utf-8")) for n in names]
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from exc
    if format not in (None, "locomo"):
        raise DatasetError(f"{path}: a folder or .zip is read as LoCoMo files only")
    conversations: list[Conversation] = []
    for name, raw in files:
        if detect(Path(name), raw) != "locomo":
            raise DatasetError(f"{path}/{name}: not a LoCoMo conversation")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise DatasetError(f"{path}/{name}: not JSON: {exc}") from exc
        conversations += read_locomo(data, name=Path(name).stem)
    if not conversations:
        raise DatasetError(f"{path}: no LoCoMo .json files in it")
    return Dataset(name=path.stem, format="locomo", conversations=tuple(conversations))


def detect(path: Path, raw: str) -> Format:
    if path.suffix == ".jsonl":
        return "jsonl"
    if '"haystack_sessions"' in raw:
        return "longmemeval"
    if '"qa"' in raw and '"speaker_a"' in raw:
        return "locomo"
    first = raw.lstrip().split("\n", 1)[0]
    if first.startswith("{") and '"type"' in first:
        return "jsonl"
    raise DatasetError(f"{path}: not LoCoMo, LongMemEval or our JSON Lines (use --format)")


def limit(
    dataset: Dataset,
    *,
    conversations: int | None = None,
    questions: int | None = None,
    categories: Iterable[str] = (),
) -> Dataset:
    """A smaller run: the first conversations, the first questions of each, some categories
    (names, or LoCoMo's numbers: "1,2,3,4" is what published LoCoMo figures use). Questions
    checking a forget are kept with their forget."""
    wanted = category_names(categories)
    picked = []
    for conv in dataset.conversations[:conversations]:
        qs = [q for q in conv.questions if not wanted or q.category in wanted or q.forget]
        plain = [q for q in qs if not q.forget][:questions]
        checks = [q for q in qs if q.forget]
        picked.append(replace(conv, questions=tuple(plain + checks)))
    return replace(dataset, conversations=tuple(picked))


def category_names(categories: Iterable[str]) -> set[str]:
    """ "1,2,3,4" or "single-hop" (repeatable) as category names."""
    names = set()
    for item in categories:
        for part in str(item).split(","):
            part = part.strip()
            if part:
                names.add(LOCOMO_CATEGORIES.get(_int(part), part) if part.isdigit() else part)
    return names


# --- LoCoMo ---------------------------------------------------------------------------------

_LOCOMO_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y")


def read_locomo(data: Any, *, name: str | None = None) -> list[Conversation]:
    """LoCoMo samples; one without a `sample_id` is named `name` (its file) when it is the
    file's only one, else by its place."""
    samples = data if isinstance(data, list) else [data]
    out = []
    for index, sample in enumerate(samples):
        flat = isinstance(sample, dict) and "speaker_a" in sample and "session_1" in sample
        if not isinstance(sample, dict) or not (
            flat or isinstance(sample.get("conversation"), dict)
        ):
            raise DatasetError(f"LoCoMo sample {index}: no 'conversation' object")
        default = name if name and len(samples) == 1 else f"locomo-{index}"
        out.append(_locomo_sample(sample, sample if flat else sample["conversation"], default))
    return out


def _locomo_sample(sample: dict[str, Any], conv: dict[str, Any], default_id: str) -> Conversation:
    conv_id = str(sample.get("sample_id") or default_id)
    numbers = sorted(
        int(m.group(1))
        for key, value in conv.items()
        if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(value, list)
    )
    turns: list[Turn] = []
    dates: dict[str, datetime] = {}
    clock = _Clock()
    for n in numbers:
        session = f"session_{n}"
        start = clock.session(_locomo_date(conv.get(f"{session}_date_time")))
        dates[session] = start
        for i, raw in enumerate(conv[session]):
            text = str(raw.get("text") or "").strip()
            caption = raw.get("blip_caption")
            if caption:
                text = f"{text} [shares a photo: {caption}]".strip()
            if not text:
                continue
            turns.append(
                Turn(
                    id=str(raw.get("dia_id") or f"D{n}:{i + 1}"),
                    speaker=str(raw.get("speaker") or "?"),
                    text=text,
                    at=clock.next(),
                    session=session,
                )
            )
    speakers = [str(conv[k]) for k in ("speaker_a", "speaker_b") if conv.get(k)]
    speakers += sorted({t.speaker for t in turns} - set(speakers))
    known = {t.id for t in turns}
    questions = []
    for i, qa in enumerate(sample.get("qa") or []):
        category = LOCOMO_CATEGORIES.get(_int(qa.get("category")), f"category-{qa.get('category')}")
        abstain = category == "adversarial" or "answer" not in qa
        answer = NOT_MENTIONED if abstain else str(qa.get("answer"))
        evidence = [e for e in _dialog_ids(qa.get("evidence")) if e in known]
        questions.append(
            Question(
                id=f"{conv_id}-q{i + 1}",
                text=str(qa.get("question") or "").strip(),
                answers=(answer,),
                category=category,
                evidence=tuple((e,) for e in evidence),
                abstain=abstain,
            )
        )
    return Conversation(
        id=conv_id,
        kind="shared",
        speakers=tuple(speakers),
        turns=tuple(turns),
        questions=tuple(q for q in questions if q.text),
        session_dates=dates,
    )


def _locomo_date(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    for fmt in _LOCOMO_DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _dialog_ids(value: Any) -> list[str]:
    """Evidence as the file has it: a list of "D1:3", sometimes "D1:3; D2:4" in one item."""
    items = value if isinstance(value, list) else [value]
    found: list[str] = []
    for item in items:
        found += re.findall(r"D\d+:\d+", str(item or ""))
    return found


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


# --- LongMemEval -----------------------------------------------------------------------------


def read_longmemeval(data: Any) -> list[Conversation]:
    if not isinstance(data, list):
        raise DatasetError("LongMemEval: expected a list of items")
    return [_longmemeval_item(item, i) for i, item in enumerate(data)]


def _longmemeval_item(item: dict[str, Any], index: int) -> Conversation:
    if not isinstance(item, dict) or not isinstance(item.get("haystack_sessions"), list):
        raise DatasetError(f"LongMemEval item {index}: no 'haystack_sessions' list")
    qid = str(item.get("question_id") or f"lme-{index}")
    sessions = item["haystack_sessions"]
    ids = list(item.get("haystack_session_ids") or [])
    dates = list(item.get("haystack_dates") or [])
    ids += [f"s{i}" for i in range(len(ids), len(sessions))]
    dates += [None] * (len(sessions) - len(dates))
    parsed = [_lme_date(d) for d in dates[: len(sessions)]]
    # Time order; sessions without a date keep their place after the dated one before them.
    keys: list[datetime] = []
    for date in parsed:
        keys.append(date or (keys[-1] if keys else datetime.min.replace(tzinfo=UTC)))
    order = sorted(range(len(sessions)), key=lambda i: (keys[i], i))
    clock = _Clock()
    turns: list[Turn] = []
    session_dates: dict[str, datetime] = {}
    evidence_turns: dict[str, list[str]] = {}
    for i in order:
        sid = str(ids[i])
        session_dates[sid] = clock.session(parsed[i])
        made, marked = _pair_session(sessions[i], sid, clock)
        turns += made
        evidence_turns[sid] = marked
    answer_sessions = [str(s) for s in item.get("answer_session_ids") or []]
    marked = [t for s in answer_sessions for t in evidence_turns.get(s, [])]
    evidence: tuple[tuple[str, ...], ...]
    if marked:
        evidence = tuple((t,) for t in marked)
    else:
        evidence = tuple(
            group
            for s in answer_sessions
            if (group := tuple(x for t in turns if t.session == s for x in (t.id, *t.answer_ids)))
        )
    abstain = qid.endswith("_abs")
    question = Question(
        id=qid,
        text=str(item.get("question") or "").strip(),
        answers=(str(item.get("answer")),),
        category="abstention" if abstain else str(item.get("question_type") or "general"),
        evidence=evidence,
        abstain=abstain,
        asked_at=_lme_date(item.get("question_date")),
    )
    return Conversation(
        id=qid,
        kind="private",
        speakers=("user",),
        turns=tuple(turns),
        questions=(question,) if question.text else (),
        session_dates=session_dates,
    )


def _pair_session(messages: list[Any], sid: str, clock: _Clock) -> tuple[list[Turn], list[str]]:
    """User turns with the assistant turns that follow them; the IDs of has_answer turns."""
    turns: list[Turn] = []
    marked: list[str] = []
    pending: dict[str, Any] | None = None
    replies: list[tuple[str, str]] = []

    def close() -> None:
        if pending is not None:
            turns.append(
                Turn(
                    id=pending["id"],
                    speaker="user",
                    text=pending["text"],
                    at=pending["at"],
                    session=sid,
                    answer="\n\n".join(text for _, text in replies) or None,
                    answer_ids=tuple(i for i, _ in replies),
                )
            )

    for j, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        turn_id = f"{sid}:{j}"
        text = str(message.get("content") or "").strip()
        if message.get("has_answer"):
            marked.append(turn_id)
        if not text:
            continue
        if message.get("role") == "user":
            close()
            pending = {"id": turn_id, "text": text, "at": clock.next()}
            replies = []
        elif pending is not None:
            replies.append((turn_id, text))
    close()
    return turns, marked


def _lme_date(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    text = re.sub(r"\s*\([A-Za-z]+\)\s*", " ", value).strip()  # "2023/05/20 (Sat) 02:21"
    for fmt in ("%Y/%m/%d %H:%M", "%Y/%m/%d", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


# --- our JSON Lines ----------------------------------------------------------------------------


@dataclass
class _Draft:
    id: str
    kind: Kind | None
    language: str | None
    speakers: list[str]
    clock: _Clock
    session: str = ""
    session_count: int = 0
    session_dates: dict[str, datetime] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    forgets: list[Forget] = field(default_factory=list)


def read_jsonl(raw: str, *, where: str = "jsonl") -> list[Conversation]:
    drafts: dict[str, _Draft] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        at = f"{where}:{number}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{at}: not JSON: {exc}") from exc
        if not isinstance(obj, dict):
            raise DatasetError(f"{at}: expected an object")
        kind = obj.get("type")
        if kind == "conversation":
            conv_id = _text(obj, "id", at)
            if conv_id in drafts:
                raise DatasetError(f"{at}: conversation {conv_id!r} declared twice")
            declared = obj.get("kind")
            if declared not in (None, "private", "shared"):
                raise DatasetError(f"{at}: kind must be 'private' or 'shared'")
            drafts[conv_id] = _Draft(
                id=conv_id,
                kind=declared,
                language=obj.get("language"),
                speakers=[str(s) for s in obj.get("speakers") or []],
                clock=_Clock(),
            )
            continue
        conv_key = _text(obj, "conversation", at)
        draft = drafts.get(conv_key)
        if draft is None:
            raise DatasetError(f"{at}: conversation {conv_key!r} has no header line before it")
        if kind == "session":
            draft.session_count += 1
            draft.session = str(obj.get("id") or f"session_{draft.session_count}")
            date = _iso(obj.get("date"), at) if obj.get("date") is not None else None
            draft.session_dates[draft.session] = draft.clock.session(date)
        elif kind == "turn":
            if not draft.session:
                raise DatasetError(f"{at}: a turn before the conversation's first session")
            speaker = _text(obj, "speaker", at)
            if speaker not in draft.speakers:
                draft.speakers.append(speaker)
            when = _iso(obj["at"], at) if obj.get("at") else None
            answer = obj.get("answer")
            draft.turns.append(
                Turn(
                    id=_text(obj, "id", at),
                    speaker=speaker,
                    text=_text(obj, "text", at),
                    at=draft.clock.next(when),
                    session=draft.session,
                    answer=str(answer) if answer else None,
                )
            )
        elif kind == "question":
            answers = obj.get("answer")
            accepted = answers if isinstance(answers, list) else [answers]
            if not [a for a in accepted if a is not None] and not obj.get("abstain"):
                raise DatasetError(f"{at}: a question needs an answer (or abstain: true)")
            default = "forget" if obj.get("forget") else "general"
            draft.questions.append(
                Question(
                    id=_text(obj, "id", at),
                    text=_text(obj, "text", at),
                    answers=tuple(str(a) for a in accepted if a is not None) or (NOT_MENTIONED,),
                    category=str(obj.get("category") or default),
                    evidence=tuple((str(e),) for e in obj.get("evidence") or []),
                    abstain=bool(obj.get("abstain")),
                    asker=obj.get("asker"),
                    forget=obj.get("forget"),
                )
            )
        elif kind == "forget":
            draft.forgets.append(
                Forget(
                    id=_text(obj, "id", at),
                    text=_text(obj, "text", at),
                    speaker=obj.get("speaker"),
                    traces=tuple(str(t) for t in obj.get("traces") or []),
                )
            )
        else:
            raise DatasetError(f"{at}: unknown type {kind!r}")
    return [_finish(d, where) for d in drafts.values()]


def _finish(draft: _Draft, where: str) -> Conversation:
    ids = {t.id for t in draft.turns}
    forgets = {f.id for f in draft.forgets}
    for what, items in (
        ("turn", [t.id for t in draft.turns]),
        ("question", [q.id for q in draft.questions]),
        ("forget", [f.id for f in draft.forgets]),
    ):
        twice = sorted(i for i, n in Counter(items).items() if n > 1)
        if twice:
            raise DatasetError(f"{where}: {draft.id!r} has {what} IDs used twice: {twice}")
    for q in draft.questions:
        unknown = [e for group in q.evidence for e in group if e not in ids]
        if unknown:
            raise DatasetError(f"{where}: question {q.id!r} cites unknown turns {unknown}")
        if q.forget is not None and q.forget not in forgets:
            raise DatasetError(f"{where}: question {q.id!r} checks unknown forget {q.forget!r}")
    kind: Kind = draft.kind or ("shared" if len(draft.speakers) > 1 else "private")
    if kind == "private" and len(draft.speakers) > 1:
        raise DatasetError(f"{where}: private conversation {draft.id!r} has several speakers")
    return Conversation(
        id=draft.id,
        kind=kind,
        speakers=tuple(draft.speakers),
        turns=tuple(draft.turns),
        questions=tuple(draft.questions),
        forgets=tuple(draft.forgets),
        language=draft.language,
        session_dates=draft.session_dates,
    )


def _text(obj: dict[str, Any], key: str, at: str) -> str:
    value = obj.get(key)
    if value is None or not str(value).strip():
        raise DatasetError(f"{at}: missing {key!r}")
    return str(value)


def _iso(value: Any, at: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError as exc:
        raise DatasetError(f"{at}: not an ISO 8601 time: {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# --- time -----------------------------------------------------------------------------------

_EPOCH = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)  # for datasets that give no dates at all


@dataclass
class _Clock:
    """Turn times: sessions start at their date (a day after the last turn when unknown),
    turns follow TURN_SECONDS apart, and time never goes back."""

    last: datetime | None = None  # the latest time handed out
    start: datetime | None = None  # the current session's start, until its first turn

    def session(self, date: datetime | None) -> datetime:
        if date is None:
            date = _EPOCH if self.last is None else self.last + timedelta(days=1)
        if self.last is not None and date <= self.last:
            date = self.last + timedelta(seconds=TURN_SECONDS)
        self.start = date
        return date

    def next(self, at: datetime | None = None) -> datetime:
        if at is None:
            gap = timedelta(seconds=TURN_SECONDS)
            at = self.start or (self.last + gap if self.last else _EPOCH)
        if self.last is not None and at <= self.last:
            at = self.last + timedelta(seconds=TURN_SECONDS)
        self.start = None
        self.last = at
        return at
