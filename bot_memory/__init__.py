"""bot-memory core: long-term conversation memory. Never imports aiogram."""
