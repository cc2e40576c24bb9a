-- 009: word search for query_memories and query_chat_history.
--
-- The application cuts text into terms (bot_memory/search.py: folded words, and character
-- bigrams for Chinese and Japanese) and stores them with positions and weights as a tsvector
-- beside the text. Erasing a message's text erases its terms in the same statement.
--
-- Rows from before this migration have none yet: the worker fills them a batch per tick (the
-- partial indexes find them), and until then a search reads them through PostgreSQL's own
-- 'simple' configuration, which is close for alphabetic scripts.
ALTER TABLE memory_records ADD COLUMN search tsvector;
ALTER TABLE messages ADD COLUMN search tsvector;
CREATE INDEX memory_records_unsearched_idx ON memory_records (workspace_id, id)
    WHERE search IS NULL;
CREATE INDEX messages_unsearched_idx ON messages (id)
    WHERE search IS NULL AND text IS NOT NULL;
