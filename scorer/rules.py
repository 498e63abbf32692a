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
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from scorer.cards import Card, InvalidCardError, card_count, ensure_distinct, format_cards, parse_cards
from scorer.deadwood import deadwood_points, legal_arrangements_of_mask, mask_points
from scorer.errors import OkginError, shown
from scorer.laydown import LayDown
from scorer.layoffs import (
    IllegalLayoffError,
    Layoff,
    PlayerResult,
    all_best_resolutions,
    extended_melds,
    lay_off_as_given,
    resolve_knock,
)
from scorer.melds import Meld, cards_mask, mask_cards

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PRESETS",
    "Alternative",
    "IllegalKnockError",
    "IllegalLayoffError",
    "InvalidHandError",
    "InvalidRulesError",
    "LayDown",
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

MAX_BONUS, MAX_MULTIPLIER, MAX_TARGET, MAX_ROUNDS_LIMIT = 1_000, 10, 10_000, 1_000
"""The largest a bonus or point option, the gin multiplier, the target and a rounds limit may be set. Published
variants stay far below them (bonuses of 10 to 100, targets of 100 to 500); without a bound a client could set a
bonus of thousands of digits, whose totals then could not even be written out (a match stored so could not be
shown again)."""


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

    @property
    def scoring(self) -> str:
        """How its rounds are scored: "standard" (two players) or "penalty" (the multi-player table)."""
        return str(self.options.get("scoring", Rules.scoring))


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
    """The rule set the table started from, by id: its title names the rules. Only ``preset_named`` and
    ``from_dict`` apply the preset's options; built directly, every option not given is the plain default, so
    ``Rules(preset="gin-rummy")`` keeps the upcard's knock limit."""
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
    """An agreed number of scored rounds (draws do not count) after which the match ends, in any scoring: the
    leader wins, and a tie at the top plays on."""

    def __post_init__(self) -> None:
        if not isinstance(self.preset, str) or self.preset not in PRESETS:
            raise InvalidRulesError(f"unknown rules preset {shown(self.preset)}: choose {', '.join(PRESETS)}")
        limit = self.knock_limit
        if limit != "upcard" and not (type(limit) is int and 0 <= limit <= 10):
            raise InvalidRulesError(f"knock_limit must be 'upcard' or a whole number 0-10, not {shown(limit)}")
        for name in ("gin_bonus", "undercut_bonus", "box_bonus", "game_bonus", "penalty_knock_points"):
            _check_int(name, getattr(self, name), 0, MAX_BONUS)
        _check_int("penalty_undercut_points", self.penalty_undercut_points, 0, MAX_BONUS)
        _check_int("penalty_gin_multiplier", self.penalty_gin_multiplier, 0, MAX_MULTIPLIER)
        _check_int("target", self.target, 1, MAX_TARGET)
        _check_int("max_players", self.max_players, MIN_PLAYERS, MAX_PLAYERS)
        if self.rounds_limit is not None:
            _check_int("rounds_limit", self.rounds_limit, 1, MAX_ROUNDS_LIMIT)
        if self.target_rule not in (">=", ">"):
            raise InvalidRulesError(f"target_rule must be '>=' or '>', not {shown(self.target_rule)}")
        if self.scoring not in ("standard", "penalty"):
            raise InvalidRulesError(f"scoring must be 'standard' or 'penalty', not {shown(self.scoring)}")
        if self.scoring == "standard" and self.max_players != 2:
            raise InvalidRulesError(f"standard scoring is for 2 players; {self.max_players} need scoring='penalty'")
        for name in ("ace_upcard_gin_only", "spade_doubles", "shutout_doubles"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidRulesError(f"{name} must be true or false, not {shown(getattr(self, name))}")

    @classmethod
    def preset_named(cls, name: str, /, **options: Any) -> Rules:
        """A preset ("oklahoma", "gin-rummy", "oklahoma-multi") with options changed (an option may be written with
        dashes: ``gin-bonus``). ``name`` is positional only, so an option called "name" is an unknown option.

        >>> Rules.preset_named("oklahoma", preset="gin-rummy")
        Traceback (most recent call last):
        scorer.rules.InvalidRulesError: the preset is named once, not again among the options ('gin-rummy')

        :raises InvalidRulesError: naming an unknown preset or option, an option given twice, or a value out of range.
        """
        if not isinstance(name, str) or name not in PRESETS:
            raise InvalidRulesError(f"unknown rules preset {shown(name)}: choose {', '.join(PRESETS)}")
        spellings: dict[str, list[str]] = {}
        for key in options:
            spellings.setdefault(key.replace("-", "_"), []).append(key)
        twice = next((keys for keys in spellings.values() if len(keys) > 1), None)
        if twice:
            raise InvalidRulesError(f"rules options {' and '.join(map(shown, twice))} are one option given twice")
        options = {key.replace("-", "_"): value for key, value in options.items()}
        if "preset" in options:
            raise InvalidRulesError(
                f"the preset is named once, not again among the options ({shown(options['preset'])})"
            )
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
        """Rules back from ``to_dict``; missing options take the named preset's values (the plain defaults
        without one), so ``{"preset": "gin-rummy"}`` alone is Gin Rummy's knock limit of 10, not the upcard's.

        >>> Rules.from_dict({"preset": "gin-rummy"}).knock_limit, Rules.from_dict({}).knock_limit
        (10, 'upcard')

        :raises InvalidRulesError: naming an unknown preset or option or a value out of range, or for data that is
            not a mapping of options.
        """
        if not isinstance(data, Mapping):
            raise InvalidRulesError(f"rules must be a mapping of options to values, not {shown(data)}")
        if "preset" not in data:
            _check_options(data)
            return cls(**data)
        options = dict(data)
        preset = options.pop("preset")
        _check_options({key: value for key, value in options.items() if not isinstance(key, str)})
        return cls.preset_named(preset, **options)

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

    def goal(self) -> str:
        """What ends the match, in words for the score sheet.

        >>> Rules().goal(), Rules(target=50, target_rule=">").goal(), Rules(rounds_limit=12).goal()
        ('to 100', 'over 50', 'to 100 or 12 rounds')
        >>> Rules(rounds_limit=1).goal()
        'to 100 or 1 round'
        """
        reach = f"{'to' if self.target_rule == '>=' else 'over'} {self.target}"
        if self.rounds_limit is None:
            return reach
        return f"{reach} or {self.rounds_limit} round{'' if self.rounds_limit == 1 else 's'}"

    def terms(self) -> tuple[str, ...]:
        """What a round and the match score under these rules, one term a line, in words for the score sheet: the
        players at the table agree the options once, and the sheet is where they look when a round's points surprise.

        >>> Rules().terms()
        ("knock with the upcard's value or less (ace 1, faces 10)", "gin: 25 + the other's deadwood", \
'knock won: the deadwood difference', 'undercut (a tie too): 10 + the difference')
        >>> Rules(knock_limit=0, spade_doubles=True, box_bonus=20).terms()[::2]
        ('only gin ends a round', 'a spade upcard doubles the round')
        """
        if self.knock_limit == "upcard":
            knock = "knock with the upcard's value or less (ace 1, faces 10)"
        else:
            knock = "only gin ends a round" if self.knock_limit == 0 else f"knock with {self.knock_limit} or less"
        terms = [knock]
        if self.ace_upcard_gin_only and self.knock_limit != 0:
            terms.append("an ace upcard: only gin ends the round")
        if self.scoring == "standard":
            terms.append(f"gin: {self.gin_bonus} + the other's deadwood")
            if self.knock_limit != 0:  # else no round ends but in gin
                terms += [
                    "knock won: the deadwood difference",
                    f"undercut (a tie too): {self.undercut_bonus} + the difference",
                ]
        else:
            if self.knock_limit != 0:  # else no round ends but in gin
                terms += [
                    f"knock won: {self.penalty_knock_points} to the knocker, the others lose their deadwood above his",
                    f"undercut: {self.penalty_undercut_points} to the lowest deadwood, the others lose theirs above it",
                ]
            terms.append(
                f"gin: {self.gin_bonus} to the knocker, the others lose {self.penalty_gin_multiplier} x their deadwood"
            )
        if self.spade_doubles:
            terms.append("a spade upcard doubles the round")
        if self.box_bonus:
            terms.append(f"at the end, {self.box_bonus} for each round won")
        if self.game_bonus:
            terms.append(f"at the end, {self.game_bonus} to the winner")
        if self.shutout_doubles:
            terms.append("the winner's score doubles when no one else won a round")
        return tuple(terms)

    def describe_limit(self, upcard: Card) -> str:
        """The knock limit in words, for error messages."""
        limit = self.knock_limit_for(upcard)
        if self.ace_upcard_gin_only and upcard.rank == 1:
            return f"the knock limit 0 with ace upcard {upcard} (only gin ends the round)"
        if self.knock_limit == "upcard":
            return f"the knock limit {limit} set by upcard {upcard}"
        return f"the knock limit {limit} ({self.title}; upcard {upcard})"


def _check_int(name: str, value: object, least: int, most: int | None = None) -> None:
    if type(value) is not int or value < least or (most is not None and value > most):
        bound = f"{least}-{most}" if most is not None else f"{least} or more"
        raise InvalidRulesError(f"{name} must be a whole number {bound}, not {shown(value)}")


def _check_options(options: Mapping[str, Any]) -> None:
    known = {field.name for field in dataclasses.fields(Rules)}
    unknown = sorted((key for key in options if key not in known), key=str)  # a key may be no text at all
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise InvalidRulesError(f"unknown rules option {names}: options are {', '.join(sorted(known))}")


@dataclasses.dataclass(frozen=True)
class Alternative:
    """Another way the round may have been laid, scoring differently: the players say which they made.

    ``laydown`` is complete: given back to ``score_round`` it scores that way. ``differs``
    names what differs from the result: "knocker_melds", "discard", or a player whose
    layoffs differ.
    """

    laydown: LayDown
    outcome: Outcome
    winner: str
    points: dict[str, int]
    deadwood: dict[str, int]
    differs: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the lay-down's keys (``knocker_melds``, ``discard``, ``layoffs``) and the score."""
        return {
            **self.laydown.to_dict(),
            "outcome": self.outcome,
            "winner": self.winner,
            "points": dict(self.points),
            "deadwood": dict(self.deadwood),
            "differs": list(self.differs),
        }


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
    given: LayDown = dataclasses.field(default_factory=LayDown)
    """The parts of the lay-down that were given (the rest the engine chose)."""
    alternatives: tuple[Alternative, ...] = ()
    """Other ways the players may have laid the round that score differently (empty: the choice does not matter)."""

    @property
    def laydown(self) -> LayDown:
        """The lay-down this result scores, complete: the knocker's melds, the discard, everyone's layoffs."""
        layoffs = {name: result.layoffs for name, result in self.hands.items() if name != self.knocker}
        return LayDown.of(self.hands[self.knocker].melds, self.discard, layoffs)

    @property
    def depends_on(self) -> tuple[str, ...]:
        """What the score depends on that was not given: "knocker_melds", "discard" or players (their layoffs)."""
        found: dict[str, None] = {}
        for alternative in self.alternatives:
            found.update(dict.fromkeys(alternative.differs))
        return tuple(found)

    def to_dict(self) -> dict[str, Any]:
        """JSON form, the same for 2 to 4 players and for CLI, API and page.

        ``laydown`` is the lay-down scored, complete, and ``given`` the parts of it that were given
        (both ``LayDown.to_dict``); ``alternatives`` the other lay-downs that score differently
        (``Alternative.to_dict``) and ``depends_on`` what they vary.
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
            "laydown": self.laydown.to_dict(),
            "given": self.given.to_dict(),
            "alternatives": [alternative.to_dict() for alternative in self.alternatives],
            "depends_on": list(self.depends_on),
        }


@dataclasses.dataclass(frozen=True)
class _KnockerChoice:
    """One way the knocker may lay down: a discard (for 11 cards) and an arrangement."""

    discard: Card | None
    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int
    engine: bool = True
    """Whether the engine weighs it for its own choice: an arrangement of the cards kept with their least deadwood."""


def held_cards(hands: Mapping[str, Sequence[Card] | str]) -> dict[str, tuple[Card, ...]]:
    """Each player's hand as cards (card text read), checked: names are text, hands are cards, and no card is held
    twice, in one hand or in two.

    >>> held_cards({"Ann": "AS 2S", "Bob": [Card.parse("3S")]})
    {'Ann': (Card.parse('AS'), Card.parse('2S')), 'Bob': (Card.parse('3S'),)}

    :raises InvalidHandError: naming the player whose name or hand is not one, or the card held twice.
    """
    if not isinstance(hands, Mapping):
        raise InvalidHandError(f"hands must map each player's name to their cards, not {shown(hands)}")
    checked: dict[str, tuple[Card, ...]] = {}
    holder: dict[Card, str] = {}
    for name, cards in hands.items():
        if not isinstance(name, str) or not name:
            raise InvalidHandError(f"a player's name is text, not {shown(name)}")
        if isinstance(cards, str):
            hand = tuple(parse_cards(cards, where=f"{name}'s hand"))
        else:  # not cards at all (None, a number) is refused below, naming the player
            hand = tuple(cards) if isinstance(cards, Iterable) else (cards,)
        if not all(isinstance(card, Card) for card in hand):
            raise InvalidHandError(f"{name}'s hand must be cards (or card text), not {shown(cards)}")
        try:
            ensure_distinct(hand, where=f"{name}'s hand")
        except InvalidCardError as error:
            raise InvalidHandError(str(error)) from None
        for card in hand:
            if card in holder:
                raise InvalidHandError(f"{card} is in both {holder[card]}'s and {name}'s hands")
            holder[card] = name
        checked[name] = hand
    return checked


def as_upcard(upcard: Card | str) -> Card:
    """The upcard, given as a card or card text ("KS", as a hand may be text).

    :raises InvalidCardError: for anything else, or text that names no card.
    """
    if isinstance(upcard, str):
        return Card.parse(upcard)
    if not isinstance(upcard, Card):
        raise InvalidCardError(f"upcard must be a card (or card text), not {shown(upcard)}")
    return upcard


def _validated_hands(
    rules: Rules, hands: Mapping[str, Sequence[Card] | str], knocker: str
) -> dict[str, tuple[Card, ...]]:
    """The hands as tuples (``held_cards``), after checking the players, the knocker and the hands' sizes."""
    checked = held_cards(hands)
    size = rules.hand_size(len(checked))
    if not isinstance(knocker, str) or knocker not in checked:  # a list is no name, and no key to look up
        raise InvalidHandError(f"knocker must be one of {', '.join(checked)}; got {shown(knocker)}")
    for name, hand in checked.items():
        if name == knocker and len(hand) not in (size, size + 1):
            raise InvalidHandError(
                f"{name} holds {card_count(len(hand))}; {rules.title} needs {size} after the knocker's discard "
                f"(or {size + 1} to choose the discard)"
            )
        if name != knocker and len(hand) != size:
            raise InvalidHandError(f"{name} holds {card_count(len(hand))}; {rules.title} needs {size}")
    return checked


def _given_melds_mask(name: str, hand: int, melds: Sequence[Meld] | None) -> int:
    """The cards of the knocker's melds as laid, checked to come from the hand and not to overlap."""
    laid = 0
    for meld in melds or ():
        if meld.mask & ~hand:
            missing = format_cards(card for card in meld.cards if not hand >> card.class_id & 1)
            raise InvalidHandError(f"{name}'s meld {meld} uses {missing}, not in {name}'s hand")
        if meld.mask & laid:
            raise InvalidHandError(f"{name}'s melds share a card: {', '.join(map(str, melds or ()))}")
        laid |= meld.mask
    return laid


def _discards(name: str, hand: tuple[Card, ...], size: int, laid: int, given: Card | None) -> list[Card | None]:
    """The discards to weigh: the one given, or each card not laid in melds (none when the hand is after it)."""
    if given is not None:
        if len(hand) == size:
            raise InvalidHandError(
                f"{name}'s discard {given} is given with {size} cards, the hand after the discard: "
                f"give all {size + 1} cards, the discard among them"
            )
        if given not in hand:
            raise InvalidHandError(f"{name}'s discard {given} is not among {name}'s {len(hand)} cards")
        if laid >> given.class_id & 1:
            raise InvalidHandError(f"{name} cannot discard {given}: it is in {name}'s melds as laid")
        return [given]
    if len(hand) == size:
        return [None]
    discards: list[Card | None] = [card for card in sorted(hand) if not laid >> card.class_id & 1]
    if not discards:
        raise InvalidHandError(f"{name}'s melds use all {len(hand)} cards; give the hand after the discard")
    return discards


def _knocker_choices(
    rules: Rules, upcard: Card, name: str, hand: tuple[Card, ...], size: int, given: LayDown
) -> list[_KnockerChoice]:
    """Every legal way for the knocker to lay down within what was given, in preference order.

    Preference: least deadwood, then the discard (card order), then ``arrangement_key``.

    :raises InvalidHandError: for melds or a discard that do not come from the knocker's hand.
    :raises IllegalKnockError: when no way is within the knock limit.
    """
    mask = cards_mask(hand)
    limit = rules.knock_limit_for(upcard)
    laid = _given_melds_mask(name, mask, given.knocker_melds)
    choices: list[_KnockerChoice] = []
    least = 1 << 10
    for discard in _discards(name, hand, size, laid, given.discard):
        kept = mask if discard is None else mask & ~(1 << discard.class_id)
        if given.knocker_melds is not None:
            points = mask_points(kept & ~laid)
            least = min(least, points)
            if points <= limit:
                choices.append(_KnockerChoice(discard, given.knocker_melds, mask_cards(kept & ~laid), points))
            continue
        fewest = deadwood_points(kept)
        least = min(least, fewest)
        if fewest <= limit:
            choices += [
                _KnockerChoice(discard, a.melds, a.deadwood, a.points, engine=a.points == fewest)
                for a in legal_arrangements_of_mask(kept, limit)
            ]
    if not choices:
        laid_so = " as laid" if given.knocker_melds is not None else ""
        raise IllegalKnockError(
            f"illegal knock: {name}'s deadwood{laid_so} is {least}, over {rules.describe_limit(upcard)}"
        )
    return sorted(choices, key=lambda choice: choice.points)  # stable: discard, then arrangement order


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


def _check_layoff_players(given: LayDown, players: Sequence[str], knocker: str) -> None:
    for name, _ in given.layoffs:
        if name == knocker:
            raise IllegalLayoffError(f"{knocker} knocked and lays off nothing; layoffs are the other players'")
        if name not in players:
            raise IllegalLayoffError(
                f"layoffs are given for {shown(name)}, who is not one of the players: {', '.join(players)}"
            )


def _score_shown(
    rules: Rules,
    upcard: Card,
    knocker: str,
    choice: _KnockerChoice,
    shown: Mapping[str, PlayerResult],
    players: Sequence[str],
) -> RoundResult:
    """Score the round from what every player showed (the knocker's choice and the others' results)."""
    others = _seats_after(players, knocker)
    deadwood = {name: shown[name].deadwood_points for name in players}
    score = _standard_points if rules.scoring == "standard" else _penalty_points
    outcome, winner, points = score(rules, deadwood, knocker, others)
    doubled = rules.spade_doubles and upcard.suit == "S"
    factor = 2 if doubled else 1
    return RoundResult(
        outcome=outcome,
        knocker=knocker,
        winner=winner,
        knock_limit=rules.knock_limit_for(upcard),
        upcard=upcard,
        hands={name: shown[name] for name in players},  # seating order
        points={name: factor * points[name] for name in players},
        discard=choice.discard,
        doubled=doubled,
    )


def _laid_outcomes(
    rules: Rules,
    upcard: Card,
    hands: Mapping[str, tuple[Card, ...]],
    knocker: str,
    choice: _KnockerChoice,
    given: Mapping[str, tuple[Layoff, ...]],
) -> tuple[list[RoundResult], IllegalLayoffError | None]:
    """Every way the others may lay off after this lay-down, scored, preferred first; and why some could not.

    Each player in turn, from the knocker's left, lays off onto the knocker's melds as the
    players before left them: as given, or each least-deadwood way (``all_best_resolutions``)
    when the choice can matter to a later player. A given layoff that the table does not
    allow ends that way; the first such error is returned.
    """
    players = list(hands)
    others = _seats_after(players, knocker)
    allow = choice.points > 0  # nobody lays off onto a gin hand
    knocker_shown = PlayerResult(choice.melds, (), choice.deadwood, choice.points)
    ways: list[tuple[dict[str, PlayerResult], tuple[Meld, ...]]] = [({knocker: knocker_shown}, choice.melds)]
    error: IllegalLayoffError | None = None
    for seat, name in enumerate(others):
        grown = []
        for laid_so_far, table in ways:
            if name in given:
                try:
                    options = [lay_off_as_given(table, hands[name], given[name], allow, player=name)]
                except IllegalLayoffError as problem:
                    error = error or problem
                    continue
            elif seat == len(others) - 1:  # the last to lay off decides nothing for anyone else
                options = [resolve_knock(table, hands[name], allow)]
            else:
                options = all_best_resolutions(table, hands[name], allow)
            grown += [({**laid_so_far, name: option}, extended_melds(table, option.layoffs)) for option in options]
        ways = grown
    return [_score_shown(rules, upcard, knocker, choice, laid, players) for laid, _ in ways], error


def _knocker_gain(result: RoundResult) -> tuple[int, int]:
    """How good a result is for the knocker: most points won, then fewest won by the others."""
    others = sum(points for name, points in result.points.items() if name != result.knocker)
    return result.points[result.knocker], -others


def _best_case(rules: Rules, upcard: Card, choice: _KnockerChoice, unlaid: Mapping[str, int]) -> tuple[float, float]:
    """A bound on ``_knocker_gain`` for this lay-down, from the others' deadwood before any layoff.

    Layoffs only lower the others' deadwood, so with two players the knocker wins at most
    the opponent's unlaid deadwood less his own (or the gin bonus plus it), and an
    undercut costs at least the bonus plus his deadwood less the opponent's unlaid one.
    """
    factor = 2 if rules.spade_doubles and upcard.suit == "S" else 1
    if rules.scoring == "penalty":
        return factor * (rules.gin_bonus if choice.points == 0 else rules.penalty_knock_points), math.inf
    (most,) = unlaid.values()
    if choice.points == 0:
        return factor * (rules.gin_bonus + most), 0
    if most > choice.points:
        return factor * (most - choice.points), 0
    return 0, -factor * (rules.undercut_bonus + choice.points - most)


def _differences(result: RoundResult, chosen: RoundResult) -> tuple[str, ...]:
    """What a result's lay-down changes from the chosen one's (see ``Alternative.differs``).

    A player's layoffs count only while the table they faced is the chosen one's: after the
    knocker lays other melds, or an earlier player other layoffs, the later layoffs follow.
    """
    knocker = chosen.knocker
    differs = []
    same_table = set(result.hands[knocker].melds) == set(chosen.hands[knocker].melds)
    if not same_table:
        differs.append("knocker_melds")
    if result.discard != chosen.discard:
        differs.append("discard")
    for name in _seats_after(list(chosen.hands), knocker):
        if not same_table:
            break
        if set(result.hands[name].layoffs) != set(chosen.hands[name].layoffs):
            differs.append(name)
            same_table = False
    return tuple(differs)


def _alternative(result: RoundResult, chosen: RoundResult) -> Alternative:
    return Alternative(
        laydown=result.laydown,
        outcome=result.outcome,
        winner=result.winner,
        points=dict(result.points),
        deadwood={name: player.deadwood_points for name, player in result.hands.items()},
        differs=_differences(result, chosen),
    )


def score_round(
    rules: Rules,
    upcard: Card | str,
    hands: Mapping[str, Sequence[Card] | str],
    knocker: str,
    knocker_melds: Sequence[Meld] | None = None,
    *,
    discard: Card | None = None,
    layoffs: Mapping[str, Sequence[Layoff]] | None = None,
) -> RoundResult:
    """Score one round ended by a knock (or gin), as laid where the lay-down is given.

    ``hands`` maps each player to their cards, in seating order (each player's left
    neighbour next). The knocker's hand has 10 cards (7 with 3-4 players) after the
    discard, or one more with the discard among them. The upcard may be in a hand: a
    player may have taken it. Each other player in turn, from the knocker's left, lays
    off onto the knocker's melds as the players before them left them (chains may
    continue a previous player's layoffs).

    What was laid is given by ``knocker_melds`` (the knocker's melds as laid; the rest of
    his cards are deadwood), ``discard`` (one of the knocker's one-more cards) and
    ``layoffs`` (per player, as made, checked in seat order); each is scored exactly.
    What is not given, the engine chooses, by these documented tie-breaks:

    - the knocker lays, of the least-deadwood arrangements of the cards kept after each
      possible discard, the one that wins him the most points, then leaves the others
      the fewest (at the penalty table, costs them the most: ``_knocker_gain``); then the
      least deadwood, the lowest discard, ``arrangement_key``;
    - a player lays off to leave the least deadwood; among equal ways, the fewest
      cards, then onto runs rather than sets (``resolve_knock``);
    - given layoffs that need another choice (a meld the knocker's best arrangement
      does not have, an earlier player's layoff) make the engine take the first choice
      that allows them.

    When the score depends on those choices, ``alternatives`` lists the lay-downs that
    score differently, one per different score: the knocker's least-deadwood lay-downs,
    any legal lay-down that wins the knocker more than the engine's choice (leaving a
    meld out can avoid an undercut), and an indifferent player's other layoffs.

    :raises InvalidHandError: wrong player count or hand size, a card in two hands, melds
        or a discard not from the knocker's hand.
    :raises IllegalKnockError: deadwood over the knock limit, naming the limit and upcard.
    :raises IllegalLayoffError: layoffs by an unknown player or the knocker, or ones the table does not allow.
    :raises InvalidCardError: for an upcard that is neither a card nor card text ("KS", as a hand may be text).
    """
    upcard = as_upcard(upcard)
    checked = _validated_hands(rules, hands, knocker)
    given = LayDown.of(knocker_melds, discard, layoffs)
    players = list(checked)
    _check_layoff_players(given, players, knocker)
    size = rules.hand_size(len(checked))
    choices = _knocker_choices(rules, upcard, knocker, checked[knocker], size, given)
    given_layoffs = given.layoffs_by_player
    outcomes: dict[int, list[RoundResult]] = {}
    errors: list[IllegalLayoffError] = []

    def outcomes_of(index: int) -> list[RoundResult]:
        if index not in outcomes:
            found, error = _laid_outcomes(rules, upcard, checked, knocker, choices[index], given_layoffs)
            outcomes[index] = found
            errors.extend([error] if error else [])
        return outcomes[index]

    indices = range(len(choices))
    candidates = [i for i in indices if choices[i].engine and outcomes_of(i)]
    candidates = candidates or [i for i in indices if outcomes_of(i)]  # given layoffs may need another lay-down
    if not candidates:
        raise errors[0]
    chosen_index = max(candidates, key=lambda i: _knocker_gain(outcomes_of(i)[0]))  # the first of the best
    chosen = outcomes_of(chosen_index)[0]
    gain = _knocker_gain(chosen)
    unlaid = {name: deadwood_points(cards_mask(cards)) for name, cards in checked.items() if name != knocker}
    least = choices[0].points
    seen = {tuple(chosen.points.values())}
    alternatives = []
    for index in indices:
        natural = index == chosen_index or choices[index].points == least
        if not natural and _best_case(rules, upcard, choices[index], unlaid) <= gain:
            continue  # cannot win the knocker more than the engine's choice: not worth listing
        for result in outcomes_of(index):
            score = tuple(result.points.values())
            if score in seen or not (natural or _knocker_gain(result) > gain):
                continue
            seen.add(score)
            alternatives.append(_alternative(result, chosen))
    return dataclasses.replace(chosen, given=given, alternatives=tuple(alternatives))
