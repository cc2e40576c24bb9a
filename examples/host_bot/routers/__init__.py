"""The bot's features, one router each."""

from aiogram import Router

from examples.host_bot.routers import chat, feedback, start


def get_routers() -> list[Router]:
    """Fresh routers (a router can be attached to one dispatcher only)."""
    return [start.router(), feedback.router(), chat.router()]
