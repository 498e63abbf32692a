-- Version 5: which deal each round entry is, and which match an imported copy was made from.
--
-- A deal is one entry of a round: an edit keeps its round's deal, a new round entered gets a new one (the match's
-- largest deal + 1), and an earlier version keeps the deal it was a version of. An edit's earlier version goes back
-- into its round only while the round holds the same deal (web/round_history.py): not over a new deal entered
-- after the round was undone. NULL: stored before deals were told apart, read as the round's number
-- (COALESCE(deal, number)), so every earlier version kept before this upgrade is a version of the deal its round
-- holds, as it was until now; what is entered after the upgrade gets deals of its own.
ALTER TABLE rounds ADD COLUMN deal INTEGER CHECK (deal >= 1);
ALTER TABLE earlier_versions ADD COLUMN deal INTEGER CHECK (deal >= 1);

-- A match imported from a match file is a copy of the match the file was saved from: origin_id and
-- origin_created_at name that match's first stored form (the id and creation time it has where it was begun),
-- so a copy of a copy names the same match. The players' records count such a match once (web/matches.py,
-- match_outlines). NULL: a match begun here, or imported from a file that does not say where it came from.
ALTER TABLE matches ADD COLUMN origin_id INTEGER;
ALTER TABLE matches ADD COLUMN origin_created_at TEXT;

CREATE INDEX matches_by_origin ON matches (origin_id, origin_created_at) WHERE origin_id IS NOT NULL;
