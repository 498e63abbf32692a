"""Melds: what is a set, what is a run, and their text forms."""

import pytest

from scorer.cards import InvalidCardError, parse_cards
from scorer.melds import MELD_BY_MASK, InvalidMeldError, Meld, cards_mask, mask_cards, meld_from_mask, meld_kind


@pytest.mark.parametrize(
    ("cards", "kind"),
    [
        ("7C 7D 7H", "set"),
        ("7C 7D 7H 7S", "set"),
        ("AS 2S 3S", "run"),
        ("9H 10H JH QH KH", "run"),
        ("AC 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC", "run"),
        ("QS KS AS", None),  # ace is low only
        ("KS AS 2S", None),  # runs do not wrap
        ("7C 7D", None),
        ("2C 3C", None),
        ("2C 3C 5C", None),
        ("2C 3D 4C", None),
        ("7C 7D 8C", None),
    ],
)
def test_meld_kind(cards: str, kind: str | None) -> None:
    assert meld_kind(tuple(sorted(parse_cards(cards)))) == kind


def test_meld_sorts_its_cards_and_reads_back() -> None:
    meld = Meld.parse("3S AS 2S")
    assert str(meld) == "AS 2S 3S"
    assert meld == Meld.parse("AS 2S 3S")
    assert eval(repr(meld), {"Meld": Meld}) == meld
    assert meld.to_list() == ["AS", "2S", "3S"]


def test_a_non_meld_is_refused_naming_the_cards_and_the_rule() -> None:
    with pytest.raises(InvalidMeldError, match="AS QS KS is not a meld: a set is 3 or 4 cards"):
        Meld.parse("QS KS AS")
    with pytest.raises(InvalidMeldError, match="is not a run"):
        Meld("run", tuple(parse_cards("7C 7D 7H")))
    assert issubclass(InvalidMeldError, InvalidCardError)


def test_every_meld_is_precomputed_once() -> None:
    assert len(MELD_BY_MASK) == 264 + 65  # runs of 3..13 in 4 suits, 13 ranks x (four 3-sets + one 4-set)
    assert meld_from_mask(cards_mask(parse_cards("5D 6D 7D"))) == Meld.parse("5D 6D 7D")
    with pytest.raises(InvalidMeldError):
        meld_from_mask(cards_mask(parse_cards("5D 6D")))


def test_masks_round_trip() -> None:
    cards = parse_cards("KS AC 10H 4D")
    assert mask_cards(cards_mask(cards)) == tuple(sorted(cards))
