"""Melds: sets of one rank and runs of one suit, as values and as 52-bit masks.

A hand is also a bitmask: bit ``card.class_id`` (suit * 13 + rank - 1) is set for each
card held, so the 13 bits of a suit are its ranks, ace lowest. The solvers in
``deadwood`` and ``layoffs`` work on these masks; ``Meld`` is what they hand back.

>>> Meld.parse("3S 2S AS")
Meld.parse('AS 2S 3S')
>>> Meld.parse("QH QS QC").kind
'set'
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from collections.abc import Iterable, Iterator
from typing import Literal

from scorer.cards import DECK, Card, InvalidCardError, format_cards, parse_cards

SUIT_BITS = 0x1FFF
"""The 13 rank bits of one suit inside a hand mask."""


class InvalidMeldError(InvalidCardError):
    """Cards that do not form a set or a run."""


@dataclasses.dataclass(frozen=True)
class Meld:
    """A set (3 or 4 cards of one rank) or a run (3+ consecutive cards of one suit, ace low).

    Cards are kept sorted (by suit, then rank), so equal melds compare equal.

    >>> str(Meld.of([Card.parse("5H"), Card.parse("4H"), Card.parse("3H")]))
    '3H 4H 5H'
    """

    kind: Literal["set", "run"]
    cards: tuple[Card, ...]

    def __post_init__(self) -> None:
        ordered = tuple(sorted(self.cards))
        object.__setattr__(self, "cards", ordered)
        if meld_kind(ordered) != self.kind:
            raise InvalidMeldError(f"{format_cards(ordered)} is not a {self.kind}: {_MELD_RULE}")

    @classmethod
    def of(cls, cards: Iterable[Card]) -> Meld:
        """The meld these cards form, whichever kind it is.

        :raises InvalidMeldError: when the cards form neither a set nor a run.
        """
        ordered = tuple(sorted(cards))
        kind = meld_kind(ordered)
        if kind is None:
            raise InvalidMeldError(f"{format_cards(ordered) or 'no cards'} is not a meld: {_MELD_RULE}")
        return cls(kind, ordered)

    @classmethod
    def parse(cls, text: str | Iterable[str]) -> Meld:
        """Parse a meld written as cards, e.g. ``"10C JC QC"``.

        :raises InvalidCardError: for an unknown or repeated card, or cards that are no meld.
        """
        return cls.of(parse_cards(text))

    @functools.cached_property
    def mask(self) -> int:
        """The meld's cards as a hand mask."""
        return cards_mask(self.cards)

    def __str__(self) -> str:
        return format_cards(self.cards)

    def __repr__(self) -> str:
        return f"Meld.parse({str(self)!r})"

    def to_list(self) -> list[str]:
        """JSON form: the card names, sorted."""
        return [str(card) for card in self.cards]


_MELD_RULE = "a set is 3 or 4 cards of one rank, a run 3 or more consecutive cards of one suit, ace low"


def parse_melds(text: str | Iterable[str | Iterable[str]]) -> tuple[Meld, ...]:
    """Melds written as text, split by ``|`` (``"JS QS KS | 4C 4D 4H 4S"``), or as a list of melds.

    The form ``format_melds`` writes; "none" or an empty text is no meld.

    >>> parse_melds("JS QS KS | 4C 4D 4H 4S")
    (Meld.parse('JS QS KS'), Meld.parse('4C 4D 4H 4S'))
    >>> parse_melds([["AS", "2S", "3S"], "7H 7D 7C"])
    (Meld.parse('AS 2S 3S'), Meld.parse('7C 7D 7H'))

    :raises InvalidCardError: for an unknown card; ``InvalidMeldError`` for cards that are no meld (naming them).
    """
    parts: list[str | Iterable[str]] = []
    if isinstance(text, str):
        parts += [] if text.strip().lower() == "none" else [part for part in text.split("|") if part.strip()]
    else:
        parts += text
    return tuple(Meld.parse(part) for part in parts)


def format_melds(melds: Iterable[Meld]) -> str:
    """Melds as one line, the form ``parse_melds`` reads back: ``"JS QS KS | 4C 4D 4H 4S"`` or ``"none"``."""
    return " | ".join(str(meld) for meld in melds) or "none"


def meld_kind(cards: tuple[Card, ...]) -> Literal["set", "run"] | None:
    """Which kind of meld these distinct cards (sorted) form, if any.

    >>> meld_kind(tuple(parse_cards("QC KC AC"))) is None  # ace is low only
    True
    """
    if len(cards) < 3 or len(set(cards)) != len(cards):
        return None
    if len(cards) <= 4 and len({card.rank for card in cards}) == 1:
        return "set"
    if len({card.suit for card in cards}) == 1 and all(b.rank == a.rank + 1 for a, b in itertools.pairwise(cards)):
        return "run"
    return None


def cards_mask(cards: Iterable[Card]) -> int:
    """A hand as a 52-bit mask (bit = class id).

    >>> bin(cards_mask(parse_cards("AC 2C KS")))
    '0b1000000000000000000000000000000000000000000000000011'
    """
    mask = 0
    for card in cards:
        mask |= 1 << (card.suit_index * 13 + card.rank - 1)
    return mask


def _suit_cards(suit: int) -> list[tuple[Card, ...]]:
    """The cards of every 13-bit mask of one suit, lowest rank first."""
    table: list[tuple[Card, ...]] = [()] * (1 << 13)
    for bits in range(1, 1 << 13):
        low = bits & -bits
        table[bits] = (DECK[suit * 13 + low.bit_length() - 1], *table[bits ^ low])
    return table


_SUIT_CARDS = [_suit_cards(suit) for suit in range(4)]  # mask_cards is then four lookups


def mask_cards(mask: int) -> tuple[Card, ...]:
    """The cards of a hand mask, in class-id order."""
    return (
        _SUIT_CARDS[0][mask & SUIT_BITS]
        + _SUIT_CARDS[1][mask >> 13 & SUIT_BITS]
        + _SUIT_CARDS[2][mask >> 26 & SUIT_BITS]
        + _SUIT_CARDS[3][mask >> 39]
    )


def _all_melds() -> Iterator[Meld]:
    for suit_index in range(4):
        for low in range(1, 12):
            for high in range(low + 2, 14):
                yield Meld("run", tuple(Card(suit_index, rank) for rank in range(low, high + 1)))
    for rank in range(1, 14):
        for size in (3, 4):
            for suits in itertools.combinations(range(4), size):
                yield Meld("set", tuple(Card(suit_index, rank) for suit_index in suits))


MELD_BY_MASK: dict[int, Meld] = {meld.mask: meld for meld in _all_melds()}
"""Every possible meld (264 runs, 65 sets) by its mask."""


def meld_from_mask(mask: int) -> Meld:
    """The meld whose cards are exactly this mask.

    :raises InvalidMeldError: when the mask is no meld.
    """
    meld = MELD_BY_MASK.get(mask)
    if meld is None:
        raise InvalidMeldError(f"{format_cards(mask_cards(mask)) or 'no cards'} is not a meld: {_MELD_RULE}")
    return meld
