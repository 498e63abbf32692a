"""Layoffs: the opponent's melds and layoffs, chosen together, after a knock.

Unless the knocker went gin, the opponent may add deadwood to the knocker's melds:
the 4th card of a set, or cards extending a run at either end, step by step (8S then
9S onto 5S 6S 7S). Fixing the opponent's own melds first and laying off afterwards is
wrong: breaking a potential meld to lay off can leave less deadwood. So every legal
choice of laid-off cards is tried, each with the exact best arrangement of the rest.

>>> knocker = [Meld.parse("8C 9C 10C JC"), Meld.parse("9H 10H JH")]
>>> result = resolve_knock(knocker, parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D"))
>>> [str(meld) for meld in result.melds], [str(layoff.card) for layoff in result.layoffs], result.deadwood_points
(['10S JS QS'], ['QC', 'QH'], 23)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from scorer.cards import Card, InvalidCardError, ensure_distinct, format_cards, parse_cards
from scorer.deadwood import Arrangement, arrangement_key, best_arrangement_of_mask, deadwood_points
from scorer.errors import OkginError
from scorer.melds import MELD_BY_MASK, Meld, cards_mask, format_melds, mask_cards, meld_from_mask


class IllegalLayoffError(OkginError):
    """A layoff the table does not allow, or one written so it cannot be read."""


@dataclasses.dataclass(frozen=True)
class Layoff:
    """One card added to one of the knocker's melds; ``onto`` is that meld as it lay before this card."""

    card: Card
    onto: Meld

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``{"card": "QC", "onto": ["9C", "10C", "JC"]}``."""
        return {"card": str(self.card), "onto": self.onto.to_list()}

    @classmethod
    def parse(cls, text: str) -> Layoff:
        """One layoff written as ``str`` writes it: ``"QC onto 9C 10C JC"``.

        >>> Layoff.parse("qc onto 9C 10C JC")
        Layoff.parse('QC onto 9C 10C JC')

        :raises IllegalLayoffError: when the text is not one card onto a meld.
        """
        layoffs = parse_layoffs(text)
        if len(layoffs) != 1:
            raise IllegalLayoffError(f"{text!r} is not one layoff: write e.g. 'QC onto 9C 10C JC'")
        return layoffs[0]

    def __str__(self) -> str:
        return f"{self.card} onto {self.onto}"

    def __repr__(self) -> str:
        return f"Layoff.parse({str(self)!r})"


def parse_layoffs(text: str) -> tuple[Layoff, ...]:
    """One player's layoffs, in the order laid: ``"10S 9S onto JS QS KS, 4D onto 4C 4H 4S"``.

    Parts are split by commas; each is the cards laid (in order) "onto" a meld on the
    table, written as the knocker laid it or as it lay then. "none" or "" is no layoff.

    >>> [str(layoff) for layoff in parse_layoffs("10S 9S onto JS QS KS, 4D onto 4C 4H 4S")]
    ['10S onto JS QS KS', '9S onto JS QS KS', '4D onto 4C 4H 4S']

    :raises IllegalLayoffError: for a part without "onto", an unknown card or a target that is no meld.
    """
    if text.strip().lower() in ("", "none"):
        return ()
    layoffs: list[Layoff] = []
    for part in text.split(","):
        cards_text, onto, target_text = part.strip().partition(" onto ")
        if not onto or not cards_text.strip() or not target_text.strip():
            raise IllegalLayoffError(
                f"cannot read layoff {part.strip()!r}: write CARDS onto MELD, e.g. '10S onto JS QS KS'"
            )
        try:
            cards, target = parse_cards(cards_text), Meld.parse(target_text)
        except InvalidCardError as error:
            raise IllegalLayoffError(f"layoff {part.strip()!r}: {error}") from None
        layoffs.extend(Layoff(card, target) for card in cards)
    return tuple(layoffs)


def format_layoffs(layoffs: Sequence[Layoff]) -> str:
    """Layoffs as one line, the form ``parse_layoffs`` reads back, or "none"."""
    return ", ".join(str(layoff) for layoff in layoffs) or "none"


@dataclasses.dataclass(frozen=True)
class PlayerResult:
    """What one player shows at the end of a round: own melds, layoffs, and deadwood left."""

    melds: tuple[Meld, ...]
    layoffs: tuple[Layoff, ...]
    deadwood: tuple[Card, ...]
    deadwood_points: int

    @classmethod
    def from_arrangement(cls, arrangement: Arrangement, layoffs: tuple[Layoff, ...] = ()) -> PlayerResult:
        """A player's result from their own arrangement (and any layoffs)."""
        return cls(arrangement.melds, layoffs, arrangement.deadwood, arrangement.points)

    def to_dict(self) -> dict[str, object]:
        """JSON form with keys ``melds``, ``layoffs``, ``deadwood``, ``deadwood_points``."""
        return {
            "melds": [meld.to_list() for meld in self.melds],
            "layoffs": [layoff.to_dict() for layoff in self.layoffs],
            "deadwood": [str(card) for card in self.deadwood],
            "deadwood_points": self.deadwood_points,
        }

    @property
    def cards(self) -> tuple[Card, ...]:
        """Every card this player showed (melds, layoffs, deadwood), sorted."""
        shown = [card for meld in self.melds for card in meld.cards]
        shown += [layoff.card for layoff in self.layoffs] + list(self.deadwood)
        return tuple(sorted(shown))


def _chain(hand: int, suit: int, rank: int, step: int) -> list[int]:
    """Bits of the cards the hand holds from ``rank`` onward in one suit, one rank per step, while held."""
    bits: list[int] = []
    while 1 <= rank <= 13 and hand >> (suit * 13 + rank - 1) & 1:
        bits.append(1 << (suit * 13 + rank - 1))
        rank += step
    return bits


def _layoff_options(meld: Meld, hand: int) -> list[tuple[int, int]]:
    """What one meld may take from the hand: (cards laid below, cards laid above) as masks.

    A set takes its missing 4th card; a run takes a chain at each end, the cards nearest
    the run first (a chain cannot skip a card the opponent keeps).
    """
    if meld.kind == "set":
        if len(meld.cards) == 4:
            return [(0, 0)]
        missing = next(suit for suit in range(4) if all(card.suit_index != suit for card in meld.cards))
        bit = 1 << (missing * 13 + meld.cards[0].rank - 1)
        return [(0, 0), (0, bit)] if hand & bit else [(0, 0)]
    low, high = meld.cards[0], meld.cards[-1]
    below = _chain(hand, low.suit_index, low.rank - 1, -1)
    above = _chain(hand, high.suit_index, high.rank + 1, +1)
    below_masks = [sum(below[:count]) for count in range(len(below) + 1)]
    above_masks = [sum(above[:count]) for count in range(len(above) + 1)]
    return [(down, up) for down in below_masks for up in above_masks]


def _layoff_plans(knocker_melds: Sequence[Meld], hand: int) -> list[tuple[int, tuple[tuple[int, int], ...]]]:
    """Every legal joint choice of layoffs: (all cards laid off, per-meld (below, above))."""
    plans: list[tuple[int, tuple[tuple[int, int], ...]]] = [(0, ())]
    for meld in knocker_melds:
        options = _layoff_options(meld, hand)
        plans = [
            (used | down | up, (*per_meld, (down, up)))
            for used, per_meld in plans
            for down, up in options
            if not used & (down | up)
        ]
    return plans


def _layoff_sequence(knocker_melds: Sequence[Meld], per_meld: tuple[tuple[int, int], ...]) -> tuple[Layoff, ...]:
    """The layoffs in the order laid: per meld, the upper chain outward, then the lower one."""
    layoffs: list[Layoff] = []
    for meld, (down, up) in zip(knocker_melds, per_meld, strict=True):
        current = meld
        for card in (*mask_cards(up), *reversed(mask_cards(down))):
            layoffs.append(Layoff(card, current))
            current = meld_from_mask(current.mask | 1 << card.class_id)
    return tuple(layoffs)


def _onto_sets(knocker_melds: Sequence[Meld], per_meld: tuple[tuple[int, int], ...]) -> int:
    """How many cards a plan lays onto sets."""
    return sum(bool(down | up) for meld, (down, up) in zip(knocker_melds, per_meld, strict=True) if meld.kind == "set")


def _laid_mask(knocker_melds: Sequence[Meld]) -> int:
    """The cards of the knocker's melds as a mask, refusing melds that share a card."""
    laid = 0
    for meld in knocker_melds:
        if laid & meld.mask:
            raise InvalidCardError(f"the knocker's melds share a card: {', '.join(str(m) for m in knocker_melds)}")
        laid |= meld.mask
    return laid


def _opponent_mask(knocker_melds: Sequence[Meld], opponent_hand: Sequence[Card]) -> int:
    """The opponent's hand as a mask, after checking it shares no card with the table."""
    hand_cards = list(opponent_hand)
    ensure_distinct(hand_cards, where="the opponent's hand")
    hand = cards_mask(hand_cards)
    laid = _laid_mask(knocker_melds)
    if hand & laid:
        shared = [card for card in hand_cards if laid >> card.class_id & 1]
        raise InvalidCardError(f"{format_cards(shared)} in both the knocker's melds and the opponent's hand")
    return hand


def all_best_resolutions(
    knocker_melds: Sequence[Meld], opponent_hand: Sequence[Card], allow_layoffs: bool = True
) -> list[PlayerResult]:
    """Every way the opponent can reach the least deadwood, one per distinct set of layoffs, preferred first.

    The choice matters to nobody in two-player games, but with 3-4 players it decides what
    later players may lay off. The preferred one (``resolve_knock``'s) lays off the fewest
    cards, then onto runs rather than sets, then keeps the preferred arrangement.

    >>> [format_layoffs(r.layoffs) for r in all_best_resolutions([Meld.parse("7S 8S 9S")], parse_cards("10S JS QS"))]
    ['none', '10S onto 7S 8S 9S, JS onto 7S 8S 9S 10S, QS onto 7S 8S 9S 10S JS']

    :raises InvalidCardError: when a card is repeated or held by both players.
    """
    hand = _opponent_mask(knocker_melds, opponent_hand)
    plans = _layoff_plans(knocker_melds, hand) if allow_layoffs else [(0, ((0, 0),) * len(knocker_melds))]
    scored = [(deadwood_points(hand & ~used), used, per_meld) for used, per_meld in plans]
    least = min(points for points, _, _ in scored)
    tied = [(used, per_meld) for points, used, per_meld in scored if points == least]

    def preference(plan: tuple[int, tuple[tuple[int, int], ...]]) -> tuple[object, ...]:
        used, per_meld = plan
        kept = arrangement_key(best_arrangement_of_mask(hand & ~used))
        return used.bit_count(), _onto_sets(knocker_melds, per_meld), kept, used

    if len(tied) > 1:
        tied.sort(key=preference)  # stable: equal keys keep the plans' order
    return [
        PlayerResult.from_arrangement(
            best_arrangement_of_mask(hand & ~used), _layoff_sequence(knocker_melds, per_meld) if used else ()
        )
        for used, per_meld in tied
    ]


def resolve_knock(
    knocker_melds: Sequence[Meld], opponent_hand: Sequence[Card], allow_layoffs: bool = True
) -> PlayerResult:
    """The opponent's melds and layoffs that leave the least deadwood, chosen jointly.

    Ties go to fewer laid-off cards, then to runs rather than sets (a card extending a run
    lets later players chain onto it; a set's 4th card helps nobody), then the preferred
    arrangement (``arrangement_key``); ``all_best_resolutions`` lists every tied choice.
    ``allow_layoffs=False`` is for a gin: the opponent only spreads their own melds.

    >>> resolve_knock([Meld.parse("5S 6S 7S")], parse_cards("8S 9S 10S KD"), allow_layoffs=False).deadwood_points
    10

    :raises InvalidCardError: when a card is repeated or held by both players.
    """
    return all_best_resolutions(knocker_melds, opponent_hand, allow_layoffs)[0]


def extended_melds(table: Sequence[Meld], layoffs: Sequence[Layoff]) -> tuple[Meld, ...]:
    """The melds on the table after these layoffs (each ``onto`` a meld as it lay then) were added.

    >>> extended_melds([Meld.parse("7S 8S 9S")], parse_layoffs("10S onto 7S 8S 9S, JS onto 7S 8S 9S 10S"))
    (Meld.parse('7S 8S 9S 10S JS'),)
    """
    current = list(table)
    for layoff in layoffs:
        index = current.index(layoff.onto)
        current[index] = meld_from_mask(current[index].mask | 1 << layoff.card.class_id)
    return tuple(current)


def lay_off_as_given(
    table: Sequence[Meld],
    hand: Sequence[Card],
    layoffs: Sequence[Layoff],
    allow_layoffs: bool = True,
    player: str = "the opponent",
) -> PlayerResult:
    """A player's result when they laid off exactly these cards; their other cards are melded best.

    Each layoff names its meld as the knocker laid it or as it lay at that moment (any
    meld whose cards all lie in one meld on the table); a card that fits only after
    another of the player's layoffs (9S before 10S onto JS QS KS) waits for it. The
    result's layoffs say where each card went, ``onto`` being the meld as it lay then.

    >>> table = [Meld.parse("JS QS KS")]
    >>> result = lay_off_as_given(table, parse_cards("9S 10S 5C 5D"), parse_layoffs("9S 10S onto JS QS KS"))
    >>> format_layoffs(result.layoffs), result.deadwood_points
    ('10S onto JS QS KS, 9S onto 10S JS QS KS', 10)

    :raises IllegalLayoffError: for a card not in the hand, laid twice, onto a meld not on the
        table, one that extends no meld, or any layoff onto a gin hand.
    """
    held = cards_mask(hand)
    if layoffs and not allow_layoffs:
        raise IllegalLayoffError(f"{player} lays off {format_layoffs(layoffs)}, but nobody lays off onto a gin hand")
    used = 0
    for layoff in layoffs:
        bit = 1 << layoff.card.class_id
        if not held & bit:
            raise IllegalLayoffError(f"{player} lays off {layoff.card}, which is not in {player}'s hand")
        if used & bit:
            raise IllegalLayoffError(f"{player} lays off {layoff.card} twice")
        used |= bit
    current, waiting, laid = list(table), list(layoffs), list[Layoff]()
    while waiting:
        for layoff in waiting:
            index = next((i for i, meld in enumerate(current) if layoff.onto.mask & ~meld.mask == 0), None)
            grown = None if index is None else MELD_BY_MASK.get(current[index].mask | 1 << layoff.card.class_id)
            if index is not None and grown is not None:
                laid.append(Layoff(layoff.card, current[index]))
                current[index] = grown
                waiting.remove(layoff)
                break
        else:  # no waiting card fits any more: report the first
            layoff = waiting[0]
            meld = next((meld for meld in current if layoff.onto.mask & ~meld.mask == 0), None)
            if meld is None:
                raise IllegalLayoffError(
                    f"{player} lays {layoff.card} onto {layoff.onto}, which is not on the table "
                    f"(the knocker's melds lie as {format_melds(current)})"
                )
            raise IllegalLayoffError(
                f"{player} cannot lay {layoff.card} onto {meld}: a layoff is the 4th card of a set "
                "or the next card at either end of a run"
            )
    return PlayerResult.from_arrangement(best_arrangement_of_mask(held & ~used), tuple(laid))
