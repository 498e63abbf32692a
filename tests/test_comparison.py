"""Two models' readings of the same photos compared: which photos changed, a sign test, a paired bootstrap."""

from __future__ import annotations

import pytest

from scorer.cards import parse_cards
from scorer.vision.comparison import ComparisonError, compare_reports, format_comparison, sign_test
from scorer.vision.evaluate import EvalReport, ImageResult


def photo(name: str, expected: str, found: str, invented: str = "") -> ImageResult:
    """One photo's result: ``expected`` labelled, ``found`` of them read right, ``invented`` read wrongly."""
    labelled, right = parse_cards(expected), parse_cards(found)
    missed = tuple(card for card in labelled if card not in right)
    return ImageResult(name, tuple(labelled), tuple(right), missed, tuple(parse_cards(invented)))


HAND = "AS 2S 3S 4H 5H"


def reports(changes: list[tuple[str, str]]) -> tuple[EvalReport, EvalReport]:
    """A reference and a candidate over one photo per item: (reference's found, candidate's found) of HAND."""
    reference = [photo(f"p{n}.jpg", HAND, before) for n, (before, _) in enumerate(changes)]
    candidate = [photo(f"p{n}.jpg", HAND, after) for n, (_, after) in enumerate(changes)]
    return EvalReport(tuple(reference)), EvalReport(tuple(candidate))


def test_the_photos_that_changed_and_which_way() -> None:
    reference = EvalReport(
        (photo("a.jpg", "AS 2S", "AS"), photo("b.jpg", "QH", "QH", "KH"), photo("c.jpg", "7D", "7D"))
    )
    candidate = EvalReport(
        (photo("c.jpg", "7D", "", "7H"), photo("a.jpg", "AS 2S", "AS 2S"), photo("b.jpg", "QH", "QH"))
    )
    comparison = compare_reports(reference, candidate)
    assert comparison.f1_change == pytest.approx(candidate.f1 - reference.f1)
    changes = {change.image: (change.found, change.invented, change.errors) for change in comparison.changed}
    assert changes == {"a.jpg": (1, 0, -1), "b.jpg": (0, -1, -1), "c.jpg": (-1, 1, 2)}
    assert (comparison.photos_better, comparison.photos_worse) == (2, 1)
    assert comparison.sign_test == 1.0
    text = format_comparison(comparison, "models")
    assert text.splitlines()[0].startswith("against models: F1 ")
    assert "with fewer errors 2, with more 1, of 3; sign test p 1.000" in text
    assert text.splitlines()[3] == "  c.jpg: found -1, invented +1"  # the biggest change first


def test_the_same_reading_changes_nothing() -> None:
    reference, candidate = reports([("AS 2S", "AS 2S"), (HAND, HAND), ("", "")])
    comparison = compare_reports(reference, candidate)
    assert comparison.changed == () and comparison.interval == (0.0, 0.0)
    assert (comparison.f1_change, comparison.sign_test) == (0.0, 1.0)


def test_a_few_photos_one_way_are_not_enough() -> None:
    # three photos better, none worse: F1 is up and the interval's low end touches zero, but the sign test
    # says three coin tosses come out one way a quarter of the time
    reference, candidate = reports([("AS", "AS 2S")] * 3 + [(HAND, HAND)] * 57)
    comparison = compare_reports(reference, candidate)
    assert comparison.f1_change > 0 and comparison.interval[0] == 0.0 < comparison.interval[1]
    assert comparison.sign_test == pytest.approx(0.25)


def test_many_photos_one_way_are() -> None:
    reference, candidate = reports([("AS", "AS 2S")] * 12 + [(HAND, HAND)] * 48)
    comparison = compare_reports(reference, candidate)
    assert comparison.interval[0] > 0 and comparison.sign_test < 0.001


def test_changes_both_ways_hold_zero() -> None:
    reference, candidate = reports([("AS", "AS 2S")] * 10 + [("AS 2S", "AS")] * 10 + [(HAND, HAND)] * 40)
    comparison = compare_reports(reference, candidate)
    low, high = comparison.interval
    assert comparison.f1_change == 0.0 and low < 0 < high and comparison.sign_test == 1.0


def test_the_bootstrap_is_the_same_every_time_and_holds_the_change() -> None:
    reference, candidate = reports([("AS", "AS 2S")] * 7 + [("AS 2S 3S", "AS")] * 3 + [(HAND, "AS 2S")] * 20)
    first, again = compare_reports(reference, candidate), compare_reports(reference, candidate)
    assert first.interval == again.interval
    low, high = first.interval
    assert low < first.f1_change < high
    assert abs(compare_reports(reference, candidate, seed=1).interval[0] - low) < 0.02


@pytest.mark.parametrize(
    ("better", "worse", "p"), [(0, 0, 1.0), (6, 0, 0.03125), (0, 6, 0.03125), (5, 1, 0.21875), (10, 10, 1.0)]
)
def test_sign_test(better: int, worse: int, p: float) -> None:
    assert sign_test(better, worse) == pytest.approx(p)


def test_readings_of_different_photos_are_refused() -> None:
    reference = EvalReport((photo("a.jpg", "AS", "AS"), photo("b.jpg", "AS", "AS")))
    candidate = EvalReport((photo("a.jpg", "AS", "AS"), photo("c.jpg", "AS", "AS")))
    with pytest.raises(ComparisonError, match=r"not of the same photos \(2 in one only: b.jpg, c.jpg\)"):
        compare_reports(reference, candidate)
    twice = EvalReport((photo("a.jpg", "AS", "AS"), photo("a.jpg", "AS", "AS")))
    with pytest.raises(ComparisonError, match="names a photo twice"):
        compare_reports(twice, twice)
    with pytest.raises(ValueError, match="at least one resample, not 0"):
        compare_reports(reference, reference, resamples=0)


def test_to_dict() -> None:
    reference, candidate = reports([("AS", "AS 2S"), (HAND, HAND)])
    data = compare_reports(reference, candidate, resamples=200).to_dict()
    assert data["changed"] == [{"image": "p0.jpg", "found": 1, "invented": 0}]
    assert (data["photos"], data["photos_better"], data["photos_worse"], data["resamples"]) == (2, 1, 0, 200)
    assert data["f1_change"] == round(data["candidate_f1"] - data["reference_f1"], 4)
