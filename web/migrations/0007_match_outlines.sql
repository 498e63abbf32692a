-- Version 7: each match's outline for the players' records (scorer.records.MatchOutline.to_dict(): its players,
-- how it ended, each player's tally of its rounds) and the revision it was made for, written in the transaction of
-- every change to the match (web/matches.py), so the records read every match's outline in one query instead of
-- replaying every round of a club's thousands of matches.
-- outline_revision NULL (a match stored before this upgrade) or not the match's revision: the outline is still to
-- be made, which web/matches.py does in the background (fill_outlines). An outline made by another version of the
-- scoring (its "engine") is made again; {"engine", "left_out": true}: its rounds no longer score, and the records
-- leave it out until a change, or another engine, makes it score.
ALTER TABLE matches ADD COLUMN outline_json TEXT CHECK (outline_json IS NULL OR json_valid(outline_json));
ALTER TABLE matches ADD COLUMN outline_revision INTEGER;
