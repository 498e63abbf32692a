-- Version 4: what a round held before an edit replaced it or an undo removed it, written in the same transaction
-- as the change, so that a mistake can be put back at any later time (web/round_history.py): the database never
-- loses a round's input. The ids are never reused, so a page's stale id cannot name another version.
CREATE TABLE earlier_versions (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id    INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    number      INTEGER NOT NULL CHECK (number >= 1),
    input_json  TEXT    NOT NULL CHECK (json_valid(input_json)),
    replaced_at TEXT    NOT NULL,
    replaced_by TEXT    NOT NULL CHECK (replaced_by IN ('edited', 'undone'))
);

CREATE INDEX earlier_versions_by_match ON earlier_versions (match_id, id);
