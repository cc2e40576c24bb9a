-- What the previous release (0.2.0) calls that the current code does not: each a wrapper over
-- the function that now holds its body, so a process still running the previous release keeps
-- working until it is restarted. Applied after schema.sql wherever the schema is read whole
-- (tests/db/test_schema.py); the next release's first migration drops them all, and this file
-- is emptied (see the rule in schema.sql's header).

CREATE OR REPLACE FUNCTION bm_add_record(
    ws text, rec jsonb, rec_fingerprint text, rec_search tsvector, max_records integer
) RETURNS TABLE (id text, scope_key text, added boolean, available_until timestamptz)
LANGUAGE sql AS $$
    SELECT * FROM bm_record_store(jsonb_build_object('workspace', ws, 'record', rec,
        'fingerprint', rec_fingerprint, 'search', rec_search::text,
        'limits', jsonb_build_object('max_records', max_records)))
$$;

CREATE OR REPLACE FUNCTION bm_remember(
    ws text, scope jsonb, rec jsonb, rec_fingerprint text, rec_search tsvector,
    max_records integer, directory_max integer, summary_chars integer
) RETURNS text
LANGUAGE sql AS $$
    SELECT bm_note_commit(jsonb_build_object('workspace', ws, 'scope', scope, 'record', rec,
        'fingerprint', rec_fingerprint, 'search', rec_search::text, 'check_sources', false,
        'limits', jsonb_build_object('max_records', max_records, 'directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_forget(
    ws text, skey text, removed text[], doomed bigint[], rearm_at timestamptz,
    states jsonb, touched text[], directory_max integer, summary_chars integer
) RETURNS void
LANGUAGE sql AS $$
    SELECT bm_forget_commit(jsonb_build_object('workspace', ws, 'scope_key', skey,
        'removed', to_jsonb(removed), 'doomed', to_jsonb(doomed), 'rearm_at', rearm_at,
        'states', states, 'touched', to_jsonb(touched),
        'limits', jsonb_build_object('directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_forget_at_once(
    ws text, skey text, ids text[], request_id bigint, asker bigint, rearm_at timestamptz,
    directory_max integer, summary_chars integer, OUT outcome text, OUT removed text[]
)
LANGUAGE sql AS $$
    SELECT * FROM bm_forget_at_once_commit(jsonb_build_object('workspace', ws,
        'scope_key', skey, 'ids', to_jsonb(ids), 'request_id', request_id, 'asker', asker,
        'rearm_at', rearm_at, 'limits', jsonb_build_object('directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_commit_extraction(
    ws text, skey text, job_id bigint, token uuid, sources jsonb, through_request bigint,
    rec jsonb, carried text[], rec_fingerprint text, rec_search tsvector, at timestamptz,
    max_records integer, directory_max integer, summary_chars integer,
    OUT outcome text, OUT detail text
)
LANGUAGE sql AS $$
    SELECT * FROM bm_extraction_commit(jsonb_build_object('workspace', ws, 'scope_key', skey,
        'job', jsonb_build_object('id', job_id, 'token', token, 'sources', sources,
            'through_request', through_request),
        'record', rec, 'fingerprint', rec_fingerprint, 'search', rec_search::text,
        'carried', to_jsonb(carried), 'at', at,
        'limits', jsonb_build_object('max_records', max_records, 'directory_max', directory_max,
            'summary_chars', summary_chars)))
$$;

CREATE OR REPLACE FUNCTION bm_source_problem(ws text, skey text, sources jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT bm_source_problem_v2(ws, skey, sources, NULL)
$$;

CREATE OR REPLACE FUNCTION bm_input_problem(
    ws text, skey text, sources jsonb, OUT kind text, OUT problem text
)
LANGUAGE sql STABLE AS $$
    SELECT * FROM bm_input_problem_v2(ws, skey, sources, NULL)
$$;
