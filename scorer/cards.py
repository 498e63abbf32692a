"""Playing cards: one immutable value with one text form.

>>> Card.parse("10h")
Card.parse('10H')
>>> str(Card.parse("ace of spades"))
'AS'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from scorer.errors import OkginError, shown

RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("C", "D", "H", "S")

_RANK_WORDS = {
    "ace": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "jack": 11, "queen": 12, "king": 13,
}  # fmt: skip
_SUIT_WORDS = {
    "club": "C", "clubs": "C", "diamond": "D", "diamonds": "D",
    "heart": "H", "hearts": "H", "spade": "S", "spades": "S",
}  # fmt: skip
_SUIT_SYMBOLS = {
    "♣": "C", "♧": "C", "♦": "D", "♢": "D", "♥": "H", "♡": "H", "♠": "S", "♤": "S",
}  # fmt: skip
_PRESENTATION = {0xFE0E: None, 0xFE0F: None}
"""Variation selectors: phone keyboards write a suit symbol as "♥" + U+FE0F (emoji presentation); still that suit."""
_RANK_ALIASES = {"T": 10, "1": 1, "A": 1, "J": 11, "Q": 12, "K": 13}
_SHORT = re.compile(r"^(10|[2-9TtJjQqKkAa1])\s*([CDHScdhs♣♧♦♢♥♡♠♤])$")
_LONG = re.compile(r"^(\w+)\s+of\s+(\w+)$", re.IGNORECASE)
_TOKEN = re.compile(r"\w+\s+of\s+\w+|[^\s,;]+", re.IGNORECASE)
"""One card in a line of text: a word form ("ace of spades", "10 of hearts") or a run of non-separators."""

MAX_CARDS_TEXT = 2000
"""The longest text read as a list of cards: the 52 cards in words ("ace of clubs, two of clubs, ...") take 843
characters, and a longer text is refused before it is read (a client could send megabytes of it)."""

ACCEPTED_FORMS = "rank A 2-10 J Q K (or T for 10) then suit C D H S or ♣ ♦ ♥ ♠, e.g. AS, 10h, Th, Q♥, 'ace of spades'"


class InvalidCardError(OkginError):
    """A token that is not a playing card, or a hand that cannot exist."""


class DuplicateCardError(InvalidCardError):
    """The same card twice where one deck allows it once."""


class TooManyCardsError(InvalidCardError):
    """More cards, or more text, than one deck's 52 cards make: refused before it is read."""


@dataclasses.dataclass(frozen=True, order=True)
class Card:
    """One card of a standard 52-card deck. Ordered by suit, then rank (ace low)."""

    suit_index: int  # 0..3 in SUITS order
    rank: int  # 1 (ace) .. 13 (king)

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13 or not 0 <= self.suit_index <= 3:
            raise InvalidCardError(f"no such card: rank {self.rank}, suit index {self.suit_index}")

    @classmethod
    def parse(cls, token: str) -> Card:
        """Parse one card in any accepted form.

        >>> Card.parse("Th"), Card.parse("A♠")
        (Card.parse('10H'), Card.parse('AS'))

        :raises InvalidCardError: naming the token and the accepted forms (a token that is not text too).
        """
        if not isinstance(token, str):
            raise InvalidCardError(f"a card is written as text, not {shown(token)}: expected {ACCEPTED_FORMS}")
        text = token.strip().translate(_PRESENTATION)
        match = _SHORT.match(text)
        if match:
            rank_text, suit_text = match.groups()
            rank = int(rank_text) if rank_text.isdigit() and rank_text != "1" else _RANK_ALIASES[rank_text.upper()]
            suit = _SUIT_SYMBOLS.get(suit_text, suit_text.upper())
            return cls(SUITS.index(suit), rank)
        match = _LONG.match(text)
        if match:
            rank_text, suit_text = match.group(1).lower(), match.group(2).lower()
            word_rank = _RANK_WORDS.get(rank_text) or _rank_of(rank_text)
            if word_rank is not None and suit_text in _SUIT_WORDS:
                return cls(SUITS.index(_SUIT_WORDS[suit_text]), word_rank)
        raise InvalidCardError(f"unknown card {shown(token)}: expected {ACCEPTED_FORMS}")

    @property
    def suit(self) -> str:
        """The suit letter: C, D, H or S."""
        return SUITS[self.suit_index]

    @property
    def rank_text(self) -> str:
        """The rank as printed in a corner index: A, 2-10, J, Q, K."""
        return RANKS[self.rank - 1]

    @property
    def value(self) -> int:
        """Deadwood value: ace 1, pip cards their number, J/Q/K 10."""
        return min(self.rank, 10)

    @property
    def class_id(self) -> int:
        """Index of this card in CLASS_NAMES, the detector's class order."""
        return self.suit_index * 13 + self.rank - 1

    @classmethod
    def from_class_id(cls, class_id: int) -> Card:
        """The card for a detector class id.

        >>> Card.from_class_id(0), Card.from_class_id(51)
        (Card.parse('AC'), Card.parse('KS'))
        """
        if not 0 <= class_id < 52:
            raise InvalidCardError(f"class id {class_id} is outside 0..51")
        return cls(class_id // 13, class_id % 13 + 1)

    def __str__(self) -> str:
        return f"{self.rank_text}{self.suit}"

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"


def _rank_of(text: str) -> int | None:
    """A rank written as in a corner index (A, 2-10, J, Q, K, or T), else None."""
    if text.isdigit() and text.isascii():
        return int(text) if 2 <= int(text) <= 10 else (1 if text == "1" else None)
    return _RANK_ALIASES.get(text.upper())


DECK: tuple[Card, ...] = tuple(Card.from_class_id(i) for i in range(52))
"""All 52 cards in class-id order: clubs A-K, diamonds, hearts, spades."""

CLASS_NAMES: tuple[str, ...] = tuple(str(card) for card in DECK)
"""The detector's 52 class names, index = class id (AC, 2C, ... KS)."""


def parse_cards(text: str | Iterable[str], where: str = "hand") -> list[Card]:
    """Parse a hand written as text (``"QH 10S, 3d"``) or as a list of tokens, one card each.

    In text, cards are separated by spaces, commas or semicolons; a card may be written in words.

    >>> parse_cards("AS 2s 3♠")
    [Card.parse('AS'), Card.parse('2S'), Card.parse('3S')]
    >>> parse_cards("ace of spades, 10 of hearts QD")
    [Card.parse('AS'), Card.parse('10H'), Card.parse('QD')]

    :raises InvalidCardError: for an unknown token.
    :raises TooManyCardsError: for more cards (or text) than a deck holds.
    :raises DuplicateCardError: when a card appears twice (``where`` names the cards in the message).
    """
    if isinstance(text, str) and len(text) > MAX_CARDS_TEXT:
        raise TooManyCardsError(f"{where}: {len(text)} characters, more than the whole deck written out takes")
    if not isinstance(text, str | Iterable):
        raise InvalidCardError(f"{where} must be cards written as text or a list of cards' texts, not {shown(text)}")
    tokens = _TOKEN.findall(text) if isinstance(text, str) else list(text)
    if len(tokens) > len(DECK):
        raise TooManyCardsError(f"{where}: {len(tokens)} cards, more than a deck holds ({len(DECK)})")
    cards = [Card.parse(token) for token in tokens if not isinstance(token, str) or token.strip()]
    ensure_distinct(cards, where)
    return cards


def ensure_distinct(cards: Iterable[Card], where: str = "hand") -> None:
    """Refuse a collection holding some card twice.

    :raises DuplicateCardError: naming the repeated card(s).
    """
    seen: set[Card] = set()
    repeated: list[str] = []
    for card in cards:
        if card in seen and str(card) not in repeated:
            repeated.append(str(card))
        seen.add(card)
    if repeated:
        raise DuplicateCardError(f"{where} holds {', '.join(repeated)} more than once; a deck has each card once")


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as one line of text, the form ``parse_cards`` reads back."""
    return " ".join(str(card) for card in cards)


def card_count(count: int) -> str:
    """``count`` cards in words: "1 card", "3 cards".

    >>> card_count(1), card_count(0)
    ('1 card', '0 cards')
    """
    return f"{count} card" if count == 1 else f"{count} cards"
