-- A billed call's attempt is opened and closed in one statement each (a round trip, not a
-- transaction of four): every directed message answered makes both. Each writes the
-- workspace's row, in place (heap-only) in the room its pages leave.

ALTER TABLE workspaces SET (fillfactor = 50);

-- A call's charge replaces its reservation: the request's (when it has one) and the
-- workspace's.
CREATE OR REPLACE FUNCTION bm_settle(ws text, request bigint, reserved numeric, cost numeric)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF request IS NOT NULL THEN
        UPDATE requests SET reserved_usd = greatest(reserved_usd - reserved, 0),
            charged_usd = charged_usd + cost
        WHERE workspace_id = ws AND id = request;
    END IF;
    UPDATE workspaces SET reserved_usd = greatest(reserved_usd - reserved, 0),
        spent_usd = spent_usd + cost
    WHERE id = ws;
END $$;

-- Reserve a call's worst case against the request's budget (when it has one) and the
-- workspace's, and write its attempt as pending; the ledger line's ID. Raises BM002 (nothing
-- changed) when a budget does not cover the worst case, or this attempt (its key) was made.
-- The workspace's row is taken first, the order a purge takes them in.
CREATE OR REPLACE FUNCTION bm_open_attempt(
    ws text, request bigint, job bigint, call_kind text, call_provider text, call_model text,
    worst numeric, key text, workspace_budget numeric
) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    remaining numeric;
    made bigint;
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    IF request IS NOT NULL THEN
        UPDATE requests SET reserved_usd = reserved_usd + worst
        WHERE workspace_id = ws AND id = request AND budget_usd - charged_usd - reserved_usd > 0
          AND budget_usd - charged_usd - reserved_usd >= worst;
        IF NOT FOUND THEN
            SELECT budget_usd - charged_usd - reserved_usd INTO remaining FROM requests
            WHERE workspace_id = ws AND id = request;
            RAISE EXCEPTION 'budget exhausted: the request has $% left, the call may cost up to $%',
                to_char(coalesce(remaining, 0), 'FM999999990.000000'),
                to_char(worst, 'FM999999990.000000') USING ERRCODE = 'BM002';
        END IF;
    END IF;
    UPDATE workspaces SET reserved_usd = reserved_usd + worst
    WHERE id = ws AND workspace_budget - spent_usd - reserved_usd > 0
      AND workspace_budget - spent_usd - reserved_usd >= worst;
    IF NOT FOUND THEN
        SELECT workspace_budget - spent_usd - reserved_usd INTO remaining FROM workspaces
        WHERE id = ws;
        RAISE EXCEPTION 'budget exhausted: the workspace has $% left, the call may cost up to $%',
            to_char(coalesce(remaining, 0), 'FM999999990.000000'),
            to_char(worst, 'FM999999990.000000') USING ERRCODE = 'BM002';
    END IF;
    INSERT INTO usage_ledger (workspace_id, request_id, job_id, kind, provider, model, outcome,
        reserved_usd, idempotency_key)
    VALUES (ws, request, job, call_kind, call_provider, call_model, 'pending', worst, key)
    ON CONFLICT (workspace_id, idempotency_key) DO NOTHING
    RETURNING id INTO made;
    IF made IS NULL THEN
        RAISE EXCEPTION 'this call (%) was attempted before: not sending it again', key
            USING ERRCODE = 'BM002';
    END IF;
    RETURN made;
END $$;

-- Settle a pending attempt with its outcome and charge; false when someone else closed it.
-- The workspace's row is taken first, the order a purge takes them in.
CREATE OR REPLACE FUNCTION bm_close_attempt(
    ws text, ledger bigint, request bigint, reserved numeric, call_outcome text,
    prompt integer, completion integer, cost numeric, call_detail text
) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM workspaces w WHERE w.id = ws FOR NO KEY UPDATE;
    UPDATE usage_ledger SET outcome = call_outcome, prompt_tokens = prompt,
        completion_tokens = completion, cost_usd = cost, reserved_usd = 0, detail = call_detail,
        closed_at = now()
    WHERE workspace_id = ws AND id = ledger AND outcome = 'pending';
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM bm_settle(ws, request, reserved, cost);
    RETURN true;
END $$;
