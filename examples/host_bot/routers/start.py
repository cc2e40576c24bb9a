from aiogram import Router
from aiogram.filters import CommandStart
from aiogram.types import Message


async def start(message: Message) -> None:
    await message.answer("Welcome! Ask me anything, or send /feedback.")


def router() -> Router:
    r = Router(name="start")
    r.message.register(start, CommandStart())
    return r
