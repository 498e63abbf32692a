-- Version 3: a round is stored as what was entered, in the JSON form of scorer.match.Knock/Draw
-- (one parser for API, export and database; new fields need no new column). The breakdown column is
-- gone: it was never read and went stale after an edit. Each match counts its changes (revision), so a
-- write is computed outside the write lock and committed only if the match did not change meanwhile.
CREATE TABLE rounds_v3 (
    match_id   INTEGER NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    number     INTEGER NOT NULL CHECK (number >= 1),
    input_json TEXT    NOT NULL CHECK (json_valid(input_json)),
    created_at TEXT    NOT NULL,
    PRIMARY KEY (match_id, number)
);

-- Version 1-2 rows kept each hand as one string ("8C 9C 10C"); the new form lists the cards.
INSERT INTO rounds_v3 (match_id, number, input_json, created_at)
SELECT match_id, number,
       CASE WHEN draw THEN json_object('draw', json('true'))
            ELSE json_object(
                'upcard', upcard,
                'knocker', knocker,
                'hands', (SELECT json_group_object(hand.key,
                                 CASE WHEN trim(hand.value) = '' THEN json('[]')
                                      ELSE json('["' || replace(trim(hand.value), ' ', '","') || '"]') END)
                          FROM json_each(hands_json) AS hand),
                'knocker_melds', NULL)
       END,
       created_at
FROM rounds;

DROP TABLE rounds;
ALTER TABLE rounds_v3 RENAME TO rounds;

ALTER TABLE matches ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
