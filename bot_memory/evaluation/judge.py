"""`--judge`: a model grades each answer correct or incorrect, with a fixed, versioned prompt.

Token F1 punishes a right answer worded differently; a judge does not. The judge is an
OpenAI-compatible endpoint: EVAL_JUDGE_BASE_URL / EVAL_JUDGE_API_KEY / EVAL_JUDGE_MODEL (or
--judge-base-url / --judge-model), else the model the bot is configured with (LLM_*). It is
called through the project's own client (redaction and prices included) and is not charged to
any workspace: its calls are counted apart. Change the prompt only with a new JUDGE_VERSION, or
scores stop being comparable across runs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from bot_memory.errors import BotMemoryError
from bot_memory.models import ChatModel, ModelError, Usage, build_model
from bot_memory.settings import MemorySettings

JUDGE_VERSION = "bot-memory-judge-1"
JUDGE_SYSTEM = """\
You grade a chat assistant's answer to a question about an earlier conversation.
You get the question, the gold answer, and the assistant's response.
Say CORRECT when the response gives the substance of the gold answer: other wording, extra
detail, or an equivalent date or number format are fine. Say INCORRECT when it contradicts the
gold answer, leaves it out, hedges between alternatives, or says it does not know.
When the gold answer is that the conversation does not say, CORRECT means the response says it
does not know or that this was not mentioned.
Answer with exactly one word: CORRECT or INCORRECT."""
JUDGE_USER = "Question: {question}\nGold answer: {gold}\nResponse: {response}"
_VERDICT = re.compile(r"\b(INCORRECT|CORRECT)\b", re.IGNORECASE)


class JudgeUnavailable(BotMemoryError, RuntimeError):
    """--judge was asked for but no endpoint is configured."""


@dataclass
class Judge:
    model: ChatModel
    calls: int = 0
    failures: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0

    @classmethod
    def configured(
        cls, settings: MemorySettings, *, base_url: str | None = None, model: str | None = None
    ) -> Judge:
        """The judge endpoint: options, then EVAL_JUDGE_*, then the bot's own LLM_*."""
        url = base_url or os.environ.get("EVAL_JUDGE_BASE_URL") or settings.llm_base_url
        key = os.environ.get("EVAL_JUDGE_API_KEY") or settings.llm_api_key
        name = model or os.environ.get("EVAL_JUDGE_MODEL") or settings.llm_model
        if not url and not key:
            raise JudgeUnavailable(
                "--judge needs a model endpoint: set EVAL_JUDGE_BASE_URL and EVAL_JUDGE_MODEL"
                " (or LLM_BASE_URL / LLM_MODEL); the offline model cannot grade answers"
            )
        judge_settings = settings.model_copy(
            update={"llm_base_url": url, "llm_api_key": key, "llm_model": name}
        )
        judge = build_model(judge_settings)
        if judge.provider == "offline":
            raise JudgeUnavailable("--judge needs a model endpoint, not the offline model")
        return cls(judge)

    @property
    def name(self) -> str:
        return f"{self.model.provider}/{self.model.model}"

    async def grade(self, question: str, answers: tuple[str, ...], response: str) -> bool | None:
        """True: correct; False: incorrect; None: the judge failed or said neither."""
        messages = [
            {"role": "system", "content": JUDGE_SYSTEM},
            {
                "role": "user",
                "content": JUDGE_USER.format(
                    question=question, gold=" | ".join(answers), response=response or "(no answer)"
                ),
            },
        ]
        self.calls += 1
        try:
            completion = await self.model.complete(messages)  # no max_tokens: reasoning models
        except ModelError:
            self.failures += 1
            return None
        self.usage = Usage(
            prompt_tokens=self.usage.prompt_tokens + completion.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens + completion.usage.completion_tokens,
        )
        self.cost_usd += self.model.cost_usd(completion.usage)
        found = _VERDICT.search(completion.content or "")
        if found is None:
            self.failures += 1
            return None
        return found.group(1).upper() == "CORRECT"

    async def aclose(self) -> None:
        await self.model.aclose()
