"""Tenancy and membership: per-chat workspaces, the host's resolver, group upgrades, legacy
data, the bot's own membership and the requester's, over HTTP where Telegram is involved."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg
from aiogram.types import Chat, User

from bot_memory.access.tenancy import default_workspace
from bot_memory.intents import recognize
from bot_memory.scopes import Scope
from bot_memory.service import Memory
from bot_memory.storage.database import apply_migrations
from tests.conftest import make_settings, with_database
from tests.support.e2e import Env, running, wait_until
from tests.support.helpers import view

BOT = 42
GROUP, OTHER_GROUP, TOPIC = -100777, -100888, 5
ADA, BO, CY = 1001, 1002, 1003


def in_group(text: str, chat_id: int = GROUP, **extra: Any) -> dict[str, Any]:
    return {
        "chat_type": "supergroup",
        "chat_id": chat_id,
        "is_forum": True,
        "thread_id": TOPIC,
        "text": f"@memory_test_bot {text}",
        **extra,
    }


async def workspaces(env: Env) -> set[str]:
    return {r["id"] for r in await env.rows("SELECT id FROM workspaces")}


async def indexed(env: Env, workspace: str) -> None:
    async def ready() -> bool:
        rows = await env.rows(
            "SELECT 1 FROM memory_scopes WHERE workspace_id = $1 AND index_text <> ''"
            " AND NOT index_pending",
            workspace,
        )
        return bool(rows)

    await wait_until(ready)


def last_prompt(env: Env) -> str:
    return json.dumps(env.llm.chat_requests()[-1], ensure_ascii=False)


async def test_each_chat_is_its_own_workspace_by_default(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        await env.say(1, chat_id=ADA, user_id=ADA, text="hello from Ada")
        await env.say(2, chat_id=BO, user_id=BO, text="hello from Bo")
        await env.say(3, user_id=ADA, **in_group("hi group"))
        await env.say(4, user_id=ADA, **in_group("hi other group", chat_id=OTHER_GROUP))
        assert await workspaces(env) == {
            default_workspace(BOT, ADA),
            default_workspace(BOT, BO),
            default_workspace(BOT, GROUP),
            default_workspace(BOT, OTHER_GROUP),
        }
        keys = {r["scope_key"] for r in await env.rows("SELECT scope_key FROM messages")}
        assert f"tg:42:{GROUP}/42/g/{GROUP}/{TOPIC}" in keys


async def test_a_named_workspace_holds_the_whole_bot(db_url: str) -> None:
    async with running(db_url, workspace_setting="acme") as env:
        await env.say(1, chat_id=ADA, user_id=ADA, text="hello")
        await env.say(2, user_id=ADA, **in_group("hi group"))
        assert await workspaces(env) == {"acme"}


async def test_a_resolver_links_only_the_hosts_groups(db_url: str) -> None:
    def linked(chat: Chat, user: User | None) -> str | None:
        if chat.type == "private":
            return f"user-{chat.id}"
        return "team-a" if chat.id == GROUP else None  # the host serves one group

    async with running(db_url, workspace=linked) as env:
        await env.say(1, user_id=ADA, **in_group("we ship on Friday"))
        env.emu.push_message(user_id=ADA, **in_group("not ours", chat_id=OTHER_GROUP))
        await env.emu.wait_idle(quiet=0.3)  # memory does not apply there: nothing recorded
        await env.say(2, chat_id=BO, user_id=BO, text="hi")
        assert await workspaces(env) == {"team-a", f"user-{BO}"}
        chats = {r["chat_id"] for r in await env.rows("SELECT chat_id FROM messages")}
        assert OTHER_GROUP not in chats


async def test_the_record_cap_is_per_workspace(db_url: str) -> None:
    memory = await Memory.open(make_settings(db_url, workspace=None))
    try:
        private = Scope(
            workspace=default_workspace(BOT, ADA),
            bot_id=BOT,
            kind="private",
            chat_id=ADA,
            user_id=ADA,
        )
        group = Scope(
            workspace=default_workspace(BOT, GROUP), bot_id=BOT, kind="shared", chat_id=GROUP
        )
        for scope, speaker, text in [(private, ADA, "remember that my bike is red")] + [
            (group, BO, f"remember that item {i} lives on shelf {i}") for i in range(300)
        ]:
            source = await memory.record(scope, text=text, speaker_id=speaker)
            assert source is not None
            request = recognize(text)
            assert request is not None
            assert (await memory.control(request, source)).outcome == "remembered"
        assert len((await view(memory, group.workspace)).records) == 256
        [bike] = (await view(memory, private.workspace)).records.values()
        assert "bike" in bike.summary
    finally:
        await memory.close()


async def test_a_group_upgrade_moves_everything_and_a_running_tick_cannot_write_under_the_old_key(
    db_url: str,
) -> None:
    memory = await Memory.open(make_settings(db_url, workspace=None))
    try:
        old_ws, new_ws = default_workspace(BOT, -555), default_workspace(BOT, -100555)
        old = Scope(workspace=old_ws, bot_id=BOT, kind="shared", chat_id=-555)
        source = await memory.record(old, text="we picked Rust", speaker_id=ADA)
        assert source is not None
        await memory.begin(source)
        await memory.finish(source, status="succeeded", answer_text="noted", bot_id=BOT)
        job_id = await _plan(memory)  # plan, then claim: a tick in flight
        job = await memory.pipeline.ctx.store.jobs.claim_next(lease_seconds=120, max_claims=3)
        assert job is not None and job.id == job_id
        report = await memory.chats.migrate_chat(
            bot_id=BOT,
            old_chat_id=-555,
            new_chat_id=-100555,
            old_workspace=old_ws,
            new_workspace=new_ws,
        )
        assert report.scopes == 1 and report.messages == 2
        # The worker that held the job before the move finishes its run: it writes nothing.
        assert await memory.pipeline.run_job(job, datetime.now(UTC)) == "stopped"
        stale = await memory.store.pool.fetchval(
            "SELECT count(*) FROM memory_records WHERE workspace_id = $1", old_ws
        )
        assert stale == 0
        await memory.pipeline.tick()  # the moved job runs again, under the new key
        new = old.model_copy(update={"workspace": new_ws, "chat_id": -100555})
        state = await view(memory, new_ws)
        [record] = state.valid_records(new.key)
        assert "Rust" in record.summary
        assert (await memory.recall(new)).mode == "index"
        for table in ("messages", "requests", "memory_scopes", "memory_jobs", "memory_records"):
            left = await memory.store.pool.fetchval(
                f"SELECT count(*) FROM {table} WHERE workspace_id = $1", old_ws
            )
            assert left == 0, table
        again = await memory.chats.migrate_chat(  # the second service message: nothing left to move
            bot_id=BOT,
            old_chat_id=-555,
            new_chat_id=-100555,
            old_workspace=old_ws,
            new_workspace=new_ws,
        )
        assert again.scopes == 0
    finally:
        await memory.close()


async def _plan(memory: Memory) -> int:
    from bot_memory.pipeline.discovery import plan_due

    [job_id] = await plan_due(memory.pipeline.ctx, datetime.now(UTC))
    return job_id


async def test_a_group_upgrade_over_http(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        await env.say(1, chat_type="group", chat_id=-555, user_id=ADA, text="@memory_test_bot hi")
        env.emu.push_update(
            {
                "message": {
                    "message_id": 99,
                    "date": 0,
                    "chat": {"id": -555, "type": "group", "title": "Team"},
                    "from": {"id": ADA, "is_bot": False, "first_name": "Ada"},
                    "migrate_to_chat_id": -100555,
                }
            }
        )

        async def moved() -> bool:
            rows = await env.rows("SELECT DISTINCT workspace_id FROM messages")
            return [r["workspace_id"] for r in rows] == [default_workspace(BOT, -100555)]

        await wait_until(moved)


async def test_a_legacy_single_workspace_is_split_per_chat(pg_server_url: str) -> None:
    name = "t_" + uuid.uuid4().hex[:12]
    admin = await asyncpg.connect(pg_server_url)
    await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    url = with_database(pg_server_url, name)
    conn = await asyncpg.connect(url)
    try:
        from importlib.resources import files

        first = (files("bot_memory.storage") / "migrations" / "001_schema.sql").read_text()
        await conn.execute(first)
        await conn.execute(
            "CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now());"
            " INSERT INTO schema_migrations VALUES (1, '001_schema.sql')"
        )
        key = f"default/{BOT}/p/{ADA}/{ADA}"
        await conn.execute("INSERT INTO workspaces (id) VALUES ('default')")
        message = await conn.fetchval(
            "INSERT INTO messages (workspace_id, scope_key, chat_id, telegram_message_id,"
            " speaker_id, role, text, content_hash) VALUES ('default', $1, $2, 5, $2, 'user',"
            " 'remember that my bike is red', 'h') RETURNING id",
            key,
            ADA,
        )
        state = {
            "schema_version": 1,
            "scopes": {
                key: {
                    "enabled": True,
                    "index": {"text": "", "memory_ids": [], "pending": True},
                    "extracted_through": 0,
                    "tombstones": ["m999"],
                }
            },
            "records": {
                "mem_old": {
                    "id": "mem_old",
                    "scope_key": key,
                    "origin": "note",
                    "title": "bike",
                    "summary": "remember that my bike is red",
                    "speaker_ids": [ADA],
                    "thread_ids": [0],
                    "sources": [{"id": f"m{message}", "hash": "h", "speaker_id": ADA}],
                    "cited": [f"m{message}"],
                    "created_at": "2026-11-01T00:00:00+00:00",
                    "last_used_at": "2026-11-29T00:00:00+00:00",
                    "valid": True,
                }
            },
        }
        await conn.execute("UPDATE workspaces SET state = $1::jsonb", json.dumps(state))
    finally:
        await conn.close()
    memory = await Memory.open(make_settings(url, workspace=None))
    try:
        ws = default_workspace(BOT, ADA)
        scope = Scope(workspace=ws, bot_id=BOT, kind="private", chat_id=ADA, user_id=ADA)
        state_after = await view(memory, ws)
        assert list(state_after.records) == ["mem_old"]
        assert state_after.tombstones[scope.key] == {999}
        recalled = await memory.recall(scope)
        assert recalled.mode == "directory" and "bike" in (recalled.text or "")
        old_rows = await memory.store.pool.fetchval(
            "SELECT count(*) FROM messages WHERE workspace_id = 'default'"
        )
        assert old_rows == 0
    finally:
        await memory.close()
    # Applying migrations again changes nothing.
    conn = await asyncpg.connect(url)
    try:
        assert await apply_migrations(conn) == []
    finally:
        await conn.close()


async def _group_memory(env: Env) -> None:
    """A group Topic with one consolidated memory, and the model's next prompt cleared."""
    env.emu.set_chat_member_status(GROUP, ADA, "member")
    await env.say(1, user_id=ADA, **in_group("the retro is on Thursday at 3pm"))
    await indexed(env, default_workspace(BOT, GROUP))


async def test_a_member_who_left_gets_answers_without_group_memory(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        await _group_memory(env)
        await env.say(2, user_id=ADA, **in_group("when is the retro?"))
        assert "retro is on Thursday" in last_prompt(env) and "memory_context" in last_prompt(env)
        env.emu.set_chat_member_status(GROUP, BO, "left")
        sent = await env.say(3, user_id=BO, **in_group("when is the retro?"))
        assert sent["text"].startswith("fake answer")  # answered, but with no memory
        assert "memory_context" not in last_prompt(env)
        assert "Thursday" not in last_prompt(env)  # nor the group's stored conversation
        tools = {t["function"]["name"] for t in env.llm.chat_requests()[-1]["tools"]}
        assert "query_memories" in tools  # offered; it refuses a non-member (test_authorization)
        env.emu.set_chat_member_status(GROUP, CY, "restricted", is_member=False)
        await env.say(4, user_id=CY, **in_group("when is the retro?"))
        assert "memory_context" not in last_prompt(env)
        sent = await env.say(5, user_id=BO, **in_group("remember that I like tea"))
        assert sent["text"] == "Only current members of this group can use its memory."
        assert await env.rows("SELECT 1 FROM memory_records WHERE origin = 'note'") == []


async def test_membership_is_cached_and_refreshed_by_chat_member_updates(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        await _group_memory(env)
        for n in range(2, 5):
            await env.say(n, user_id=ADA, **in_group(f"question {n}?"))
        asked = [c for c in env.emu.calls_to("getChatMember") if c.params["user_id"] == ADA]
        assert len(asked) == 1  # one lookup for four directed messages within the TTL
        env.emu.push_update(
            {
                "chat_member": {
                    "chat": {"id": GROUP, "type": "supergroup", "title": "Test group"},
                    "from": {"id": 1, "is_bot": False, "first_name": "Admin"},
                    "date": 0,
                    "old_chat_member": {
                        "status": "member",
                        "user": {"id": ADA, "is_bot": False, "first_name": "Ada"},
                    },
                    "new_chat_member": {
                        "status": "kicked",
                        "until_date": 0,
                        "user": {"id": ADA, "is_bot": False, "first_name": "Ada"},
                    },
                }
            }
        )
        await env.emu.wait_idle()
        await env.say(5, user_id=ADA, **in_group("and now?"))
        assert "memory_context" not in last_prompt(env)  # at once, not after the TTL


async def test_a_failed_lookup_answers_without_memory(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        await _group_memory(env)
        env.emu.inject_error(
            "getChatMember",
            error_code=429,
            description="Too Many Requests: retry after 1",
            retry_after=1,
        )
        sent = await env.say(2, user_id=BO, **in_group("when is the retro?"))
        assert sent["text"].startswith("fake answer")
        assert "memory_context" not in last_prompt(env)


async def test_the_bot_removed_and_added_back(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        await _group_memory(env)

        def bot_status(old: str, new: str) -> dict[str, Any]:
            bot = {"id": BOT, "is_bot": True, "first_name": "Memory Bot"}
            return {
                "my_chat_member": {
                    "chat": {"id": GROUP, "type": "supergroup", "title": "Test group"},
                    "from": {"id": 1, "is_bot": False, "first_name": "Admin"},
                    "date": 0,
                    "old_chat_member": {"status": old, "user": bot},
                    "new_chat_member": {"status": new, "user": bot, "until_date": 0}
                    if new == "kicked"
                    else {"status": new, "user": bot},
                }
            }

        async def suspended(state: bool) -> bool:
            rows = await env.rows("SELECT suspended FROM memory_scopes WHERE chat_id = $1", GROUP)
            return bool(rows) and all(r["suspended"] is state for r in rows)

        env.emu.push_update(bot_status("member", "kicked"))
        await wait_until(lambda: suspended(True))  # handled, however long that took
        # A directed message that still reaches the bot: no recall, no job planned.
        jobs_before = len(await env.rows("SELECT id FROM memory_jobs"))
        await env.say(2, user_id=ADA, **in_group("when is the retro?"))
        assert "memory_context" not in last_prompt(env)
        for _ in range(3):  # ticks that would plan one (not a wait a loaded machine cuts short)
            await env.memory.pipeline.tick()
        assert len(await env.rows("SELECT id FROM memory_jobs")) == jobs_before
        records = await env.rows("SELECT id FROM memory_records")
        assert records  # stored, only unavailable

        env.emu.push_update(bot_status("left", "member"))
        await wait_until(lambda: suspended(False))
        await env.say(3, user_id=ADA, **in_group("when is the retro?"))
        assert "retro is on Thursday" in last_prompt(env)


async def test_an_anonymous_admin_counts_as_member_and_admin(db_url: str) -> None:
    async with running(db_url, workspace_setting=None) as env:
        sent = await env.say(1, user_id=ADA, anonymous_admin=True, **in_group("turn off memory"))
        assert sent["text"].startswith("Memory is off")
        speakers = {r["speaker_id"] for r in await env.rows("SELECT speaker_id FROM messages")}
        assert 1087968824 not in speakers and GROUP in speakers
        placeholder = [
            c for c in env.emu.calls_to("getChatMember") if c.params["user_id"] == 1087968824
        ]
        assert placeholder == []


async def test_every_unique_key_of_a_workspaces_tables_begins_with_the_workspace(
    memory: Memory,
) -> None:
    """So the schema can be distributed by workspace (README, Deployment)."""
    rows = await memory.store.pool.fetch(
        """
        SELECT t.relname AS tbl, i.relname AS idx, (SELECT a.attname FROM pg_attribute a
               WHERE a.attrelid = t.oid AND a.attnum = ix.indkey[0]) AS first
        FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid
        JOIN pg_class t ON t.oid = ix.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
        WHERE ix.indisunique AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid
              AND a.attname = 'workspace_id' AND NOT a.attisdropped)
        """
    )
    # chats: the small (bot, chat) -> workspace directory, a reference table when distributed.
    wrong = [
        (r["tbl"], r["idx"]) for r in rows if r["first"] != "workspace_id" and r["tbl"] != "chats"
    ]
    assert rows and wrong == []
