-- 014: the settings memory's work depends on, as each bot and each worker runs with them.
--
-- A worker started without the bot's settings (no settings file, another environment) plans
-- with its own idle window and limits: conversations wait half an hour where the bot said two
-- seconds, and nothing said so. Both now write what they run with; `bot-memory status` names
-- each setting a live worker runs with differently from a bot.
ALTER TABLE bot_models ADD COLUMN settings jsonb;
ALTER TABLE worker_ticks ADD COLUMN settings jsonb;
