"""Rules and round scoring: every option of the rules page, and one knock scored exactly.

Two players score the standard way (knock, undercut, gin); ``oklahoma-multi`` scores
2 to 4 players with the penalty table of the rules page's multi-player section.

>>> result = score_round(
...     Rules(),
...     Card.parse("KS"),
...     {"Ann": parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC"), "Bob": parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D")},
...     knocker="Ann",
... )
>>> result.outcome, result.points
('knock', {'Ann': 18, 'Bob': 0})
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from scorer.cards import Card, InvalidCardError, ensure_distinct, format_cards, parse_cards
from scorer.deadwood import all_best_arrangements_of_mask
from scorer.errors import OkginError
from scorer.layoffs import Layoff, PlayerResult, resolve_knock
from scorer.melds import Meld, cards_mask, mask_cards, meld_from_mask

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PRESETS",
    "IllegalKnockError",
    "InvalidHandError",
    "InvalidRulesError",
    "Layoff",
    "PlayerResult",
    "RoundResult",
    "Rules",
    "score_round",
]

Outcome = Literal["knock", "undercut", "gin"]


class InvalidRulesError(OkginError):
    """Rule options that do not exist or are out of range."""


class IllegalKnockError(OkginError):
    """A knock the rules do not allow: deadwood over the knock limit."""


class InvalidHandError(OkginError):
    """Hands that cannot be scored: wrong sizes, a card in two hands, an unknown knocker."""


MIN_PLAYERS, MAX_PLAYERS = 2, 4
"""Oklahoma Gin is played by 2, or with the multi-player rules by 3 or 4."""


@dataclasses.dataclass(frozen=True)
class Preset:
    """A named rule set: the name players know it by, what sets it apart, and the options it changes."""

    title: str
    summary: str
    options: Mapping[str, Any]

    @property
    def label(self) -> str:
        """The title with its summary, as a menu shows it."""
        return f"{self.title} ({self.summary})"


PRESETS: dict[str, Preset] = {
    # Oklahoma Gin: the upcard's value is the knock limit (rules page, seeds M and I).
    "oklahoma": Preset("Oklahoma Gin", "knock limit = the upcard", {}),
    # Plain Gin Rummy: the knock limit is always 10 (seed H).
    "gin-rummy": Preset("Gin Rummy", "knock on 10", {"knock_limit": 10}),
    # 2-4 players, 7 cards each for 3-4, penalty scoring (seed R).
    "oklahoma-multi": Preset(
        "Multi-player Oklahoma Gin", "2 to 4 players, penalty scoring", {"max_players": 4, "scoring": "penalty"}
    ),
}
"""The rule sets by id (the id is what JSON, the database and ``--rules`` use; players see the title)."""


@dataclasses.dataclass(frozen=True)
class Rules:
    """One table's rules. Defaults are Oklahoma Gin for two; extras are off.

    >>> Rules.preset_named("gin-rummy", gin_bonus=20).knock_limit_for(Card.parse("3H"))
    10
    >>> Rules().knock_limit_for(Card.parse("3H")), Rules().hand_size(2)
    (3, 10)

    :raises InvalidRulesError: naming any option out of range.
    """

    preset: str = "oklahoma"
    knock_limit: int | Literal["upcard"] = "upcard"
    """"upcard": the upcard's value (ace 1, faces 10); or a fixed limit 0-10."""
    gin_bonus: int = 25
    """Added to the opponent's deadwood on a gin (some sources say 20)."""
    undercut_bonus: int = 10
    """Added to the difference when the opponent's deadwood is not above the knocker's."""
    target: int = 100
    target_rule: Literal[">=", ">"] = ">="
    """">=": reaching the target wins; ">": it must be passed (the Italian text)."""
    ace_upcard_gin_only: bool = False
    """Published extra: with an ace upcard only gin may end the round."""
    spade_doubles: bool = False
    """Published extra: a spade upcard doubles the round's score."""
    box_bonus: int = 0
    """Published extra: points per round won, added when the match ends."""
    game_bonus: int = 0
    """Published extra: points for winning the match."""
    shutout_doubles: bool = False
    """Published extra: the winner's score doubles when the others won no round."""
    max_players: int = 2
    scoring: Literal["standard", "penalty"] = "standard"
    """"standard": two-player knock/undercut/gin; "penalty": the multi-player table."""
    penalty_knock_points: int = 10
    """Penalty scoring: the knocker's points for a knock."""
    penalty_undercut_points: int = 20
    """Penalty scoring: the undercutter's points."""
    penalty_gin_multiplier: int = 2
    """Penalty scoring: on a gin the others lose this many times their deadwood."""
    rounds_limit: int | None = None
    """Penalty scoring: an agreed number of rounds after which the match ends."""

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise InvalidRulesError(f"unknown rules preset {self.preset!r}: choose {', '.join(PRESETS)}")
        limit = self.knock_limit
        if limit != "upcard" and not (type(limit) is int and 0 <= limit <= 10):
            raise InvalidRulesError(f"knock_limit must be 'upcard' or a whole number 0-10, not {limit!r}")
        for name in ("gin_bonus", "undercut_bonus", "box_bonus", "game_bonus", "penalty_knock_points"):
            _check_int(name, getattr(self, name), 0)
        _check_int("penalty_undercut_points", self.penalty_undercut_points, 0)
        _check_int("penalty_gin_multiplier", self.penalty_gin_multiplier, 0)
        _check_int("target", self.target, 1)
        _check_int("max_players", self.max_players, MIN_PLAYERS, MAX_PLAYERS)
        if self.rounds_limit is not None:
            _check_int("rounds_limit", self.rounds_limit, 1)
        if self.target_rule not in (">=", ">"):
            raise InvalidRulesError(f"target_rule must be '>=' or '>', not {self.target_rule!r}")
        if self.scoring not in ("standard", "penalty"):
            raise InvalidRulesError(f"scoring must be 'standard' or 'penalty', not {self.scoring!r}")
        if self.scoring == "standard" and self.max_players != 2:
            raise InvalidRulesError(f"standard scoring is for 2 players; {self.max_players} need scoring='penalty'")
        for name in ("ace_upcard_gin_only", "spade_doubles", "shutout_doubles"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidRulesError(f"{name} must be true or false, not {getattr(self, name)!r}")

    @classmethod
    def preset_named(cls, name: str, **options: Any) -> Rules:
        """A preset ("oklahoma", "gin-rummy", "oklahoma-multi") with options changed.

        :raises InvalidRulesError: naming an unknown preset or option, or a value out of range.
        """
        if name not in PRESETS:
            raise InvalidRulesError(f"unknown rules preset {name!r}: choose {', '.join(PRESETS)}")
        options = {key.replace("-", "_"): value for key, value in options.items()}
        _check_options(options)
        return cls(**{"preset": name, **PRESETS[name].options, **options})

    @property
    def title(self) -> str:
        """The rule set's name as players know it, e.g. "Oklahoma Gin"."""
        return PRESETS[self.preset].title

    def to_dict(self) -> dict[str, Any]:
        """JSON form: every option by name."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Rules back from ``to_dict``; missing options take the defaults.

        :raises InvalidRulesError: naming an unknown option or a value out of range.
        """
        _check_options(data)
        return cls(**data)

    def knock_limit_for(self, upcard: Card) -> int:
        """The most deadwood a knocker may hold with this upcard (0: only gin)."""
        if self.ace_upcard_gin_only and upcard.rank == 1:
            return 0
        return upcard.value if self.knock_limit == "upcard" else self.knock_limit

    def hand_size(self, players: int) -> int:
        """Cards dealt to each player: 10 for two players, 7 for three or four.

        :raises InvalidHandError: when these rules do not allow that many players.
        """
        if not MIN_PLAYERS <= players <= self.max_players:
            allowed = "2 players" if self.max_players == 2 else f"2 to {self.max_players} players"
            others = [p.title for p in PRESETS.values() if MIN_PLAYERS <= players <= p.options.get("max_players", 2)]
            hint = f": choose {' or '.join(others)}" if others else ""
            raise InvalidHandError(f"{self.title} is for {allowed}, not {players}{hint}")
        return 10 if players == 2 else 7

    def wins_match(self, total: int) -> bool:
        """Whether a running total reaches the target under ``target_rule``."""
        return total >= self.target if self.target_rule == ">=" else total > self.target

    def describe_limit(self, upcard: Card) -> str:
        """The knock limit in words, for error messages."""
        limit = self.knock_limit_for(upcard)
        if self.ace_upcard_gin_only and upcard.rank == 1:
            return f"only gin (knock limit 0) with ace upcard {upcard}"
        if self.knock_limit == "upcard":
            return f"the knock limit {limit} set by upcard {upcard}"
        return f"the knock limit {limit} ({self.title}; upcard {upcard})"


def _check_int(name: str, value: object, least: int, most: int | None = None) -> None:
    if type(value) is not int or value < least or (most is not None and value > most):
        bound = f"{least}-{most}" if most is not None else f"{least} or more"
        raise InvalidRulesError(f"{name} must be a whole number {bound}, not {value!r}")


def _check_options(options: Mapping[str, Any]) -> None:
    known = {field.name for field in dataclasses.fields(Rules)}
    unknown = sorted(set(options) - known)
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise InvalidRulesError(f"unknown rules option {names}: options are {', '.join(sorted(known))}")


@dataclasses.dataclass(frozen=True)
class RoundResult:
    """One scored round: who knocked, what everyone showed, and the signed points each player won."""

    outcome: Outcome
    knocker: str
    winner: str
    knock_limit: int
    upcard: Card
    hands: dict[str, PlayerResult]
    points: dict[str, int]
    """Points per player this round (penalty scoring gives negatives)."""
    discard: Card | None = None
    """The knocker's discard when the knocker's 11 cards were given."""
    doubled: bool = False
    """Whether a spade upcard doubled the round."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form, the same for 2 to 4 players and for CLI, API and page.

        ``{"outcome", "knocker", "winner", "upcard", "knock_limit", "discard", "doubled",
        "players": {name: PlayerResult.to_dict()}, "points": {name: points}}``, players in seating
        order; a layoff is ``{"card": "QC", "onto": [the knocker's meld as it lay before]}``.
        """
        return {
            "outcome": self.outcome,
            "knocker": self.knocker,
            "winner": self.winner,
            "upcard": str(self.upcard),
            "knock_limit": self.knock_limit,
            "discard": None if self.discard is None else str(self.discard),
            "doubled": self.doubled,
            "players": {name: result.to_dict() for name, result in self.hands.items()},
            "points": dict(self.points),
        }


@dataclasses.dataclass(frozen=True)
class _KnockerChoice:
    """One way the knocker may lay down: a discard (for 11 cards) and an arrangement."""

    discard: Card | None
    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int


def _validated_hands(rules: Rules, hands: Mapping[str, Sequence[Card]], knocker: str) -> dict[str, tuple[Card, ...]]:
    """The hands as tuples, after checking players, sizes and that no card is held twice."""
    size = rules.hand_size(len(hands))
    if knocker not in hands:
        raise InvalidHandError(f"knocker must be one of {', '.join(hands)}; got {knocker!r}")
    checked: dict[str, tuple[Card, ...]] = {}
    holder: dict[Card, str] = {}
    for name, cards in hands.items():
        hand = tuple(parse_cards(cards)) if isinstance(cards, str) else tuple(cards)
        if not all(isinstance(card, Card) for card in hand):
            raise InvalidHandError(f"{name}'s hand must be cards (or card text), not {cards!r}")
        try:
            ensure_distinct(hand, where=f"{name}'s hand")
        except InvalidCardError as error:
            raise InvalidHandError(str(error)) from None
        for card in hand:
            if card in holder:
                raise InvalidHandError(f"{card} is in both {holder[card]}'s and {name}'s hands")
            holder[card] = name
        if name == knocker and len(hand) not in (size, size + 1):
            raise InvalidHandError(
                f"{name} holds {len(hand)} cards; {rules.title} needs {size} after the knocker's discard "
                f"(or {size + 1} to choose the discard)"
            )
        if name != knocker and len(hand) != size:
            raise InvalidHandError(f"{name} holds {len(hand)} cards; {rules.title} needs {size}")
        checked[name] = hand
    return checked


def _knocker_choices(
    name: str, hand: tuple[Card, ...], size: int, knocker_melds: Sequence[Meld] | None
) -> list[_KnockerChoice]:
    """Every least-deadwood way to lay down (per possible discard), or the melds as laid."""
    mask = cards_mask(hand)
    if knocker_melds is not None:
        laid = 0
        for meld in knocker_melds:
            if meld.mask & ~mask:
                missing = format_cards(card for card in meld.cards if not mask >> card.class_id & 1)
                raise InvalidHandError(f"{name}'s meld {meld} uses {missing}, not in {name}'s hand")
            if meld.mask & laid:
                raise InvalidHandError(f"{name}'s melds share a card: {', '.join(map(str, knocker_melds))}")
            laid |= meld.mask
        rest = mask_cards(mask & ~laid)
        if len(hand) == size:
            return [_KnockerChoice(None, tuple(knocker_melds), rest, sum(card.value for card in rest))]
        if not rest:
            raise InvalidHandError(f"{name}'s melds use all {len(hand)} cards; give the hand after the discard")
        return [
            _KnockerChoice(card, tuple(knocker_melds), kept, sum(c.value for c in kept))
            for card in rest
            for kept in [tuple(c for c in rest if c != card)]
        ]
    discards: list[Card | None] = [None] if len(hand) == size else [*sorted(hand)]
    choices = []
    for discard in discards:
        kept = mask if discard is None else mask & ~(1 << discard.class_id)
        choices += [_KnockerChoice(discard, a.melds, a.deadwood, a.points) for a in all_best_arrangements_of_mask(kept)]
    return choices


def _extended_melds(melds: tuple[Meld, ...], layoffs: Sequence[Layoff]) -> tuple[Meld, ...]:
    """The knocker's melds after these layoffs were added."""
    current = list(melds)
    for layoff in layoffs:
        index = current.index(layoff.onto)
        current[index] = meld_from_mask(current[index].mask | 1 << layoff.card.class_id)
    return tuple(current)


def _seats_after(players: Sequence[str], knocker: str) -> list[str]:
    """The other players in seating order, starting at the knocker's left."""
    start = players.index(knocker)
    return [players[(start + offset) % len(players)] for offset in range(1, len(players))]


def _standard_points(
    rules: Rules, deadwood: Mapping[str, int], knocker: str, others: Sequence[str]
) -> tuple[Outcome, str, dict[str, int]]:
    """Two-player scoring: (outcome, winner, points) from the knocker's and opponent's deadwood."""
    (opponent,) = others
    k, o = deadwood[knocker], deadwood[opponent]
    if k == 0:  # Gin: gin bonus plus the opponent's deadwood; the opponent scores nothing.
        return "gin", knocker, {knocker: rules.gin_bonus + o, opponent: 0}
    if k < o:  # Knock win: the knocker scores the difference.
        return "knock", knocker, {knocker: o - k, opponent: 0}
    # Undercut (a tie too): the opponent scores the undercut bonus plus the difference.
    return "undercut", opponent, {knocker: 0, opponent: rules.undercut_bonus + k - o}


def _penalty_points(
    rules: Rules, deadwood: Mapping[str, int], knocker: str, others: Sequence[str]
) -> tuple[Outcome, str, dict[str, int]]:
    """Multi-player scoring (rules page, seed R): (outcome, winner, signed points)."""
    k = deadwood[knocker]
    if k == 0:  # Gin: +gin bonus; the others lose a multiple of their deadwood (own melds, no layoffs).
        points = {name: -rules.penalty_gin_multiplier * deadwood[name] for name in others}
        return "gin", knocker, {knocker: rules.gin_bonus, **points}
    undercutters = [name for name in others if deadwood[name] <= k]
    if undercutters:  # Undercut: the lowest deadwood wins (ties: nearest the knocker's left).
        outcome: Outcome = "undercut"
        winner = min(undercutters, key=lambda name: deadwood[name])
        bonus = rules.penalty_undercut_points
    else:  # Knock: the knocker wins.
        outcome, winner, bonus = "knock", knocker, rules.penalty_knock_points
    # Everyone else, the knocker included when undercut, pays the difference to the winner's deadwood.
    points = {name: -(deadwood[name] - deadwood[winner]) for name in (knocker, *others) if name != winner}
    return outcome, winner, {winner: bonus, **points}


def _score_choice(
    rules: Rules, upcard: Card, hands: dict[str, tuple[Card, ...]], knocker: str, choice: _KnockerChoice
) -> RoundResult:
    """Score the round for one way the knocker lays down."""
    gin = choice.points == 0
    others = _seats_after(list(hands), knocker)
    results: dict[str, PlayerResult] = {knocker: PlayerResult(choice.melds, (), choice.deadwood, choice.points)}
    table = choice.melds
    for name in others:
        # Each player lays off onto the knocker's melds as the players before them left them.
        result = resolve_knock(table, hands[name], allow_layoffs=not gin)
        results[name] = result
        table = _extended_melds(table, result.layoffs)
    deadwood = {name: results[name].deadwood_points for name in hands}
    score = _standard_points if rules.scoring == "standard" else _penalty_points
    outcome, winner, points = score(rules, deadwood, knocker, others)
    doubled = rules.spade_doubles and upcard.suit == "S"
    factor = 2 if doubled else 1
    points = {name: factor * points[name] for name in hands}  # seating order
    return RoundResult(
        outcome=outcome,
        knocker=knocker,
        winner=winner,
        knock_limit=rules.knock_limit_for(upcard),
        upcard=upcard,
        hands={name: results[name] for name in hands},  # seating order
        points=points,
        discard=choice.discard,
        doubled=doubled,
    )


def score_round(
    rules: Rules,
    upcard: Card,
    hands: Mapping[str, Sequence[Card]],
    knocker: str,
    knocker_melds: Sequence[Meld] | None = None,
) -> RoundResult:
    """Score one round ended by a knock (or gin).

    ``hands`` maps each player to their cards, in seating order (each player's left
    neighbour next). The knocker's hand has 10 cards (7 with 3-4 players) after the
    discard, or one more, and then the discard best for the knocker is chosen. Without
    ``knocker_melds``, the knocker lays down the least-deadwood arrangement best for
    them (e.g. sets rather than runs when that avoids an undercut). The upcard may be
    in a hand: a player may have taken it. With 3-4 players, each other player in turn,
    from the knocker's left, lays off onto the knocker's melds as the players before
    them left them (so chains may continue a previous player's layoffs).

    :raises InvalidHandError: wrong player count or hand size, a card in two hands.
    :raises IllegalKnockError: deadwood over the knock limit, naming the limit and upcard.
    """
    checked = _validated_hands(rules, hands, knocker)
    size = rules.hand_size(len(hands))
    limit = rules.knock_limit_for(upcard)
    choices = _knocker_choices(knocker, checked[knocker], size, knocker_melds)
    legal = sorted((choice for choice in choices if choice.points <= limit), key=lambda choice: choice.points)
    if not legal:
        least = min(choice.points for choice in choices)
        raise IllegalKnockError(f"illegal knock: {knocker}'s deadwood is {least}, over {rules.describe_limit(upcard)}")
    # The knocker's best: most points won over the others (first in preference order on a tie).
    results = [_score_choice(rules, upcard, checked, knocker, choice) for choice in legal]
    best = max(results, key=lambda result: 2 * result.points[knocker] - sum(result.points.values()))
    return best
