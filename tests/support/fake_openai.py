"""The fake OpenAI-compatible server ships with the package (bot_memory_aiogram.testing)."""

from bot_memory_aiogram.testing.fake_openai import HANG_SECONDS, FakeOpenAI, default_responder

__all__ = ["HANG_SECONDS", "FakeOpenAI", "default_responder"]
