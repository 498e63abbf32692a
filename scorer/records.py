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
import functools
import hashlib
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scorer.match import Match


@functools.lru_cache(maxsize=4096)  # a club's few dozen names, met in each of its thousands of matches
def same_player(name: str) -> str:
    """The key two spellings of one player's name share: case, runs of spaces and Unicode's ways of writing one
    letter (a composed ë or an e and its accent, a full-width Ａ) ignored.

    >>> same_player("  Ann  Lee ") == same_player("ann lee"), same_player("Zo\u00eb") == same_player("ZOE\u0308")
    (True, True)
    """
    return " ".join(unicodedata.normalize("NFKC", name).split()).casefold()


class InvalidOutlineError(ValueError):
    """A stored outline that is not one ``MatchOutline.to_dict()`` writes, or not this engine's (``scoring_engine``)."""


@functools.cache
def scoring_engine() -> str:
    """A fingerprint of the code that scores rounds and tallies them (the modules of the ``scorer`` package itself):
    an outline stored by other code is made again, so that no fix of the scoring leaves a record's stale figures
    behind (a stored outline keeps what the engine of its day made of the rounds)."""
    digest = hashlib.sha256()
    for module in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()[:16]


@dataclasses.dataclass
class RoundsTally:
    """One player's scored rounds: in one match (its ``MatchOutline``), or over many (a ``PlayerRecord``)."""

    rounds: int = 0
    """Rounds scored (draws are void and not counted)."""
    rounds_won: int = 0
    gins: int = 0
    """Rounds won by going gin."""
    undercuts: int = 0
    """Rounds won by undercutting the player who laid down."""
    undercut: int = 0
    """Rounds laid down and undercut."""
    points: int = 0
    """Points over those rounds, before end-of-match bonuses (penalty scoring counts its minus points)."""

    def add(self, other: RoundsTally) -> None:
        """Count ``other``'s rounds too."""
        for name in _TALLIED:
            setattr(self, name, getattr(self, name) + getattr(other, name))


_TALLIED = tuple(field.name for field in dataclasses.fields(RoundsTally))


@dataclasses.dataclass(frozen=True, slots=True)
class MatchOutline:
    """What a record needs of one match: its players, how it ended and each player's tally of its rounds. It is of
    one small size however long the match, where a ``Match`` scores every round to be built: the records over a
    club's thousands of matches read their outlines (``web.matches`` stores one with each match).

    >>> match = Match(["Ann", "Bob"], dealer="Bob")
    >>> MatchOutline.from_dict(MatchOutline.of(match).to_dict()) == MatchOutline.of(match)
    True
    """

    players: tuple[str, ...]
    finished: bool
    winner: str | None
    tallies: tuple[RoundsTally, ...]
    """Each player's, in the order of ``players``."""

    @classmethod
    def of(cls, match: Match) -> MatchOutline:
        counts = {name: dict.fromkeys(_TALLIED, 0) for name in match.players}
        for result in (round_.result for round_ in match.rounds):
            if result is None:
                continue
            for name, points in result.points.items():
                counts[name]["rounds"] += 1
                counts[name]["points"] += points
            won = counts[result.winner]
            won["rounds_won"] += 1
            won["gins"] += result.outcome == "gin"
            won["undercuts"] += result.outcome == "undercut"
            counts[result.knocker]["undercut"] += result.outcome == "undercut"
        tallies = tuple(RoundsTally(**counts[name]) for name in match.players)
        return cls(tuple(match.players), match.finished, match.winner, tallies)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"engine", "players", "finished", "winner", "tallies": [{"rounds", "rounds_won", "gins",
        "undercuts", "undercut", "points"}, ...]}``, a tally per player in the order of ``players``; ``engine``: the
        ``scoring_engine`` that made it."""
        return {
            "engine": scoring_engine(),
            "players": list(self.players),
            "finished": self.finished,
            "winner": self.winner,
            "tallies": [dataclasses.asdict(tally) for tally in self.tallies],
        }

    @classmethod
    def from_dict(cls, data: Any) -> MatchOutline:
        """The outline ``to_dict`` wrote.

        :raises InvalidOutlineError: for anything else, saying what is wrong.
        """
        if not isinstance(data, dict):
            raise InvalidOutlineError(f"an outline is a JSON object, got {type(data).__name__}")
        if data.get("engine") != scoring_engine():
            raise InvalidOutlineError("the outline was made by another version of the scoring: made again")
        players, finished, winner, tallies = (data.get(key) for key in ("players", "finished", "winner", "tallies"))
        if not isinstance(players, list) or not all(isinstance(name, str) for name in players):
            raise InvalidOutlineError("an outline's players are a list of names")
        if not isinstance(finished, bool) or not (winner is None or winner in players):
            raise InvalidOutlineError("an outline's finished is true or false and its winner one of its players")
        if not isinstance(tallies, list) or len(tallies) != len(players):
            raise InvalidOutlineError("an outline has one tally per player")
        for tally in tallies:
            if not isinstance(tally, dict) or set(tally) != set(_TALLIED):
                raise InvalidOutlineError(f"a tally has exactly {', '.join(_TALLIED)}")
            if not all(type(count) is int for count in tally.values()):  # bool is an int, but not a count
                raise InvalidOutlineError("a tally's counts are whole numbers")
        return cls(tuple(players), finished, winner, tuple(RoundsTally(**tally) for tally in tallies))


def _outline(match: Match | MatchOutline) -> MatchOutline:
    return match if isinstance(match, MatchOutline) else MatchOutline.of(match)


def _player_keys(match: MatchOutline) -> dict[str, str]:
    """Each of the match's players' key (``same_player``); two players of one match whose names ``same_player``
    takes for one ("Ann" and "ann", in a match saved before names were told apart so) are two people there, so they
    keep their names as typed, apart."""
    keys = {name: same_player(name) for name in match.players}
    shared = {key for key in keys.values() if list(keys.values()).count(key) > 1}
    return {name: "\0" + name if key in shared else key for name, key in keys.items()}


@dataclasses.dataclass(kw_only=True)
class PlayerRecord(RoundsTally):
    """One player's figures over the matches they played: their rounds' tally, and their matches."""

    name: str
    """As the most recent of those matches spelled it."""
    matches: int = 0
    finished: int = 0
    """Matches played to their end (won by someone)."""
    won: int = 0

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
        for name, tally in zip(match.players, match.tallies, strict=True):
            record = records.setdefault(key[name], PlayerRecord(name=name))
            record.name = name
            record.matches += 1
            record.finished += match.finished
            record.won += match.winner == name
            record.add(tally)
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
