"""A match: rounds scored one after another until a player reaches the target.

Every round is kept as it was entered (upcard, hands, knocker), so undoing or editing
a round simply replays the rounds: dealers, totals and the winner all follow.

>>> match = Match(["Ann", "Bob"], dealer="Bob")
>>> ann, bob = parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC"), parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D")
>>> hands = {"Ann": ann, "Bob": bob}
>>> match.record_round(Card.parse("KS"), hands, knocker="Ann").totals_after
{'Ann': 18, 'Bob': 0}
>>> match.dealer  # the winner deals next
'Ann'
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.cards import Card, InvalidCardError, parse_cards
from scorer.errors import OkginError
from scorer.melds import Meld
from scorer.rules import InvalidHandError, RoundResult, Rules, score_round


class MatchError(OkginError):
    """An operation the match's state does not allow, e.g. a round after the match was won."""


@dataclasses.dataclass(frozen=True)
class RoundInput:
    """What was entered for a round: nothing for a draw, else the cards and the knocker."""

    upcard: Card | None = None
    hands: tuple[tuple[str, tuple[Card, ...]], ...] = ()
    knocker: str | None = None
    knocker_melds: tuple[Meld, ...] | None = None

    @property
    def draw(self) -> bool:
        return self.upcard is None

    def to_dict(self) -> dict[str, Any]:
        if self.draw:
            return {"draw": True}
        return {
            "draw": False,
            "upcard": str(self.upcard),
            "hands": {name: [str(card) for card in cards] for name, cards in self.hands},
            "knocker": self.knocker,
            "knocker_melds": None if self.knocker_melds is None else [m.to_list() for m in self.knocker_melds],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RoundInput:
        if data.get("draw"):
            return cls()
        try:
            melds = data.get("knocker_melds")
            return cls(
                Card.parse(data["upcard"]),
                tuple((name, tuple(parse_cards(cards))) for name, cards in data["hands"].items()),
                data["knocker"],
                None if melds is None else tuple(Meld.parse(meld) for meld in melds),
            )
        except (KeyError, AttributeError, TypeError) as error:
            raise ValueError(f"a round needs 'upcard', 'hands' and 'knocker' (or 'draw': true): {error}") from None


@dataclasses.dataclass(frozen=True)
class MatchRound:
    """One round of the match: its dealer, its result (None for a draw) and the totals after it."""

    number: int
    dealer: str
    draw: bool
    result: RoundResult | None
    totals_after: dict[str, int]
    entered: RoundInput = dataclasses.field(default_factory=RoundInput, repr=False)

    @property
    def points(self) -> dict[str, int]:
        """Points each player won this round (all 0 for a draw)."""
        return dict(self.result.points) if self.result else dict.fromkeys(self.totals_after, 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the round's breakdown plus what was entered (``input``), enough to replay it."""
        return {
            "number": self.number,
            "dealer": self.dealer,
            "draw": self.draw,
            "result": None if self.result is None else self.result.to_dict(),
            "points": self.points,
            "totals_after": dict(self.totals_after),
            "input": self.entered.to_dict(),
        }


class Match:
    """Players, rules and rounds; the totals, the next dealer and the winner follow from the rounds.

    ``players`` are in seating order. The first dealer is given or drawn with ``rng``;
    then the winner of each round deals, and a draw keeps the dealer.

    :raises ValueError: for fewer than 2 or repeated players, too many for the rules, or an unknown dealer.
    """

    def __init__(
        self,
        players: Sequence[str],
        rules: Rules | None = None,
        dealer: str | None = None,
        rng: random.Random | None = None,
    ) -> None:
        names = tuple(players)
        if len(names) < 2 or len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
            raise MatchError(f"a match needs 2 or more distinct player names, not {list(names)!r}")
        self.rules = rules if rules is not None else Rules()
        self.rules.hand_size(len(names))  # refuses a player count the rules do not allow
        if dealer is not None and dealer not in names:
            raise MatchError(f"the dealer {dealer!r} is not one of the players: {', '.join(names)}")
        self.players: tuple[str, ...] = names
        self.first_dealer: str = dealer if dealer is not None else (rng or random.Random()).choice(names)
        self.rounds: list[MatchRound] = []
        self._winner: str | None = None

    # --- state that follows from the rounds

    @property
    def dealer(self) -> str:
        """Who deals the next round."""
        return self._next_dealer(self.rounds)

    @property
    def totals(self) -> dict[str, int]:
        """Running totals after the last round."""
        return dict(self.rounds[-1].totals_after) if self.rounds else dict.fromkeys(self.players, 0)

    @property
    def winner(self) -> str | None:
        """The match winner, once a total reaches the target (None before)."""
        return self._winner

    @property
    def finished(self) -> bool:
        return self._winner is not None

    def final_bonuses(self) -> dict[str, int]:
        """Bonuses added when the match ends: box (per round won), game, and shutout doubling.

        All zero until the match is finished.
        """
        bonuses = dict.fromkeys(self.players, 0)
        if self._winner is None:
            return bonuses
        won = dict.fromkeys(self.players, 0)
        for round_ in self.rounds:
            if round_.result is not None:
                won[round_.result.winner] += 1
        for name in self.players:
            bonuses[name] = self.rules.box_bonus * won[name]
        bonuses[self._winner] += self.rules.game_bonus
        shutout = all(won[name] == 0 for name in self.players if name != self._winner)
        if self.rules.shutout_doubles and shutout:  # the winner's whole score doubles
            bonuses[self._winner] += self.totals[self._winner] + bonuses[self._winner]
        return bonuses

    @property
    def final_totals(self) -> dict[str, int]:
        """Totals with the final bonuses (equal to ``totals`` before the end)."""
        bonuses = self.final_bonuses()
        return {name: total + bonuses[name] for name, total in self.totals.items()}

    # --- changing the rounds

    def record_round(
        self,
        upcard: Card,
        hands: Mapping[str, Sequence[Card]],
        knocker: str,
        knocker_melds: Sequence[Meld] | None = None,
    ) -> MatchRound:
        """Score a round ended by a knock or gin and add it.

        :raises MatchError: once the match is won.
        :raises InvalidHandError: for hands that are not the match's players, or bad hands.
        :raises IllegalKnockError: for a knock over the limit.
        """
        entered = self._entered(upcard, hands, knocker, knocker_melds)
        self._replace_rounds([*self._inputs(), entered])
        return self.rounds[-1]

    def record_draw(self) -> MatchRound:
        """Add a void round (2 cards left in the stock, nobody knocked); the same dealer deals again.

        :raises MatchError: once the match is won.
        """
        self._replace_rounds([*self._inputs(), RoundInput()])
        return self.rounds[-1]

    def undo_last(self) -> MatchRound:
        """Remove the last round and return it.

        :raises MatchError: when no round was played.
        """
        if not self.rounds:
            raise MatchError("no round to undo: the match has no rounds yet")
        last = self.rounds[-1]
        self._replace_rounds(self._inputs()[:-1])
        return last

    def edit_round(
        self,
        index: int,
        upcard: Card | None = None,
        hands: Mapping[str, Sequence[Card]] | None = None,
        knocker: str | None = None,
        knocker_melds: Sequence[Meld] | None = None,
    ) -> MatchRound:
        """Replace round ``index`` (0-based, ``rounds[index]``); no upcard, hands or knocker makes it a draw.

        Later rounds are rescored: dealers and totals follow.

        :raises MatchError: for no such round, or an edit that would end the match before later rounds.
        """
        if not 0 <= index < len(self.rounds):
            raise MatchError(f"no round {index} to edit: rounds are numbered 0 to {len(self.rounds) - 1} here")
        if upcard is None and hands is None and knocker is None:
            entered = RoundInput()
        elif upcard is None or hands is None or knocker is None:
            raise MatchError("an edited round needs the upcard, the hands and the knocker (or none of them: a draw)")
        else:
            entered = self._entered(upcard, hands, knocker, knocker_melds)
        inputs = self._inputs()
        inputs[index] = entered
        self._replace_rounds(inputs)
        return self.rounds[index]

    # --- JSON

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the whole match, with its own copy of the rules."""
        return {
            "players": list(self.players),
            "rules": self.rules.to_dict(),
            "first_dealer": self.first_dealer,
            "dealer": self.dealer,
            "rounds": [round_.to_dict() for round_ in self.rounds],
            "totals": self.totals,
            "winner": self._winner,
            "final_bonuses": self.final_bonuses(),
            "final_totals": self.final_totals,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Match:
        """A match back from ``to_dict``: its rounds are scored again from what was entered.

        :raises ValueError: naming what is missing or wrong.
        """
        try:
            players, rules_data, first_dealer, rounds = (
                data["players"],
                data["rules"],
                data["first_dealer"],
                data["rounds"],
            )
            inputs = [RoundInput.from_dict(round_["input"]) for round_ in rounds]
        except (KeyError, TypeError) as error:
            raise ValueError(f"not a match: missing or malformed {error}") from None
        match = cls(players, Rules.from_dict(rules_data), dealer=first_dealer)
        match._replace_rounds(inputs)
        return match

    # --- internals

    def _inputs(self) -> list[RoundInput]:
        return [round_.entered for round_ in self.rounds]

    def _entered(
        self,
        upcard: Card,
        hands: Mapping[str, Sequence[Card]],
        knocker: str,
        knocker_melds: Sequence[Meld] | None,
    ) -> RoundInput:
        """A round's input, the hands put in seating order."""
        unknown = [name for name in hands if name not in self.players]
        missing = [name for name in self.players if name not in hands]
        if unknown or missing:
            problem = f"unknown {', '.join(unknown)}" if unknown else f"missing {', '.join(missing)}"
            raise InvalidHandError(f"hands must be given for exactly {', '.join(self.players)}: {problem}")
        ordered = tuple((name, tuple(hands[name])) for name in self.players)
        melds = None if knocker_melds is None else tuple(knocker_melds)
        return RoundInput(upcard, ordered, knocker, melds)

    def _next_dealer(self, rounds: Sequence[MatchRound]) -> str:
        if not rounds:
            return self.first_dealer
        last = rounds[-1]
        return last.dealer if last.result is None else last.result.winner

    def _ended_by(self, totals: Mapping[str, int], rounds_played: int) -> str | None:
        """The match winner after these totals, if the match is over."""
        reached = [name for name in self.players if self.rules.wins_match(totals[name])]
        limit = self.rules.rounds_limit
        if not reached and not (limit is not None and rounds_played >= limit):
            return None
        if self.rules.scoring == "standard" and len(reached) == 1:
            return reached[0]
        best = max(totals.values())
        leaders = [name for name in self.players if totals[name] == best]
        return leaders[0] if len(leaders) == 1 else None  # a tie at the top plays on

    def _replace_rounds(self, inputs: Sequence[RoundInput]) -> None:
        """Score every round again from what was entered; the match is unchanged on error."""
        rounds: list[MatchRound] = []
        totals = dict.fromkeys(self.players, 0)
        winner: str | None = None
        for number, entered in enumerate(inputs, start=1):
            if winner is not None:
                raise MatchError(
                    f"the match was won by {winner} in round {number - 1}; no round {number} can follow "
                    "(undo rounds or start a new match)"
                )
            result = None
            if entered.upcard is not None and entered.knocker is not None:
                try:
                    result = score_round(
                        self.rules, entered.upcard, dict(entered.hands), entered.knocker, entered.knocker_melds
                    )
                except InvalidCardError as error:
                    raise InvalidHandError(str(error)) from None
                for name, points in result.points.items():
                    totals[name] += points
            rounds.append(MatchRound(number, self._next_dealer(rounds), result is None, result, dict(totals), entered))
            winner = self._ended_by(totals, len(rounds))
        self.rounds, self._winner = rounds, winner

    def __repr__(self) -> str:
        return f"<Match {' v '.join(self.players)}: {self.totals}, {len(self.rounds)} rounds>"
