"""Earlier versions of a match's rounds: what an edit replaced or an undo removed, kept so that a mistake can be
put back at any later time (a round edited into a draw, or undone, by mistake need not be typed again).

Each version keeps the *deal* it was a version of: a round entry's id in its match, kept by every edit of the round
and new for each round entered (the match's largest + 1), so that a correction of one deal is never put over another
deal entered in its place. Rows stored before deals were told apart have none, and are read as the deal numbered as
their round (migration 0005): what they could be put back over is what it was.

Putting one back makes its round hold it again, where that keeps the match as it was played (``restore``):

- a version an edit replaced goes back into its round while the round holds the same deal: it was a correction
  of that deal, and what it replaces is kept in turn. Not over a new deal entered after the round was undone;
- a version of the round after the sheet's last (that round was undone, or edited and then undone) comes back as
  that round, the next one, and as the deal it was, while the match goes on;
- an undone round whose place the sheet has filled again (round N entered after round N was undone) is not put
  over the deal entered there: Edit changes that round. A round further on comes back only after the rounds
  before it.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from scorer.match import MatchRound, RoundInput, parse_round_input

EDITED, UNDONE = "edited", "undone"
"""What replaced an earlier version: an edit of its round, or an undo of it (the last round)."""
MAX_EARLIER_VERSIONS = 1_000
"""The most earlier versions a match keeps: keeping one more lets the oldest go, in the same transaction. Far more
than players make by hand, and what a match file may hold (``web.transfer``): unbounded, a script's 1,001 edits of one
round made a match whose export was refused on import, and every answer about the match scored each version again."""


@dataclasses.dataclass(frozen=True)
class EarlierVersion:
    """What round ``number`` held before it was ``replaced_by`` an edit or an undo, and when (``replaced_at``);
    ``deal``: which entry of the round it was a version of."""

    id: int
    number: int
    entered: RoundInput
    replaced_at: str
    replaced_by: str
    deal: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``id``, ``number``, ``input`` (a round input, as ``MatchRound.to_dict()`` writes it),
        ``replaced_at``, ``replaced_by`` (``"edited"`` or ``"undone"``) and ``deal``."""
        return {
            "id": self.id,
            "number": self.number,
            "input": self.entered.to_dict(),
            "replaced_at": self.replaced_at,
            "replaced_by": self.replaced_by,
            "deal": self.deal,
        }


@dataclasses.dataclass(frozen=True)
class Restore:
    """How an earlier version can be put back: ``how`` is ``"edit"`` (its round holds it again) or ``"add"`` (it
    comes back as the next round), or None, with ``why_not`` in players' words."""

    how: Literal["edit", "add"] | None
    why_not: str | None = None


def restore(version: EarlierVersion, inputs: Sequence[RoundInput], deals: Sequence[int], winner: str | None) -> Restore:
    """How ``version`` can be put back into a match whose rounds hold ``inputs``, as the deals ``deals`` (``winner``:
    the match's, once won).

    >>> from scorer.match import Draw
    >>> undone = EarlierVersion(1, 2, Draw(), "2026-12-05T14:02:00+00:00", UNDONE, deal=2)
    >>> restore(undone, [Draw()], [1], None)
    Restore(how='add', why_not=None)
    >>> restore(undone, [], [], None).why_not
    'the sheet has no round 1: round 2 can only come back after it'
    """
    number, played = version.number, len(inputs)
    if number <= played:
        if inputs[number - 1].to_dict() == version.entered.to_dict():
            return Restore(None, f"round {number} holds this now")
        if version.replaced_by == UNDONE:
            return Restore(
                None,
                f"round {number} was entered again after this was undone, and bringing this back would replace it"
                f" (Edit changes round {number})",
            )
        if deals[number - 1] != version.deal:
            return Restore(
                None,
                f"round {number} was undone and entered again (another deal) after this was replaced, and bringing"
                f" this back would replace it (Edit changes round {number})",
            )
        return Restore("edit")
    if number > played + 1:
        return Restore(None, f"the sheet has no round {number - 1}: round {number} can only come back after it")
    if winner is not None:
        return Restore(None, f"the match is over ({winner} won), so no round can be added")
    return Restore("add")


def keep_replaced(
    db: sqlite3.Connection, match_id: int, replaced: MatchRound, deal: int, replaced_by: str, when: str
) -> EarlierVersion:
    """Keep round ``replaced.number`` (deal ``deal``) as it is stored, before an edit replaces it or an undo removes
    it, and let go of the match's versions older than its newest ``MAX_EARLIER_VERSIONS`` (``newest_kept``): run in
    the change's own transaction, so the change is never committed without it."""
    cursor = db.execute(
        "INSERT INTO earlier_versions (match_id, number, input_json, replaced_at, replaced_by, deal)"
        " SELECT match_id, number, input_json, ?, ?, ? FROM rounds WHERE match_id = ? AND number = ?",
        (when, replaced_by, deal, match_id, replaced.number),
    )
    assert cursor.rowcount == 1 and cursor.lastrowid is not None, "the round replaced is stored"
    db.execute(
        "DELETE FROM earlier_versions WHERE match_id = ? AND id <= (SELECT id FROM earlier_versions"
        " WHERE match_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        (match_id, match_id, MAX_EARLIER_VERSIONS),
    )
    return EarlierVersion(cursor.lastrowid, replaced.number, replaced.entered, when, replaced_by, deal)


def newest_kept(versions: Sequence[EarlierVersion]) -> tuple[EarlierVersion, ...]:
    """Of ``versions`` (newest first), those a match keeps (``MAX_EARLIER_VERSIONS``): what ``keep_replaced`` leaves
    stored."""
    return tuple(versions[:MAX_EARLIER_VERSIONS])


def history_rows(db: sqlite3.Connection, match_id: int) -> list[sqlite3.Row]:
    """The rows of every earlier version of the match's rounds, newest first: ``id``, ``number``, ``input_json``,
    ``replaced_at``, ``replaced_by`` and ``deal``."""
    return db.execute(
        "SELECT id, number, input_json, replaced_at, replaced_by, COALESCE(deal, number) AS deal"
        " FROM earlier_versions WHERE match_id = ? ORDER BY id DESC",
        (match_id,),
    ).fetchall()


def read_history(db: sqlite3.Connection, match_id: int) -> tuple[EarlierVersion, ...]:
    """Every earlier version of the match's rounds, newest first.

    :raises RoundInputError: or ``json.JSONDecodeError`` for a stored input that no longer reads.
    """
    rows = history_rows(db, match_id)
    return tuple(
        EarlierVersion(
            row["id"],
            row["number"],
            parse_round_input(json.loads(row["input_json"])),
            row["replaced_at"],
            row["replaced_by"],
            row["deal"],
        )
        for row in rows
    )
