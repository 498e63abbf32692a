"""A match: rounds scored one after another until a player reaches the target.

Every round is kept as it was entered (a ``Knock`` or a ``Draw``), so undoing or editing
a round simply scores the rounds again: dealers, totals and the winner all follow.

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
import re
from collections.abc import Iterable, Mapping, Sequence, Sized
from typing import Any

from scorer.cards import Card, DuplicateCardError, InvalidCardError, TooManyCardsError, parse_cards
from scorer.errors import OkginError, by_name, shown
from scorer.laydown import LayDown
from scorer.layoffs import Layoff
from scorer.melds import Meld
from scorer.rules import MAX_PLAYERS, InvalidHandError, RoundResult, Rules, score_round

MAX_ROUNDS = 1_000
"""The most rounds (draws included) a match takes: a match to 100 plays a few dozen. Each round is written out on
every device's sheet and in the match's JSON (a four-player knock with its other ways to lay down, some 6 KB), so
without a bound a match of thousands of rounds made each read of it tens of MB (session 47's probe)."""
MOST_HELD = 11
"""The most cards a player holds at the end of a round: ten dealt and the one drawn (the knocker's, before his discard).
A knocker lays down no more melds, nor a player more layoffs, than that."""
KNOCK_FIELDS = ("upcard", "knocker", "hands", "knocker_melds", "discard", "layoffs")
"""What a knock's input holds (``Knock.to_dict``), none of which a draw has."""
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class MatchError(OkginError):
    """An operation the match's state does not allow, e.g. a round after the match was won."""


class InvalidPlayersError(OkginError):
    """Players or a first dealer that a match cannot start with."""


class RoundInputError(OkginError):
    """A round's input that cannot be read: a missing field, one of the wrong kind, or a card that is not one."""


@dataclasses.dataclass(frozen=True)
class Knock:
    """A round ended by a knock (or gin): the upcard, every player's hand, who knocked, and what was laid.

    ``laydown`` holds the parts of the lay-down the players gave (the knocker's melds, his discard,
    each other player's layoffs); the engine chooses the rest (``score_round``).

    >>> Knock.of(Card.parse("KS"), {"Ann": parse_cards("AS 2S 3S")}, "Ann").to_dict()["hands"]
    {'Ann': ['AS', '2S', '3S']}
    """

    upcard: Card
    hands: tuple[tuple[str, tuple[Card, ...]], ...]
    knocker: str
    laydown: LayDown = dataclasses.field(default_factory=LayDown)

    @classmethod
    def of(
        cls,
        upcard: Card,
        hands: Mapping[str, Sequence[Card]],
        knocker: str,
        knocker_melds: Sequence[Meld] | None = None,
        *,
        discard: Card | None = None,
        layoffs: Mapping[str, Sequence[Layoff]] | None = None,
    ) -> Knock:
        """A knock from hands by name (kept in the mapping's order) and the parts of the lay-down given."""
        held = tuple((name, tuple(cards)) for name, cards in hands.items())
        return cls(upcard, held, knocker, LayDown.of(knocker_melds, discard, layoffs))

    @property
    def hands_by_name(self) -> dict[str, tuple[Card, ...]]:
        """The hands by player. A player holds one hand: two for a name were scored as the second alone (the first
        dropped unseen), and the table counted a player short ("Oklahoma Gin is for 2 players, not 1").

        :raises InvalidHandError: naming the player given two hands.
        """
        return by_name(
            self.hands, lambda name: InvalidHandError(f"{shown(name)} is given two hands: each player holds one")
        )

    def score(self, rules: Rules) -> RoundResult:
        """The round scored under ``rules``, as laid where the lay-down is given (``score_round``).

        :raises InvalidHandError: for bad hands, or melds or a discard not from the knocker's hand.
        :raises IllegalKnockError: for a knock over the limit.
        :raises IllegalLayoffError: for layoffs the table does not allow.
        """
        return score_round(rules, self.upcard, self.hands_by_name, self.knocker, **self.laydown.arguments())

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"upcard", "knocker", "hands": {name: [cards]}}`` and the lay-down as given,
        ``"knocker_melds": [[cards]] or null, "discard": card or null, "layoffs": {name: [layoff]}``
        (``LayDown.to_dict``; null or a player left out: the engine chooses)."""
        return {
            "upcard": str(self.upcard),
            "knocker": self.knocker,
            "hands": {name: [str(card) for card in cards] for name, cards in self.hands},
            **self.laydown.to_dict(),
        }


@dataclasses.dataclass(frozen=True)
class Draw:
    """A void round: two cards left in the stock and nobody knocked."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"draw": true}``."""
        return {"draw": True}


RoundInput = Knock | Draw
"""What was entered for a round: a knock (or gin), or a draw."""


def names_in(entered: RoundInput) -> set[str]:
    """Every player a round's entry names: the knocker, the hands' and the layoffs' players (none for a draw)."""
    if isinstance(entered, Draw):
        return set()
    return {entered.knocker, *entered.hands_by_name, *entered.laydown.layoffs_by_player}


def renamed(entered: RoundInput, old: str, new: str) -> RoundInput:
    """``entered`` with player ``old`` called ``new`` wherever it names a player (``names_in``): a player renamed in a
    match is renamed in every round and earlier version, which score as they did.

    >>> knock = Knock.of(Card.parse("KS"), {"Anm": parse_cards("AS 2S 3S")}, "Anm")
    >>> renamed(knock, "Anm", "Ann").to_dict()["hands"]
    {'Ann': ['AS', '2S', '3S']}

    :raises InvalidPlayersError: when the entry names ``new`` already (a match file's earlier version may name
        someone who is not a player): the two would become one.
    """
    if old not in names_in(entered):
        return entered
    assert isinstance(entered, Knock)  # a draw names nobody
    if new in names_in(entered):
        raise InvalidPlayersError(f"the round names {shown(new)} already, beside {shown(old)}")

    def name(player: str) -> str:
        return new if player == old else player

    layoffs = tuple((name(player), laid) for player, laid in entered.laydown.layoffs)
    hands = tuple((name(player), cards) for player, cards in entered.hands)
    laydown = dataclasses.replace(entered.laydown, layoffs=layoffs)
    return dataclasses.replace(entered, hands=hands, knocker=name(entered.knocker), laydown=laydown)


def parse_round_input(data: object) -> RoundInput:
    """A round's input from its JSON form (``Knock.to_dict()`` or ``{"draw": true}``); other keys are ignored, but a
    draw that names a knock's fields is refused.

    Hands may be lists of cards or one string (``"QH 10S 3D"``, ``"ace of spades, 2S"``).

    >>> parse_round_input({"draw": True})
    Draw()
    >>> parse_round_input({"upcard": "KS", "knocker": "Ann", "hands": {"Ann": "AS 2S 3S"}}).to_dict()["hands"]
    {'Ann': ['AS', '2S', '3S']}

    :raises RoundInputError: naming the missing or malformed field, or the card that is not one.
    """
    if not isinstance(data, Mapping):
        raise RoundInputError('a round is an object with "upcard", "knocker" and "hands", or {"draw": true}')
    draw = data.get("draw", False)
    if not isinstance(draw, bool):
        raise RoundInputError(f"draw must be true or false, got {shown(draw)}")
    if draw:
        # a round sent as a draw and a knock at once is not read as either: which one was meant is not ours to guess
        if given := [key for key in KNOCK_FIELDS if data.get(key) is not None]:
            fields = ", ".join(given)
            raise RoundInputError(f'a draw has no {fields}: send {{"draw": true}} alone, or the knock without it')
        return Draw()
    upcard, knocker, hands = (data.get(key) for key in ("upcard", "knocker", "hands"))
    up = parse_card_field(upcard, "upcard")
    knocker = parse_name_field(knocker, "knocker")
    if not isinstance(hands, Mapping) or not hands:
        raise RoundInputError('hands must be an object like {"Ann": ["QH", "10S", ...], "Bob": "AS 2S ..."}')
    _at_most(hands, MAX_PLAYERS, "hands", "players' hands, more than play a round")
    held = tuple(
        (parse_name_field(name, "hands"), parse_cards_field(cards, f"{name}'s hand")) for name, cards in hands.items()
    )
    return Knock(up, held, knocker, _parse_laydown(data))


def parse_name_field(value: object, what: str) -> str:
    """A player's name where a round gives one: the knocker, or a key of its hands, layoffs or groups. It must be
    text: a lone surrogate (half of a UTF-16 pair, which JSON can carry) is not, and a page that showed a name holding
    one could never be sent (a match file's earlier version kept such a hand, and its table answered 500 for good).

    >>> parse_name_field("Zoë", "knocker")
    'Zoë'
    >>> parse_name_field("Zed\\ud800", "hands")
    Traceback (most recent call last):
    ...
    scorer.match.RoundInputError: hands name 'Zed\\ud800', which holds a lone surrogate: not a player's name

    :raises RoundInputError: naming ``what`` and the value, quoted (``shown``).
    """
    if not isinstance(value, str):
        raise RoundInputError(f"{what} must be a player's name, got {shown(value)}")
    if _LONE_SURROGATE.search(value):
        raise RoundInputError(f"{what} name {shown(value)}, which holds a lone surrogate: not a player's name")
    return value


def _at_most(items: Sized, most: int, what: str, why: str) -> None:
    """Refuse a field's list or object of more than ``most`` entries before any entry is read: each is parsed, and
    300,000 melds in a request's 10 MB held the server's interpreter for 8 s.

    >>> _at_most(["AS 2S 3S"] * 12, MOST_HELD, "knocker_melds", "melds, more than a player holds cards")
    Traceback (most recent call last):
    ...
    scorer.match.RoundInputError: knocker_melds: 12 melds, more than a player holds cards (11)

    :raises RoundInputError: naming ``what``, how many entries it holds, and ``why`` that is too many.
    """
    if len(items) > most:
        raise RoundInputError(f"{what}: {len(items)} {why} ({most})")


def _parse_laydown(data: Mapping[str, Any]) -> LayDown:
    """The lay-down given with a knock (``LayDown.to_dict``'s keys); each part may be missing or null.

    A meld may be written as one string (``"AS 2S 3S"``), a layoff as ``"QC onto 9C 10C JC"``.

    :raises RoundInputError: naming the part that cannot be read.
    """
    melds, discard, layoffs = (data.get(key) for key in ("knocker_melds", "discard", "layoffs"))
    if melds is not None and not isinstance(melds, list):
        raise RoundInputError(
            f'knocker_melds must be a list of melds like ["AS 2S 3S", ["7H", "7D", "7C"]]: {shown(melds)}'
        )
    if layoffs is not None and not isinstance(layoffs, Mapping):
        raise RoundInputError(
            f'layoffs must map players to their layoffs, like {{"Bob": [], "Cat": []}}: {shown(layoffs)}'
        )
    _at_most(melds or (), MOST_HELD, "knocker_melds", "melds, more than a player holds cards")
    _at_most(layoffs or {}, MAX_PLAYERS, "layoffs", "players' layoffs, more than play a round")
    laid_melds = None
    if melds is not None:
        try:
            laid_melds = tuple(Meld.of(parse_cards_field(meld, "knocker_melds")) for meld in melds)
        except InvalidCardError as error:
            raise RoundInputError(f"knocker_melds: {error}") from None
    by_player: dict[str, tuple[Layoff, ...]] = {}
    for name, made in (layoffs or {}).items():
        name = parse_name_field(name, "layoffs")
        if not isinstance(made, list):
            raise RoundInputError(
                f"{name}'s layoffs must be a list of layoffs (empty: none laid off), got {shown(made)}"
            )
        _at_most(made, MOST_HELD, f"{name}'s layoffs", "layoffs, more than a player holds cards")
        by_player[name] = tuple(_parse_layoff(item, f"{name}'s layoffs") for item in made)
    return LayDown.of(laid_melds, None if discard is None else parse_card_field(discard, "discard"), by_player)


def _parse_layoff(value: object, what: str) -> Layoff:
    """One layoff: ``{"card": "QC", "onto": ["9C", "10C", "JC"]}`` (``Layoff.to_dict``) or ``"QC onto 9C 10C JC"``.

    :raises RoundInputError: naming ``what`` and the problem.
    """
    if isinstance(value, str):
        try:
            return Layoff.parse(value)
        except OkginError as error:
            raise RoundInputError(f"{what}: {error}") from None
    if not isinstance(value, Mapping) or not {"card", "onto"} <= set(value):
        raise RoundInputError(f'{what}: a layoff is {{"card": "QC", "onto": ["9C", "10C", "JC"]}}, got {shown(value)}')
    card = parse_card_field(value["card"], f"{what}: card")
    try:
        return Layoff(card, Meld.of(parse_cards_field(value["onto"], f"{what}: onto")))
    except InvalidCardError as error:
        raise RoundInputError(f"{what}: onto {error}") from None


def parse_card_field(value: object, what: str) -> Card:
    """One card given as its text (``"7D"``, ``"seven of diamonds"``).

    :raises RoundInputError: naming ``what`` and the problem.
    """
    if not isinstance(value, str):
        raise RoundInputError(f'{what} must be a card like "7D", got {shown(value)}')
    try:
        return Card.parse(value)
    except InvalidCardError as error:
        raise RoundInputError(f"{what}: {error}") from None


def parse_cards_field(value: object, what: str) -> tuple[Card, ...]:
    """Cards given as a list of card texts or as one string, each card once.

    >>> parse_cards_field(["ace of spades", "2S"], "Ann's hand")
    (Card.parse('AS'), Card.parse('2S'))

    :raises RoundInputError: naming ``what`` and the problem.
    """
    if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(item, str) for item in value))):
        raise RoundInputError(f'{what} must be a list of cards or a string like "QH 10S 3D", got {shown(value)}')
    try:
        return tuple(parse_cards(value, where=what))
    except (DuplicateCardError, TooManyCardsError) as error:  # their messages name ``what`` already
        raise RoundInputError(str(error)) from None
    except InvalidCardError as error:
        raise RoundInputError(f"{what}: {error}") from None


@dataclasses.dataclass(frozen=True)
class MatchRound:
    """One round of the match: its dealer, what was entered, its result (None for a draw), the totals after it."""

    number: int
    dealer: str
    entered: RoundInput = dataclasses.field(repr=False)
    result: RoundResult | None
    totals_after: dict[str, int]

    @property
    def draw(self) -> bool:
        return isinstance(self.entered, Draw)

    @property
    def points(self) -> dict[str, int]:
        """Points each player won this round (all 0 for a draw)."""
        return dict(self.result.points) if self.result else dict.fromkeys(self.totals_after, 0)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``number``, ``dealer``, ``draw``, ``input`` (what was entered, enough to score it again),
        ``result`` (``RoundResult.to_dict()``, null for a draw), ``points`` and ``totals_after`` by player."""
        return {
            "number": self.number,
            "dealer": self.dealer,
            "draw": self.draw,
            "input": self.entered.to_dict(),
            "result": None if self.result is None else self.result.to_dict(),
            "points": self.points,
            "totals_after": dict(self.totals_after),
        }


class Match:
    """Players, rules and rounds; the totals, the next dealer and the winner follow from the rounds.

    ``players`` are in seating order. The first dealer is given or drawn with ``rng``;
    then the winner of each round deals, and a draw keeps the dealer.

    :raises InvalidPlayersError: for fewer than 2 or repeated players, or an unknown dealer.
    :raises InvalidHandError: for more players than the rules allow.
    """

    def __init__(
        self,
        players: Sequence[str],
        rules: Rules | None = None,
        dealer: str | None = None,
        rng: random.Random | None = None,
    ) -> None:
        names = tuple(players) if isinstance(players, Iterable) and not isinstance(players, str) else ()
        if len(names) < 2 or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
            raise InvalidPlayersError(f"a match needs 2 or more distinct player names, not {shown(players)}")
        self.rules = rules if rules is not None else Rules()
        self.rules.hand_size(len(names))  # refuses a player count the rules do not allow
        if dealer is not None and dealer not in names:
            raise InvalidPlayersError(f"the dealer {shown(dealer)} is not one of the players: {', '.join(names)}")
        self.players: tuple[str, ...] = names
        self.first_dealer: str = dealer if dealer is not None else (rng or random.Random()).choice(names)
        self.rounds: list[MatchRound] = []
        self._winner: str | None = None
        self._peaks: tuple[list[MatchRound], list[list[int]]] | None = None  # _peaks_after's, for these rounds

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

    def record(self, entered: RoundInput) -> MatchRound:
        """Score the next round and add it; only this round is scored, the others stand.

        :raises MatchError: once the match is won, or holds ``MAX_ROUNDS``.
        :raises InvalidHandError: for hands that are not the match's players', or bad hands.
        :raises IllegalKnockError: for a knock over the limit.
        :raises IllegalLayoffError: for layoffs the table does not allow.
        """
        if len(self.rounds) >= MAX_ROUNDS and self._winner is None:
            raise MatchError(f"a match holds at most {MAX_ROUNDS} rounds, and this one has them: start a new match")
        self._score_rounds([*self.inputs(), entered], keep=len(self.rounds))
        return self.rounds[-1]

    def record_round(
        self,
        upcard: Card,
        hands: Mapping[str, Sequence[Card]],
        knocker: str,
        knocker_melds: Sequence[Meld] | None = None,
        *,
        discard: Card | None = None,
        layoffs: Mapping[str, Sequence[Layoff]] | None = None,
    ) -> MatchRound:
        """Score a round ended by a knock or gin and add it (``record`` of a ``Knock``), as laid where given."""
        return self.record(Knock.of(upcard, hands, knocker, knocker_melds, discard=discard, layoffs=layoffs))

    def record_draw(self) -> MatchRound:
        """Add a void round (2 cards left in the stock, nobody knocked); the same dealer deals again.

        :raises MatchError: once the match is won.
        """
        return self.record(Draw())

    def undo_last(self) -> MatchRound:
        """Remove the last round and return it.

        :raises MatchError: when no round was played.
        """
        if not self.rounds:
            raise MatchError("no round to undo: the match has no rounds yet")
        last = self.rounds[-1]
        self._score_rounds(self.inputs()[:-1], keep=len(self.rounds) - 1)
        return last

    def edit(self, index: int, entered: RoundInput) -> MatchRound:
        """Replace round ``index`` (0-based, ``rounds[index]``); it and the rounds after it are scored again.

        :raises MatchError: for no such round, or an edit that would end the match before later rounds.
        """
        if not 0 <= index < len(self.rounds):
            raise MatchError(f"no round {index} to edit: rounds are numbered 0 to {len(self.rounds) - 1} here")
        inputs = self.inputs()
        inputs[index] = entered
        self._score_rounds(inputs, keep=index)
        return self.rounds[index]

    def check_edit(self, index: int, entered: RoundInput, points: Mapping[str, int] | None = None) -> int:
        """Raise what ``edit(index, entered)`` would raise, the match unchanged: whether a version of a round can be
        put back, asked of each of a match's earlier versions. Without a rounds limit a match ends only where a
        total reaches the target, so where no player's highest total after the edited round (before the last),
        moved by the edit's points, reaches it, nothing is scored but the entry (not even it, where the caller
        gives what it scores, ``points``); else the edit is tried on a copy. Returns how many rounds that trial
        added up again (0 where the totals decided).

        :raises MatchError: for no such round, or an edit that would end the match before later rounds.
        :raises InvalidHandError: or another scoring error, for an entry that does not score.
        """
        if not 0 <= index < len(self.rounds):
            raise MatchError(f"no round {index} to edit: rounds are numbered 0 to {len(self.rounds) - 1} here")
        if points is None:
            _, result = self._scored(entered)
            points = result.points if result is not None else {}
        if self.rules.rounds_limit is None:
            peaks = self._peaks_after()[index]
            was, now = self.rounds[index].points, points
            moved = [peak + now.get(name, 0) - was[name] for peak, name in zip(peaks, self.players, strict=True)]
            if not any(self.rules.wins_match(total) for total in moved):
                return 0
        self.copy().edit(index, entered)
        return len(self.rounds) - index

    def _peaks_after(self) -> list[list[int]]:
        """Per round, each player's highest total over the rounds from it to the one before the last (a very low
        number for the last round, which no round follows), made once per list of rounds."""
        if self._peaks is not None and self._peaks[0] is self.rounds:
            return self._peaks[1]
        lowest = [-(10**18)] * len(self.players)
        peaks: list[list[int]] = [lowest] * len(self.rounds)
        running = lowest
        for index in range(len(self.rounds) - 2, -1, -1):
            totals = self.rounds[index].totals_after
            running = [max(high, totals[name]) for high, name in zip(running, self.players, strict=True)]
            peaks[index] = running
        self._peaks = (self.rounds, peaks)
        return peaks

    def replay(self, inputs: Sequence[RoundInput]) -> None:
        """Replace every round with these, each scored once: dealers, totals and the winner follow.

        The match is unchanged on error.

        :raises MatchError: when a round comes after the match was won.
        :raises InvalidHandError: for hands that are not the match's players', or bad hands.
        :raises IllegalKnockError: for a knock over the limit.
        """
        self._score_rounds(inputs, keep=0)

    def inputs(self) -> list[RoundInput]:
        """What was entered for each round, in order."""
        return [round_.entered for round_ in self.rounds]

    def copy(self) -> Match:
        """A match with the same players, rules and rounds, changed independently of this one."""
        twin = Match.__new__(Match)
        twin.__dict__.update(self.__dict__)
        twin.rounds = list(self.rounds)
        return twin

    def renamed(self, old: str, new: str) -> Match:
        """This match with player ``old`` called ``new`` (in the players, the first dealer and every round), its
        rounds scored again: the same scores under the new name.

        :raises InvalidPlayersError: when ``old`` is not a player, or ``new`` is another player's name.
        """
        if old not in self.players:
            raise InvalidPlayersError(f"{shown(old)} is not one of the players: {', '.join(self.players)}")
        players = [new if name == old else name for name in self.players]
        dealer = new if self.first_dealer == old else self.first_dealer
        twin = Match(players, self.rules, dealer=dealer)
        twin.replay([renamed(entered, old, new) for entered in self.inputs()])
        return twin

    def refuse_strangers(self, names: Iterable[str]) -> None:
        """Refuse hands named for anyone but this match's players, each name quoted (``shown``) as sent.

        :raises InvalidHandError: naming those who are not in this match.
        """
        unknown = [shown(name) for name in names if name not in self.players]
        if unknown:
            raise InvalidHandError(
                f"hands name {', '.join(unknown)}, who {'is' if len(unknown) == 1 else 'are'} not in this match"
            )

    def seated(self, entered: Knock) -> Knock:
        """The knock with the hands of exactly this match's players, in seating order.

        :raises InvalidHandError: naming the unknown knocker, or the players missing or unknown.
        """
        if entered.knocker not in self.players:
            raise InvalidHandError(f"knocker must be one of {', '.join(self.players)}; got {shown(entered.knocker)}")
        hands = entered.hands_by_name
        self.refuse_strangers(hands)
        missing = [name for name in self.players if name not in hands]
        if missing:
            raise InvalidHandError(f"hands are missing for {', '.join(missing)}")
        return dataclasses.replace(entered, hands=tuple((name, hands[name]) for name in self.players))

    # --- JSON

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the whole match, with its own copy of the rules.

        Keys: ``players``, ``rules``, ``goal`` (``Rules.goal``), ``rules_title`` and ``terms`` (``Rules.title``,
        ``Rules.terms``: the rules in words), ``hand_size`` (cards dealt to each: 10, or 7 for three
        or four players), ``first_dealer``, ``dealer`` (next), ``rounds``
        (``MatchRound.to_dict()`` each), ``rounds_scored`` (draws are void: they count towards no rounds limit),
        ``agreed_rounds_played`` (the rules' agreed number of rounds is scored: the match is over, or a tie plays on),
        ``totals``, ``winner``, ``finished``, ``final_bonuses`` and ``final_totals`` (with the bonuses; equal to
        ``totals`` before the end).
        """
        return {
            "players": list(self.players),
            "rules": self.rules.to_dict(),
            "goal": self.rules.goal(),
            "rules_title": self.rules.title,
            "terms": list(self.rules.terms()),
            "hand_size": self.rules.hand_size(len(self.players)),
            "first_dealer": self.first_dealer,
            "dealer": self.dealer,
            "rounds": [round_.to_dict() for round_ in self.rounds],
            "rounds_scored": _scored(self.rounds),
            "agreed_rounds_played": self._agreed_rounds_played(self.rounds),
            "totals": self.totals,
            "winner": self._winner,
            "finished": self.finished,
            "final_bonuses": self.final_bonuses(),
            "final_totals": self.final_totals,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Match:
        """A match back from ``to_dict``: its rounds are scored again from what was entered.

        :raises MatchError: (a ``ValueError``) naming what is missing or wrong; the errors of ``Match``, ``Rules`` and
            the rounds' scoring for players, rules or rounds that do not hold.
        """
        if not isinstance(data, Mapping):
            raise MatchError(f"not a match: a match is an object with players, rules and rounds, not {shown(data)}")
        try:
            players, rules_data, first_dealer, rounds = (
                data["players"],
                data["rules"],
                data["first_dealer"],
                data["rounds"],
            )
            inputs = [parse_round_input(round_["input"]) for round_ in rounds]
        except (KeyError, TypeError) as error:
            raise MatchError(f"not a match: missing or malformed {error}") from None
        match = cls(players, Rules.from_dict(rules_data), dealer=first_dealer)
        match.replay(inputs)
        return match

    # --- internals

    def _next_dealer(self, rounds: Sequence[MatchRound]) -> str:
        if not rounds:
            return self.first_dealer
        last = rounds[-1]
        return last.dealer if last.result is None else last.result.winner

    def _agreed_rounds_played(self, rounds: Sequence[MatchRound]) -> bool:
        """Whether the rules' agreed number of rounds (if any) is scored by these rounds."""
        limit = self.rules.rounds_limit
        return limit is not None and _scored(rounds) >= limit

    def _ended_by(self, totals: Mapping[str, int], rounds: Sequence[MatchRound]) -> str | None:
        """The match winner after these rounds and totals, if the match is over."""
        reached = [name for name in self.players if self.rules.wins_match(totals[name])]
        if not reached and not self._agreed_rounds_played(rounds):
            return None
        if self.rules.scoring == "standard" and len(reached) == 1:
            return reached[0]
        best = max(totals.values())
        leaders = [name for name in self.players if totals[name] == best]
        return leaders[0] if len(leaders) == 1 else None  # a tie at the top plays on

    def _score_rounds(self, inputs: Sequence[RoundInput], keep: int) -> None:
        """Keep the first ``keep`` rounds as scored (they are ``inputs[:keep]``) and score the rest. A round whose
        entry is the one it holds already (``inputs`` taken from ``inputs()``) keeps its result: a round's score is
        its own deal's, and only totals, dealers and the winner follow from the rounds before it, so an edit of an
        early round of a long match scores one deal, not every one after it.

        The match is unchanged on error.
        """
        scored = self.rounds
        rounds = scored[:keep]
        totals = dict(rounds[-1].totals_after) if rounds else dict.fromkeys(self.players, 0)
        winner = self._ended_by(totals, rounds) if rounds else None
        for number, given in enumerate(inputs[keep:], start=keep + 1):
            if winner is not None:
                raise MatchError(
                    f"the match was won by {winner} in round {number - 1}; no round {number} can follow "
                    "(undo rounds or start a new match)"
                )
            if number <= len(scored) and given is scored[number - 1].entered:
                entered, result = scored[number - 1].entered, scored[number - 1].result
            else:
                entered, result = self._scored(given)
            if result is not None:
                for name, points in result.points.items():
                    totals[name] += points
            rounds.append(MatchRound(number, self._next_dealer(rounds), entered, result, dict(totals)))
            winner = self._ended_by(totals, rounds)
        self.rounds, self._winner = rounds, winner

    def _scored(self, given: RoundInput) -> tuple[RoundInput, RoundResult | None]:
        """A round's entry as the match keeps it (a knock's hands seated), and its result (None for a draw)."""
        if isinstance(given, Draw):
            return given, None
        entered = self.seated(given)
        try:
            return entered, entered.score(self.rules)
        except InvalidCardError as error:
            raise InvalidHandError(str(error)) from None

    def __repr__(self) -> str:
        return f"<Match {' v '.join(self.players)}: {self.totals}, {len(self.rounds)} rounds>"


def _scored(rounds: Sequence[MatchRound]) -> int:
    """The rounds that were scored: a draw is void and dealt again, so it counts towards no agreed number of rounds."""
    return sum(round_.result is not None for round_ in rounds)
