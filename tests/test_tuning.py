"""Choosing a model's card threshold and confidence fusion on labelled scenes."""

from __future__ import annotations

import pytest

from scorer.cards import Card
from scorer.vision.evaluate import LabelledCard
from scorer.vision.tuning import LabelledReading, score_thresholds
from scorer.vision.types import CornerEvidence

SEVEN, TWO = Card.parse("7C"), Card.parse("2S")


def faint_seven_and_a_doubtful_two() -> LabelledReading:
    """A real 7C whose two indices the detector barely sees but the classifier is sure of, and a
    false 2S the detector likes but the classifier doubts: only a low detector weight separates them."""
    corners = (
        CornerEvidence(SEVEN, (10, 10, 20, 30), detector_score=0.1, class_probability=0.99),
        CornerEvidence(SEVEN, (60, 90, 70, 110), detector_score=0.1, class_probability=0.99),
        CornerEvidence(TWO, (300, 10, 310, 30), detector_score=0.5, class_probability=0.4),
    )
    return LabelledReading("table.jpg", corners, (LabelledCard(SEVEN, ((5, 5, 75, 115),)),))


def test_a_low_detector_weight_is_chosen_when_only_it_reads_the_table() -> None:
    scores = score_thresholds([faint_seven_and_a_doubtful_two()])
    best = scores[0]
    assert best.report.f1 == 1.0 and best.report.exact_images == 1
    assert best.detector_weight < 1.0
    assert max(score.report.f1 for score in scores if score.detector_weight == 1.0) < 1.0
    # among the thresholds that read the table exactly, the highest (fewest inventions elsewhere) wins
    exact = [s.card_conf for s in scores if s.detector_weight == best.detector_weight and s.report.f1 == 1.0]
    assert best.card_conf == max(exact)
    assert best.to_dict()["f1"] == 1.0


def test_scores_cover_every_pair_best_first() -> None:
    scores = score_thresholds(
        [faint_seven_and_a_doubtful_two()], detector_weights=(1.0, 0.5), card_thresholds=(0.1, 0.5)
    )
    assert len(scores) == 4
    assert [s.key() for s in scores] == sorted((s.key() for s in scores), reverse=True)


def test_nothing_to_tune_on_is_refused() -> None:
    with pytest.raises(ValueError, match="no labelled images"):
        score_thresholds([])
