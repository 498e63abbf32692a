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
from scorer.deadwood import all_best_arrangements_of_mask, best_arrangement_of_mask
from scorer.errors import OkginError
from scorer.layoffs import Layoff, PlayerResult, resolve_knock
from scorer.melds import Meld, cards_mask, mask_cards, meld_from_mask

__all__ = [
    "PRESETS",
    "IllegalKnockError",
    "InvalidHandError",
    "KnockOption",
    "Layoff",
    "PlayerResult",
    "RoundResult",
    "Rules",
    "RulesError",
    "knock_option",
    "score_round",
]

Outcome = Literal["knock", "undercut", "gin"]


class IllegalKnockError(OkginError):
    """A knock the rules do not allow: deadwood over the knock limit."""


class InvalidHandError(OkginError):
    """Hands that cannot be scored: wrong sizes, a card in two hands, an unknown knocker."""


class RulesError(OkginError):
    """Rules that cannot be played: an unknown preset or option, a value out of range."""


PRESETS: dict[str, dict[str, Any]] = {
    # Oklahoma Gin: the upcard's value is the knock limit (rules page, seeds M and I).
    "oklahoma": {},
    # Plain Gin Rummy: the knock limit is always 10 (seed H).
    "gin-rummy": {"knock_limit": 10},
    # 2-4 players, 7 cards each for 3-4, penalty scoring (seed R).
    "oklahoma-multi": {"max_players": 4, "scoring": "penalty"},
}
PRESET_TITLES: dict[str, str] = {
    "oklahoma": "Oklahoma Gin",
    "gin-rummy": "Gin Rummy",
    "oklahoma-multi": "Multi-player Oklahoma Gin",
}
"""Each preset's name as players know it, for messages and forms."""


@dataclasses.dataclass(frozen=True)
class Rules:
    """One table's rules. Defaults are Oklahoma Gin for two; extras are off.

    >>> Rules.preset_named("gin-rummy", gin_bonus=20).knock_limit_for(Card.parse("3H"))
    10
    >>> Rules().knock_limit_for(Card.parse("3H")), Rules().hand_size(2)
    (3, 10)

    :raises RulesError: naming any option out of range.
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
            raise RulesError(f"unknown rules preset {self.preset!r}: choose {', '.join(PRESETS)}")
        limit = self.knock_limit
        if limit != "upcard" and not (type(limit) is int and 0 <= limit <= 10):
            raise RulesError(f"knock_limit must be 'upcard' or a whole number 0-10, not {limit!r}")
        for name in ("gin_bonus", "undercut_bonus", "box_bonus", "game_bonus", "penalty_knock_points"):
            _check_int(name, getattr(self, name), 0)
        _check_int("penalty_undercut_points", self.penalty_undercut_points, 0)
        _check_int("penalty_gin_multiplier", self.penalty_gin_multiplier, 0)
        _check_int("target", self.target, 1)
        _check_int("max_players", self.max_players, 2, 4)
        if self.rounds_limit is not None:
            _check_int("rounds_limit", self.rounds_limit, 1)
        if self.target_rule not in (">=", ">"):
            raise RulesError(f"target_rule must be '>=' or '>', not {self.target_rule!r}")
        if self.scoring not in ("standard", "penalty"):
            raise RulesError(f"scoring must be 'standard' or 'penalty', not {self.scoring!r}")
        if self.scoring == "standard" and self.max_players != 2:
            raise RulesError(f"standard scoring is for 2 players; {self.max_players} need scoring='penalty'")
        for name in ("ace_upcard_gin_only", "spade_doubles", "shutout_doubles"):
            if not isinstance(getattr(self, name), bool):
                raise RulesError(f"{name} must be true or false, not {getattr(self, name)!r}")

    @classmethod
    def preset_named(cls, name: str, **options: Any) -> Rules:
        """A preset ("oklahoma", "gin-rummy", "oklahoma-multi") with options changed.

        :raises RulesError: naming an unknown preset or option, or a value out of range.
        """
        if name not in PRESETS:
            raise RulesError(f"unknown rules preset {name!r}: choose {', '.join(PRESETS)}")
        options = {key.replace("-", "_"): value for key, value in options.items()}
        _check_options(options)
        return cls(**{"preset": name, **PRESETS[name], **options})

    @property
    def title(self) -> str:
        """The preset's name as players know it.

        >>> Rules.preset_named("oklahoma-multi").title
        'Multi-player Oklahoma Gin'
        """
        return PRESET_TITLES[self.preset]

    def to_dict(self) -> dict[str, Any]:
        """JSON form: every option by name."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Rules back from ``to_dict``; missing options take the defaults.

        :raises RulesError: naming an unknown option or a value out of range.
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
        if not 2 <= players <= self.max_players:
            allowed = "2 players" if self.max_players == 2 else f"2 to {self.max_players} players"
            fits = [PRESET_TITLES[id_] for id_, extra in PRESETS.items() if 2 <= players <= extra.get("max_players", 2)]
            hint = f": choose {' or '.join(fits)}" if fits else ""
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


@dataclasses.dataclass(frozen=True)
class KnockOption:
    """What one hand could lay down if its player knocked now, and whether that knock is allowed."""

    cards: tuple[Card, ...]
    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int | None
    """The least deadwood; None for a hand with more cards than a knocker may hold."""
    discard: Card | None
    """For a hand of one card more than dealt: the discard that leaves the least deadwood."""
    can_knock: bool
    problem: str | None
    """Why the hand cannot take part as it is (too few or too many cards), or None."""


def knock_option(rules: Rules, hand: Sequence[Card], players: int, upcard: Card | None) -> KnockOption:
    """The least deadwood ``hand`` can show (after the best discard when it holds one card extra), and
    whether it may knock: a knocker holds the dealt number of cards (or one more, before discarding)
    and no more deadwood than the knock limit.

    >>> option = knock_option(Rules(), parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC KD"), 2, Card.parse("KS"))
    >>> option.points, str(option.discard), option.can_knock
    (5, 'KD', True)
    >>> multi = Rules.preset_named("oklahoma-multi")
    >>> knock_option(multi, parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC"), 3, None).problem
    '10 cards: Multi-player Oklahoma Gin deals 7 (a knocker holds 8 before the discard)'

    :raises InvalidHandError: when these rules do not allow that many players.
    """
    size = rules.hand_size(players)
    cards = tuple(hand)
    if len(cards) > size + 1:
        problem = f"{len(cards)} cards: {rules.title} deals {size} (a knocker holds {size + 1} before the discard)"
        return KnockOption(cards, (), (), None, None, False, problem)
    if len(cards) == size + 1:
        best = min(_knocker_choices("", cards, size, None), key=lambda choice: choice.points)
        melds, deadwood, points, discard = best.melds, best.deadwood, best.points, best.discard
    else:
        arrangement = best_arrangement_of_mask(cards_mask(cards))
        melds, deadwood, points, discard = arrangement.melds, arrangement.deadwood, arrangement.points, None
    short = None if len(cards) >= size else f"{len(cards)} cards: {rules.title} deals {size}"
    can_knock = upcard is not None and short is None and points <= rules.knock_limit_for(upcard)
    return KnockOption(cards, melds, deadwood, points, discard, can_knock, short)


def knock_to_propose(
    rules: Rules, upcard: Card | None, options: Mapping[str, KnockOption], players: int
) -> tuple[str | None, str | None]:
    """The knock to propose without being asked (from each hand's ``knock_option``), or None and why not:
    exactly one player may knock and every other hand holds the dealt number of cards, so the table could
    be scored as it lies.

    >>> hands = {"Ann": "8C 9C 10C JC 9H 10H JH 2S 2D AC", "Bob": "QS QC QH 10S JS 3D 5H 7S AD 7D"}
    >>> options = {name: knock_option(Rules(), parse_cards(hand), 2, Card.parse("KS")) for name, hand in hands.items()}
    >>> knock_to_propose(Rules(), Card.parse("KS"), options, 2)
    ('Ann', None)
    """
    size = rules.hand_size(players)
    knockers = [name for name, option in options.items() if option.can_knock]
    if upcard is None:
        return None, "no upcard yet"
    if not knockers:
        return None, "nobody may knock yet"
    if len(knockers) > 1:
        return None, f"{' and '.join(knockers)} may each knock: say who knocked"
    wrong = [
        f"{name} holds {len(option.cards)} cards, not {size}"
        for name, option in options.items()
        if name != knockers[0] and len(option.cards) != size
    ]
    return (None, "; ".join(wrong)) if wrong else (knockers[0], None)


def _check_int(name: str, value: object, least: int, most: int | None = None) -> None:
    if type(value) is not int or value < least or (most is not None and value > most):
        bound = f"{least}-{most}" if most is not None else f"{least} or more"
        raise RulesError(f"{name} must be a whole number {bound}, not {value!r}")


def _check_options(options: Mapping[str, Any]) -> None:
    known = {field.name for field in dataclasses.fields(Rules)}
    unknown = sorted(set(options) - known)
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise RulesError(f"unknown rules option {names}: options are {', '.join(sorted(known))}")


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
    dealt: dict[str, tuple[Card, ...]] = dataclasses.field(default_factory=dict)
    """The hands as given to ``score_round``, to score the round again."""
    knocker_melds_given: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON form. For two players it has the keys of ``okgin score --json``.

        ``knocker`` and ``opponent`` hold ``melds``, ``deadwood``, ``deadwood_points`` (the
        opponent also ``layoffs``: ``{"card": "QC", "onto": [the knocker's meld as it lay]}``);
        ``points`` is ``{"knocker": X, "opponent": Y}`` for two players, else by name.
        ``players`` holds every player's result by name, ``points_by_player`` the points.
        """
        knocker = self.hands[self.knocker].to_dict()
        data: dict[str, Any] = {
            "outcome": self.outcome,
            "knock_limit": self.knock_limit,
            "knocker": {key: knocker[key] for key in ("melds", "deadwood", "deadwood_points")},
        }
        others = [name for name in self.hands if name != self.knocker]
        if len(others) == 1:
            data["opponent"] = self.hands[others[0]].to_dict()
            data["points"] = {"knocker": self.points[self.knocker], "opponent": self.points[others[0]]}
        else:
            data["points"] = dict(self.points)
        data.update(
            {
                "players": {name: result.to_dict() for name, result in self.hands.items()},
                "knocker_name": self.knocker,
                "winner": self.winner,
                "upcard": str(self.upcard),
                "discard": None if self.discard is None else str(self.discard),
                "doubled": self.doubled,
                "points_by_player": dict(self.points),
            }
        )
        return data


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
        raise InvalidHandError(f"the knocker {knocker!r} is not one of the players: {', '.join(hands)}")
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
    return dataclasses.replace(best, dealt=checked, knocker_melds_given=knocker_melds is not None)
