"""Run a dataset through the real pipeline, in each conversation's own time order.

Nothing here stands in for the bot: every user turn is recorded, begun and finished with its
recorded answer exactly as the adapter does (`record`, `begin`, `finish`); whenever the idle
window passes between two turns, the worker's own tick runs at that moment of the
conversation's clock (injected, so nothing sleeps) until nothing more is planned, so extraction
and consolidation run through the configured model as they would live. Questions are then new
interactive requests of the same scope, answered by the reference agent (recall, tools) and
closed like any other; each is erased with a privacy sweep once answered, so no question sees
another in its history or becomes a memory. Forgets are said through the request path users
take (`recognize`, `control`), and the database is then searched for traces.

Each conversation gets a fresh workspace, `eval-<run>-<conversation>`, purged at the end unless
--keep. A group conversation is a group Topic with one speaker ID per person (its turns carry
the speaker's name, since the model sees speaker IDs and questions use names); questions in a
group are asked, and forgets said, by an operator who is a workspace admin.

Every setting is the bot's, inactivity pruning included: each turn recalls the index as the bot
does on every request (being recalled counts as use), on the conversation's own clock, so what
a live bot would prune after 30 days unused is pruned here too (`--no-prune` turns it off, and
the report says which). A late worker (`--late-worker`) runs only once every turn is in, as a
worker that was down would. The ticks run on the replayed clock, so a database where another
bot's memory has jobs waiting is refused: evaluate on a database of its own.

Besides answers, each question measures, without any model: whether its evidence turns are
among the sources of an available record, among what the records cite, among the records the
request's memory block names before any tool call (index or directory, and matches), and among
what `query_memories` returns for the question's key words (`terms.keywords`: a deterministic
query, not the model's); each both as one record holding all of the evidence and as the
evidence spread over several.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot_memory.agent import ToolContext
from bot_memory.errors import BotMemoryError
from bot_memory.evaluation import baselines, scoring
from bot_memory.evaluation.baselines import DEFAULT_CONTEXT_BYTES
from bot_memory.evaluation.formats import Conversation, Dataset, Forget, Question
from bot_memory.evaluation.judge import JUDGE_VERSION, Judge
from bot_memory.evaluation.results import (
    AFTER_FORGET,
    FULL_CONTEXT,
    MEMORY,
    NO_MEMORY,
    Answer,
    ConversationRun,
    Cost,
    ForgetCheck,
    RunResult,
)
from bot_memory.intents import recognize
from bot_memory.models import ModelError
from bot_memory.records import MemoryRecord, message_id_of
from bot_memory.retrieval import RecallContext
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage import SourceMessage, WorkspaceView
from bot_memory.terms import keywords

BOT_ID = 1  # the evaluated bot (no real bot has this ID)
OPERATOR_ID = 999_000_001  # asks group questions and says group forgets; a workspace admin
FIRST_SPEAKER_ID = 1001
GROUP_CHAT_ID = -100_000_001
GROUP_TOPIC_ID = 1
REPLY_SECONDS = 5  # a recorded answer comes this long after its message
QUESTION_SECONDS = 60  # between questions, on the conversation's clock
REPLAY_PRUNE_DAYS = 36_500
ACKNOWLEDGEMENT = {"zh": "好的。"}  # the answer to a turn that has none; default "OK."
MAX_TICKS = 100  # per settling: far more than a conversation's batches

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Options:
    full_context_bytes: int = DEFAULT_CONTEXT_BYTES
    baselines: bool = True
    keep: bool = False
    run_id: str | None = None
    prune: bool = True  # inactivity pruning as the bot does it (False: --no-prune)
    late_worker: bool = False  # the worker runs only after the last turn


def eval_settings(settings: MemorySettings, *, prune: bool = True) -> MemorySettings:
    """The bot's settings, with the operator as a workspace admin (and, with --no-prune, no
    inactivity pruning)."""
    update: dict[str, Any] = {"admin_user_ids": settings.admin_user_ids | {OPERATOR_ID}}
    if not prune:
        update["inactive_prune_days"] = REPLAY_PRUNE_DAYS
    return settings.model_copy(update=update)


class SharedDatabase(BotMemoryError, RuntimeError):
    """Another bot's memory has work pending in this database: a replay must not touch it."""


async def _alone(memory: Memory) -> None:
    """Refuse a database where other workspaces have pipeline jobs waiting: the replay's
    ticks run at the conversation's clock and would claim them too."""
    busy = await memory.store.watch.waiting_elsewhere()
    if busy:
        raise SharedDatabase(
            f"{busy} other workspace(s) in this database have memory jobs waiting (a live bot?);"
            " the evaluation's ticks would run them on a replayed clock. Evaluate on a database"
            " of its own: another DATABASE_URL, or BOT_MEMORY_DATA_DIR for an embedded one"
        )


def new_run_id() -> str:
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def workspace_name(run_id: str, conversation_id: str) -> str:
    return f"eval-{run_id}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', conversation_id)[:60]}"


async def evaluate(
    dataset: Dataset,
    settings: MemorySettings,
    *,
    options: Options | None = None,
    judge: Judge | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Run every conversation of the dataset; the caller writes the report."""
    options = options or Options()
    say = progress or (lambda _: None)
    settings = eval_settings(settings, prune=options.prune)
    started = time.perf_counter()
    memory = await Memory.open(settings)
    try:
        await _alone(memory)
    except BaseException:
        await memory.close()
        raise
    run = RunResult(
        run_id=options.run_id or new_run_id(),
        dataset=dataset.name,
        format=dataset.format,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        provider=memory.model.provider,
        model=memory.model.model,
        settings=_settings_summary(settings, options, dataset),
        judge=judge.name if judge else None,
        judge_version=JUDGE_VERSION if judge else None,
    )
    try:
        for number, conv in enumerate(dataset.conversations, start=1):
            say(f"[{number}/{len(dataset.conversations)}] {conv.id}: {len(conv.turns)} turns")
            runner = _ConversationRunner(memory, conv, run, options, judge, say)
            run.conversations.append(await runner.run())
    finally:
        await memory.close()
    if judge is not None:
        run.judge_cost = Cost(
            calls=judge.calls,
            prompt_tokens=judge.usage.prompt_tokens,
            completion_tokens=judge.usage.completion_tokens,
            cost_usd=judge.cost_usd,
        )
        if judge.failures:
            run.notes.append(f"the judge gave no verdict {judge.failures} time(s)")
    if options.prune:
        run.notes.append(
            f"Inactivity pruning was on, as in the bot: records unused for"
            f" {settings.inactive_prune_days} days were pruned on the conversations' own clock"
            " (--no-prune turns it off)."
        )
    else:
        run.notes.append("Inactivity pruning was off for the replay (--no-prune).")
    if options.late_worker:
        run.notes.append("The worker ran only after each conversation's last turn (--late-worker).")
    if run.settings["busy_group"]:
        run.notes.append(
            "Busy group (--busy-group): each conversation asked about was followed in its Topic"
            " by the ones named beside it (other speakers, their sessions an hour apart), and"
            " only then asked about."
        )
    run.seconds = time.perf_counter() - started
    return run


class _Cast:
    """Who is who in one conversation: its scope, and a speaker ID per name."""

    def __init__(self, conv: Conversation, workspace: str) -> None:
        self.shared = conv.kind == "shared"
        self.ids = {name: FIRST_SPEAKER_ID + i for i, name in enumerate(conv.speakers)}
        if self.shared:
            self.default = OPERATOR_ID  # asks and forgets unless the dataset names someone
            self.scope = Scope(
                workspace=workspace,
                bot_id=BOT_ID,
                kind="shared",
                chat_id=GROUP_CHAT_ID,
                topic_id=GROUP_TOPIC_ID,
            )
        else:
            self.default = FIRST_SPEAKER_ID  # the user
            self.scope = Scope(
                workspace=workspace,
                bot_id=BOT_ID,
                kind="private",
                chat_id=self.default,
                user_id=self.default,
            )

    def person(self, name: str | None) -> int:
        return self.default if name is None else self.ids.get(name, self.default)

    def said(self, speaker: str, text: str) -> str:
        """A turn as the bot receives it: in a group, with the speaker's name."""
        return f"{speaker}: {text}" if self.shared else text

    def asked(self, person: int, text: str) -> str:
        """A question as the baselines put it, like the agent does (speaker-prefixed in groups)."""
        return f"[speaker {person}] {text}" if self.shared else text


class _ConversationRunner:
    def __init__(
        self,
        memory: Memory,
        conv: Conversation,
        run: RunResult,
        options: Options,
        judge: Judge | None,
        say: Progress,
    ) -> None:
        self.memory = memory
        self.conv = conv
        self.run_result = run
        self.options = options
        self.judge = judge
        self.say = say
        self.workspace = workspace_name(run.run_id, conv.id)
        self.cast = _Cast(conv, self.workspace)
        self.scope = self.cast.scope
        self.idle = timedelta(seconds=memory.settings.idle_window_seconds)
        self.messages: dict[str, list[int]] = {}  # dataset turn ID -> stored message IDs
        self._ingest_seconds = 0.0
        self.replaced_ids: set[str] = set()  # every record seen marked replaced during ingestion
        self.clock: datetime = conv.turns[0].at if conv.turns else datetime.now(UTC)
        self.info = ConversationRun(
            id=conv.id,
            workspace=self.workspace,
            kind=conv.kind,
            turns=len(conv.turns),
            questions=len(conv.questions),
            kept=options.keep,
            talked_after=list(conv.talked_after),
        )

    async def run(self) -> ConversationRun:
        try:
            await self._ingest()
            view = await self.memory.store.view(self.workspace)
            available = {r.id: r for r in view.records.values() if r.available(self.clock)}
            self.info.records = len(available)
            self.info.replaced = sum(1 for r in available.values() if r.replaced)
            self.info.replaced_over_replay = len(self.replaced_ids)
            own = {m for t in self.conv.turns if t.chatter is None for m in self.messages[t.id]}
            self.info.own_records = sum(1 for r in available.values() if r.message_ids & own)
            state = view.scopes.get(self.scope.key)
            self.info.index_ids = len(state.index.memory_ids) if state else 0
            self.say(
                f"  ingested: {self.info.records} records ({self.info.replaced} replaced),"
                f" {self.info.index_ids} in the index; asking {len(self.conv.questions)} questions"
            )
            asked = await self._questions(view)
            mark = await self._ledger_mark()  # what follows is the forget phase's
            ledger = await self._ledger(0, mark)
            self._charge_answers(asked, ledger)
            self.info.ingest = _sum(r for r in ledger if r["kind"].startswith("memory_"))
            self.info.ingest.seconds = self._ingest_seconds
            if self.conv.forgets:
                await self._forgets(asked)
                self.info.forget = _sum(await self._ledger(mark, None))
            self.info.jobs = await self._jobs()
        finally:
            if not self.options.keep:
                await self.memory.purge_workspace(self.workspace)
        return self.info

    # --- ingestion ------------------------------------------------------------------------------

    async def _ingest(self) -> None:
        started = time.perf_counter()
        last: datetime | None = None
        requests: dict[int, list[str]] = {}
        late = self.options.late_worker
        for turn in self.conv.turns:
            if not late and last is not None and turn.at >= last + self.idle:
                await self._settle(last + self.idle + timedelta(seconds=1))
                await self._note_replaced()
            text = self.cast.said(turn.speaker, turn.text)
            source = await self._record_as(text, self.cast.person(turn.speaker), turn.at)
            # As the bot does on every request: recall (which counts as use for pruning).
            await self.memory.turn(source).start(now=turn.at)
            last = turn.at + timedelta(seconds=REPLY_SECONDS)
            await self.memory.finish(
                source,
                status="succeeded",
                answer_text=turn.answer or ACKNOWLEDGEMENT.get(self.conv.language or "", "OK."),
                bot_id=BOT_ID,
                now=last,
            )
            self.messages[turn.id] = [source.message_id]
            if turn.answer_ids:
                requests[source.request_id] = list(turn.answer_ids)
        if last is not None:
            self.clock = last + self.idle + timedelta(seconds=1)
            await self._settle(self.clock)
            await self._note_replaced()
        if requests:  # assistant turns named as evidence: the answer messages they became
            answers = await self.memory.store.watch.answer_messages(self.workspace, list(requests))
            for request_id, answer_id in answers.items():
                for turn_id in requests[request_id]:
                    self.messages[turn_id] = [answer_id]
        self._ingest_seconds = time.perf_counter() - started

    async def _note_replaced(self) -> None:
        """Records marked replaced so far: pruning may take one before the replay ends (a
        replaced record is not recalled, so not used)."""
        view = await self.memory.store.view(self.workspace)
        self.replaced_ids |= {r.id for r in view.records.values() if r.replaced}

    async def _record_as(self, text: str, person: int, at: datetime) -> SourceMessage:
        source = await self.memory.record(
            self.scope,
            text=text,
            speaker_id=person,
            thread_id=self.scope.topic_id,
            language=self.conv.language,
            sent_at=at,
        )
        assert source is not None  # no Telegram message IDs: never a redelivery
        return source

    async def _settle(self, now: datetime) -> None:
        """The worker's tick at this moment of the conversation, until nothing is planned."""
        for _ in range(MAX_TICKS):
            report = await self.memory.pipeline.tick(now=now)
            if not report.planned and not report.finished:
                return

    # --- questions ------------------------------------------------------------------------------

    def _tick_clock(self, at: datetime | None = None) -> datetime:
        """The time of the next request on the conversation's clock."""
        self.clock = max(self.clock + timedelta(seconds=QUESTION_SECONDS), at or self.clock)
        return self.clock

    def _replied(self, at: datetime) -> datetime:
        """When the answer to a request made at `at` is recorded (the clock moves on to it)."""
        self.clock = max(self.clock, at + timedelta(seconds=REPLY_SECONDS))
        return self.clock

    async def _questions(self, view: WorkspaceView) -> dict[str, tuple[Answer, int]]:
        """Ask every question of memory and the baselines; memory's answers by question ID,
        with the request that answered."""
        context, cut = baselines.full_context(self.conv, self.options.full_context_bytes)
        self.info.full_context_bytes = scoring.utf8_bytes(context)
        self.info.full_context_cut = cut
        if cut:
            self.run_result.notes.append(
                f"{self.conv.id}: the full-context baseline kept the newest"
                f" {self.options.full_context_bytes:,} bytes of the conversation"
            )
        records = {r.id: r for r in view.records.values() if r.available(self.clock)}
        asked: dict[str, tuple[Answer, int]] = {}
        for question in self.conv.questions:
            at = self._tick_clock(question.asked_at)
            found = await self._retrieve(question, at, records)
            answer, request_id, recall = await self._ask_memory(question, self._tick_clock())
            _coverage(answer, question, self.messages, records, recall, found)
            asked[question.id] = (answer, request_id)
            answers = [answer]
            if self.options.baselines:
                person = self.cast.person(question.asker)
                prompt = self.cast.asked(person, question.text)
                answers.append(await self._baseline(question, NO_MEMORY, prompt, None))
                answers.append(await self._baseline(question, FULL_CONTEXT, prompt, context))
            for item in answers:
                await self._judge(item, question)
            self.run_result.answers += answers
        return asked

    async def _ask_memory(
        self, question: Question, at: datetime, phase: str = "main"
    ) -> tuple[Answer, int, RecallContext | None]:
        started = time.perf_counter()
        source = await self._record_as(question.text, self.cast.person(question.asker), at)
        turn = self.memory.turn(source)
        await turn.start(now=at)
        error = None
        try:
            reply = (await self.memory.agent.answer(turn)).text
        except ModelError as exc:
            reply, error = "", str(exc)
        await self.memory.finish(
            source,
            status="failed" if error else "succeeded",
            answer_text=None if error else reply,
            bot_id=BOT_ID,
            error=error[:500] if error else None,
            now=self._replied(at),
        )
        seconds = time.perf_counter() - started
        await self._erase(source)
        recall = turn.recall
        answer = self._answer(question, MEMORY, reply, phase=phase, error=error)
        answer.injected_bytes = scoring.utf8_bytes(recall.text if recall else None)
        answer.injected_tokens = scoring.estimate_tokens(recall.text if recall else None)
        answer.recall_mode = recall.mode if recall else None
        answer.cost.seconds = seconds
        return answer, source.request_id, recall

    async def _retrieve(
        self, question: Question, at: datetime, records: dict[str, MemoryRecord]
    ) -> list[set[int]]:
        """What `query_memories` returns for the question's key words (a probe request of its
        own, erased after): per result, the messages the record holds (its sources; the result
        shows the first query_max_source_ids of them)."""
        words = keywords(question.text)
        if not words:
            return []
        source = await self._record_as(question.text, self.cast.person(question.asker), at)
        await self.memory.begin(source)
        result = await self.memory.tools.execute(
            "query_memories",
            json.dumps({"query": words, "limit": self.memory.settings.query_max_results}),
            ToolContext(source=source),
            call_id="eval-retrieval",
        )
        await self.memory.finish(source, status="unanswered", now=self._replied(at))
        await self._erase(source)
        found = []
        for r in result.get("results", []):
            record = records.get(r.get("id"))
            shown = r.get("source_ids", []) if record is None else record.source_ids
            found.append({m for m in map(message_id_of, shown) if m is not None})
        return found

    async def _erase(self, source: SourceMessage) -> None:
        """The question and its answer go (a privacy sweep): no later question sees them."""
        answers = await self.memory.store.watch.answer_messages(self.workspace, [source.request_id])
        answer_id = answers.get(source.request_id)
        ids = [source.source_id] + ([f"m{answer_id}"] if answer_id is not None else [])
        await self.memory.privacy_sweep(source_ids=ids)

    async def _baseline(
        self, question: Question, system: str, prompt: str, context: str | None
    ) -> Answer:
        reply = await baselines.ask(
            self.memory.model,
            baselines.messages(prompt, context),
            self.memory.settings.answer_max_tokens,
        )
        answer = self._answer(question, system, reply.text, error=reply.error)
        answer.injected_bytes = scoring.utf8_bytes(context)
        answer.injected_tokens = scoring.estimate_tokens(context)
        answer.cost = Cost(
            calls=1,
            prompt_tokens=reply.usage.prompt_tokens,
            completion_tokens=reply.usage.completion_tokens,
            cost_usd=reply.cost_usd,
            seconds=reply.seconds,
        )
        return answer

    def _answer(
        self,
        question: Question,
        system: str,
        reply: str,
        *,
        phase: str = "main",
        error: str | None = None,
    ) -> Answer:
        exact, f1 = scoring.score(reply, question.answers, abstain=question.abstain)
        return Answer(
            conversation=self.conv.id,
            question_id=question.id,
            category=question.category,
            system=system,
            question=question.text,
            gold=list(question.answers),
            response=reply,
            abstain=question.abstain,
            phase=phase,
            exact=exact,
            f1=f1,
            contains_answer=scoring.contains(reply, question.answers),
            abstained=scoring.abstained(reply),
            error=error,
        )

    async def _judge(self, answer: Answer, question: Question) -> None:
        if self.judge is not None:
            answer.judged = await self.judge.grade(question.text, question.answers, answer.response)

    def _charge_answers(
        self, asked: dict[str, tuple[Answer, int]], ledger: list[dict[str, Any]]
    ) -> None:
        by_request: dict[int, list[dict[str, Any]]] = {}
        for row in ledger:
            if row["request_id"] is not None:
                by_request.setdefault(row["request_id"], []).append(row)
        for answer, request_id in asked.values():
            rows = by_request.get(request_id, [])
            seconds = answer.cost.seconds
            answer.cost = _sum(r for r in rows if r["kind"] == "answer")
            answer.cost.seconds = seconds
            answer.tool_calls = sum(1 for r in rows if r["kind"].startswith("tool:"))

    # --- forgetting -----------------------------------------------------------------------------

    async def _forgets(self, asked: dict[str, tuple[Answer, int]]) -> None:
        checks = [await self._forget(forget) for forget in self.conv.forgets]
        self.clock += self.idle + timedelta(seconds=1)
        await self._settle(self.clock)
        for check in checks:
            forget = next(f for f in self.conv.forgets if f.id == check.forget_id)
            questions = [q for q in self.conv.questions if q.forget == forget.id]
            for question in questions:
                before, _ = asked[question.id]
                if self._knows(before):
                    check.known_before.append(question.id)
                answer, _, _ = await self._ask_memory(
                    question, self._tick_clock(), phase=AFTER_FORGET
                )
                await self._judge(answer, question)
                self.run_result.answers.append(answer)
                if self._knows(answer):
                    check.leaked.append(question.id)
            await self._traces(check, forget, questions)
            self.run_result.forgets.append(check)
            verdict = "ok" if check.passed else "FAILED"
            self.say(f"  forget {forget.id!r}: {check.outcome}, {verdict}")

    async def _forget(self, forget: Forget) -> ForgetCheck:
        at = self._tick_clock()
        source = await self._record_as(forget.text, self.cast.person(forget.speaker), at)
        await self.memory.begin(source, kind="memory_control")
        request = recognize(forget.text)
        check = ForgetCheck(
            conversation=self.conv.id,
            forget_id=forget.id,
            text=forget.text,
            outcome="not_recognized",
            questions=[q.id for q in self.conv.questions if q.forget == forget.id],
        )
        if request is not None and request.action == "forget":
            result = await self.memory.control(request, source, now=at)
            check.outcome = result.outcome
            check.memory_ids = list(result.memory_ids)
        await self.memory.finish(
            source,
            status="succeeded",
            answer_text=f"forget: {check.outcome}",
            bot_id=BOT_ID,
            now=self._replied(at),
        )
        return check

    def _knows(self, answer: Answer) -> bool:
        """The answer gives the fact: the judge's verdict, else the answer string in it."""
        if answer.judged is not None:
            return answer.judged
        return answer.contains_answer

    async def _traces(self, check: ForgetCheck, forget: Forget, questions: list[Question]) -> None:
        texts = list(forget.traces) or sorted(
            {a for q in questions if not q.abstain for a in q.answers}
        )
        sources = sorted(
            {
                f"m{m}"
                for q in questions
                for group in q.evidence
                for turn in group
                for m in self.messages.get(turn, ())
            }
        )
        found = await self.memory.find_traces(
            self.workspace, texts=texts, source_ids=sources, after="forget"
        )
        check.unexpected_traces = [t.as_dict() for t in found if not t.expected]
        check.expected_traces = sum(1 for t in found if t.expected)

    # --- the ledger and jobs ----------------------------------------------------------------------

    async def _ledger_mark(self) -> int:
        return await self.memory.store.watch.last_ledger_id(self.workspace)

    async def _ledger(self, after: int, through: int | None) -> list[dict[str, Any]]:
        """The workspace's ledger rows (amounts and tokens, no text), by ID range."""
        return await self.memory.store.watch.ledger_lines(self.workspace, after, through)

    async def _jobs(self) -> dict[str, int]:
        rows = await self.memory.store.watch.jobs_by_phase(self.workspace)
        for row in rows:
            error = str(row["error"] or "")[:200]
            if row["phase"] in ("failed", "stopped"):
                self.run_result.notes.append(
                    f"{self.conv.id}: {row['n']} pipeline job(s) {row['phase']}: {error}"
                )
            elif row["phase"] in ("extract", "consolidate"):
                self.run_result.notes.append(
                    f"{self.conv.id}: {row['n']} {row['phase']} job(s) still waiting after a"
                    f" failed call (BOT_MEMORY_FAILURE_BACKOFF_SECONDS): {error}"
                )
        return {row["phase"]: int(row["n"]) for row in rows}


def _coverage(
    answer: Answer,
    question: Question,
    messages: dict[str, list[int]],
    records: dict[str, MemoryRecord],
    recall: RecallContext | None,
    found: list[set[int]],
) -> None:
    """Evidence coverage: among the sources of available records, among what they cite, among
    the sources of the records the block names, and among those a keyword search returned;
    held by one record, and spread over them."""
    held = [r.message_ids for r in records.values()]
    stored = scoring.coverage(question.evidence, messages, set().union(*held))
    if stored is None:
        return
    answer.evidence_all, answer.evidence_any = stored
    cited = {m for r in records.values() for m in map(message_id_of, r.cited) if m is not None}
    presented = [
        records[memory_id].message_ids
        for memory_id in (recall.memory_ids if recall else [])
        if memory_id in records
    ]

    def among(reached: list[set[int]]) -> tuple[bool, bool]:
        union: set[int] = set().union(*reached)
        return scoring.coverage(question.evidence, messages, union) or (False, False)

    def one(reached: list[set[int]]) -> bool:
        return bool(scoring.held_by_one(question.evidence, messages, reached))

    answer.evidence_one = one(held)
    answer.cited_all, answer.cited_any = among([cited])
    answer.recall_all, answer.recall_any = among(presented)
    answer.recall_one = one(presented)
    # The index or directory alone, without the matches: what browsing the block finds.
    entries = recall.entries if recall else []
    listed = [records[e.id].message_ids for e in entries if e.id in records]
    answer.listed_one = one(listed)
    answer.found_all, answer.found_any = among(found)
    answer.found_one = one(found)


def _sum(rows: Any) -> Cost:
    """Model calls (tool calls are not model calls) and their tokens and dollars."""
    total = Cost()
    for row in rows:
        if row["kind"].startswith("tool:"):
            continue
        total.calls += 1
        total.prompt_tokens += int(row["prompt_tokens"])
        total.completion_tokens += int(row["completion_tokens"])
        total.cost_usd += float(row["cost_usd"])
    return total


def _settings_summary(
    settings: MemorySettings, options: Options, dataset: Dataset
) -> dict[str, Any]:
    return {
        "idle_window_seconds": settings.idle_window_seconds,
        "batch_max_bytes": settings.batch_max_bytes,
        "index_max_bytes": settings.index_max_bytes,
        "index_max_ids": settings.index_max_ids,
        "agent_history_messages": settings.agent_history_messages,
        "agent_max_tool_rounds": settings.agent_max_tool_rounds,
        "inactive_prune_days": settings.inactive_prune_days,
        "pruning": options.prune,
        "late_worker": options.late_worker,
        "full_context_bytes": options.full_context_bytes,
        "baselines": options.baselines,
        "busy_group": any(c.talked_after for c in dataset.conversations),
    }
