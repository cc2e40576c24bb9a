-- 022: the Mini App's export links download once (issue 27, item 7). A download ticket carries a
-- random nonce; its one download claims it here, in whichever of the bot's processes serves it,
-- and a second claim finds it taken. A claim names no workspace, chat, user or text: it is kept
-- an hour past its ticket's expiry (the processes' clocks may differ), then the worker drops it.
CREATE TABLE used_tickets (
    nonce      bytea PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX used_tickets_expires_idx ON used_tickets (expires_at);
