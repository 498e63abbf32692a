"""Players' records over many matches: matches and rounds won, gins, undercuts, and head to head.

Players are not registered anywhere: a match names its players as they were typed. The same person is
recognised across matches by name, compared without case, extra spaces or Unicode's other ways of writing a
letter ("ann  " is Ann), and shown as the most recent match spelled the name.

>>> from scorer.cards import Card, parse_cards
>>> from scorer.match import Match
>>> match = Match(["Ann", "Bob"], dealer="Bob")
>>> ann, bob = parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC"), parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D")
>>> hands = {"Ann": ann, "Bob": bob}
>>> _ = match.record_round(Card.parse("KS"), hands, knocker="Ann")
>>> [(record.name, record.rounds_won, record.points) for record in player_records([match])]
[('Ann', 1, 18), ('Bob', 0, 0)]
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Iterable
from typing import Any

from scorer.match import Match
from scorer.rules import Outcome


def same_player(name: str) -> str:
    """The key two spellings of one player's name share: case, runs of spaces and Unicode's ways of writing one
    letter (a composed ë or an e and its accent, a full-width Ａ) ignored.

    >>> same_player("  Ann  Lee ") == same_player("ann lee"), same_player("Zo\u00eb") == same_player("ZOE\u0308")
    (True, True)
    """
    return " ".join(unicodedata.normalize("NFKC", name).split()).casefold()


@dataclasses.dataclass(frozen=True)
class RoundOutline:
    """What a record needs of one scored round."""

    outcome: Outcome
    knocker: str
    winner: str
    points: tuple[tuple[str, int], ...]


@dataclasses.dataclass(frozen=True)
class MatchOutline:
    """What a record needs of one match: small and cheap to keep, where a ``Match`` scores its rounds to be built
    (a page of records over hundreds of stored matches keeps their outlines, not the matches)."""

    players: tuple[str, ...]
    finished: bool
    winner: str | None
    rounds: tuple[RoundOutline, ...]
    """The scored rounds: draws are void."""

    @classmethod
    def of(cls, match: Match) -> MatchOutline:
        rounds = tuple(
            RoundOutline(result.outcome, result.knocker, result.winner, tuple(result.points.items()))
            for result in (round_.result for round_ in match.rounds)
            if result is not None
        )
        return cls(match.players, match.finished, match.winner, rounds)


def _outline(match: Match | MatchOutline) -> MatchOutline:
    return match if isinstance(match, MatchOutline) else MatchOutline.of(match)


def _player_keys(match: MatchOutline) -> dict[str, str]:
    """Each of the match's players' key (``same_player``); two players of one match whose names ``same_player``
    takes for one ("Ann" and "ann", in a match saved before names were told apart so) are two people there, so they
    keep their names as typed, apart."""
    keys = {name: same_player(name) for name in match.players}
    shared = {key for key in keys.values() if list(keys.values()).count(key) > 1}
    return {name: "\0" + name if key in shared else key for name, key in keys.items()}


@dataclasses.dataclass
class PlayerRecord:
    """One player's figures over the matches they played."""

    name: str
    """As the most recent of those matches spelled it."""
    matches: int = 0
    finished: int = 0
    """Matches played to their end (won by someone)."""
    won: int = 0
    rounds: int = 0
    """Rounds scored in their matches (draws are void and not counted)."""
    rounds_won: int = 0
    gins: int = 0
    """Rounds they won by going gin."""
    undercuts: int = 0
    """Rounds they won by undercutting the player who laid down."""
    undercut: int = 0
    """Rounds they laid down and were undercut."""
    points: int = 0
    """Points over all their rounds, before end-of-match bonuses (penalty scoring counts its minus points)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class HeadToHead:
    """Two players' finished matches against each other (at the same table, with or without others)."""

    first: str
    second: str
    matches: int = 0
    first_won: int = 0
    second_won: int = 0
    """The other matches they finished together were won by someone else at the table."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def involves(self, name: str) -> bool:
        """Whether ``name`` (written any way ``same_player`` allows) is one of the two."""
        return same_player(name) in (same_player(self.first), same_player(self.second))

    def seen_by(self, name: str) -> HeadToHead:
        """The pair with ``name``'s player first, as a list of one player's opponents reads.

        >>> HeadToHead("Ann", "Bob", 3, 1, 2).seen_by("bob")
        HeadToHead(first='Bob', second='Ann', matches=3, first_won=2, second_won=1)
        """
        if same_player(name) != same_player(self.second):
            return self
        return HeadToHead(self.second, self.first, self.matches, self.second_won, self.first_won)


def player_records(matches: Iterable[Match | MatchOutline]) -> list[PlayerRecord]:
    """Every player's record over ``matches`` (oldest first: the last spelling of a name is the one shown),
    most matches won first, then most rounds won, then by name."""
    records: dict[str, PlayerRecord] = {}
    for match in map(_outline, matches):
        key = _player_keys(match)
        for name in match.players:
            record = records.setdefault(key[name], PlayerRecord(name))
            record.name = name
            record.matches += 1
            record.finished += match.finished
            record.won += match.winner == name
        for result in match.rounds:
            for name, points in result.points:
                record = records[key[name]]
                record.rounds += 1
                record.points += points
            winner = records[key[result.winner]]
            winner.rounds_won += 1
            winner.gins += result.outcome == "gin"
            winner.undercuts += result.outcome == "undercut"
            if result.outcome == "undercut":
                records[key[result.knocker]].undercut += 1
    return sorted(records.values(), key=lambda record: (-record.won, -record.rounds_won, same_player(record.name)))


def head_to_head(matches: Iterable[Match | MatchOutline]) -> list[HeadToHead]:
    """Each pair of players who finished a match together, most matches first; names as ``player_records``."""
    shown: dict[str, str] = {}
    pairs: dict[tuple[str, str], HeadToHead] = {}
    for match in map(_outline, matches):
        key = _player_keys(match)
        shown.update((key[name], name) for name in match.players)
        if not match.finished:
            continue
        keys = sorted(key.values())
        winner = key[match.winner] if match.winner is not None else None
        for index, first in enumerate(keys):
            for second in keys[index + 1 :]:
                pair = pairs.setdefault((first, second), HeadToHead(first, second))
                pair.matches += 1
                pair.first_won += winner == first
                pair.second_won += winner == second
    found = [dataclasses.replace(pair, first=shown[pair.first], second=shown[pair.second]) for pair in pairs.values()]
    return sorted(found, key=lambda pair: (-pair.matches, same_player(pair.first), same_player(pair.second)))
