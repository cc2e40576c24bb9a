"""Russian and Ukrainian users, end to end: the real Dispatcher and Bot over HTTP against the Bot
API emulator, in a private chat and in a group Topic. Each says remember, asks (recall), opens
/memory and presses its buttons, forgets, turns memory off and on, and every reply, button and
screen is in their language; the stored rows and the model's input are checked too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from aiogram import Bot, Dispatcher
from aiogram.types import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats

from bot_memory.service import Memory
from bot_memory_aiogram import setup
from bot_memory_aiogram.testing import TestBot, default_responder, running_bot

USER = 1001
GROUP = -100888
TOPIC = 7


@dataclass(frozen=True)
class Speech:
    """What a speaker of the language says, and what the bot must answer."""

    code: str
    remember: str
    fact: str  # what the note holds, as the model must see it
    question: str
    answer: str  # the (fake) model's answer when it was given the note
    forget: str
    off: str
    on: str
    remembered: str
    forgot_one: str
    off_chat: str
    off_topic: str
    on_chat: str
    on_topic: str
    title_chat: str
    title_topic: str
    one_record: str
    forget_button: str
    turn_off: str
    turn_on: str
    refresh: str
    spend: str
    confirm: str
    yes: str
    cancel: str
    is_off: str


RU = Speech(
    code="ru",
    remember="запомни, что мой любимый чай — улун",
    fact="мой любимый чай — улун",
    question="какой чай мне заварить?",
    answer="Вы любите улун — заварите его.",
    forget="забудь про мой любимый чай",
    off="выключи память",
    on="включи память обратно",
    remembered="Хорошо, запомню.",
    forgot_one="Готово, из памяти удалена 1 запись.",
    off_chat="Память в этом чате выключена.",
    off_topic="Память в этой теме выключена.",
    on_chat="Память в этом чате включена.",
    on_topic="Память в этой теме включена.",
    title_chat="Память этого чата",
    title_topic="Память этой темы",
    one_record="1 запись",
    forget_button="Забыть 1",
    turn_off="Выключить память",
    turn_on="Включить память",
    refresh="Обновить",
    spend="Расходы",
    confirm="Забыть «",
    yes="Да, забыть",
    cancel="Отмена",
    is_off="Память здесь выключена",
)
UK = Speech(
    code="uk",
    remember="запам’ятай, що мій улюблений чай — улун",
    fact="мій улюблений чай — улун",
    question="який чай мені заварити?",
    answer="Ви любите улун — заваріть його.",
    forget="забудь мій улюблений чай",
    off="вимкни пам'ять",
    on="увімкни пам’ять знову",
    remembered="Добре, запам’ятаю.",
    forgot_one="Готово, з пам’яті видалено 1 запис.",
    off_chat="Пам’ять у цьому чаті вимкнено.",
    off_topic="Пам’ять у цій темі вимкнено.",
    on_chat="Пам’ять у цьому чаті ввімкнено.",
    on_topic="Пам’ять у цій темі ввімкнено.",
    title_chat="Пам’ять цього чату",
    title_topic="Пам’ять цієї теми",
    one_record="1 запис",
    forget_button="Забути 1",
    turn_off="Вимкнути пам’ять",
    turn_on="Увімкнути пам’ять",
    refresh="Оновити",
    spend="Витрати",
    confirm="Забути «",
    yes="Так, забути",
    cancel="Скасувати",
    is_off="Пам’ять тут вимкнено",
)


def with_agent(memory: Memory) -> Dispatcher:
    dp = Dispatcher()
    setup(dp, memory, reference_agent=True)
    return dp


@dataclass
class Place:
    """A private chat, or a group Topic where the speaker is an admin."""

    bot: TestBot
    speech: Speech
    topic: bool

    @property
    def chat_id(self) -> int:
        return GROUP if self.topic else USER

    def message(self, text: str) -> dict[str, Any]:
        fields: dict[str, Any] = {"user_id": USER, "language_code": self.speech.code}
        if self.topic:  # addressed to the bot, in the Topic
            text = text if text.startswith("/") else f"@memory_test_bot {text}"
            fields |= {"chat_id": GROUP, "chat_type": "supergroup", "is_forum": True}
            fields |= {"thread_id": TOPIC}
        return {"text": text, **fields}

    async def say(self, text: str) -> str:
        fields = self.message(text)
        reply = await self.bot.say(fields.pop("text"), **fields)
        if self.topic:  # answered in the Topic
            assert self.bot.emu.sent[-1].params.get("message_thread_id") == TOPIC
        return reply

    async def screen(self) -> int:
        await self.say("/memory")
        return int(self.bot.emu.sent[-1].result["message_id"])

    def shown(self, screen: int) -> tuple[str, list[list[str]]]:
        stored = self.bot.emu.get_message(self.chat_id, screen)
        assert stored is not None
        rows = stored.get("reply_markup", {}).get("inline_keyboard", [])
        return str(stored["text"]), [[b["text"] for b in row] for row in rows]

    async def press(self, screen: int, label: str) -> dict[str, Any]:
        stored = self.bot.emu.get_message(self.chat_id, screen)
        assert stored is not None
        data = next(
            b["callback_data"]
            for row in stored["reply_markup"]["inline_keyboard"]
            for b in row
            if b["text"] == label
        )
        before = len(self.bot.emu.calls_to("answerCallbackQuery"))
        self.bot.emu.push_callback_query(
            chat_id=self.chat_id,
            user_id=USER,
            data=data,
            message_id=screen,
            language_code=self.speech.code,
        )
        calls = await self.bot.emu.wait_for_calls("answerCallbackQuery", before + 1)
        await self.bot.settled()
        return dict(calls[-1].params)

    async def records(self) -> list[str]:
        rows = await self.bot.memory.store.pool.fetch(
            "SELECT summary FROM memory_records WHERE valid ORDER BY created_at"
        )
        return [r["summary"] for r in rows]

    async def enabled(self) -> bool:
        value = await self.bot.memory.store.pool.fetchval(
            "SELECT enabled FROM memory_scopes ORDER BY scope_key DESC LIMIT 1"
        )
        return bool(value)


@pytest.mark.parametrize("topic", [False, True], ids=["private", "topic"])
@pytest.mark.parametrize("speech", [RU, UK], ids=["ru", "uk"])
async def test_a_whole_conversation_in_the_users_language(
    db_url: str, speech: Speech, topic: bool
) -> None:
    async with running_bot(with_agent, database_url=db_url, workspace="test") as bot:
        if topic:
            bot.emu.set_chat_member_status(GROUP, USER, "administrator")
        place = Place(bot, speech, topic)
        s = speech

        def model(body: dict[str, Any]) -> dict[str, Any]:
            if s.fact in json.dumps(body, ensure_ascii=False) and "tools" in body:
                return {"role": "assistant", "content": s.answer}
            return default_responder(body)

        bot.llm.responder = model

        # Remember: a note of the message, answered without the model.
        assert await place.say(s.remember) == s.remembered
        said = place.message(s.remember)["text"]  # the source message keeps the whole text
        kept = s.remember.split(" ", 2)[2]  # the fact, without "запомни, что" / "запам'ятай, що"
        assert s.remember in said and await place.records() == [kept]

        # Recall: the next question's model input carries the note; the answer is delivered.
        before = len(bot.llm.chat_requests())
        assert await place.say(s.question) == s.answer
        prompt = json.dumps(bot.llm.chat_requests()[before], ensure_ascii=False)
        assert s.fact in prompt and "in the user's language" in prompt

        # The /memory screen: title, status and buttons in the user's language.
        screen = await place.screen()
        text, rows = place.shown(screen)
        assert text.startswith(s.title_topic if topic else s.title_chat), text
        assert s.fact in text and s.one_record in text
        controls = [s.turn_off, s.refresh] + ([s.spend] if topic else [])  # spend: admins
        assert rows == [[s.forget_button], controls]
        asked = await place.press(screen, s.forget_button)  # the confirm step, then back
        assert not asked.get("show_alert")
        assert place.shown(screen)[0].startswith(s.confirm)
        assert place.shown(screen)[1] == [[s.yes, s.cancel]]
        await place.press(screen, s.cancel)
        assert place.shown(screen)[0].startswith(s.title_topic if topic else s.title_chat)

        # Forget, by saying it: the note goes, and the reply counts it in the language.
        assert await place.say(s.forget) == s.forgot_one
        assert await place.records() == []

        # Off and on, by saying it, then by the screen's buttons.
        off = await place.say(s.off)
        assert off.startswith(s.off_topic if topic else s.off_chat), off
        assert not await place.enabled()
        screen = await place.screen()
        text, rows = place.shown(screen)
        assert s.is_off in text and rows[-1] == [s.turn_on, s.refresh] + (
            [s.spend] if topic else []
        )
        on = await place.say(s.on)
        assert on == (s.on_topic if topic else s.on_chat)
        assert await place.enabled()
        screen = await place.screen()
        await place.press(screen, s.turn_off)
        assert (s.off_topic if topic else s.off_chat) in place.shown(screen)[0]
        assert not await place.enabled()
        await place.press(screen, s.turn_on)
        assert (s.on_topic if topic else s.on_chat) in place.shown(screen)[0]
        assert await place.enabled()

        # Nothing English slipped into what the bot sent.
        sent = [c.params.get("text", "") for c in bot.emu.calls_to("sendMessage")]
        assert not any(w in t for t in sent for w in ("Memory", "memory", "Noted", "Done"))


async def test_menus_in_russian_and_ukrainian_keep_the_hosts_commands(db_url: str) -> None:
    host = [
        BotCommand(command="start", description="Start"),
        BotCommand(command="help", description="Help"),
    ]

    async def host_menus(bot: Bot) -> None:  # the host's own default menu, set first
        for scope in (BotCommandScopeAllPrivateChats(), BotCommandScopeAllGroupChats()):
            await bot.set_my_commands(host, scope=scope)

    def build(memory: Memory) -> Dispatcher:
        dp = Dispatcher()
        dp.startup.register(host_menus)
        setup(dp, memory)
        return dp

    ours = ["memory", "remember", "forget", "memory_on", "memory_off"]
    async with running_bot(build, database_url=db_url, workspace="test") as bot:
        bot.send("привет")
        await bot.settled()
        for scope in ("all_private_chats", "all_group_chats"):
            for code in ("", "zh", "ru", "uk"):
                names = [c["command"] for c in bot.emu.commands[f"{scope}:{code}"]]
                assert names == ["start", "help", *ours], (scope, code)
        ru = {c["command"]: c["description"] for c in bot.emu.commands["all_private_chats:ru"]}
        uk = {c["command"]: c["description"] for c in bot.emu.commands["all_group_chats:uk"]}
        assert ru["memory"] == "Показать, что я здесь помню" and ru["start"] == "Start"
        assert uk["memory_off"] == "Вимкнути пам’ять тут"
