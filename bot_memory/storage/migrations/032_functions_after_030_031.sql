-- Functions changed after migrations 030 and 031 first shipped, as those files now read: a
-- database migrated before the change has 031 applied without bm_chat_keeps_until (every
-- record then fails) and 030 with a bm_close_abandoned that does not settle. Creating them
-- again is a no-op where they are current already.

-- Attempts of a job still pending (Ledger.close_abandoned_attempts): the process making them
-- died mid-call, so the provider may have processed and billed them. They become unknown,
-- charged their reservation; returns how many.
CREATE OR REPLACE FUNCTION bm_close_abandoned(ws text, job bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    cut record;
    closed integer := 0;
BEGIN
    FOR cut IN
        UPDATE usage_ledger SET outcome = 'unknown', cost_usd = reserved_usd, reserved_usd = 0,
            detail = 'the process making this call ended before its answer was recorded',
            closed_at = now()
        WHERE workspace_id = ws AND job_id = job AND outcome = 'pending'
        RETURNING request_id, cost_usd
    LOOP
        closed := closed + 1;
        PERFORM bm_settle(ws, cut.request_id, cut.cost_usd, cut.cost_usd);
    END LOOP;
    RETURN closed;
END $$;

-- When a chat's auto-delete timer removes a message sent at `at` (NULL: the chat keeps its
-- messages): nothing memory keeps of it outlives that.
CREATE OR REPLACE FUNCTION bm_chat_keeps_until(bot bigint, chat bigint, at timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT at + make_interval(secs => h.auto_delete_seconds) FROM chats h
    WHERE h.bot_id = bot AND h.chat_id = chat AND h.auto_delete_seconds > 0
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
            bm_chat_keeps_until(m.bot_id, m.chat_id, at)),
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
