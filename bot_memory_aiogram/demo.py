"""`python -m bot_memory demo`: the whole loop, offline, step by step.

The same middleware, routers, pipeline and agent a host runs, through a real aiogram Dispatcher
and Bot over HTTP, against the Bot API emulator on 127.0.0.1, on embedded PostgreSQL and the
offline model, with short windows. It prints what happens and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import signal
import textwrap
import time
from datetime import UTC, datetime
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiohttp import ClientSession, web

from bot_memory.access.tenancy import default_workspace
from bot_memory.cli import show_status
from bot_memory.models import Completion, OfflineModel, StructuredOutput
from bot_memory.records import MemoryRecord
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.settings import MemorySettings
from bot_memory.storage import WorkspaceView
from bot_memory_aiogram.miniapp import launch_fragment, path_of, sign_init_data
from bot_memory_aiogram.miniapp import serve as serve_app
from bot_memory_aiogram.miniapp.tickets import Ticket, issue, ticket_key
from bot_memory_aiogram.setup import ALLOWED_UPDATES, setup
from bot_memory_aiogram.testing import BotAPIEmulator

ADA, BO, CY = 1001, 2001, 2002
GROUP, TOPIC = -100200, 7
BOT = "memory_test_bot"
DEMO_APP_URL = "https://bot.example.com/memory/"
LIGHT = {"bg_color": "#ffffff", "text_color": "#000000", "button_color": "#2481cc"}
DARK = {"bg_color": "#17212b", "text_color": "#f5f5f5", "button_color": "#5288c1"}


class RecordingModel(OfflineModel):
    """The offline model, keeping what it was sent (after redaction) so the demo can show it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seen: list[tuple[str, list[dict[str, Any]]]] = []

    async def _complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        output: StructuredOutput | None,
        max_tokens: int | None,
    ) -> Completion:
        self.seen.append((output.name if output else "chat", messages))
        return await super()._complete(messages, tools=tools, output=output, max_tokens=max_tokens)

    def last(self, purpose: str) -> list[dict[str, Any]]:
        return next(m for p, m in reversed(self.seen) if p == purpose)


def say(title: str) -> None:
    print(f"\n== {title}")


def show(label: str, text: str) -> None:
    body = textwrap.indent(text.strip() or "(empty)", "     ")
    print(f"   {label}:\n{body}")


class Demo:
    def __init__(self, memory: Memory, model: RecordingModel, emu: BotAPIEmulator) -> None:
        self.memory = memory
        self.model = model
        self.emu = emu
        # Each chat is its own workspace: Ada's private chat, and the group.
        self.private = Scope(
            workspace=default_workspace(emu.bot_id, ADA),
            bot_id=emu.bot_id,
            kind="private",
            chat_id=ADA,
            user_id=ADA,
        )
        self.group = Scope(
            workspace=default_workspace(emu.bot_id, GROUP),
            bot_id=emu.bot_id,
            kind="shared",
            chat_id=GROUP,
            topic_id=TOPIC,
        )

    async def user(self, text: str, **kw: Any) -> dict[str, Any]:
        """Send as Ada in private (default) or as someone in the group; wait for the reply."""
        expected = len(self.emu.sent) + 1
        if "chat_id" not in kw:
            kw.update(chat_id=ADA, user_id=ADA)
        who = {ADA: "Ada", BO: "Bo", CY: "Cy"}[kw["user_id"]]
        where = "private" if kw["chat_id"] > 0 else f"group topic {TOPIC}"
        print(f"   {who} ({where}): {text}")
        self.emu.push_message(text=text, first_name=who, **kw)
        reply = (await self.emu.wait_for_sent(expected))[expected - 1].params
        print("   bot: " + str(reply["text"]).replace("\n", "\n        "))
        await self.request_closed()
        return reply

    async def request_closed(self) -> None:
        """The handler closes its request right after the reply is sent: wait for that."""
        deadline = time.monotonic() + 10
        while await self.memory.store.watch.open_requests():
            if time.monotonic() > deadline:
                raise TimeoutError("a request stayed open after its reply")
            await asyncio.sleep(0.01)

    async def in_group(
        self, text: str, user_id: int, language: str = "en", reply_to: int | None = None
    ) -> dict[str, Any]:
        return await self.user(
            text,
            chat_id=GROUP,
            user_id=user_id,
            chat_type="supergroup",
            is_forum=True,
            thread_id=TOPIC,
            language_code=language,
            chat_title="Launch team",
            reply_to_message_id=reply_to,
        )

    async def state(self, scope: Scope) -> WorkspaceView:
        return await self.memory.store.view(scope.workspace)

    async def wait_for_index(self, scope: Scope, *, containing: int = 1) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = await self.state(scope)
            mem = state.scopes.get(scope.key)
            if mem and not mem.index.pending and len(mem.index.memory_ids) >= containing:
                return
            await asyncio.sleep(0.1)
        raise TimeoutError(f"the pipeline did not index {scope.key} in time")

    async def wait_for_record(self, scope: Scope, text: str) -> MemoryRecord:
        """The worker's record holding `text`, once the conversation went idle and was read."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = await self.state(scope)
            for record in state.valid_records(scope.key):
                if text in record.summary and record.replaced_by is None:
                    return record
            await asyncio.sleep(0.1)
        raise TimeoutError(f"no record about {text!r} in time")

    async def show_records(self, scope: Scope) -> None:
        state = await self.state(scope)
        for record in state.valid_records(scope.key):
            show(
                f"memory {record.id} ({record.origin}, speakers {record.speaker_ids}, "
                f"sources {record.source_ids})",
                f"{record.title}\n{record.summary}",
            )
        mem = state.scopes.get(scope.key)
        if mem:
            show("recall index", mem.index.text)

    def screen_text(self, chat_id: int, message_id: int) -> str:
        stored = self.emu.get_message(chat_id, message_id) or {}
        return str(stored.get("text", ""))

    def buttons(self, chat_id: int, message_id: int) -> str:
        stored = self.emu.get_message(chat_id, message_id) or {}
        rows = stored.get("reply_markup", {}).get("inline_keyboard", [])
        return "\n".join(" | ".join(f"[{b['text']}]" for b in row) for row in rows)

    async def press(self, chat_id: int, message_id: int, label: str) -> None:
        """Press a button on a message as Ada; wait for the bot to answer the press."""
        stored = self.emu.get_message(chat_id, message_id) or {}
        rows = stored.get("reply_markup", {}).get("inline_keyboard", [])
        data = next(b["callback_data"] for row in rows for b in row if b["text"] == label)
        before = len(self.emu.calls_to("answerCallbackQuery"))
        print(f"   Ada presses [{label}]")
        self.emu.push_callback_query(chat_id=chat_id, user_id=ADA, data=data, message_id=message_id)
        await self.emu.wait_for_calls("answerCallbackQuery", before + 1)
        await self.emu.wait_idle(quiet=0.05)

    async def mini_app(self, runner: web.AppRunner, *, keep_open: bool) -> None:
        """Step 11: the page, served by this process; its URL for a desktop browser carries
        launch data signed with the demo bot's token, as Telegram would hand it over."""
        say("12. The memory manager Mini App, served by the bot's own process")
        host, port = runner.addresses[0][:2]
        local = f"http://{host}:{port}{path_of(DEMO_APP_URL)}/"
        now = datetime.now(UTC)
        ada = sign_init_data(
            self.emu.token,
            user={"id": ADA, "first_name": "Ada", "language_code": "en"},
            auth_date=now,
        )
        # Bo (an admin of the group) opens the Topic's memory: a signed scope ticket, as the
        # bot hands it out in the private chat after the group's button.
        ticket = issue(
            Ticket(
                kind="scope",
                private=False,
                chat_id=GROUP,
                topic_id=TOPIC,
                user_id=BO,
                expires_at=int(now.timestamp()) + 24 * 3600,
                workspace=self.group.workspace,
            ),
            ticket_key(self.emu.token),
        )
        bo = sign_init_data(
            self.emu.token,
            user={"id": BO, "first_name": "Bo", "language_code": "zh-hans"},
            auth_date=now,
        )
        async with (
            ClientSession() as http,
            http.get(local + "api/memories", headers={"Authorization": f"tma {ada}"}) as answer,
        ):
            listed = await answer.json()
        show(
            f"GET {local}api/memories as Ada (initData checked, then her standing)",
            "\n".join(r["title"] for r in listed["records"]) + f"\n({listed['status']})",
        )
        print(f"   Mini App (local): {local}")
        print("   Open it in a desktop browser against the emulator (launch data signed with")
        print("   the demo bot's token, valid for a day):")
        print(f"     Ada, her private chat, light:  {local}{launch_fragment(ada, LIGHT)}")
        print(f"     Bo, the Topic, Chinese, dark:  {local}?s={ticket}{launch_fragment(bo, DARK)}")
        if not keep_open:
            print("   These work while the demo runs: `make demo-app` keeps it running (Ctrl-C).")
            return
        print("   Serving until Ctrl-C ...")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()

    def memory_block(self) -> str:
        prompt = self.model.last("chat")
        blocks = [m["content"] for m in prompt if "<memory_context>" in str(m.get("content"))]
        return blocks[0] if blocks else "(no memory in the prompt)"

    async def run(self) -> None:
        say("1. Private chat: directed messages are recorded and answered")
        await self.user("I'm planning a trip to Kyoto in April and I prefer quiet ryokans.")
        key = "sk-proj-" + secrets.token_urlsafe(36).replace("-", "x").replace("_", "y")
        await self.user(f"Note for later: the staging API key is {key}")
        rows = await self.memory.store.watch.message_heads(self.private.workspace)
        show("recorded rows", "\n".join(f"m{id_} {role}: {text}" for id_, role, text in rows))

        say("2. After the idle window the worker extracts and consolidates")
        await self.wait_for_index(self.private)
        extraction = json.loads(self.model.last("memory_extraction")[-1]["content"])
        show(
            "what the extraction call received (redacted before serialization)",
            "\n".join(f"{s['id']} {s['role']}: {s['text'][:90]}" for s in extraction["sources"]),
        )
        await self.show_records(self.private)
        assert key not in json.dumps(self.model.seen), "a secret reached the model"

        say("3. Recall: the next request gets its scope's index as historical data")
        await self.user("What do you remember about my trip?")
        show("memory block in the prompt", self.memory_block())

        say("4. Remember and forget")
        await self.user("remember that my passport expires in May 2027")
        await self.show_records(self.private)
        await self.user("forget my passport")
        state = await self.state(self.private)
        show(
            "tombstones (content-free source IDs)",
            ", ".join(f"m{m}" for m in sorted(state.tombstones.get(self.private.key, ()))),
        )

        say("5. Corrections keep what they do not correct; 'off the record' is kept out")
        await self.user("I live in Lisbon")
        await self.user("my cat is called Mochi")
        old = await self.wait_for_record(self.private, "Mochi")
        await self.user("I moved to Porto")
        new = await self.wait_for_record(self.private, "Porto")
        await self.show_records(self.private)
        state = await self.state(self.private)
        show(
            "the Lisbon record",
            f"{old.id} replaced by {state.records[old.id].replaced_by} (kept as history: "
            "query_memories finds it after the current records, marked)",
        )
        assert state.records[old.id].replaced_by == new.id and "Mochi" in new.summary
        await self.user("off the record: my salary is 5000")
        await self.user("What do you remember about my cat?")
        block = self.memory_block()
        show("memory block in the prompt", block)
        assert "Mochi" in block and "salary" not in json.dumps(self.model.seen)

        say("6. Disable and enable")
        await self.user("turn off memory")
        await self.user("What do you remember?")
        show("memory block in the prompt", self.memory_block())
        await self.user("turn on memory")

        say("7. Group Topic: only directed messages are recorded")
        self.emu.push_message(
            chat_id=GROUP,
            user_id=CY,
            chat_type="supergroup",
            is_forum=True,
            thread_id=TOPIC,
            text="lunch anyone?",
            first_name="Cy",
            chat_title="Launch team",
        )
        print("   Cy (group topic 7): lunch anyone?   (not directed: not stored)")
        first = await self.in_group(f"@{BOT} we decided to ship v2 on Friday", BO)
        bot_msg = self.emu.sent[-1].result["message_id"]
        await self.in_group("and I'll write the release notes", CY, reply_to=bot_msg)
        stored = await self.memory.store.watch.user_messages(GROUP)
        show("group messages stored", f"{stored} (of 3 sent; 'lunch anyone?' was not)")
        assert first["message_thread_id"] == TOPIC

        say("8. The group's memory keeps speaker IDs; each scope sees only its own")
        await self.wait_for_index(self.group)
        await self.show_records(self.group)
        await self.in_group(f"@{BOT} what is the plan?", CY)
        block = self.memory_block()
        show("group prompt's memory block", block)
        assert "Kyoto" not in block, "private memory leaked into the group"

        say("9. Group recall switch: admins only, answered in the user's language")
        self.emu.set_chat_member_status(GROUP, BO, "administrator")
        await self.in_group(f"@{BOT} 关闭记忆", CY, language="zh-hans")
        await self.in_group(f"@{BOT} 关闭记忆", BO, language="zh-hans")
        await self.in_group(f"@{BOT} 开启记忆", BO, language="zh-hant")

        say("10. /memory: the screen users see, with buttons (here in Ada's private chat)")
        await self.user("remember that I take the early train on Mondays")
        await self.user("/memory")
        screen = self.emu.sent[-1].result["message_id"]
        show("buttons", self.buttons(ADA, screen))
        await self.press(ADA, screen, "Forget 1")
        show("after 'Forget 1'", self.screen_text(ADA, screen))
        await self.press(ADA, screen, "Yes, forget it")
        show("after 'Yes, forget it'", self.screen_text(ADA, screen))
        show("buttons", self.buttons(ADA, screen))

        say("11. The operator's view: `bot-memory status` on the same database")
        await show_status(argparse.Namespace(json=False, limit=10), self.memory.db)

        say("Done with the chat")
        usage = await self.memory.store.watch.usage_by_kind(
            [self.private.workspace, self.group.workspace]
        )
        show(
            "usage ledger",
            "\n".join(f"{u['kind']}: {u['n']} calls, {u['tokens']} prompt tokens" for u in usage),
        )


async def amain(*, serve: bool = False, port: int | None = None) -> int:
    settings = MemorySettings(
        idle_window_seconds=1,
        tick_interval_seconds=0.3,
        llm_base_url=None,
        # The public URL Telegram would open (your HTTPS proxy in front of the local server);
        # the demo has no Telegram, so it prints a local URL carrying signed launch data.
        miniapp_url=DEMO_APP_URL,
        miniapp_auth_max_age_seconds=24 * 3600,
    )
    model = RecordingModel(
        summary_max_bytes=settings.summary_max_bytes,
        index_max_bytes=settings.index_max_bytes,
        index_max_ids=settings.index_max_ids,
    )
    print(
        "bot-memory demo: embedded PostgreSQL in",
        settings.data_dir.resolve(),
        "| offline model | Bot API emulator on 127.0.0.1",
    )
    memory = await Memory.open(settings, model=model)
    emu = BotAPIEmulator(username=BOT)
    for chat in (ADA, GROUP):  # a fresh run each time
        await memory.purge_workspace(default_workspace(emu.bot_id, chat))
    await emu.start()
    bot = Bot(emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url)))
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)
    polling = asyncio.create_task(
        dp.start_polling(
            bot, handle_signals=False, polling_timeout=1, allowed_updates=ALLOWED_UPDATES
        )
    )
    runner = None
    try:
        demo = Demo(memory, model, emu)
        await demo.run()
        runner = await serve_app(dp, bot, host="127.0.0.1", port=port or (8765 if serve else 0))
        assert runner is not None
        await demo.mini_app(runner, keep_open=serve)
    finally:
        if runner is not None:
            await runner.cleanup()
        await dp.stop_polling()
        await asyncio.wait_for(polling, 10)
        await memory.close()
        await emu.stop()
    return 0


def main(*, serve: bool = False, port: int | None = None) -> int:
    return asyncio.run(amain(serve=serve, port=port))
