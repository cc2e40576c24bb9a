-- A request answered closes in one statement (bm_finish_answered), not a transaction of five:
-- every directed message answered makes it. Scheduling a scope is one function (bm_schedule),
-- which closing without an answer uses too.

-- Scopes seen again, each with the time it was (`ats`): a scope's row the first time; its
-- activity and due time only move forward, the due time an idle window after its activity.
-- Each scope once (an upsert may not touch a row twice in one statement).
CREATE OR REPLACE FUNCTION bm_schedule(
    wss text[], skeys text[], scopes jsonb[], ats timestamptz[], idle_seconds double precision
) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO memory_scopes (workspace_id, scope_key, kind, bot_id, chat_id, user_id,
        topic_id, last_activity, due_at, suspended)
    SELECT c.ws, c.skey, c.scope->>'kind', (c.scope->>'bot_id')::bigint,
        (c.scope->>'chat_id')::bigint, (c.scope->>'user_id')::bigint,
        (c.scope->>'topic_id')::bigint, c.at, c.at + make_interval(secs => idle_seconds),
        coalesce((SELECT NOT h.bot_active FROM chats h
                  WHERE h.bot_id = (c.scope->>'bot_id')::bigint
                  AND h.chat_id = (c.scope->>'chat_id')::bigint), false)
    FROM (SELECT DISTINCT ON (g.ws, g.skey) g.*
          FROM unnest(wss, skeys, scopes, ats) AS g(ws, skey, scope, at)
          ORDER BY g.ws, g.skey, g.at DESC) c
    ON CONFLICT (workspace_id, scope_key) DO UPDATE SET
        last_activity = greatest(memory_scopes.last_activity, EXCLUDED.last_activity),
        due_at = greatest(memory_scopes.due_at, EXCLUDED.due_at),
        wakes = memory_scopes.wakes + 1
$$;

-- Close a request with its answer (requests.finish), once: false when it is closed already.
-- The answer is kept as the assistant message (content-free when a source it was given was
-- erased meanwhile), retained no longer than anything it was given nor than the chat keeps
-- messages; it depends on its records (their sources kept once, in given_sources) and on the
-- chat excerpts it was shown. Then the request's scope is scheduled. By request ID alone: a
-- chat moved meanwhile (a group upgrade) keeps its requests. The workspace's row is taken
-- before the request's, the order a purge takes them in (else each waits for the other).
CREATE OR REPLACE FUNCTION bm_finish_answered(
    request bigint, answer_text text, answer_hash text, answer_search text,
    answer_telegram_id bigint, sender bigint, at timestamptz, idle_seconds double precision,
    request_kind text
) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    r requests%ROWTYPE;
    ws text;
    cited bigint[];
    answer bigint;
BEGIN
    LOOP  -- again if the request's chat moved to another workspace meanwhile
        SELECT q.workspace_id INTO ws FROM requests q WHERE q.id = request;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        PERFORM 1 FROM workspaces w WHERE w.id = ws FOR KEY SHARE;
        SELECT * INTO r FROM requests q WHERE q.id = request FOR UPDATE;
        IF NOT FOUND OR r.status NOT IN ('queued', 'running', 'awaiting_approval') THEN
            RETURN false;
        END IF;
        EXIT WHEN r.workspace_id = ws;
    END LOOP;
    cited := ARRAY(SELECT substr(c, 2)::bigint FROM unnest(r.citation_source_ids) c
                   WHERE c ~ '^m[0-9]+$');
    INSERT INTO messages (workspace_id, scope_key, bot_id, chat_id, thread_id,
        telegram_message_id, speaker_id, role, text, content_hash, sent_at, retain_until,
        erased_at, erase_reason, search)
    SELECT r.workspace_id, r.scope_key, m.bot_id, m.chat_id, m.thread_id, answer_telegram_id,
        coalesce(sender, m.bot_id), 'assistant',
        CASE WHEN r.answer_erased THEN NULL ELSE answer_text END, answer_hash, at,
        least(
            (SELECT min(d.retain_until) FROM messages d
             WHERE d.workspace_id = r.workspace_id AND d.id IN (
                 SELECT s.message_id FROM record_sources s
                 WHERE s.workspace_id = r.workspace_id AND s.record_id = ANY(r.recall_memory_ids)
                 UNION SELECT unnest(cited))),
            at + make_interval(secs => (
                SELECT h.auto_delete_seconds FROM chats h
                WHERE h.bot_id = m.bot_id AND h.chat_id = m.chat_id
                AND h.auto_delete_seconds > 0))),
        CASE WHEN r.answer_erased THEN at END,
        CASE WHEN r.answer_erased THEN 'a source it was given was erased' END,
        CASE WHEN r.answer_erased THEN NULL ELSE answer_search::tsvector END
    FROM messages m WHERE m.workspace_id = r.workspace_id AND m.id = r.user_message_id
    RETURNING id INTO answer;
    IF answer IS NOT NULL THEN
        -- A record's sources are copied the first time an answer is given it.
        INSERT INTO given_sources (workspace_id, record_id, message_id)
        SELECT s.workspace_id, s.record_id, s.message_id FROM record_sources s
        WHERE s.workspace_id = r.workspace_id AND s.record_id = ANY(r.recall_memory_ids)
          AND NOT EXISTS (SELECT 1 FROM given_sources g
                          WHERE g.workspace_id = r.workspace_id AND g.record_id = s.record_id)
        ON CONFLICT DO NOTHING;
        IF cardinality(r.recall_memory_ids) > 0 THEN
            INSERT INTO answer_records (workspace_id, message_id, record_ids)
            VALUES (r.workspace_id, answer, r.recall_memory_ids) ON CONFLICT DO NOTHING;
        END IF;
        INSERT INTO message_deps (workspace_id, message_id, source_message_id)
        SELECT r.workspace_id, answer, d FROM unnest(cited) d ON CONFLICT DO NOTHING;
    END IF;
    UPDATE requests SET status = 'succeeded', answer_message_id = answer, error = NULL,
        updated_at = now(), finished_at = at, kind = coalesce(request_kind, kind)
    WHERE workspace_id = r.workspace_id AND id = request;
    PERFORM bm_schedule(ARRAY[r.workspace_id], ARRAY[r.scope_key], ARRAY[r.scope], ARRAY[at],
        idle_seconds);
    RETURN true;
END $$;
