"""Choose a model's card threshold and confidence fusion on labelled scenes, once per model.

A card's confidence comes from two models (the corner detector's score and the classifier's
probability) merged over its corners, so the threshold that reads cards best moves with
every retrained model: v4 of the shipped detector read the real photos at F1 0.86 with its
predecessor's threshold and 0.92 with its own. The models are run once per image
(``CornerEvidence`` keeps both scores); every pair of detector weight and card threshold is
then scored card by card like ``okgin eval``. Best card F1 wins, ties go to more images read
exactly, then to the higher threshold (fewer inventions on a table not seen before).

Tune on synthetic validation scenes, never on the yardstick photos the model is judged by.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from scorer.vision.evaluate import EvalReport, LabelledCard, match_image
from scorer.vision.merge import merge_corners
from scorer.vision.types import CornerEvidence

DETECTOR_WEIGHTS: tuple[float, ...] = (1.0, 0.75, 0.5, 0.35, 0.25)
CARD_THRESHOLDS: tuple[float, ...] = tuple(round(0.05 * step, 2) for step in range(1, 19))  # 0.05 .. 0.90


@dataclasses.dataclass(frozen=True)
class LabelledReading:
    """One labelled image and every corner the models read in it."""

    image: str
    corners: tuple[CornerEvidence, ...]
    labelled: tuple[LabelledCard, ...]


@dataclasses.dataclass(frozen=True)
class ThresholdScore:
    """How one (detector weight, card threshold) pair reads the tuning images."""

    detector_weight: float
    card_conf: float
    report: EvalReport

    def key(self) -> tuple[float, int, float]:
        return (round(self.report.f1, 6), self.report.exact_images, self.card_conf)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "detector_weight": self.detector_weight,
            "card_conf": self.card_conf,
            "precision": round(self.report.precision, 4),
            "recall": round(self.report.recall, 4),
            "f1": round(self.report.f1, 4),
            "exact_images": self.report.exact_images,
            "images": len(self.report.images),
        }


def score_thresholds(
    readings: Sequence[LabelledReading],
    detector_weights: Sequence[float] = DETECTOR_WEIGHTS,
    card_thresholds: Sequence[float] = CARD_THRESHOLDS,
) -> list[ThresholdScore]:
    """Every pair's card-level report, best first.

    :raises ValueError: when there is nothing to tune on.
    """
    if not readings:
        raise ValueError("no labelled images to choose thresholds on")
    scores = []
    for weight in detector_weights:
        merged = [merge_corners([corner.detection(weight) for corner in reading.corners])[0] for reading in readings]
        for threshold in card_thresholds:
            results = tuple(
                match_image(reading.image, [card for card in cards if card.confidence >= threshold], reading.labelled)
                for reading, cards in zip(readings, merged, strict=True)
            )
            scores.append(ThresholdScore(weight, threshold, EvalReport(results, ())))
    scores.sort(key=ThresholdScore.key, reverse=True)
    return scores
