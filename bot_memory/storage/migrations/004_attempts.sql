-- 004: every billed call is an attempt on the ledger before it is sent.
-- 'pending' until closed: ok (with usage), error (certainly not processed) or unknown (it may
-- have been). Its worst-case cost is reserved against the request's and the workspace's
-- budgets until it is settled, so concurrent calls cannot overspend together.
ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_outcome_check;
ALTER TABLE usage_ledger ADD CONSTRAINT usage_ledger_outcome_check
    CHECK (outcome IN ('pending', 'ok', 'error', 'unknown'));
ALTER TABLE usage_ledger ADD COLUMN reserved_usd numeric(12, 6) NOT NULL DEFAULT 0;
ALTER TABLE usage_ledger ADD COLUMN closed_at timestamptz;
UPDATE usage_ledger SET closed_at = created_at;
CREATE INDEX usage_ledger_pending_idx ON usage_ledger (workspace_id, job_id)
    WHERE outcome = 'pending';
