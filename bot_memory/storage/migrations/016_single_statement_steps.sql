-- 016: two steps of a commit (migration 015) as one statement each instead of several, so the
-- server runs the executor fewer times per commit: the recall row of a scope that only gained
-- a record, and the check of what an extraction may still work on.

-- The recall row of a scope whose only change is one record added, from the row it had: the
-- new record leads the directory, the index and its entries are as they were (`added`: the
-- record's scope and ID, and the records evicted with it). NULL when that is not certain (no
-- row before, an evicted record was shown or its index was built from it, the new one is not
-- the newest): then bm_derive.
CREATE OR REPLACE FUNCTION bm_prepend(
    ws text, s memory_scopes, added jsonb, directory_max integer, summary_chars integer
) RETURNS memory_scopes
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT b.before || jsonb_build_object(
               'enabled', s.enabled, 'suspended', s.suspended,
               'pending', s.index_pending OR s.index_text = '',
               'directory', (SELECT jsonb_agg(d.e ORDER BY d.n)
                             FROM jsonb_array_elements(jsonb_build_array(n.entry)
                                                       || (b.before->'directory'))
                                  WITH ORDINALITY AS d(e, n)
                             WHERE d.n <= directory_max))
      INTO s.recall
      FROM (SELECT s.recall || '{}'::jsonb AS before,  -- read once
                   ARRAY(SELECT jsonb_array_elements_text(added->'evicted')) AS evicted) b
      CROSS JOIN LATERAL (
          SELECT r.created_at, jsonb_build_object(
              'id', r.id, 'title', r.title, 'summary', left(r.summary, summary_chars),
              'speaker_ids', to_jsonb(r.speaker_ids), 'thread_ids', to_jsonb(r.thread_ids),
              'until', bm_iso(r.available_until), 'created_at', bm_iso(r.created_at),
              'source_ids', coalesce((SELECT jsonb_agg('m' || x.message_id
                                                ORDER BY x.message_id)
                  FROM record_sources x WHERE x.workspace_id = ws AND x.record_id = r.id),
                  '[]'::jsonb)) AS entry
          FROM memory_records r
          WHERE r.workspace_id = ws AND r.id = added->>'id' AND r.scope_key = s.scope_key
            AND r.valid) n
      WHERE b.before IS NOT NULL
        AND NOT s.index_candidates && b.evicted
        AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements((b.before->'directory')
                                                           || (b.before->'index_entries')) e
                        WHERE e->>'id' = ANY(b.evicted))
        -- The order is obvious: the new record is the newest.
        AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(b.before->'directory') e
                        WHERE e->>'created_at' IS NULL
                           OR ((e->>'created_at')::timestamptz, e->>'id')
                              >= (n.created_at, added->>'id'));
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    RETURN s;
END $$;

-- What a job may still work on (pipeline/inputs.py): NULL when memory is on in the scope, the
-- bot is there, and every snapshot source is retained, unedited and not forgotten; otherwise
-- the stop kind and why, for the first source (in snapshot order) that changed.
CREATE OR REPLACE FUNCTION bm_input_problem(ws text, skey text, sources jsonb, OUT kind text, OUT problem text)
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN s.scope_key IS NULL THEN 'gone' WHEN NOT s.enabled OR s.suspended THEN 'off'
                ELSE c.kind END,
           CASE WHEN s.scope_key IS NULL THEN 'the scope is gone'
                WHEN NOT s.enabled THEN 'memory was turned off in this scope'
                WHEN s.suspended THEN 'the bot is no longer in this chat'
                ELSE c.problem END
    FROM (SELECT 1) one
    LEFT JOIN memory_scopes s ON s.workspace_id = ws AND s.scope_key = skey
    LEFT JOIN LATERAL (
        SELECT 'changed' AS kind, 'source m' || e.message_id || CASE
                WHEN m.id IS NULL OR m.text IS NULL THEN ' was removed or expired'
                WHEN t.message_id IS NOT NULL THEN ' was forgotten'
                ELSE ' was edited' END AS problem
        FROM (SELECT (x.src->>'message_id')::bigint AS message_id, x.src->>'hash' AS hash, x.n
              FROM jsonb_array_elements(sources) WITH ORDINALITY AS x(src, n)) e
        LEFT JOIN LATERAL (SELECT g.id, g.text, g.content_hash FROM messages g
                           WHERE g.workspace_id = ws AND g.id = e.message_id) m ON true
        LEFT JOIN LATERAL (SELECT f.message_id FROM tombstones f WHERE f.workspace_id = ws
                           AND f.scope_key = skey AND f.message_id = e.message_id) t ON true
        WHERE m.id IS NULL OR m.text IS NULL OR t.message_id IS NOT NULL
           OR m.content_hash <> e.hash
        ORDER BY e.n LIMIT 1) c ON true
$$;
