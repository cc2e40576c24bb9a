"""The offline model (demo and eval default): what it keeps from a conversation."""

from __future__ import annotations

import json

from bot_memory.models.base import EXTRACTION, StructuredOutput
from bot_memory.models.offline import OfflineModel
from bot_memory.pipeline.prompts import extraction_messages


async def extract(texts: list[str]) -> dict[str, object]:
    sources = [
        {"id": f"m{i}", "role": "user", "speaker_id": 7, "text": t} for i, t in enumerate(texts)
    ]
    messages = extraction_messages(scope_kind="private", sources=sources, existing=[])
    done = await OfflineModel().complete(
        messages, output=StructuredOutput(name=EXTRACTION, schema_={})
    )
    result: dict[str, object] = json.loads(done.content or "{}")
    return result


async def test_questions_are_not_kept_as_memories() -> None:
    asked = await extract(["What do you remember about my trip?", "你记得我的行程吗？"])
    assert asked == {"title": "", "summary": "", "source_ids": []}
    mixed = await extract(["What is the plan?", "we ship v2 on Friday"])
    assert mixed["title"] == "we ship v2 on Friday" and mixed["source_ids"] == ["m1"]
