"""Cards: one text form per card, every accepted spelling, clear errors."""

import pytest

from scorer.cards import CLASS_NAMES, DECK, Card, DuplicateCardError, InvalidCardError, parse_cards


@pytest.mark.parametrize("card", DECK, ids=CLASS_NAMES)
def test_every_card_round_trips_through_its_text(card: Card) -> None:
    assert Card.parse(str(card)) == card
    assert eval(repr(card), {"Card": Card}) == card
    assert Card.from_class_id(card.class_id) == card
    assert CLASS_NAMES[card.class_id] == str(card)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("AS", "AS"),
        ("as", "AS"),
        ("10h", "10H"),
        ("Th", "10H"),
        ("A♠", "AS"),
        ("10♥", "10H"),
        ("Q♡", "QH"),
        ("ace of spades", "AS"),
        ("Queen of Hearts", "QH"),
        ("10 of clubs", "10C"),
        ("q of diamonds", "QD"),
        (" 7d ", "7D"),
        ("1C", "AC"),
    ],
)
def test_each_accepted_form_parses(token: str, expected: str) -> None:
    assert str(Card.parse(token)) == expected


@pytest.mark.parametrize("token", ["XX", "11H", "joker", "AZ", "", "ace of swords", "11 of hearts", "² of hearts"])
def test_unknown_token_error_names_the_token_and_the_accepted_forms(token: str) -> None:
    with pytest.raises(InvalidCardError) as error:
        Card.parse(token)
    assert repr(token) in str(error.value)
    assert "AS, 10h, Th" in str(error.value)


def test_a_duplicate_card_is_refused_naming_it() -> None:
    with pytest.raises(DuplicateCardError, match="QH more than once"):
        parse_cards("QH 10S qh")


def test_parse_cards_takes_text_or_tokens() -> None:
    assert parse_cards("AS, 2s;3♠") == parse_cards(["AS", "2S", "3S"])


def test_parse_cards_reads_card_words_inside_a_line() -> None:
    expected = parse_cards(["AS", "10H", "QD", "2C"])
    assert parse_cards("ace of spades 10 of hearts, queen of diamonds;2C") == expected
    assert parse_cards(["ace of spades", "10H", "queen of diamonds", "2c"]) == expected


def test_values_ace_1_pips_face_value_faces_10() -> None:
    assert [Card.parse(t).value for t in ["AC", "2C", "9D", "10H", "JS", "QS", "KS"]] == [1, 2, 9, 10, 10, 10, 10]


@pytest.mark.parametrize("given", [5, None, ["AS"], b"AS"])
def test_a_token_that_is_not_text_is_an_invalid_card_not_a_crash(given: object) -> None:
    """``Card.parse(5)`` raised AttributeError ('int' has no 'strip'): a caller's bad value is a user error."""
    with pytest.raises(InvalidCardError, match="a card is written as text"):
        Card.parse(given)  # type: ignore[arg-type]


@pytest.mark.parametrize("given", [None, 5, ["AS", 5], ["AS", None]])
def test_cards_that_are_not_text_are_refused_by_parse_cards(given: object) -> None:
    """``parse_cards([5])`` raised AttributeError and ``parse_cards(None)`` TypeError; a None among the tokens was
    skipped without a word."""
    with pytest.raises(InvalidCardError):
        parse_cards(given)  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "card"), [("Q♥️", "QH"), ("A♠️", "AS"), ("10♦︎", "10D"), ("7♣️", "7C")])
def test_a_suit_symbol_in_emoji_presentation_is_that_suit(text: str, card: str) -> None:
    """Phone keyboards write ♥ as "♥" + U+FE0F (emoji presentation; U+FE0E asks for text): "Q♥️" looks like the
    "Q♥" the error message offers, yet was refused as an unknown card."""
    assert Card.parse(text) == Card.parse(card)
    assert parse_cards(f"{text}, KS") == [Card.parse(card), Card.parse("KS")]
