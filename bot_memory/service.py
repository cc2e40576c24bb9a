"""Memory: the one service object a host bot holds.

    memory = await Memory.open(MemorySettings())   # DATABASE_URL, or embedded PostgreSQL
    ...
    await memory.close()

Ingress records through it, the worker runs under it, recall and tools are reached from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from bot_memory import control
from bot_memory.agent import ReferenceAgent
from bot_memory.control import ControlResult
from bot_memory.database import Database
from bot_memory.intents import MemoryRequest
from bot_memory.models import ChatModel, build_model
from bot_memory.pipeline.context import PipelineContext
from bot_memory.pipeline.worker import Pipeline, Worker
from bot_memory.recall import RecallContext, recall
from bot_memory.scopes import Scope
from bot_memory.settings import MemorySettings
from bot_memory.store import RequestStatus, SourceMessage, Store
from bot_memory.tools import ToolExecutor

log = structlog.get_logger(__name__)


@dataclass
class Memory:
    settings: MemorySettings
    db: Database
    store: Store
    model: ChatModel
    pipeline: Pipeline
    worker: Worker
    tools: ToolExecutor
    agent: ReferenceAgent

    @classmethod
    async def open(
        cls, settings: MemorySettings | None = None, *, model: ChatModel | None = None
    ) -> Memory:
        settings = settings or MemorySettings()
        db = await Database.open(settings)
        store = Store(db.pool, directory_max=settings.pending_directory_max)
        await store.ensure_workspace(settings.workspace)
        model = model or build_model(settings)
        worker_store = Store(db.worker_pool, directory_max=settings.pending_directory_max)
        pipeline = Pipeline(PipelineContext(store=worker_store, model=model, settings=settings))
        tools = ToolExecutor(store, model, settings)
        log.info(
            "memory.opened",
            embedded=db.embedded is not None,
            provider=model.provider,
            model=model.model,
            workspace=settings.workspace,
        )
        return cls(
            settings=settings,
            db=db,
            store=store,
            model=model,
            pipeline=pipeline,
            worker=Worker(pipeline),
            tools=tools,
            agent=ReferenceAgent(store, model, tools, settings),
        )

    async def close(self) -> None:
        await self.worker.stop()
        await self.model.aclose()
        await self.db.close()

    # --- ingress ----------------------------------------------------------------------------

    async def record(
        self,
        scope: Scope,
        *,
        text: str,
        speaker_id: int,
        thread_id: int = 0,
        telegram_message_id: int | None = None,
        language: str | None = None,
    ) -> SourceMessage:
        """Record a directed message and open its interactive request (one statement)."""
        return await self.store.record_directed(
            scope,
            thread_id=thread_id,
            telegram_message_id=telegram_message_id,
            speaker_id=speaker_id,
            text=text,
            language=language,
            budget_usd=self.settings.request_budget_usd,
        )

    async def record_edit(self, chat_id: int, telegram_message_id: int, text: str) -> str | None:
        return await self.store.record_edit(
            self.settings.workspace,
            chat_id=chat_id,
            telegram_message_id=telegram_message_id,
            text=text,
        )

    # --- requests ---------------------------------------------------------------------------

    async def begin(self, source: SourceMessage, *, kind: str = "chat") -> None:
        """Mark the request running, pinned to the current provider and model."""
        await self.store.start_request(
            source.request_id, provider=self.model.provider, model=self.model.model, kind=kind
        )

    async def finish(
        self,
        source: SourceMessage,
        *,
        status: RequestStatus,
        answer_text: str | None = None,
        answer_telegram_id: int | None = None,
        bot_id: int | None = None,
        error: str | None = None,
    ) -> None:
        await self.store.finish_request(
            source.request_id,
            status=status,
            answer_text=answer_text,
            answer_telegram_id=answer_telegram_id,
            bot_id=bot_id,
            error=error,
        )

    # --- recall and control -----------------------------------------------------------------

    async def recall(self, scope: Scope) -> RecallContext:
        return await recall(self.store, scope)

    async def control(
        self, request: MemoryRequest, source: SourceMessage, *, is_admin: bool
    ) -> ControlResult:
        return await control.apply(
            self.store,
            request,
            source,
            is_admin=is_admin or source.speaker_id in self.settings.admin_user_ids,
            provider=self.model.provider,
            model=self.model.model,
        )
