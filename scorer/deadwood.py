"""Best melds: the arrangement of a hand that leaves the least deadwood.

The solver is exact and needs no search over meld families. Runs only ever compete
with sets for cards: without sets, every block of 3 or more consecutive cards of a
suit is melded whole and nothing else can be. So the solver tries each choice of sets
(per rank holding 3 or 4 cards: no set, the 4-card set, or one of the 3-card sets; at
most three such ranks in 11 cards) and melds the runs left by bit arithmetic.

>>> arrangement = best_arrangement(parse_cards("4S 4D 4H 5S 5C 5D 2C 3C 4C KH"))
>>> [str(meld) for meld in arrangement.melds], arrangement.points
(['2C 3C 4C', '5C 5D 5S', '4D 4H 4S'], 10)
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable

from scorer.cards import Card, InvalidCardError, ensure_distinct, format_cards, parse_cards  # noqa: F401 (doctests)
from scorer.melds import MELD_BY_MASK, SUIT_BITS, Meld, cards_mask, mask_cards

# Bits where a run of three may start: ranks ace..jack of each suit (a run never wraps a suit).
_RUN_STARTS = sum(0x7FF << (13 * suit) for suit in range(4))


def _suit_points() -> list[int]:
    """Deadwood points of every 13-bit suit mask: ace 1, pips face value, faces 10."""
    table = [0] * (1 << 13)
    for bits in range(1, 1 << 13):
        low = bits & -bits
        table[bits] = table[bits ^ low] + min(low.bit_length(), 10)
    return table


_SUIT_POINTS = _suit_points()


def _set_options(rank: int, suits_held: int) -> tuple[int, ...]:
    """Masks of the sets a rank may contribute: none, the four, or each three held."""
    held = [suit for suit in range(4) if suits_held >> suit & 1]
    options = [0]
    for size in (4, 3):
        for suits in itertools.combinations(held, size):
            options.append(sum(1 << (suit * 13 + rank) for suit in suits))
    return tuple(options)


_SET_OPTIONS = [[_set_options(rank, held) for held in range(16)] for rank in range(13)]


@dataclasses.dataclass(frozen=True)
class Arrangement:
    """A hand split into melds and deadwood; ``points`` is the deadwood's value."""

    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``{"melds": [["AS", "2S", "3S"]], "deadwood": ["KD"], "deadwood_points": 10}``."""
        return {
            "melds": [meld.to_list() for meld in self.melds],
            "deadwood": [str(card) for card in self.deadwood],
            "deadwood_points": self.points,
        }

    def __str__(self) -> str:
        melds = " | ".join(str(meld) for meld in self.melds) or "no melds"
        return f"{melds}; deadwood {format_cards(self.deadwood) or 'none'} = {self.points}"


def mask_points(mask: int) -> int:
    """Deadwood value of all the cards in a hand mask."""
    return (
        _SUIT_POINTS[mask & SUIT_BITS]
        + _SUIT_POINTS[mask >> 13 & SUIT_BITS]
        + _SUIT_POINTS[mask >> 26 & SUIT_BITS]
        + _SUIT_POINTS[mask >> 39]
    )


def run_cards(mask: int) -> int:
    """The cards of a mask lying in some block of 3+ consecutive ranks of one suit."""
    starts = mask & mask >> 1 & mask >> 2 & _RUN_STARTS
    return starts | starts << 1 | starts << 2


def _triples(mask: int) -> int:
    """Rank bits (0 = ace) held in 3 or 4 suits: the ranks that can form a set."""
    clubs, diamonds, hearts, spades = mask & SUIT_BITS, mask >> 13 & SUIT_BITS, mask >> 26 & SUIT_BITS, mask >> 39
    return (clubs & diamonds & (hearts | spades)) | (hearts & spades & (clubs | diamonds))


def _set_choices(mask: int) -> list[int]:
    """Every choice of sets for a hand, each as the mask of the cards put into sets."""
    triples = _triples(mask)
    choices = [0]
    while triples:
        low = triples & -triples
        triples ^= low
        rank = low.bit_length() - 1
        held = (mask >> rank & 1) | (mask >> (13 + rank) & 1) << 1 | (mask >> (26 + rank) & 1) << 2
        held |= (mask >> (39 + rank) & 1) << 3
        choices = [chosen | option for chosen in choices for option in _SET_OPTIONS[rank][held]]
    return choices


def deadwood_points(mask: int) -> int:
    """The least deadwood of a hand mask: the solver's core, with no objects built.

    >>> deadwood_points(cards_mask(parse_cards("AS 2S 3S 4S KD KH")))
    20
    """
    if not _triples(mask):  # no set possible: runs alone decide
        return mask_points(mask & ~run_cards(mask))
    least = 1 << 10
    for in_sets in _set_choices(mask):
        rest = mask & ~in_sets
        points = mask_points(rest & ~run_cards(rest))
        if points < least:
            least = points
    return least


def _run_blocks(runs: int) -> list[int]:
    """Split melded run cards into maximal runs (a run is never split in two), lowest first."""
    blocks = []
    while runs:
        low = runs & -runs
        # Adding the lowest bit clears the block of consecutive bits above it; a block ends with its suit.
        block = ((runs + low) ^ runs) & runs & _SUIT_OF_BIT[low.bit_length() - 1]
        blocks.append(block)
        runs ^= block
    return blocks


_SUIT_OF_BIT = [SUIT_BITS << (13 * (index // 13)) for index in range(52)]


def _set_blocks(in_sets: int) -> list[int]:
    """Split the cards chosen for sets into one set per rank."""
    ranks = (in_sets | in_sets >> 13 | in_sets >> 26 | in_sets >> 39) & SUIT_BITS
    blocks = []
    while ranks:
        low = ranks & -ranks
        ranks ^= low
        blocks.append(in_sets & low * 0x8004002001)  # that rank in all four suits
    return blocks


def _laid_out(mask: int, in_sets: int, in_runs: int) -> Arrangement:
    """The arrangement of a hand with these cards in sets, these in runs, and the rest deadwood."""
    dead = mask & ~in_sets & ~in_runs
    if not in_sets and not in_runs:
        return Arrangement((), mask_cards(dead), mask_points(dead))
    blocks = _set_blocks(in_sets) + _run_blocks(in_runs) if in_sets else _run_blocks(in_runs)
    blocks.sort(key=lambda block: block & -block)  # melds are disjoint: order by lowest card
    return Arrangement(tuple(MELD_BY_MASK[block] for block in blocks), mask_cards(dead), mask_points(dead))


def _arrangement(mask: int, in_sets: int) -> Arrangement:
    """The arrangement of a hand with these cards in sets and every block of 3+ left in runs."""
    return _laid_out(mask, in_sets, run_cards(mask & ~in_sets))


def _meld_key(meld: Meld) -> tuple[int, ...]:
    return tuple(card.suit_index * 13 + card.rank - 1 for card in meld.cards)


def arrangement_key(arrangement: Arrangement) -> tuple[int, tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """Order of preference among arrangements: least deadwood first, then a fixed total order."""
    return (
        arrangement.points,
        tuple(card.class_id for card in arrangement.deadwood),
        tuple(_meld_key(meld) for meld in arrangement.melds),
    )


def _hand_mask(cards: Iterable[Card], limit: int = 11) -> int:
    """The hand as a mask, refusing a repeated card or too many cards."""
    hand = cards if isinstance(cards, list | tuple) else tuple(cards)
    mask = 0
    for card in hand:
        mask |= 1 << (card.suit_index * 13 + card.rank - 1)
    if mask.bit_count() != len(hand):
        ensure_distinct(hand)  # raises, naming the repeated card
    if len(hand) > limit:
        raise InvalidCardError(f"a hand holds at most {limit} cards here, not {len(hand)}: {format_cards(hand)}")
    return mask


def _least_set_choices(mask: int) -> list[int]:
    """The choices of sets (as masks) that leave the least deadwood."""
    least, best = 1 << 10, []
    for in_sets in _set_choices(mask):
        rest = mask & ~in_sets
        points = mask_points(rest & ~run_cards(rest))
        if points < least:
            least, best = points, [in_sets]
        elif points == least:
            best.append(in_sets)
    return best


def all_best_arrangements_of_mask(mask: int) -> list[Arrangement]:
    """Every least-deadwood arrangement of a hand mask, best ``arrangement_key`` first."""
    return sorted((_arrangement(mask, in_sets) for in_sets in _least_set_choices(mask)), key=arrangement_key)


def best_arrangement_of_mask(mask: int) -> Arrangement:
    """The preferred least-deadwood arrangement of a hand mask."""
    if not _triples(mask):  # no set possible: runs alone decide
        return _arrangement(mask, 0)
    choices = _least_set_choices(mask)
    if len(choices) == 1:
        return _arrangement(mask, choices[0])
    return min((_arrangement(mask, in_sets) for in_sets in choices), key=arrangement_key)


def best_arrangement(cards: Iterable[Card]) -> Arrangement:
    """The arrangement with the least deadwood; ties go to the first of ``all_best_arrangements``.

    >>> print(best_arrangement(parse_cards("AS 2S 3S 4S KD")))
    AS 2S 3S 4S; deadwood KD = 10

    :raises InvalidCardError: for a repeated card or more than 11 cards.
    """
    return best_arrangement_of_mask(_hand_mask(cards))


def all_best_arrangements(cards: Iterable[Card]) -> list[Arrangement]:
    """Every arrangement with the least deadwood, in a fixed order (``arrangement_key``).

    Runs are kept whole: AS..6S is one meld, never AS 2S 3S plus 4S 5S 6S, since
    splitting changes neither the deadwood nor what the opponent may lay off.

    >>> [str(a) for a in all_best_arrangements(parse_cards("3C 3D 3H 4C 4D 4H 5C 5D 5H"))]
    ['3C 4C 5C | 3D 4D 5D | 3H 4H 5H; deadwood none = 0', '3C 3D 3H | 4C 4D 4H | 5C 5D 5H; deadwood none = 0']

    :raises InvalidCardError: for a repeated card or more than 11 cards.
    """
    return all_best_arrangements_of_mask(_hand_mask(cards))


def _melds_by_lowest_card() -> list[list[int]]:
    """Every meld's mask, listed under the class id of its lowest card."""
    table: list[list[int]] = [[] for _ in range(52)]
    for mask in MELD_BY_MASK:
        table[(mask & -mask).bit_length() - 1].append(mask)
    return table


_MELDS_BY_LOWEST_CARD = _melds_by_lowest_card()


def legal_arrangements_of_mask(mask: int, max_points: int) -> list[Arrangement]:
    """Every way to lay a hand down leaving at most ``max_points`` of deadwood, best first.

    Unlike ``all_best_arrangements`` this includes arrangements that leave meldable cards
    out (a knocker may lay fewer melds than he could, and score more for it). Runs that
    touch count as one meld: laying 2S-4S and 5S-7S apart changes neither the deadwood nor
    what may be laid off. Sorted by points, then ``arrangement_key``.

    >>> [str(a) for a in legal_arrangements_of_mask(cards_mask(parse_cards("AS 2S 3S 4S")), 4)]
    ['AS 2S 3S 4S; deadwood none = 0', '2S 3S 4S; deadwood AS = 1', 'AS 2S 3S; deadwood 4S = 4']
    """
    found: dict[tuple[int, int], None] = {}

    def extend(rest: int, in_sets: int, in_runs: int, points: int) -> None:
        if not rest:
            found[in_sets, in_runs] = None
            return
        low = rest & -rest
        card = low.bit_length() - 1
        value = min(card % 13 + 1, 10)
        if points + value <= max_points:  # the lowest card undecided stays deadwood ...
            extend(rest ^ low, in_sets, in_runs, points + value)
        for meld in _MELDS_BY_LOWEST_CARD[card]:  # ... or opens a meld of cards still free
            if meld & rest == meld:
                is_set = MELD_BY_MASK[meld].kind == "set"
                extend(rest & ~meld, in_sets | meld * is_set, in_runs | meld * (not is_set), points)

    extend(mask, 0, 0, 0)
    return sorted((_laid_out(mask, in_sets, in_runs) for in_sets, in_runs in found), key=arrangement_key)


def best_discard(cards: Iterable[Card]) -> tuple[Card, Arrangement]:
    """For a hand one card over its size (11 cards; 8 with 3-4 players): the discard leaving the least deadwood,
    and the arrangement left.

    Ties go to the lowest resulting ``arrangement_key``, then the lowest card.

    >>> card, left = best_discard(parse_cards("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S KD"))
    >>> str(card), left.points
    ('KD', 0)

    :raises InvalidCardError: unless the hand has 1 to 11 distinct cards.
    """
    hand = sorted(cards)
    ensure_distinct(hand)
    if not 1 <= len(hand) <= 11:
        raise InvalidCardError(f"a discard is chosen from 1 to 11 cards, not {len(hand)}: {format_cards(hand)}")
    mask = cards_mask(hand)
    least = min(deadwood_points(mask & ~(1 << card.class_id)) for card in hand)
    candidates = [
        (arrangement_key(best_arrangement_of_mask(mask & ~(1 << card.class_id))), card)
        for card in hand
        if deadwood_points(mask & ~(1 << card.class_id)) == least
    ]
    _, card = min(candidates, key=lambda candidate: (candidate[0], candidate[1].class_id))
    return card, best_arrangement_of_mask(mask & ~(1 << card.class_id))
