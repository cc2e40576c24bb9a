"""A two-step FSM form: whatever is typed in it belongs to the form."""

from aiogram import F, Router
from aiogram.filters import Command
from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import Message

received: list[str] = []  # a real bot would store it somewhere


class Feedback(StatesGroup):
    text = State()


async def ask(message: Message, state: FSMContext) -> None:
    await state.set_state(Feedback.text)
    await message.answer("What would you like to tell us?")


async def save(message: Message, state: FSMContext) -> None:
    received.append(message.text or "")
    await state.clear()
    await message.answer("Thanks, your feedback was sent.")


def router() -> Router:
    r = Router(name="feedback")
    r.message.register(ask, Command("feedback"))
    r.message.register(save, Feedback.text, F.text)
    return r
