-- Version 1: matches, their players, and every confirmed round with the inputs it was scored from.
-- The computed breakdown is kept for the record; totals are always recomputed from the inputs.
CREATE TABLE matches (
    id           INTEGER PRIMARY KEY,
    created_at   TEXT    NOT NULL,
    rules_json   TEXT    NOT NULL,
    first_dealer TEXT    NOT NULL,
    winner       TEXT,
    finished_at  TEXT
);

CREATE TABLE players (
    match_id INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat     INTEGER NOT NULL CHECK (seat BETWEEN 1 AND 4),
    name     TEXT    NOT NULL,
    PRIMARY KEY (match_id, seat),
    UNIQUE (match_id, name)
);

CREATE TABLE rounds (
    match_id       INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    number         INTEGER NOT NULL CHECK (number >= 1),
    draw           INTEGER NOT NULL DEFAULT 0 CHECK (draw IN (0, 1)),
    upcard         TEXT,
    knocker        TEXT,
    hands_json     TEXT,
    breakdown_json TEXT,
    created_at     TEXT    NOT NULL,
    PRIMARY KEY (match_id, number)
);
