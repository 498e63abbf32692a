-- Version 6: the match each recent post made, by the post's one-time key and what it asked (web/once.py), so that
-- a post sent again finds its match after the server restarts too. A row is written in the transaction that
-- stores its match (never one without the other); UNIQUE (key, asked) makes the later of two identical posts sent
-- at once fail, rolling back its match, and answer the earlier's. Rows are kept for a day, at most KEPT of them.
CREATE TABLE sent_once (
    id       INTEGER PRIMARY KEY,
    key      TEXT    NOT NULL,
    asked    TEXT    NOT NULL,
    match_id INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    sent_at  INTEGER NOT NULL,
    UNIQUE (key, asked)
);
