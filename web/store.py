"""Matches as rows: what each confirmed round was scored from, and the ``scorer.match.Match`` rebuilt from it.

The database keeps inputs (upcard, knocker, hands, draw flag) and the breakdown computed at the time;
totals, dealers and the winner are always recomputed by replaying the inputs through the engine, so an
edited round or a newer engine can never leave stale totals behind.
"""

from __future__ import annotations

import datetime
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scorer.cards import Card, ensure_distinct, parse_cards
from scorer.errors import OkginError
from scorer.match import Match, MatchError, MatchRound
from scorer.rules import RoundResult, Rules
from web.db import get_db, transaction

MIN_PLAYERS, MAX_PLAYERS = 2, 4
MAX_NAME_LENGTH = 40
MAX_ROW_ID = 2**63 - 1  # SQLite's largest integer key


class InputError(ValueError):
    """A request that cannot be scored or stored, with the reason a player can fix."""


class NotFoundError(LookupError):
    """No such match or round."""


class ConflictError(ValueError):
    """The request is well-formed but the match's state refuses it (finished match, no round to undo)."""


@dataclass(frozen=True)
class RoundInput:
    """What one round was scored from: either a draw, or an upcard, a knocker and every player's hand."""

    draw: bool
    upcard: Card | None = None
    knocker: str | None = None
    hands: Mapping[str, tuple[Card, ...]] | None = None

    @classmethod
    def from_json(cls, payload: object, players: Sequence[str]) -> RoundInput:
        """Read ``{"upcard", "knocker", "hands"}`` or ``{"draw": true}`` as sent to the API.

        :raises InputError: naming the missing field, unknown player, or unreadable card.
        """
        if not isinstance(payload, dict):
            raise InputError('expected a JSON object with upcard, knocker and hands, or {"draw": true}')
        if payload.get("draw") is True:
            return cls(draw=True)
        upcard = parse_card_field(payload.get("upcard"), "upcard")
        knocker = payload.get("knocker")
        if not isinstance(knocker, str) or knocker not in players:
            raise InputError(f"knocker must be one of {', '.join(players)}; got {knocker!r}")
        raw_hands = payload.get("hands")
        if not isinstance(raw_hands, dict):
            raise InputError('hands must be an object like {"Ann": ["QH", "10S", ...], ...}')
        unknown = sorted(set(raw_hands) - set(players))
        if unknown:
            raise InputError(f"hands name {', '.join(map(str, unknown))}, who is not in this match")
        missing = [name for name in players if name not in raw_hands]
        if missing:
            raise InputError(f"hands are missing for {', '.join(missing)}")
        hands = {name: tuple(parse_hand_field(raw_hands[name], name)) for name in players}
        return cls(draw=False, upcard=upcard, knocker=knocker, hands=hands)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RoundInput:
        if row["draw"]:
            return cls(draw=True)
        hands = {name: tuple(parse_cards(text)) for name, text in json.loads(row["hands_json"]).items()}
        return cls(draw=False, upcard=Card.parse(row["upcard"]), knocker=row["knocker"], hands=hands)

    def engine_json(self) -> dict[str, Any]:
        """The round as ``scorer.match.Match.from_dict`` reads an entered round."""
        if self.draw:
            return {"draw": True}
        assert self.hands is not None
        hands = {name: [str(card) for card in cards] for name, cards in self.hands.items()}
        return {"draw": False, "upcard": str(self.upcard), "hands": hands, "knocker": self.knocker}

    def hands_json(self) -> str | None:
        if self.hands is None:
            return None
        return json.dumps({name: " ".join(map(str, cards)) for name, cards in self.hands.items()})

    def play(self, match: Match) -> MatchRound:
        """Record this round on ``match``; engine refusals become an ``InputError`` or ``ConflictError``."""
        if match.finished:
            raise ConflictError(f"the match is over ({match.winner} won); undo or edit a round instead")
        try:
            if self.draw:
                return match.record_draw()
            assert self.upcard is not None and self.knocker is not None and self.hands is not None
            return match.record_round(self.upcard, self.hands, self.knocker)
        except OkginError as error:
            raise InputError(str(error)) from error


@dataclass
class StoredMatch:
    """A match as stored: its id and creation time, the rebuilt engine object, and each round's inputs."""

    id: int
    created_at: str
    match: Match
    inputs: list[RoundInput]

    def to_json(self) -> dict[str, Any]:
        """The ``GET /api/matches/<id>`` body."""
        match = self.match
        finished = match.finished
        return {
            "id": self.id,
            "created_at": self.created_at,
            "players": list(match.players),
            "rules": match.rules.to_dict(),
            "first_dealer": match.first_dealer,
            "dealer": match.dealer,
            "rounds": [round_json(r, i) for r, i in zip(match.rounds, self.inputs, strict=True)],
            "totals": dict(match.totals),
            "winner": match.winner,
            "finished": finished,
            "bonuses": dict(match.final_bonuses()) if finished else {},
            "target": match.rules.target,
        }


def round_json(match_round: MatchRound, given: RoundInput) -> dict[str, Any]:
    """One line of the score sheet: the inputs, the outcome, each player's melds, layoffs and deadwood."""
    line: dict[str, Any] = {
        "number": match_round.number,
        "dealer": match_round.dealer,
        "draw": match_round.draw,
        "totals": dict(match_round.totals_after),
    }
    if match_round.result is None or given.hands is None:
        return line | {"points": dict(match_round.points), "outcome": "draw"}
    line |= result_json(match_round.result)
    line["hands"] = {name: [str(card) for card in cards] for name, cards in given.hands.items()}
    return line


def result_json(result: RoundResult) -> dict[str, Any]:
    """A scored round in the shape the page draws: per player melds, layoffs (with the meld they extend)."""
    return {
        "upcard": str(result.upcard),
        "knocker": result.knocker,
        "winner": result.winner,
        "outcome": result.outcome,
        "knock_limit": result.knock_limit,
        "discard": None if result.discard is None else str(result.discard),
        "points": dict(result.points),
        "players": {
            name: {
                "melds": [[str(card) for card in meld.cards] for meld in player.melds],
                "layoffs": [
                    {"card": str(layoff.card), "onto": [str(card) for card in layoff.onto.cards]}
                    for layoff in player.layoffs
                ],
                "deadwood": [str(card) for card in player.deadwood],
                "deadwood_points": player.deadwood_points,
            }
            for name, player in result.hands.items()
        },
    }


def parse_players(value: object) -> list[str]:
    """Validate 2-4 distinct, non-empty player names.

    :raises InputError: naming what is wrong.
    """
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise InputError('players must be a list of names, e.g. ["Ann", "Bob"]')
    names = [name.strip() for name in value]
    if not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise InputError(f"a match needs {MIN_PLAYERS} to {MAX_PLAYERS} players, got {len(names)}")
    for name in names:
        if not name or len(name) > MAX_NAME_LENGTH:
            raise InputError(f"player names must be 1 to {MAX_NAME_LENGTH} characters, got {name!r}")
    if len({name.casefold() for name in names}) != len(names):
        raise InputError(f"player names must differ: {', '.join(names)}")
    return names


def build_rules(preset: object, options: object) -> Rules:
    """The rules for a new match from a preset name and option overrides.

    :raises InputError: for an unknown preset or option, or a bad option value.
    """
    if not isinstance(preset, str):
        raise InputError('rules must be a preset name: "oklahoma", "gin-rummy" or "oklahoma-multi"')
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise InputError("options must be an object of rule options")
    try:
        return Rules.preset_named(preset, **options)
    except (TypeError, OkginError) as error:
        raise InputError(f"rules: {error}") from error


def create_match(players: Sequence[str], rules: Rules, dealer: str | None) -> int:
    """Store a new match; the first dealer is drawn at random when ``dealer`` is None.

    :raises InputError: when the dealer is not a player or the rules refuse this many players.
    """
    if dealer is not None and dealer not in players:
        raise InputError(f"dealer must be one of {', '.join(players)}; got {dealer!r}")
    try:
        match = Match(players, rules, dealer=dealer)
    except OkginError as error:
        raise InputError(str(error)) from error
    with transaction() as db:
        cursor = db.execute(
            "INSERT INTO matches (created_at, rules_json, first_dealer) VALUES (?, ?, ?)",
            (_now(), json.dumps(rules.to_dict()), match.first_dealer),
        )
        match_id = cursor.lastrowid
        assert match_id is not None
        db.executemany(
            "INSERT INTO players (match_id, seat, name) VALUES (?, ?, ?)",
            [(match_id, seat, name) for seat, name in enumerate(players, start=1)],
        )
    return match_id


def load_match(match_id: int) -> StoredMatch:
    """Rebuild a match from its stored inputs.

    :raises NotFoundError: for an unknown id.
    """
    db = get_db()
    row = None if match_id > MAX_ROW_ID else db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no match with id {match_id}")
    players = _player_names(match_id)
    inputs = [
        RoundInput.from_row(r)
        for r in db.execute("SELECT * FROM rounds WHERE match_id = ? ORDER BY number", (match_id,))
    ]
    try:
        match = replay(players, Rules.from_dict(json.loads(row["rules_json"])), row["first_dealer"], inputs)
    except (InputError, ConflictError) as error:
        raise ConflictError(f"match {match_id} cannot be rebuilt from its stored rounds: {error}") from error
    return StoredMatch(match_id, row["created_at"], match, inputs)


def replay(players: Sequence[str], rules: Rules, first_dealer: str, inputs: Sequence[RoundInput]) -> Match:
    """A match with these rounds, each scored once (dealers, totals and the winner follow).

    :raises ConflictError: when a round comes after the match was already won.
    :raises InputError: when a round cannot be scored.
    """
    data = {
        "players": list(players),
        "rules": rules.to_dict(),
        "first_dealer": first_dealer,
        "rounds": [{"input": given.engine_json()} for given in inputs],
    }
    try:
        return Match.from_dict(data)
    except MatchError as error:
        raise ConflictError(str(error)) from error
    except OkginError as error:
        raise InputError(str(error)) from error


def add_round(match_id: int, payload: object) -> tuple[StoredMatch, MatchRound]:
    """Score and store the next round in ONE transaction: the row and the match's winner commit together."""
    with transaction():
        stored = load_match(match_id)
        given = RoundInput.from_json(payload, stored.match.players)
        played = given.play(stored.match)
        stored.inputs.append(given)
        _insert_round(match_id, played, given)
        _update_winner(match_id, stored.match)
    return stored, played


def undo_last_round(match_id: int) -> StoredMatch:
    """Delete the newest round.

    :raises ConflictError: when the match has no rounds.
    """
    with transaction() as db:
        stored = load_match(match_id)
        if not stored.inputs:
            raise ConflictError("there is no round to undo")
        stored.match.undo_last()
        stored.inputs.pop()
        db.execute("DELETE FROM rounds WHERE match_id = ? AND number = ?", (match_id, len(stored.inputs) + 1))
        _update_winner(match_id, stored.match)
    return stored


def edit_round(match_id: int, number: int, payload: object) -> StoredMatch:
    """Replace round ``number`` and replay every round after it, so totals, dealers and winner follow.

    :raises NotFoundError: when the round does not exist.
    :raises ConflictError: when the edit would end the match before rounds that come after it.
    """
    with transaction() as db:
        stored = load_match(match_id)
        if not 1 <= number <= len(stored.inputs):
            raise NotFoundError(f"match {match_id} has no round {number} (it has {len(stored.inputs)})")
        given = RoundInput.from_json(payload, stored.match.players)
        inputs = [*stored.inputs[: number - 1], given, *stored.inputs[number:]]
        old = stored.match
        try:
            match = replay(old.players, old.rules, old.first_dealer, inputs)
        except ConflictError as error:
            raise ConflictError(f"after this edit the match would end before its last round: {error}") from error
        except InputError as error:
            raise InputError(f"round {number}: {error}") from error
        db.execute("DELETE FROM rounds WHERE match_id = ? AND number = ?", (match_id, number))
        _insert_round(match_id, match.rounds[number - 1], given)
        _update_winner(match_id, match)
    return StoredMatch(match_id, stored.created_at, match, inputs)


def list_matches(limit: int = 100) -> list[dict[str, Any]]:
    """Newest first: id, players, rounds played, winner, for the resume and history lists."""
    db = get_db()
    summaries = []
    for row in db.execute("SELECT * FROM matches ORDER BY id DESC LIMIT ?", (limit,)):
        players = _player_names(row["id"])
        rounds = db.execute("SELECT COUNT(*) FROM rounds WHERE match_id = ?", (row["id"],)).fetchone()[0]
        summaries.append(
            {
                "id": row["id"],
                "created_at": row["created_at"],
                "players": players,
                "preset": json.loads(row["rules_json"]).get("preset", ""),
                "rounds": rounds,
                "winner": row["winner"],
                "finished_at": row["finished_at"],
            }
        )
    return summaries


def _player_names(match_id: int) -> list[str]:
    query = "SELECT name FROM players WHERE match_id = ? ORDER BY seat"
    return [row["name"] for row in get_db().execute(query, (match_id,))]


def _insert_round(match_id: int, played: MatchRound, given: RoundInput) -> None:
    get_db().execute(
        "INSERT INTO rounds (match_id, number, draw, upcard, knocker, hands_json, breakdown_json, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            match_id,
            played.number,
            int(given.draw),
            None if given.upcard is None else str(given.upcard),
            given.knocker,
            given.hands_json(),
            json.dumps(played.to_dict()),
            _now(),
        ),
    )


def _update_winner(match_id: int, match: Match) -> None:
    winner = match.winner
    get_db().execute(
        "UPDATE matches SET winner = ?, finished_at = CASE WHEN ? IS NULL THEN NULL ELSE COALESCE(finished_at, ?) END"
        " WHERE id = ?",
        (winner, winner, _now(), match_id),
    )


def parse_card_field(value: object, field: str) -> Card:
    if not isinstance(value, str):
        raise InputError(f'{field} must be a card like "7D", got {value!r}')
    try:
        return Card.parse(value)
    except OkginError as error:
        raise InputError(f"{field}: {error}") from error


def parse_hand_field(value: object, name: str) -> list[Card]:
    if not isinstance(value, (str, list)) or (isinstance(value, list) and not all(isinstance(v, str) for v in value)):
        raise InputError(f'{name}\'s hand must be a list of cards or a string like "QH 10S 3D"')
    try:
        cards = parse_cards(value)
        ensure_distinct(cards, where=f"{name}'s hand")
    except OkginError as error:
        raise InputError(f"{name}'s hand: {error}") from error
    return cards


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
