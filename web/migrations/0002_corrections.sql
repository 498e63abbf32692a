-- Version 2: an index of the click-to-correct training examples written to the corrections folder.
CREATE TABLE corrections (
    id         INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    stem       TEXT NOT NULL UNIQUE,
    cards      TEXT NOT NULL
);
