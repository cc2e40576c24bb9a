"""The Mini App's HTTP API: every call is authenticated and authorized from scratch.

1. `initData` (the `Authorization: tma <initData>` header) is this bot's, by Telegram's HMAC,
   and not older than BOT_MEMORY_MINIAPP_AUTH_MAX_AGE_SECONDS; the user is the one it names,
   never anything the page says.
2. The scope: the user's own private chat, or a group Topic named by a signed scope ticket
   (`X-Memory-Scope`) that was issued to this same user and has not expired.
3. Then the rules of the chat, through the same code: a current member (getChatMember, asked
   at every page open and at least every BOT_MEMORY_MINIAPP_MEMBER_CHECK_SECONDS, whatever the
   cache holds), the host's read grants on every record shown, `may_forget` / `may_toggle` and
   `acting` (a promoted admin is asked about again), `forget_record` and `switch` for changes.
4. An export link downloads once, anywhere (its nonce is claimed in the database), with its
   user's login data, unless it was made for Telegram's downloadFile (no headers: a bearer).

Errors say what happened in the user's language, never how (no traces, no SQL, no IDs).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from aiogram import Bot
from aiogram.types import Chat, User
from aiogram.utils.web_app import WebAppUser
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot_memory.access import Gate, Membership, Requester
from bot_memory.cli import operations
from bot_memory.control import (
    ControlResult,
    acting,
    forget_preview,
    forget_record,
    may_toggle,
    switch,
)
from bot_memory.errors import BotMemoryError
from bot_memory.logs import get_logger
from bot_memory.records import MemoryRecord
from bot_memory.retrieval import Reader
from bot_memory.scopes import Scope
from bot_memory.service import Memory, MemoryUnavailable
from bot_memory.storage import WorkspaceGone, is_connection_error
from bot_memory_aiogram import display
from bot_memory_aiogram.i18n import Texts
from bot_memory_aiogram.middleware.memory import MemoryMiddleware, member_lookup
from bot_memory_aiogram.miniapp import views
from bot_memory_aiogram.miniapp.init_data import (
    InitDataError,
    unverified_language,
    verify_init_data,
)
from bot_memory_aiogram.miniapp.tickets import (
    Ticket,
    TicketError,
    TicketKind,
    issue,
    new_nonce,
    read,
    ticket_key,
)

log = get_logger(__name__)

Clock = Callable[[], datetime]
SCOPE_HEADER = "X-Memory-Scope"
QUERY_MAX_CHARS = 200


class Refusal(BotMemoryError):
    """An answer other than success: an HTTP status, a short code for the page, and the
    message key (the bot's own strings) that says what happened."""

    def __init__(self, status: int, code: str, key: str) -> None:
        super().__init__(code)
        self.status = status
        self.code = code
        self.key = key
        self.language: str | None = None  # the caller's, once initData has told it


_OUTCOMES = {  # control outcomes that refuse, as the chat words them
    "not_allowed": (403, "memory-not-allowed"),
    "cascade_not_allowed": (403, "memory-cascade-not-allowed"),
    "not_member": (403, "memory-not-member"),
    "memory_off": (409, "memory-off"),
    "unavailable": (409, "memory-unavailable"),
}


@dataclass(frozen=True)
class Caller:
    """Who is asking, about which scope, with what standing (all checked for this call)."""

    user: WebAppUser
    language: str
    scope: Scope
    gate: Gate
    who: Membership

    @property
    def topic(self) -> bool:
        return not self.scope.is_private and self.scope.topic_id != 0


_Body = TypeVar("_Body", bound=BaseModel)


# A memory ID as the store makes them: never a NUL or anything else the database refuses.
MemoryId = Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


class ForgetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ids: list[MemoryId] = Field(min_length=1)


class SwitchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool  # the state wanted, not a toggle: sending it twice changes nothing


class ExportLinkBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Something fetches the link without the page's headers (Telegram's downloadFile): the link
    # is the credential. Otherwise the download must carry the same user's login data.
    bearer: bool = False


class MiniAppApi:
    def __init__(
        self,
        *,
        memory: Memory,
        bot: Bot,
        texts: Texts,
        scopes: MemoryMiddleware,
        clock: Clock | None = None,
    ) -> None:
        self.memory = memory
        self.bot = bot
        self.texts = texts
        self.scopes = scopes
        self.clock = clock or (lambda: datetime.now(UTC))
        self.settings = memory.settings
        self._key = ticket_key(bot.token)

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/api/session", self._wrap(self.session)),
            web.get("/api/memories", self._wrap(self.memories)),
            web.post("/api/preview", self._wrap(self.preview)),
            web.post("/api/forget", self._wrap(self.forget)),
            web.post("/api/switch", self._wrap(self.switch)),
            web.get("/api/status", self._wrap(self.status)),
            web.post("/api/export-link", self._wrap(self.export_link)),
            web.get("/api/export", self._wrap(self.export)),
        ]

    # --- the checks every call makes ---------------------------------------------------------

    def _wrap(
        self, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def run(request: web.Request) -> web.StreamResponse:
            try:
                response = await handler(request)
            except Refusal as refusal:
                response = self._refused(request, refusal)
            except WorkspaceGone:  # nothing was ever stored here, or it was just purged
                response = self._refused(request, Refusal(409, "gone", "memory-unavailable"))
            except (MemoryUnavailable, OSError) as exc:
                log.warning("memory.miniapp_unavailable", error=type(exc).__name__)
                response = self._refused(request, Refusal(503, "busy", "page-error-busy"))
            except Exception as exc:
                if not is_connection_error(exc):
                    log.exception("memory.miniapp_failed", path=request.path)
                    response = self._refused(request, Refusal(500, "error", "memory-error"))
                else:
                    response = self._refused(request, Refusal(503, "busy", "page-error-busy"))
            response.headers["Cache-Control"] = "no-store"
            return response

        return run

    def _refused(self, request: web.Request, refusal: Refusal) -> web.Response:
        language = refusal.language or self.texts.for_user(
            _user(unverified_language(_init_data(request)))
        )
        log.info("memory.miniapp_refused", path=request.path, code=refusal.code)
        return web.json_response(
            {
                "error": refusal.code,
                "message": self.texts(language, refusal.key),
                "close": self.texts(language, "page-close"),  # the placeholder's button
            },
            status=refusal.status,
        )

    async def caller(self, request: web.Request, *, fresh: bool = False) -> Caller:
        """Who is asking and where, checked for this call; `fresh`: their membership is asked
        of Telegram now (a page opening), else an answer younger than
        BOT_MEMORY_MINIAPP_MEMBER_CHECK_SECONDS serves."""
        now = self.clock()
        user = self._verified(request, now)
        language = self.texts.for_user(_user(user.language_code))
        try:
            scope = await self._scope(request, user, now)
            return await self._standing(user, language, scope, fresh)
        except Refusal as refusal:
            refusal.language = language
            raise

    def _verified(self, request: web.Request, now: datetime) -> WebAppUser:
        """The user the request's initData names, if it is this bot's and recent enough."""
        try:
            return verify_init_data(
                _init_data(request),
                self.bot.token,
                now=now,
                max_age_seconds=self.settings.miniapp_auth_max_age_seconds,
            )
        except InitDataError as exc:
            if exc.reason == "expired":
                raise Refusal(401, "auth_expired", "page-error-expired") from exc
            raise Refusal(401, "auth", "page-error-auth") from exc

    async def _scope(self, request: web.Request, user: WebAppUser, now: datetime) -> Scope:
        token = request.headers.get(SCOPE_HEADER, "")
        if token:
            return self._scope_of(self._ticket(token, "scope", user.id, now))
        # No ticket: the user's own private chat with the bot.
        private = Chat(id=user.id, type="private", first_name=user.first_name)
        found = await self.scopes.scope_for(self.bot, private, _user_of(user), None)
        if found is None:
            raise Refusal(403, "unavailable", "memory-unavailable")
        return found

    def _ticket(self, token: str, kind: TicketKind, user_id: int | None, now: datetime) -> Ticket:
        """A ticket of this kind, signed by us, unexpired, and issued to `user_id` (when the
        caller is known: a download link names its user itself)."""
        try:
            ticket = read(token, self._key, kind=kind, now=now)
        except TicketError as exc:
            if exc.expired:
                raise Refusal(403, "link_expired", "page-error-link-expired") from exc
            raise Refusal(403, "link", "page-error-link") from exc
        if user_id is not None and ticket.user_id != user_id:
            raise Refusal(403, "link", "page-error-link")  # someone else's: forwarded, replayed
        return ticket

    def _scope_of(self, ticket: Ticket) -> Scope:
        if ticket.private:
            return Scope(
                workspace=ticket.workspace,
                bot_id=self.bot.id,
                kind="private",
                chat_id=ticket.chat_id,
                user_id=ticket.user_id,
            )
        return Scope(
            workspace=ticket.workspace,
            bot_id=self.bot.id,
            kind="shared",
            chat_id=ticket.chat_id,
            topic_id=ticket.topic_id,
        )

    async def _standing(self, user: WebAppUser, language: str, scope: Scope, fresh: bool) -> Caller:
        requester = Requester(user_id=user.id, chat_id=scope.chat_id)
        gate = Gate(self.memory.access, scope, requester, member_lookup(self.bot))
        # Telegram tells a bot that is not an admin nothing when a member leaves: the cache's
        # five minutes are too long for a page that shows the whole Topic.
        who = await gate.membership(fresh=fresh, max_age=self.settings.miniapp_member_check_seconds)
        if not who.member:
            raise Refusal(403, "not_member", "memory-not-member")
        return Caller(user=user, language=language, scope=scope, gate=gate, who=who)

    # --- reading ----------------------------------------------------------------------------

    async def session(self, request: web.Request) -> web.Response:
        c = await self.caller(request, fresh=True)  # the page opens: asked now
        title = "screen-title-topic" if c.topic else "screen-title-chat"
        return web.json_response(
            {
                "user": {"id": c.user.id, "first_name": c.user.first_name},
                "language": c.language,
                "strings": views.strings(self.texts, c.language),
                "counted": views.counted(
                    self.texts, c.language, self.settings.miniapp_max_selection
                ),
                "scope": {"kind": c.scope.kind, "topic": c.topic, "title": self._t(c, title)},
                "admin": c.who.admin and not c.scope.is_private,
                "may_toggle": may_toggle(c.scope, c.user.id, c.who),
                "page_size": self.settings.miniapp_page_size,
                "max_selection": self.settings.miniapp_max_selection,
            }
        )

    async def memories(self, request: web.Request) -> web.Response:
        c = await self.caller(request)
        query = request.query.get("q", "").strip()[:QUERY_MAX_CHARS] or None
        offset = _int(request.query.get("offset", "0"), 0, 100_000)
        limit = self.settings.miniapp_page_size
        now = self.clock()
        standing, records, more = await self._readable(c, query, offset, limit, now)
        summary = await self.memory.store.summary(c.scope, now)
        # The index and its runs are for a group's admins; everyone else reads a count.
        admin = c.who.admin and not c.scope.is_private
        status = display.status_line(self.texts, c.language, summary, admin=admin)
        share = display.share_line(self.texts, c.language, summary)
        body: dict[str, Any] = {
            "standing": standing,
            "enabled": summary.enabled,
            "records": await self._records_json(c, records),
            "more": more,
            "offset": offset,
            "status": status + "\n" + share if share else status,
        }
        if standing == "unavailable":
            body["message"] = self._t(c, "memory-unavailable")
        return web.json_response(body)

    async def _readable(
        self, c: Caller, query: str | None, offset: int, limit: int, now: datetime
    ) -> tuple[str, list[MemoryRecord], bool]:
        """One page of the records the caller may read (the read model the chat's screen and
        query_memories share: the same search, the host's read grants)."""
        page = await self._reader(c).page(now, query=query, offset=offset, limit=limit)
        return page.standing, page.records, page.more

    def _reader(self, c: Caller) -> Reader:
        return Reader(self.memory.store.search, c.scope, c.gate)

    async def _records_json(self, c: Caller, records: list[MemoryRecord]) -> list[dict[str, Any]]:
        store = self.memory.store
        recall = await store.recall_row(c.scope)
        message_ids = sorted({s.message_id for r in records for s in r.sources})
        telegram_ids = (
            await store.telegram_ids(c.scope.workspace, message_ids) if message_ids else {}
        )
        names = {**self.scopes.names, c.user.id: c.user.first_name}
        return [
            views.record_json(
                r,
                scope=c.scope,
                actor_id=c.user.id,
                who=c.who,
                names=names,
                indexed=set(recall.memory_ids) if recall else set(),
                telegram_ids=telegram_ids,
                max_sources=self.settings.query_max_source_ids,
            )
            for r in records
        ]

    async def status(self, request: web.Request) -> web.Response:
        c = await self.caller(request)
        if c.scope.is_private or not c.who.admin:
            raise Refusal(403, "not_allowed", "memory-not-allowed")
        now = self.clock()
        summary = await self.memory.store.summary(c.scope, now)
        report = await operations.status(self.memory.store, workspace=c.scope.workspace)
        row = report["workspaces"][0] if report["workspaces"] else {}
        budget = self.settings.workspace_budget_usd
        return web.json_response(
            {
                "status": display.status_line(self.texts, c.language, summary, admin=True),
                "spend": self._t(
                    c, "screen-spend", spent=f"${summary.spent_usd:.2f}", budget=f"${budget:.2f}"
                ),
                "jobs": row.get("jobs", {}),
                "jobs_text": views.jobs_line(self.texts, c.language, row.get("jobs", {})),
                "problems": self._t(c, "page-problems", count=len(report["problems"])),
                "spent_usd": summary.spent_usd,
                "reserved_usd": summary.reserved_usd,
                "budget_usd": budget,
            }
        )

    # --- changing ---------------------------------------------------------------------------

    async def _chosen(self, c: Caller, request: web.Request, now: datetime) -> list[str]:
        """The records named in the body, each present and readable by the caller (else the
        request is refused as the chat refuses a forged button: the memory is gone)."""
        body = await _body(request, ForgetBody)
        ids = list(dict.fromkeys(body.ids))
        if len(ids) > self.settings.miniapp_max_selection:
            raise Refusal(400, "too_many", "page-error-request")
        reader = self._reader(c)
        for rid in ids:
            if await reader.one(rid, now) is None:
                raise Refusal(404, "gone", "screen-gone")
        return ids

    async def preview(self, request: web.Request) -> web.Response:
        c = await self.caller(request)
        now = self.clock()
        ids = await self._chosen(c, request, now)
        store, scope, actor = self.memory.store, c.scope, c.user.id
        shown = await forget_preview(store, scope, ids, actor_id=actor, who=c.who)
        if (shown.refused or shown.left) and (admin := await c.gate.promoted(c.who)):
            shown = await forget_preview(store, scope, ids, actor_id=actor, who=admin)
            c = Caller(c.user, c.language, scope, c.gate, admin)  # as `acting` does
        reader = self._reader(c)
        visible = [r for r in shown.reached if await reader.readable(r)]
        body: dict[str, Any] = {
            "records": await self._records_json(c, visible),
            "hidden": len(shown.reached) - len(visible),
            "allowed": shown.allowed,
            "message": self._t(c, "page-preview", count=len(shown.reached)),
        }
        if body["hidden"]:
            body["hidden_message"] = self._t(c, "page-preview-hidden", count=body["hidden"])
        if shown.left and shown.allowed:  # what a forget would leave, of what was chosen
            body["left"] = await self._records_json(c, shown.left)
            body["left_message"] = self._t(c, "page-preview-left", count=len(shown.left))
        if not shown.allowed:
            chosen_refused = set(shown.refused) & set(shown.chosen)
            key = "memory-not-allowed" if chosen_refused else "memory-cascade-not-allowed"
            body["message"] = self._t(c, key)
        return web.json_response(body)

    async def forget(self, request: web.Request) -> web.Response:
        c = await self.caller(request)
        now = self.clock()
        ids = await self._chosen(c, request, now)
        store, scope, actor = self.memory.store, c.scope, c.user.id
        # All or nothing where it can be known beforehand: the preview's verdict first.
        shown = await forget_preview(store, scope, ids, actor_id=actor, who=c.who)
        who = c.who
        if (shown.refused or shown.left) and (admin := await c.gate.promoted(c.who)):
            who = admin
            shown = await forget_preview(store, scope, ids, actor_id=actor, who=admin)
        if shown.refused:  # nothing this actor may forget goes without someone else's words
            chosen_refused = set(shown.refused) & set(shown.chosen)
            outcome = "not_allowed" if chosen_refused else "cascade_not_allowed"
            status, key = _OUTCOMES[outcome]
            raise Refusal(status, outcome, key)
        forgotten: list[str] = []
        left = [r.id for r in shown.left]  # what the preview said stays stays
        for rid in shown.going:
            # Each through the chat's own forget: the rules, cascade and tombstones.

            async def forget_one(w: Membership, rid: str = rid) -> ControlResult:
                return await forget_record(store, scope, rid, actor_id=actor, who=w, now=now)

            result = await acting(c.gate, who, forget_one)
            log.info("memory.miniapp_forget", scope=scope.key, outcome=result.outcome)
            if result.outcome == "forgotten":
                forgotten += [m for m in result.memory_ids if m not in forgotten]
            elif result.outcome != "nothing_to_forget":  # gone already: taken by an earlier one
                status, key = _OUTCOMES.get(result.outcome, (403, "memory-not-allowed"))
                if not forgotten:
                    raise Refusal(status, result.outcome, key)
                break
        if left and forgotten:
            message = self._t(c, "memory-partly-forgotten", count=len(forgotten), left=len(left))
        else:
            message = self._t(c, "memory-forgotten", count=len(forgotten))
        body = {"forgotten": forgotten, "message": message}
        return web.json_response(body | ({"left": left} if left else {}))

    async def switch(self, request: web.Request) -> web.Response:
        c = await self.caller(request)
        body = await _body(request, SwitchBody)
        now = self.clock()
        store, scope = self.memory.store, c.scope
        result = await acting(
            c.gate,
            c.who,
            lambda w: switch(store, scope, body.enabled, actor_id=c.user.id, who=w, now=now),
        )
        log.info("memory.miniapp_switch", scope=scope.key, outcome=result.outcome)
        if result.outcome in _OUTCOMES:
            status, key = _OUTCOMES[result.outcome]
            raise Refusal(status, result.outcome, key)
        key = {
            "enabled": "memory-enabled",
            "disabled": "memory-disabled",
            "already_enabled": "memory-already-enabled",
            "already_disabled": "memory-already-disabled",
        }[result.outcome]
        return web.json_response(
            {
                "enabled": body.enabled,
                "message": self._t(c, key + ("-topic" if c.topic else "")),
            }
        )

    # --- export -----------------------------------------------------------------------------

    async def export_link(self, request: web.Request) -> web.Response:
        """A link for one download of the caller's export, for minutes: bound to this user and
        scope, and to their login data unless `bearer` (see `export`)."""
        c = await self.caller(request)
        body = await _body(request, ExportLinkBody) if request.body_exists else ExportLinkBody()
        now = self.clock()
        scope = c.scope
        ticket = Ticket(
            kind="download",
            private=scope.is_private,
            chat_id=scope.chat_id,
            topic_id=scope.topic_id,
            user_id=c.user.id,
            expires_at=int(now.timestamp() + self.settings.miniapp_download_seconds),
            workspace=scope.workspace,
            nonce=new_nonce(),
            bearer=body.bearer,
            language=c.language,
        )
        return web.json_response(
            {
                "url": "api/export?t=" + issue(ticket, self._key),
                "file_name": f"memory-{now.date().isoformat()}.jsonl",
            }
        )

    async def export(self, request: web.Request) -> web.StreamResponse:
        """What the user may take with them from this scope, as JSON Lines: the lines of
        `bot-memory export`, the records of their private chat and, in groups, those made only
        of their own statements, that they may read.

        Once per link, in whichever process serves it (the ticket's nonce is claimed in the
        database), and only while the ticket's user is a member, asked of Telegram now. The
        page fetches the link with its login data, which must be that user's. Telegram's
        downloadFile fetches a `bearer` link itself, without headers: that link is the
        credential (login data sent with it must still be its user's)."""
        now = self.clock()
        ticket = self._ticket(request.query.get("t", ""), "download", None, now)
        language = ticket.language  # signed: the user's when the link was made
        try:
            if not ticket.bearer or _init_data(request):
                user = self._verified(request, now)
                language = self.texts.for_user(_user(user.language_code))
                if user.id != ticket.user_id:
                    raise Refusal(403, "link", "page-error-link")  # someone else's link
            # A HEAD (a link preview, a proxy checking the link) answers as the download
            # would, without using the link up.
            return await self._exported(ticket, now, use=request.method != "HEAD")
        except Refusal as refusal:
            refusal.language = refusal.language or language or None
            raise

    async def _exported(self, ticket: Ticket, now: datetime, *, use: bool) -> web.Response:
        scope = self._scope_of(ticket)
        requester = Requester(user_id=ticket.user_id, chat_id=scope.chat_id)
        gate = Gate(self.memory.access, scope, requester, member_lookup(self.bot))
        if not (await gate.membership(fresh=True)).member:
            raise Refusal(403, "not_member", "memory-not-member")
        reader = Reader(self.memory.store.search, scope, gate)
        every = await reader.every(now, most=self.settings.workspace_max_records)
        lines = [
            json.dumps(operations.export_line(scope.workspace, r), ensure_ascii=False)
            for r in sorted(every.records, key=lambda r: (r.created_at, r.id))
            if operations.may_take(r, scope, ticket.user_id)
        ]
        # Claimed last: a download that failed before this (the database away) may be retried.
        if use and not await self.memory.store.tickets.use_once(
            ticket.nonce, datetime.fromtimestamp(ticket.expires_at, UTC)
        ):
            raise Refusal(410, "link_used", "page-error-link-used")
        if use:
            log.info(
                "memory.miniapp_export", scope=scope.key, records=len(lines), bearer=ticket.bearer
            )
        return web.Response(
            body=("".join(line + "\n" for line in lines)).encode(),
            content_type="application/x-ndjson",
            charset="utf-8",
            headers={
                "Content-Disposition": (
                    f'attachment; filename="memory-{now.date().isoformat()}.jsonl"'
                )
            },
        )

    def _t(self, c: Caller, key: str, **args: Any) -> str:
        return self.texts(c.language, key, **args)


def _init_data(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "tma" else ""


def _user(language_code: str | None) -> User:
    """A stand-in User whose only use is picking a language."""
    return User(id=0, is_bot=False, first_name="", language_code=language_code)


def _user_of(user: WebAppUser) -> User:
    return User(
        id=user.id,
        is_bot=False,
        first_name=user.first_name,
        last_name=user.last_name,
        username=user.username,
        language_code=user.language_code,
    )


def _int(raw: str, low: int, high: int) -> int:
    try:
        return min(max(int(raw), low), high)
    except ValueError as exc:
        raise Refusal(400, "request", "page-error-request") from exc


BODY_MAX_BYTES = 64 * 1024  # a selection of IDs is a few KB; held however the page is mounted


async def _body(request: web.Request, model: type[_Body]) -> _Body:
    """A JSON body within BODY_MAX_BYTES (413 past it, whatever the host app's own limit), that
    parses and validates (400 otherwise: bad JSON, nesting too deep, an ID with a NUL)."""
    if (request.content_length or 0) > BODY_MAX_BYTES:
        raise Refusal(413, "too_large", "page-error-request")
    raw = await request.content.read(BODY_MAX_BYTES + 1)
    if len(raw) > BODY_MAX_BYTES:
        raise Refusal(413, "too_large", "page-error-request")
    try:
        return model.model_validate(json.loads(raw))
    except (ValueError, ValidationError, RecursionError) as exc:
        raise Refusal(400, "request", "page-error-request") from exc
