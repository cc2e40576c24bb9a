"""Self-tests of the Bot API emulator (driven by the real aiogram) and of FakeOpenAI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from aiogram import Bot, Dispatcher, F, Router
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramConflictError,
    TelegramRetryAfter,
    TelegramUnauthorizedError,
)
from aiogram.filters import Command
from aiogram.types import (
    ChatMemberAdministrator,
    ChatMemberBanned,
    ChatMemberLeft,
    ChatMemberMember,
    ChatMemberOwner,
    ChatMemberRestricted,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
)

from bot_memory_aiogram.testing import (
    ApiCall,
    BotAPIEmulator,
    command_entity,
    mention_entity,
    utf16_len,
)
from tests.support.fake_openai import FakeOpenAI, default_responder

CHAT = 1001
USER = 1001
GROUP = -100500


class _FastCloseSession(AiohttpSession):
    """AiohttpSession without the 250 ms SSL-shutdown sleep in close() (plain loopback)."""

    async def close(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()


def make_bot(emu: BotAPIEmulator, token: str | None = None) -> Bot:
    session = _FastCloseSession(api=TelegramAPIServer.from_base(emu.base_url))
    return Bot(token=token or emu.token, session=session)


@pytest.fixture
async def emu() -> AsyncIterator[BotAPIEmulator]:
    async with BotAPIEmulator() as emulator:
        yield emulator


@pytest.fixture
async def bot(emu: BotAPIEmulator) -> AsyncIterator[Bot]:
    bot = make_bot(emu)
    yield bot
    await bot.session.close()


@asynccontextmanager
async def polling(
    dp: Dispatcher, bot: Bot, emu: BotAPIEmulator, **kwargs: Any
) -> AsyncIterator[None]:
    """Run ``dp.start_polling`` as a task; stop it (and assert it stops fast) on exit."""
    kwargs.setdefault("polling_timeout", 1)
    before = len(emu.calls_to("getUpdates"))
    task = asyncio.create_task(
        dp.start_polling(bot, handle_signals=False, close_bot_session=False, **kwargs)
    )
    try:
        await emu.wait_for_calls("getUpdates", before + 1, timeout=5)
        yield
    finally:
        if not task.done():
            await dp.stop_polling()
        await asyncio.wait_for(task, 5)  # a stop that hangs fails here


def echo_dispatcher() -> Dispatcher:
    dp = Dispatcher()
    router = Router()

    @router.message(Command("start"))
    async def start(message: Message) -> None:
        await message.answer("welcome")

    @router.message(F.reply_to_message.from_user.is_bot)
    async def reply_to_bot(message: Message) -> None:
        assert message.reply_to_message is not None
        await message.answer(f"reply to bot: {message.reply_to_message.text}")

    @router.message(F.photo)
    async def photo(message: Message) -> None:
        assert message.photo
        await message.answer(f"photo {message.photo[-1].width}x{message.photo[-1].height}")

    @router.message(F.text)
    async def echo(message: Message) -> None:
        extra = []
        if message.forward_origin is not None:
            origin = message.forward_origin.type  # an enum member under pydantic 2.7, a str later
            extra.append(f"fwd:{getattr(origin, 'value', origin)}")
        if message.quote is not None:
            extra.append(f"quote:{message.quote.text}")
        await message.answer(" ".join([f"echo: {message.text}", *extra]))

    @router.edited_message()
    async def edited(message: Message) -> None:
        await message.answer(f"edited: {message.text}")

    dp.include_router(router)
    return dp


# ------------------------------------------------------------------ plain API calls


async def test_get_me(emu: BotAPIEmulator, bot: Bot) -> None:
    me = await bot.get_me()
    assert me.id == emu.bot_id == bot.id
    assert me.username == "memory_test_bot"
    assert me.is_bot
    assert emu.calls[-1] == ApiCall("getMe", {})
    assert emu.base_url.startswith("http://127.0.0.1:")


async def test_wrong_token_is_unauthorized(emu: BotAPIEmulator) -> None:
    other = make_bot(emu, token="43:WRONG")
    try:
        with pytest.raises(TelegramUnauthorizedError):
            await other.get_me()
    finally:
        await other.session.close()
    assert emu.calls == []


async def test_unknown_method_recorded_and_true(emu: BotAPIEmulator, bot: Bot) -> None:
    assert await bot.pin_chat_message(chat_id=CHAT, message_id=1) is True
    assert emu.calls[-1].method == "pinChatMessage"
    assert emu.calls[-1].params == {"chat_id": CHAT, "message_id": 1}


async def test_params_are_decoded(emu: BotAPIEmulator, bot: Bot) -> None:
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="ok", callback_data="yes")]]
    )
    message = await bot.send_message(
        chat_id=CHAT, text="123", reply_markup=markup, disable_notification=True
    )
    call = emu.sent[-1]
    assert call.params["chat_id"] == CHAT
    assert call.params["text"] == "123"
    assert call.params["disable_notification"] is True
    assert call.params["reply_markup"] == {
        "inline_keyboard": [[{"text": "ok", "callback_data": "yes"}]]
    }
    assert call.result["message_id"] == message.message_id
    assert message.reply_markup is not None
    assert message.reply_markup.inline_keyboard[0][0].callback_data == "yes"
    assert message.from_user is not None and message.from_user.id == emu.bot_id


async def test_send_message_validation(emu: BotAPIEmulator, bot: Bot) -> None:
    with pytest.raises(TelegramBadRequest, match="message text is empty"):
        await bot.send_message(chat_id=CHAT, text="   ")
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        await bot.send_message(chat_id=CHAT, text="x" * 4097)
    assert (await bot.send_message(chat_id=CHAT, text="x" * 4096)).text == "x" * 4096
    assert emu.sent[0].error is not None and emu.sent[-1].error is None


async def test_html_parse_mode(emu: BotAPIEmulator, bot: Bot) -> None:
    message = await bot.send_message(
        chat_id=CHAT,
        text='<b>bold</b> 😀 <a href="https://x.org/?a=1&amp;b=2">link</a> 1 &lt; 2',
        parse_mode="HTML",
    )
    assert message.text == "bold 😀 link 1 < 2"
    assert message.entities is not None
    kinds = [(e.type, e.offset, e.length) for e in message.entities]
    assert kinds == [("bold", 0, 4), ("text_link", 8, 4)]
    assert message.entities[1].url == "https://x.org/?a=1&b=2"
    for bad, reason in [
        ("1 < 2", 'Unsupported start tag "" at byte offset 2'),
        ("<b", "Can't find end of the tag"),
        ("<b>x</i>", "Unmatched end tag"),
        ("<b>never closed", "Can't find end tag"),
        ("line<br>break", 'Unsupported start tag "br"'),
    ]:
        with pytest.raises(TelegramBadRequest, match="can't parse entities") as info:
            await bot.send_message(chat_id=CHAT, text=bad, parse_mode="HTML")
        assert reason in str(info.value)


async def test_reply_edit_delete(emu: BotAPIEmulator, bot: Bot) -> None:
    first = await bot.send_message(chat_id=CHAT, text="first")
    reply = await bot.send_message(
        chat_id=CHAT, text="second", reply_parameters=ReplyParameters(message_id=first.message_id)
    )
    assert reply.reply_to_message is not None
    assert reply.reply_to_message.message_id == first.message_id
    assert reply.message_id == first.message_id + 1
    with pytest.raises(TelegramBadRequest, match="message to be replied not found"):
        await bot.send_message(
            chat_id=CHAT, text="x", reply_parameters=ReplyParameters(message_id=999)
        )
    lenient = await bot.send_message(
        chat_id=CHAT,
        text="x",
        reply_parameters=ReplyParameters(message_id=999, allow_sending_without_reply=True),
    )
    assert lenient.reply_to_message is None

    edited = await bot.edit_message_text(chat_id=CHAT, message_id=first.message_id, text="new")
    assert isinstance(edited, Message) and edited.text == "new" and edited.edit_date is not None
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_text(chat_id=CHAT, message_id=first.message_id, text="new")
    assert await bot.delete_message(chat_id=CHAT, message_id=first.message_id) is True
    with pytest.raises(TelegramBadRequest, match="message to delete not found"):
        await bot.delete_message(chat_id=CHAT, message_id=first.message_id)
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await bot.edit_message_text(chat_id=CHAT, message_id=first.message_id, text="again")


async def test_misc_methods(emu: BotAPIEmulator, bot: Bot) -> None:
    from aiogram.types import BotCommand

    assert await bot.send_chat_action(chat_id=CHAT, action="typing") is True
    assert await bot.set_my_commands([BotCommand(command="start", description="Start")])
    assert [c.command for c in await bot.get_my_commands()] == ["start"]
    assert await bot.answer_callback_query("7", text="done") is True
    assert await bot.delete_webhook(drop_pending_updates=True) is True
    emu.push_message(chat_id=GROUP, user_id=USER, text="hi", chat_type="supergroup", is_forum=True)
    chat = await bot.get_chat(GROUP)
    assert chat.type == "supergroup" and chat.title == "Test group" and chat.is_forum
    assert (await bot.get_chat(CHAT)).type == "private"
    assert await bot.close() is True
    assert await bot.log_out() is True
    assert [c.method for c in emu.calls][-2:] == ["close", "logOut"]


async def test_chat_member_shapes_validate(emu: BotAPIEmulator, bot: Bot) -> None:
    member = await bot.get_chat_member(GROUP, USER)
    assert isinstance(member, ChatMemberMember)
    expected = {
        "creator": ChatMemberOwner,
        "administrator": ChatMemberAdministrator,
        "member": ChatMemberMember,
        "restricted": ChatMemberRestricted,
        "left": ChatMemberLeft,
        "kicked": ChatMemberBanned,
    }
    for status, cls in expected.items():
        emu.set_chat_member_status(GROUP, USER, status)
        member = await bot.get_chat_member(GROUP, USER)
        assert isinstance(member, cls), status
        assert member.user.id == USER
    emu.set_chat_member_status(GROUP, emu.bot_id, "administrator")
    admin = await bot.get_chat_member(GROUP, emu.bot_id)
    assert isinstance(admin, ChatMemberAdministrator) and admin.user.is_bot
    with pytest.raises(ValueError, match="unknown chat member status"):
        emu.set_chat_member_status(GROUP, USER, "boss")


async def test_injected_errors(emu: BotAPIEmulator, bot: Bot) -> None:
    emu.inject_error(
        "sendMessage",
        error_code=429,
        description="Too Many Requests: retry after 3",
        retry_after=3,
    )
    with pytest.raises(TelegramRetryAfter) as info:
        await bot.send_message(chat_id=CHAT, text="x")
    assert info.value.retry_after == 3
    assert (await bot.send_message(chat_id=CHAT, text="x")).text == "x"


# ------------------------------------------------------------------------ getUpdates


async def test_get_updates_offset_limit_and_allowed(emu: BotAPIEmulator, bot: Bot) -> None:
    first = emu.push_message(chat_id=CHAT, user_id=USER, text="one")
    emu.push_message(chat_id=CHAT, user_id=USER, text="two")
    emu.push_message(chat_id=CHAT, user_id=USER, text="three")
    updates = await bot.get_updates(limit=2)
    assert [u.message.text for u in updates if u.message] == ["one", "two"]
    assert updates[0].update_id == first["update_id"]
    # Not confirmed yet: the same updates come again.
    assert len(await bot.get_updates()) == 3
    updates = await bot.get_updates(offset=updates[1].update_id + 1)
    assert [u.message.text for u in updates if u.message] == ["three"]
    # Confirm everything; edited messages excluded by allowed_updates are discarded.
    emu.push_edited_message(chat_id=CHAT, message_id=3, text="three!")
    updates = await bot.get_updates(
        offset=updates[0].update_id + 1, allowed_updates=["message"], timeout=0
    )
    assert updates == []
    assert emu.pending_updates == []
    await emu.wait_idle(timeout=1)


async def test_get_updates_long_poll_waits_and_wakes(emu: BotAPIEmulator, bot: Bot) -> None:
    assert await bot.get_updates(timeout=1) == []  # a short poll with nothing to give: empty
    polling = asyncio.create_task(bot.get_updates(timeout=30))
    await emu.wait_for_calls("getUpdates", 2)
    for _ in range(20):  # the server got it and went on waiting: no answer yet
        await asyncio.sleep(0)
    assert not polling.done()
    emu.push_message(chat_id=CHAT, user_id=USER, text="wake")
    updates = await asyncio.wait_for(polling, 5)  # woken by the update, not the 30 s timeout
    assert [u.message.text for u in updates if u.message] == ["wake"]


async def test_concurrent_get_updates_conflict(emu: BotAPIEmulator, bot: Bot) -> None:
    older = asyncio.create_task(bot.get_updates(timeout=30))
    await emu.wait_for_calls("getUpdates", 1)
    newer = asyncio.create_task(bot.get_updates(timeout=0))
    with pytest.raises(TelegramConflictError, match="terminated by other getUpdates"):
        await asyncio.wait_for(older, 2)
    assert await newer == []


async def test_stop_ends_pending_long_poll(bot: Bot) -> None:
    emu = BotAPIEmulator()
    await emu.start()
    session = _FastCloseSession(api=TelegramAPIServer.from_base(emu.base_url))
    poller = Bot(token=emu.token, session=session)
    try:
        task = asyncio.create_task(poller.get_updates(timeout=60))
        await emu.wait_for_calls("getUpdates", 1)
        await emu.stop()
        assert await asyncio.wait_for(task, 5) == []  # ended by the stop, not its 60 s
    finally:
        await poller.session.close()


async def test_client_disconnect_ends_server_wait(emu: BotAPIEmulator, bot: Bot) -> None:
    task = asyncio.create_task(bot.get_updates(timeout=60))
    await emu.wait_for_calls("getUpdates", 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Would wait for the orphaned long poll (60 s) if it were still running.
    await asyncio.wait_for(emu.stop(), 5)


# ---------------------------------------------------------------- dispatcher polling


async def test_private_message_roundtrip(emu: BotAPIEmulator, bot: Bot) -> None:
    dp = echo_dispatcher()
    async with polling(dp, bot, emu):
        emu.push_message(chat_id=CHAT, user_id=USER, text="/start")
        emu.push_message(chat_id=CHAT, user_id=USER, text="hello there")
        sent = await emu.wait_for_sent(2)
    by_text = {call.params["text"]: call for call in sent}
    assert set(by_text) == {"welcome", "echo: hello there"}
    assert all(call.params["chat_id"] == CHAT for call in sent)
    assert "message_thread_id" not in by_text["welcome"].params
    # The pushed command carried Telegram's automatic bot_command entity.
    assert emu.get_message(CHAT, 1) is not None
    assert emu.get_message(CHAT, 1)["entities"] == [command_entity("/start")]  # type: ignore[index]


async def test_forum_topic_answer_goes_to_same_thread(emu: BotAPIEmulator, bot: Bot) -> None:
    dp = echo_dispatcher()
    async with polling(dp, bot, emu):
        update = emu.push_message(
            chat_id=GROUP,
            user_id=USER,
            text="in topic",
            chat_type="supergroup",
            is_forum=True,
            thread_id=77,
        )
        (call,) = await emu.wait_for_sent(1)
    assert update["message"]["message_thread_id"] == 77
    assert update["message"]["is_topic_message"] is True
    assert call.params["chat_id"] == GROUP
    assert call.params["message_thread_id"] == 77
    assert call.result["message_thread_id"] == 77
    assert call.result["is_topic_message"] is True


async def test_reply_to_bot_message_is_present(emu: BotAPIEmulator, bot: Bot) -> None:
    dp = echo_dispatcher()
    bot_message = await bot.send_message(chat_id=CHAT, text="remember me")
    async with polling(dp, bot, emu):
        update = emu.push_message(
            chat_id=CHAT,
            user_id=USER,
            text="replying",
            reply_to_message_id=bot_message.message_id,
            quote_text="ember",
        )
        sent = await emu.wait_for_sent(2)
    reply = update["message"]["reply_to_message"]
    assert reply["from"]["id"] == emu.bot_id and reply["text"] == "remember me"
    assert update["message"]["quote"] == {"text": "ember", "position": 3}
    assert sent[-1].params["text"] == "reply to bot: remember me"


async def test_photo_forward_quote_and_edit(emu: BotAPIEmulator, bot: Bot) -> None:
    dp = echo_dispatcher()
    async with polling(dp, bot, emu):
        first = emu.push_message(chat_id=CHAT, user_id=USER, text="original")
        await emu.wait_for_sent(1)
        emu.push_message(chat_id=CHAT, user_id=USER, photo=True, text="a caption")
        await emu.wait_for_sent(2)
        emu.push_message(chat_id=CHAT, user_id=USER, text="fwd", forward_from_user_id=555)
        await emu.wait_for_sent(3)
        emu.push_message(
            chat_id=CHAT,
            user_id=USER,
            text="quoting",
            reply_to_message_id=first["message"]["message_id"],
            quote_text="orig",
        )
        await emu.wait_for_sent(4)
        emu.push_edited_message(
            chat_id=CHAT, message_id=first["message"]["message_id"], text="changed"
        )
        sent = await emu.wait_for_sent(5)
    assert [call.params["text"] for call in sent] == [
        "echo: original",
        "photo 320x240",
        "echo: fwd fwd:user",
        "echo: quoting quote:orig",
        "edited: changed",
    ]


async def test_group_mention_entities_and_wait_idle(emu: BotAPIEmulator, bot: Bot) -> None:
    seen: list[Message] = []
    dp = Dispatcher()

    @dp.message()
    async def collect(message: Message) -> None:
        seen.append(message)

    text = "😀 @memory_test_bot what did I say?"
    async with polling(dp, bot, emu, handle_as_tasks=False):
        for _ in range(3):
            emu.push_message(chat_id=GROUP, user_id=USER, text=text, chat_type="group")
        await emu.wait_idle(timeout=5)
        assert emu.pending_updates == []
        assert len(seen) == 3
    entity = mention_entity(text, "memory_test_bot")
    assert entity == {"type": "mention", "offset": 3, "length": 16}
    assert seen[0].entities is not None
    assert seen[0].entities[0].model_dump(exclude_none=True) == entity
    assert entity["offset"] == utf16_len("😀 ")
    assert seen[0].chat.title == "Test group" and seen[0].chat.type == "group"


async def test_stop_polling_is_quick_with_long_polling_timeout(
    emu: BotAPIEmulator, bot: Bot
) -> None:
    dp = echo_dispatcher()
    async with polling(dp, bot, emu, polling_timeout=30):
        emu.push_message(chat_id=CHAT, user_id=USER, text="ping")
        await emu.wait_for_sent(1)
        # The update was confirmed by a second getUpdates, now parked in a 30 s long poll.
        await emu.wait_idle(timeout=5)
        assert len(emu.calls_to("getUpdates")) == 2
    # The polling() helper asserts stop_polling took < 1 s despite the 30 s long poll.


async def test_stop_polling_stock_session(emu: BotAPIEmulator) -> None:
    """Polling as a host runs it, with aiogram's own AiohttpSession: an update is answered,
    and stop_polling ends it."""
    bot = Bot(
        token=emu.token, session=AiohttpSession(api=TelegramAPIServer.from_base(emu.base_url))
    )
    dp = echo_dispatcher()
    task = asyncio.create_task(dp.start_polling(bot, handle_signals=False, polling_timeout=1))
    emu.push_message(chat_id=CHAT, user_id=USER, text="ping")
    (call,) = await emu.wait_for_sent(1)
    assert call.params["text"] == "echo: ping"
    await dp.stop_polling()
    await asyncio.wait_for(task, 5)


async def test_wait_for_sent_timeout_message(emu: BotAPIEmulator) -> None:
    with pytest.raises(TimeoutError, match="waiting for 1 sendMessage"):
        await emu.wait_for_sent(1, timeout=0.05)


def test_entity_helpers() -> None:
    assert command_entity("/start@memory_test_bot hi") == {
        "type": "bot_command",
        "offset": 0,
        "length": 22,
    }
    with pytest.raises(ValueError, match="does not start with a bot command"):
        command_entity("hi /start")
    with pytest.raises(ValueError, match="does not occur"):
        mention_entity("no mention", "bot_name")
    assert utf16_len("a😀") == 3


# ------------------------------------------------------------------------ FakeOpenAI


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


def _client(llm: FakeOpenAI, key: str = "test-key", timeout: float = 5.0) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=llm.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=timeout
    )


def _body(content: str, purpose: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": content},
        ],
    }
    if purpose is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": purpose, "schema": {"type": "object"}, "strict": True},
        }
    return body


async def test_fake_openai_auth(llm: FakeOpenAI) -> None:
    async with _client(llm, key="wrong") as client:
        response = await client.post("/chat/completions", json=_body("hi"))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert llm.requests == [] and llm.calls_started == 1
    async with _client(llm) as client:
        response = await client.post("/chat/completions", json=_body("hi"))
    assert response.status_code == 200
    async with FakeOpenAI(api_key=None) as open_server, httpx.AsyncClient() as client:
        response = await client.post(f"{open_server.base_url}/chat/completions", json=_body("x"))
        assert response.status_code == 200


async def test_fake_openai_default_chat(llm: FakeOpenAI) -> None:
    async with _client(llm) as client:
        response = await client.post("/chat/completions", json=_body("x" * 100))
    data = response.json()
    assert data["object"] == "chat.completion" and data["model"] == "gpt-test"
    choice = data["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": "fake answer: " + "x" * 60}
    usage = data["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 1
    assert llm.chat_requests() == llm.requests and len(llm.requests) == 1


async def test_fake_openai_extraction_and_consolidation(llm: FakeOpenAI) -> None:
    sources = [
        {"id": 11, "role": "user", "text": "I like green tea"},
        {"id": 12, "role": "user", "text": "and my cat is Tom", "reply_to": {"id": 11}},
    ]
    candidates = {"candidates": [{"id": "m1", "title": "Tea"}, {"id": "m2", "title": "Cat"}]}
    async with _client(llm) as client:
        extraction = await client.post(
            "/chat/completions",
            json=_body("Messages:\n" + json.dumps(sources), "memory_extraction"),
        )
        consolidation = await client.post(
            "/chat/completions", json=_body(json.dumps(candidates), "memory_consolidation")
        )
    extracted = json.loads(extraction.json()["choices"][0]["message"]["content"])
    assert extracted == {
        "title": "Conversation notes",
        "summary": "I like green tea and my cat is Tom",
        "source_ids": [11, 12],
    }
    consolidated = json.loads(consolidation.json()["choices"][0]["message"]["content"])
    assert consolidated == {"index": "- m1: Tea\n- m2: Cat", "memory_ids": ["m1", "m2"]}
    assert len(llm.requests_by_purpose("memory_extraction")) == 1
    assert len(llm.requests_by_purpose("memory_consolidation")) == 1
    assert llm.chat_requests() == []


def test_default_responder_is_defensive() -> None:
    def content(body: dict[str, Any]) -> Any:
        return json.loads(default_responder(body)["content"])

    assert content(_body("not json at all", "memory_extraction")) == {
        "title": "",
        "summary": "",
        "source_ids": [],
    }
    assert content(_body("{broken", "memory_consolidation")) == {"index": "", "memory_ids": []}
    many = [{"id": i, "title": f"t{i}"} for i in range(20)]
    assert len(content(_body(json.dumps(many), "memory_consolidation"))["memory_ids"]) == 12
    weird: dict[str, Any] = {"messages": "nope", "response_format": {"json_schema": 3}}
    assert default_responder(weird)["content"] == "fake answer: "
    assert default_responder({})["content"] == "fake answer: "


async def test_fake_openai_script(llm: FakeOpenAI) -> None:
    tool_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "recall", "arguments": "{}"},
    }
    llm.script(
        429,
        b"{not json",
        "scripted",
        {"role": "assistant", "content": None, "tool_calls": [tool_call]},
    )
    async with _client(llm) as client:
        responses = [await client.post("/chat/completions", json=_body(str(i))) for i in range(5)]
    assert responses[0].status_code == 429
    assert responses[0].json()["error"]["type"] == "requests"
    assert responses[1].status_code == 200 and responses[1].content == b"{not json"
    assert responses[2].json()["choices"][0]["message"]["content"] == "scripted"
    tool_choice = responses[3].json()["choices"][0]
    assert tool_choice["finish_reason"] == "tool_calls"
    assert tool_choice["message"]["tool_calls"] == [tool_call]
    assert responses[4].json()["choices"][0]["message"]["content"] == "fake answer: 4"
    assert len(llm.requests) == 5 and llm.scripted_left == 0


async def test_fake_openai_hang_and_async_responder(llm: FakeOpenAI) -> None:
    async def responder(body: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"role": "assistant", "content": f"async {len(body['messages'])}"}

    llm.responder = responder
    llm.script("hang")
    async with _client(llm, timeout=0.3) as client:
        with pytest.raises(httpx.ReadTimeout):  # the hang holds the request past the client's
            await client.post("/chat/completions", json=_body("slow"))
        response = await client.post("/chat/completions", json=_body("fast"))
    assert response.json()["choices"][0]["message"]["content"] == "async 2"
    await llm.wait_for_requests(2, timeout=1)
    with pytest.raises(TimeoutError):
        await llm.wait_for_requests(3, timeout=0.05)


async def test_fake_openai_holds_an_answer_until_released(llm: FakeOpenAI) -> None:
    llm.script("hold")
    async with _client(llm, timeout=10) as client:
        request = asyncio.create_task(client.post("/chat/completions", json=_body("x")))
        await llm.wait_for_requests(1)
        with pytest.raises(TimeoutError):
            await llm.wait_for_answers(1, timeout=0.05)
        assert not request.done()
        llm.release()
        await llm.wait_for_answers(1)
        response = await request
    assert response.json()["choices"][0]["message"]["content"] == "fake answer: x"
    assert llm.calls_answered == 1


async def test_fake_openai_stop_cuts_hang_short() -> None:
    server = FakeOpenAI()
    await server.start()
    server.script("hang")
    async with _client(server, timeout=30) as client:
        request = asyncio.create_task(client.post("/chat/completions", json=_body("x")))
        await server.wait_for_requests(1)
        await server.stop()
        response = await asyncio.wait_for(request, 5)  # cut short, not after its 30 s
    assert response.status_code == 503
