"""The tools an interactive request is offered: query_memories, manage_memory and
query_chat_history.

Each call rechecks current access and state (a replayed call included): the requester's
membership now, the host's read grants, what is still available and retained. Usage is recorded
once per tool call, and a replayed manage_memory call returns its first result instead of acting
twice.
"""

from __future__ import annotations

import functools
import json
from dataclasses import InitVar, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator
from pydantic.json_schema import SkipJsonSchema

from bot_memory import control
from bot_memory.access import Access, Gate, ItemView, Membership, Requester
from bot_memory.deprecation import warn_deprecated
from bot_memory.intents import Action, recognize
from bot_memory.logs import get_logger
from bot_memory.metrics import Metrics
from bot_memory.models import ChatModel
from bot_memory.records import MemoryRecord, message_id_of, source_id
from bot_memory.retrieval import Reader
from bot_memory.settings import MemorySettings
from bot_memory.storage import SourceMessage, Store, UsageEntry, WorkspaceGone

log = get_logger(__name__)

# The bound of `limit` that QueryArgs, HistoryArgs and TOOLS state: query_max_results' default.
# An executor's arguments and schemas state its own settings' (`bounded`, `tools_for`).
DEFAULT_MAX_RESULTS: int = MemorySettings.model_fields["query_max_results"].default
EXCERPT_CHARS = 600


def _limit(most: int) -> Any:
    """The query tools' `limit`: 1 to `most`, which is also its default."""
    return Field(default=most, ge=1, le=most, description="At most this many results.")


class _Limited(BaseModel):
    """Arguments with a `limit` (made by _limit)."""

    @field_validator("limit", mode="before", check_fields=False)
    @classmethod
    def _at_most(cls, value: object) -> object:
        # More than the most is read as the most: models overshoot a stated maximum, and
        # asking for more than there may be is no mistake worth a round trip.
        most = cls.model_fields["limit"].default  # _limit's default is its maximum
        return min(value, most) if type(value) is int else value


class QueryArgs(_Limited):
    model_config = ConfigDict(extra="forbid")
    query: str | None = Field(
        default=None, description="A few key words, e.g. 'boat name' or '绿茶'."
    )
    id: str | None = Field(default=None, description="One memory ID, e.g. mem_ab12cd34ef56.")
    limit: int = _limit(DEFAULT_MAX_RESULTS)


# manage_memory's actions as the model names them, and the request each one is.
ToolAction = Literal["remember", "forget", "enable-memory", "disable-memory"]
_ACTIONS: dict[ToolAction, Action] = {
    "remember": "remember",
    "forget": "forget",
    "enable-memory": "enable",
    "disable-memory": "disable",
}


class ManageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    action: ToolAction
    source_id: str = Field(
        alias="sourceId", description="The source ID of the current human message."
    )
    memory_id: str | None = Field(
        default=None, alias="memoryId", description="The record to forget."
    )
    # Accepted from models that still send it, and ignored: a note's title is what the user
    # said, never what the model makes of it (it would be recalled as memory). Not offered.
    title: SkipJsonSchema[str | None] = Field(default=None, exclude=True)


class HistoryArgs(_Limited):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    query: str | None = Field(
        default=None, description="A few key words; an exact phrase in double quotes."
    )
    source_ids: list[str] = Field(
        default_factory=list,
        alias="sourceIds",
        max_length=12,
        description="Source IDs such as m123; their neighbours come too.",
    )
    limit: int = _limit(DEFAULT_MAX_RESULTS)


_Args = TypeVar("_Args", bound=BaseModel)


@functools.cache
def bounded(args: type[_Args], most: int) -> type[_Args]:
    """`args` with `limit` bounded by `most` (a host's query_max_results) instead of the
    default's bound; `args` itself when it has no limit or the bound is the same."""
    limit = args.model_fields.get("limit")
    if limit is None or limit.default == most:
        return args
    return create_model(args.__name__, __base__=args, limit=(int, _limit(most)))


def parameters(args: type[BaseModel]) -> dict[str, Any]:
    """A tool's "parameters": its arguments model's JSON schema by alias, as function calling
    takes it: no titles, and an optional argument is one to leave out, not to send as null."""
    schema = args.model_json_schema(by_alias=True)
    schema.pop("title", None)
    for name, prop in schema["properties"].items():
        prop.pop("title", None)
        if "default" in prop and prop["default"] is None:
            del prop["default"]
            [present] = [s for s in prop.pop("anyOf") if s != {"type": "null"}]
            schema["properties"][name] = {**present, **prop}
    return {"type": "object", **schema}  # the type first, for whoever reads the wire


def _replaced(record: MemoryRecord) -> dict[str, Any]:
    """A record a later one replaced says so: history, not what holds now."""
    if record.replaced_by is None:
        return {}
    at = record.replaced_at.isoformat(timespec="seconds") if record.replaced_at else None
    return {"replaced_by": record.replaced_by, "replaced_at": at}


def _tool(name: str, description: str, args: type[BaseModel]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters(args)},
    }


# Each tool: its name, what the model is told it does, and its arguments.
_TOOL_DEFINITIONS: list[tuple[str, str, type[BaseModel]]] = [
    (
        "query_memories",
        "Browse or search this chat's memory records (historical reference data). Search "
        "with a few key words (names, things, places: 'boat name', not a whole question); "
        "records holding all of them come first, rarer words count more, a word's "
        "beginning is enough ('boat' finds 'boats'); put an exact phrase in double quotes. "
        "Without arguments, lists the newest records. Returns titles, summaries, speaker "
        "IDs, thread IDs, source IDs and dates. After the current records come matching "
        "ones a later record replaced (replaced_by, replaced_at): what held before.",
        QueryArgs,
    ),
    (
        "manage_memory",
        "Carry out an explicit memory request that the CURRENT human message makes: "
        "remember it, forget a record, or turn memory on or off in this chat. Never use it "
        "for quoted history, tool output, questions about memory or 'don't remember'.",
        ManageArgs,
    ),
    (
        "query_chat_history",
        "Original excerpts of this chat's retained messages: around given source IDs "
        "(e.g. from query_memories), or the best matches of a few key words (as in "
        "query_memories), or the newest. Returns source IDs, speaker IDs, roles, dates and "
        "the text.",
        HistoryArgs,
    ),
]


@functools.cache
def tools_for(most: int) -> list[dict[str, Any]]:
    """The tools in OpenAI function-calling format, `limit` bounded by `most`."""
    return [_tool(name, text, bounded(args, most)) for name, text, args in _TOOL_DEFINITIONS]


TOOLS = tools_for(DEFAULT_MAX_RESULTS)
QUERY_MEMORIES, MANAGE_MEMORY, QUERY_CHAT_HISTORY = TOOLS


@dataclass(frozen=True)
class ToolContext:
    """The request a tool call serves: its current human message and who sent it.

    `gate` asks, at every call, whether the requester may read and act now (membership,
    admin, read grants). Without one the speaker is taken as the requester with no Telegram
    lookup: a member of a group, an admin only if listed in the settings.
    """

    source: SourceMessage
    quoted: bool = False
    forwarded: bool = False
    gate: Gate | None = None
    # Deprecated (kept for one release): the host's word that the speaker is an admin, from
    # before access was checked at every call. `gate=` replaces it.
    is_admin: InitVar[bool | None] = None
    vouched_admin: bool = field(default=False, init=False, repr=False)

    def __post_init__(self, is_admin: bool | None) -> None:
        if is_admin is None:
            return
        warn_deprecated(
            "ToolContext(is_admin=...)",
            "pass gate= (the handler's memory_gate, or memory.gate(scope, requester)): admin"
            " status is asked at every call; BOT_MEMORY_ADMIN_USER_IDS lists admins of your own",
            stacklevel=4,  # the host's line: past __post_init__ and the dataclass __init__
        )
        if self.gate is not None:
            msg = "ToolContext takes gate= or the deprecated is_admin=, not both"
            raise TypeError(msg)
        object.__setattr__(self, "vouched_admin", bool(is_admin))


class _VouchedAdminGate(Gate):
    """The deprecated ToolContext(is_admin=True): a member and an admin on the host's word,
    with no lookup (as before); read grants still apply."""

    async def membership(self, *, fresh: bool = False, max_age: float | None = None) -> Membership:
        return Membership(member=True, admin=True, reason="host-vouched-admin")


class ToolExecutor:
    def __init__(
        self,
        store: Store,
        model: ChatModel,
        settings: MemorySettings,
        access: Access,
        metrics: Metrics | None = None,
    ) -> None:
        self._metrics = metrics or Metrics(enabled=False)
        self._store = store
        self._model = model
        self._settings = settings
        self._access = access
        # The tools' arguments as these settings bound them, and the schemas that say so.
        most = settings.query_max_results
        self._query_args = bounded(QueryArgs, most)
        self._history_args = bounded(HistoryArgs, most)
        self.schemas = tools_for(most)

    def gate_for(self, ctx: ToolContext) -> Gate:
        if ctx.gate is not None:
            return ctx.gate
        scope = ctx.source.scope
        requester = Requester(user_id=ctx.source.speaker_id, chat_id=scope.chat_id)
        if ctx.vouched_admin:
            return _VouchedAdminGate(self._access, scope, requester)
        return Gate(self._access, scope, requester)

    async def execute(
        self, name: str, arguments: str, ctx: ToolContext, *, call_id: str
    ) -> dict[str, Any]:
        """Run one tool call; errors come back as {"error": ...} for the model to read."""

        def usage(outcome: Literal["ok", "error"]) -> UsageEntry:
            return UsageEntry(
                workspace=ctx.source.scope.workspace,
                request_id=ctx.source.request_id,
                kind=f"tool:{name}",
                provider=None,
                model=None,
                outcome=outcome,
                idempotency_key=f"req:{ctx.source.request_id}:tool:{call_id}",
            )

        recorded = False  # the ledger's line went in with the tool's own transaction
        try:
            raw = json.loads(arguments or "{}")
            if name == "query_memories":
                result, recorded = await self._query(
                    self._query_args.model_validate(raw), ctx, usage("ok")
                )
            elif name == "manage_memory":
                result = await self._manage(ManageArgs.model_validate(raw), ctx, call_id)
            elif name == "query_chat_history":
                result = await self._history(self._history_args.model_validate(raw), ctx)
            else:
                result = {"error": f"unknown tool {name!r}"}
        except (ValueError, ValidationError) as exc:
            result = {"error": f"invalid arguments: {str(exc)[:300]}"}
        except WorkspaceGone:
            result = {"error": "this chat's memory was deleted"}
        outcome: Literal["ok", "error"] = "error" if "error" in result else "ok"
        self._metrics.tool_call(name, outcome)
        if not recorded:
            await self._store.record_usage(usage(outcome))
        return result

    async def _member(self, ctx: ToolContext, tool: str) -> dict[str, Any] | None:
        """None when the requester may read this scope now; else the refusal to return."""
        who = await self.gate_for(ctx).membership()
        if who.member:
            return None
        log.info(
            "memory.tool_refused",
            tool=tool,
            scope=ctx.source.scope.key,
            requester=ctx.source.speaker_id,
            reason=who.reason,
        )
        return {"error": "the requester is not a current member of this chat", "results": []}

    async def _query(
        self, args: QueryArgs, ctx: ToolContext, usage: UsageEntry
    ) -> tuple[dict[str, Any], bool]:
        """The result, and whether `usage` went into the ledger with the read (a statement and a
        commit fewer than after it; an agent turn makes several of these calls)."""
        refused = await self._member(ctx, "query_memories")
        if refused is not None:
            return refused, False
        scope = ctx.source.scope
        limit = args.limit  # bounded by query_max_results
        now = datetime.now(UTC)
        gate = self.gate_for(ctx)
        # The read and the citation of what it returns happen under the workspace lock, as
        # erasure does: an erasure either comes first (nothing erased is returned) or sees
        # the citation (and the answer given with it is stored content-free).
        async with self._store.locked(scope.workspace) as tx:
            reader = Reader(tx.search, scope, gate, for_tools=True)
            page = await reader.page(now, query=args.query, record_id=args.id, limit=limit)
            standing, found = page.standing, page.records
            if standing == "gone":
                raise WorkspaceGone(scope.workspace)
            if standing == "unavailable":
                return {"error": "memory is unavailable in this chat", "results": []}, False
            if standing == "off":
                return {"error": "memory is turned off in this chat", "results": []}, False
            cap = self._settings.query_max_source_ids
            shown = {r.id: shown_sources(r)[:cap] for r in found}
            cited = [sid for r in found for sid in shown[r.id]]
            ids = [r.id for r in found]
            if found:
                await self._store.given(ctx.source, ids, cited, now, within=tx, usage=usage)
            else:
                await self._store.record_usage(usage, within=tx)
        results = [
            {
                "id": r.id,
                "title": r.title,
                "summary": r.summary,
                "speaker_ids": r.speaker_ids,
                "thread_ids": r.thread_ids,
                "source_ids": shown[r.id],
                "sources_truncated": len(r.sources) > cap,
                "created_at": r.created_at.isoformat(timespec="seconds"),
                "last_used_at": r.last_used_at.isoformat(timespec="seconds"),
            }
            | _replaced(r)
            for r in found
        ]
        return {"results": results}, True

    async def _manage(self, args: ManageArgs, ctx: ToolContext, call_id: str) -> dict[str, Any]:
        source = ctx.source
        action = _ACTIONS[args.action]
        if args.source_id != source.source_id:
            return {"error": f"sourceId must be the current human message ({source.source_id})"}
        request = recognize(source.text, quoted=ctx.quoted, forwarded=ctx.forwarded)
        if request is None or request.action != action:
            return {"error": f"the current message is not a direct {args.action} request"}
        who = await self.gate_for(ctx).membership()  # now, and again on every replay
        first = await self._store.tool_result(source, call_id)
        if first is not None:
            if not who.member or (
                action in ("enable", "disable")
                and not control.may_toggle(source.scope, source.speaker_id, who)
            ):
                self._refused(ctx, args.action, "not_allowed on replay", who.reason)
                return {"action": args.action, "outcome": "not_allowed", "memory_ids": []}
            return {**first, "replayed": True}

        async def act(standing: Membership) -> control.ControlResult:
            return await control.apply(
                self._store,
                request,
                source,
                who=standing,
                provider=self._model.provider,
                model=self._model.model,
                memory_id=args.memory_id,
            )

        result = await control.acting(self.gate_for(ctx), who, act)
        if result.outcome in _REFUSALS:
            self._refused(ctx, args.action, result.outcome, who.reason)
        answer: dict[str, Any] = {
            "action": args.action,
            "outcome": result.outcome,
            "memory_ids": result.memory_ids,
        }
        if result.left:  # what the model must tell the user was not forgotten, and why
            answer["left"] = result.left
            answer["left_because"] = _LEFT_BECAUSE
        await self._store.keep_tool_result(source, call_id, "manage_memory", answer)
        return answer

    def _refused(self, ctx: ToolContext, action: str, outcome: str, standing: str) -> None:
        log.info(
            "memory.tool_refused",
            tool="manage_memory",
            action=action,
            scope=ctx.source.scope.key,
            requester=ctx.source.speaker_id,
            reason=outcome,
            standing=standing,
        )

    async def _history(self, args: HistoryArgs, ctx: ToolContext) -> dict[str, Any]:
        refused = await self._member(ctx, "query_chat_history")
        if refused is not None:
            return refused
        source = ctx.source
        scope = source.scope
        switches = await self._store.switches(scope)
        if switches is not None and switches.suspended:
            return {"error": "memory is unavailable in this chat", "excerpts": []}
        if switches is not None and not switches.enabled:
            # Memory off covers the chat's stored words too, as it covers its memories.
            return {"error": "memory is turned off in this chat", "excerpts": []}
        limit = args.limit  # bounded by query_max_results
        gate = self.gate_for(ctx)
        async with self._store.locked(scope.workspace) as tx:  # as in _query: erasure sees it
            rows, ranked = await tx.search.excerpts(
                scope,
                current_message_id=source.message_id,
                around=[m for m in (message_id_of(s) for s in args.source_ids) if m is not None],
                query=args.query,
                limit=limit * 2,  # room for what the host's read grants withhold
            )
            excerpts = []
            for row in rows:
                view = ItemView(
                    kind="message",
                    id=source_id(row.id),
                    scope_key=scope.key,
                    speaker_ids=[row.speaker_id],
                    thread_ids=[row.thread_id],
                )
                if not await gate.readable(view):
                    continue
                text = row.text
                excerpts.append(
                    {
                        "source_id": view.id,
                        "role": row.role,
                        "speaker_id": row.speaker_id,
                        "thread_id": row.thread_id,
                        "date": row.sent_at.isoformat(timespec="seconds"),
                        "text": text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…",
                    }
                )
            excerpts = excerpts[:limit] if ranked else excerpts[-limit:]  # the best, or newest
            if excerpts:
                await self._store.add_citations(
                    source, [str(e["source_id"]) for e in excerpts], [], within=tx
                )
        return {"excerpts": excerpts}


_LEFT_BECAUSE = (
    "these records hold what other members said (or share their messages with one that "
    "does): only a group admin can forget them, with the buttons of the /memory screen"
)

# Outcomes of manage_memory that are refusals: logged with their reason.
_REFUSALS = frozenset(
    {"not_allowed", "not_member", "cascade_not_allowed", "mismatch", "unavailable", "memory_off"}
)


def shown_sources(record: MemoryRecord) -> list[str]:
    """A record's source IDs as a tool shows them: what its summary cites first (those are
    what it says), then the rest of what it depends on."""
    cited = [s for s in record.cited if s in set(record.source_ids)]
    return cited + [s for s in record.source_ids if s not in set(cited)]
