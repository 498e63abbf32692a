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

from scorer.cards import Card, InvalidCardError, ensure_distinct, format_cards, parse_cards  # noqa: F401 (doctests)
from scorer.deadwood import Arrangement, arrangement_key, best_arrangement_of_mask, deadwood_points
from scorer.melds import Meld, cards_mask, mask_cards, meld_from_mask


@dataclasses.dataclass(frozen=True)
class Layoff:
    """One card added to one of the knocker's melds; ``onto`` is that meld as it lay before this card."""

    card: Card
    onto: Meld

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``{"card": "QC", "onto": ["9C", "10C", "JC"]}``."""
        return {"card": str(self.card), "onto": self.onto.to_list()}

    def __str__(self) -> str:
        return f"{self.card} onto {self.onto}"


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


def resolve_knock(
    knocker_melds: Sequence[Meld], opponent_hand: Sequence[Card], allow_layoffs: bool = True
) -> PlayerResult:
    """The opponent's melds and layoffs that leave the least deadwood, chosen jointly.

    Ties go to fewer laid-off cards, then to runs rather than sets (a card extending a run
    lets later players chain onto it; a set's 4th card helps nobody), then the preferred
    arrangement (``arrangement_key``).
    ``allow_layoffs=False`` is for a gin: the opponent only spreads their own melds.

    >>> resolve_knock([Meld.parse("5S 6S 7S")], parse_cards("8S 9S 10S KD"), allow_layoffs=False).deadwood_points
    10

    :raises InvalidCardError: when a card is repeated or held by both players.
    """
    hand_cards = list(opponent_hand)
    ensure_distinct(hand_cards, where="the opponent's hand")
    hand = cards_mask(hand_cards)
    laid = 0
    for meld in knocker_melds:
        if laid & meld.mask:
            raise InvalidCardError(f"the knocker's melds share a card: {', '.join(str(m) for m in knocker_melds)}")
        laid |= meld.mask
    if hand & laid:
        shared = [card for card in hand_cards if laid >> card.class_id & 1]
        raise InvalidCardError(f"{format_cards(shared)} in both the knocker's melds and the opponent's hand")
    plans = _layoff_plans(knocker_melds, hand) if allow_layoffs else [(0, ((0, 0),) * len(knocker_melds))]
    scored = [(deadwood_points(hand & ~used), used, per_meld) for used, per_meld in plans]
    least = min(points for points, _, _ in scored)
    tied = [(used, per_meld) for points, used, per_meld in scored if points == least]

    def preference(plan: tuple[int, tuple[tuple[int, int], ...]]) -> tuple[object, ...]:
        used, per_meld = plan
        kept = arrangement_key(best_arrangement_of_mask(hand & ~used))
        return used.bit_count(), _onto_sets(knocker_melds, per_meld), kept, used

    used, per_meld = min(tied, key=preference) if len(tied) > 1 else tied[0]
    layoffs = _layoff_sequence(knocker_melds, per_meld) if used else ()
    return PlayerResult.from_arrangement(best_arrangement_of_mask(hand & ~used), layoffs)
