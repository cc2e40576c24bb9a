"""What a run produced, and the summaries the report shows (pure: no I/O, no database).

Every question is answered by three systems: "memory" (the reference agent on the real
pipeline), "no memory" and "full context" (baselines.py). Questions checking a forget are
answered again by memory after the forget ("after forget"): those are kept apart, since the
right answer there is not to know.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from bot_memory.evaluation.scoring import mean

MEMORY = "memory"
NO_MEMORY = "no memory"
FULL_CONTEXT = "full context"
SYSTEMS = (MEMORY, NO_MEMORY, FULL_CONTEXT)
AFTER_FORGET = "after forget"
# LoCoMo's category 5: questions with no answer in the conversation. Published LoCoMo figures
# leave it out (categories 1-4), so scores and "overall" do too; it has its own row.
ADVERSARIAL = "adversarial"


def scored(answers: Iterable[Answer]) -> list[Answer]:
    """The answers that scores are made of: every category but the adversarial one."""
    return [a for a in answers if a.category != ADVERSARIAL]


@dataclass
class Cost:
    """Model calls and what they took."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0

    def add(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
            self.seconds + other.seconds,
        )


@dataclass
class Answer:
    """One question answered by one system."""

    conversation: str
    question_id: str
    category: str
    system: str
    question: str
    gold: list[str]
    response: str
    abstain: bool = False  # the right answer is "I don't know"
    phase: str = "main"  # or AFTER_FORGET
    exact: float = 0.0
    f1: float = 0.0
    judged: bool | None = None  # the judge's verdict (None: not judged)
    contains_answer: bool = False
    abstained: bool = False
    injected_bytes: int = 0  # memory: the recall block the request was given; full: transcript
    injected_tokens: int = 0
    cost: Cost = field(default_factory=Cost)
    tool_calls: int = 0
    recall_mode: str | None = None
    # Evidence coverage (memory only; None when the dataset names no evidence for it). _one:
    # one record holds every piece of evidence; _all: every piece is held, maybe by several;
    # _any: at least one piece is.
    evidence_all: bool | None = None  # among the sources of available records
    evidence_any: bool | None = None
    evidence_one: bool | None = None
    cited_all: bool | None = None  # ... among what available records cite
    cited_any: bool | None = None
    recall_all: bool | None = None  # ... of the records the request's block names (presented)
    recall_any: bool | None = None
    recall_one: bool | None = None
    listed_one: bool | None = None  # ... of those the index or directory names (no matches)
    found_all: bool | None = None  # ... of the records query_memories returned for its words
    found_any: bool | None = None
    found_one: bool | None = None
    error: str | None = None


@dataclass
class ForgetCheck:
    conversation: str
    forget_id: str
    text: str
    outcome: str  # control's outcome: forgotten, nothing_to_forget, not_allowed, ...
    memory_ids: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    known_before: list[str] = field(default_factory=list)  # answered right before the forget
    leaked: list[str] = field(default_factory=list)  # answered after it
    unexpected_traces: list[dict[str, Any]] = field(default_factory=list)
    expected_traces: int = 0

    @property
    def passed(self) -> bool:
        return not self.leaked and not self.unexpected_traces


@dataclass
class ConversationRun:
    id: str
    workspace: str
    kind: str
    turns: int
    questions: int
    records: int = 0  # available records after ingestion, replaced ones included
    replaced: int = 0  # ... of them marked replaced by a later one
    replaced_over_replay: int = 0  # records seen replaced after any tick (some pruned since)
    own_records: int = 0  # ... holding a turn of the conversation itself (not its chatter)
    index_ids: int = 0  # records named by the recall index after ingestion
    talked_after: list[str] = field(default_factory=list)  # the chatter (--busy-group)
    jobs: dict[str, int] = field(default_factory=dict)  # pipeline jobs by final phase
    ingest: Cost = field(default_factory=Cost)  # extraction and consolidation (ledger)
    forget: Cost = field(default_factory=Cost)  # the forget phase (ledger)
    full_context_bytes: int = 0
    full_context_cut: bool = False
    kept: bool = False


@dataclass
class RunResult:
    run_id: str
    dataset: str
    format: str
    started_at: str
    provider: str
    model: str
    settings: dict[str, Any]
    judge: str | None = None
    judge_version: str | None = None
    judge_cost: Cost = field(default_factory=Cost)
    conversations: list[ConversationRun] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    forgets: list[ForgetCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """A forgotten fact was answered, or left a trace where none may stay."""
        return any(not f.passed for f in self.forgets)

    def main_answers(self, system: str) -> list[Answer]:
        return [a for a in self.answers if a.system == system and a.phase == "main"]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["failed"] = self.failed
        data["summary"] = {
            "systems": system_rows(self),
            "categories": category_rows(self),
            "evidence": evidence_rows(self),
            "comparison": comparison(self),
        }
        return data


# --- summaries ------------------------------------------------------------------------------


def system_cost(run: RunResult, system: str) -> Cost:
    """Everything the system spent on the run's main questions. Memory's includes building
    the memory (extraction, consolidation) and its wall time; the forget phase is apart."""
    total = Cost()
    for answer in run.main_answers(system):
        total = total.add(answer.cost)
    if system == MEMORY:
        for conv in run.conversations:
            total = total.add(conv.ingest)
    return total


def system_rows(run: RunResult) -> list[dict[str, Any]]:
    """Per system: scores over the scored questions (adversarial apart), what each answer's
    prompt held and cost, and what the whole run spent."""
    rows = []
    for system in SYSTEMS:
        every = run.main_answers(system)
        answers = scored(every)
        if not every:
            continue
        cost = system_cost(run, system)
        rows.append(
            {
                "system": system,
                "questions": len(answers),
                "exact": mean(a.exact for a in answers),
                "f1": mean(a.f1 for a in answers),
                "judge": _judged(answers),
                "injected_bytes": mean(a.injected_bytes for a in every),
                "injected_tokens": mean(a.injected_tokens for a in every),
                # The whole prompt of an answer (instructions, history, tools, rounds), not
                # only the injected part; and the answer's own cost.
                "prompt_tokens_per_answer": mean(a.cost.prompt_tokens for a in every),
                "cost_per_answer_usd": mean(a.cost.cost_usd for a in every),
                "calls": cost.calls,
                "prompt_tokens": cost.prompt_tokens,
                "completion_tokens": cost.completion_tokens,
                "cost_usd": cost.cost_usd,
                "seconds": cost.seconds,
                "errors": sum(1 for a in answers if a.error),
            }
        )
    return rows


def category_rows(run: RunResult) -> list[dict[str, Any]]:
    """Per category, then "overall": every category but the adversarial one."""
    categories = sorted({a.category for a in run.answers if a.phase == "main"})
    rows = []
    for category in [*categories, "overall"]:
        row: dict[str, Any] = {"category": category}
        for system in SYSTEMS:
            mine = run.main_answers(system)
            answers = (
                scored(mine)
                if category == "overall"
                else [a for a in mine if a.category == category]
            )
            if not answers:
                continue
            row["questions"] = len(answers)
            row[f"{system} f1"] = mean(a.f1 for a in answers)
            row[f"{system} exact"] = mean(a.exact for a in answers)
            row[f"{system} judge"] = _judged(answers)
        rows.append(row)
    return rows


def evidence_rows(run: RunResult) -> list[dict[str, Any]]:
    """Evidence coverage of memory's answers, per category and overall (adversarial apart):
    among available records' sources, what they cite, what the request's memory block names
    before any tool call (the index or directory and the message's matches: "presented"), and
    what a keyword search through query_memories returned ("retrieval"); held by one record
    (_one) and spread over several (_all, _any); with the block's mean and largest size."""
    answers = [a for a in run.main_answers(MEMORY) if a.evidence_all is not None]
    categories = sorted({a.category for a in answers})
    rows = []
    for category in [*categories, "overall"]:
        picked = (
            scored(answers)
            if category == "overall"
            else [a for a in answers if a.category == category]
        )
        if not picked:
            continue
        rows.append(
            {
                "category": category,
                "questions": len(picked),
                "records_one": _share(a.evidence_one for a in picked),
                "records_all": _share(a.evidence_all for a in picked),
                "records_any": _share(a.evidence_any for a in picked),
                "cited_all": _share(a.cited_all for a in picked),
                "cited_any": _share(a.cited_any for a in picked),
                "recall_one": _share(a.recall_one for a in picked),
                "listed_one": _share(a.listed_one for a in picked),
                "recall_all": _share(a.recall_all for a in picked),
                "recall_any": _share(a.recall_any for a in picked),
                "retrieval_one": _share(a.found_one for a in picked),
                "retrieval_all": _share(a.found_all for a in picked),
                "retrieval_any": _share(a.found_any for a in picked),
                # The memory block each request carried before any tool call.
                "block_mean_bytes": mean(a.injected_bytes for a in picked),
                "block_max_bytes": max(a.injected_bytes for a in picked),
            }
        )
    return rows


def comparison(run: RunResult) -> dict[str, Any]:
    """Memory's value as differences in score, its cost as ratios, against each baseline."""
    rows = {r["system"]: r for r in system_rows(run)}
    mine = rows.get(MEMORY)
    out: dict[str, Any] = {}
    if mine is None:
        return out
    for other in (NO_MEMORY, FULL_CONTEXT):
        theirs = rows.get(other)
        if theirs is None:
            continue
        out[other] = {
            "f1_difference": _difference(mine["f1"], theirs["f1"]),
            "exact_difference": _difference(mine["exact"], theirs["exact"]),
            "judge_difference": _difference(mine["judge"], theirs["judge"]),
            "injected_tokens_ratio": _ratio(mine["injected_tokens"], theirs["injected_tokens"]),
            "prompt_tokens_ratio": _ratio(mine["prompt_tokens"], theirs["prompt_tokens"]),
            "cost_ratio": _ratio(mine["cost_usd"], theirs["cost_usd"]),
        }
    return out


def _judged(answers: Iterable[Answer]) -> float | None:
    verdicts = [a.judged for a in answers if a.judged is not None]
    return mean(1.0 if v else 0.0 for v in verdicts)


def _share(values: Iterable[bool | None]) -> float | None:
    return mean(1.0 if v else 0.0 for v in values if v is not None)


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b
