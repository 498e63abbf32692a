"""Whether one model reads a set of labelled photos better than another, or only differently.

On a few hundred cards one card moves F1 by about 0.003, and a candidate that gains a card on one set and
loses one on another has changed nothing a player would notice. The two readings of the same photos are
paired: per photo, the cards each found and invented. Two figures say how far the difference is from noise:

- a **sign test** on the photos one reads with fewer errors (missed plus invented cards) than the other:
  the chance of a split at least this uneven if each changed photo were a coin toss (two-sided, exact);
- a **paired bootstrap** over photos: the set resampled with replacement, both readings of each photo kept
  together, the F1 difference worked out per resample. The 95% interval is its 2.5th to 97.5th percentile.
  The resamples come from a fixed seed, so the same two reports give the same figures on every run.

A sign test above 0.05, or an interval that holds zero, says the photos cannot tell the two apart. The sign
test decides: where only a few photos changed, all one way, the interval is narrow and touches zero (most
resamples draw some changed photo), and the share of resamples in which the candidate is better would read as
near-certainty; the sign test says what a few photos can carry. It takes six photos read better and none worse
to get under 0.05 (0.031).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from scorer.errors import OkginError
from scorer.vision.evaluate import EvalReport, ImageResult

RESAMPLES = 2000
"""Bootstrap resamples. The interval's ends still move by about 0.001 between seeds (rf-zk7wu-phone, Session 33's
Z8 against D7: low end -0.0112 to -0.0100, high end 0.0186 to 0.0203 over seeds 0 to 5; models/HISTORY.md, Session
34): a third decimal place, not a second, is noise."""

CHANGED_SHOWN = 10
"""The most changed photos ``format_comparison`` lists (all are in ``Comparison.changed``)."""


class ComparisonError(OkginError):
    """Two reports that are not readings of the same photos."""


@dataclasses.dataclass(frozen=True)
class PhotoChange:
    """One photo read differently: the change in cards found and invented (candidate minus reference)."""

    image: str
    found: int
    invented: int

    @property
    def errors(self) -> int:
        """The change in errors (missed plus invented): negative where the candidate reads the photo better."""
        return self.invented - self.found


@dataclasses.dataclass(frozen=True)
class Comparison:
    """A candidate's reading of the photos against a reference's (see the module's docstring)."""

    reference: EvalReport
    candidate: EvalReport
    changed: tuple[PhotoChange, ...]
    interval: tuple[float, float]
    resamples: int

    @property
    def f1_change(self) -> float:
        return self.candidate.f1 - self.reference.f1

    @property
    def photos_better(self) -> int:
        return sum(change.errors < 0 for change in self.changed)

    @property
    def photos_worse(self) -> int:
        return sum(change.errors > 0 for change in self.changed)

    @property
    def sign_test(self) -> float:
        """Two-sided exact sign test on the photos read with fewer and with more errors (1.0 when none)."""
        return sign_test(self.photos_better, self.photos_worse)

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "reference_f1": round(self.reference.f1, 4),
            "candidate_f1": round(self.candidate.f1, 4),
            "f1_change": round(self.f1_change, 4),
            "interval_95": [round(low, 4), round(high, 4)],
            "resamples": self.resamples,
            "photos": len(self.candidate.images),
            "photos_better": self.photos_better,
            "photos_worse": self.photos_worse,
            "sign_test": round(self.sign_test, 4),
            "changed": [dataclasses.asdict(change) for change in self.changed],
        }


def sign_test(better: int, worse: int) -> float:
    """The two-sided exact binomial chance of a split of ``better + worse`` at least as uneven as this one.

    >>> sign_test(0, 0), round(sign_test(6, 0), 4), sign_test(3, 3)
    (1.0, 0.0312, 1.0)
    """
    total, fewer = better + worse, min(better, worse)
    if not total:
        return 1.0
    tail = sum(math.comb(total, k) for k in range(fewer + 1)) / 2**total
    return min(1.0, 2 * tail)


def _counts(images: Sequence[ImageResult]) -> np.ndarray:
    """Per photo: cards found, invented and missed."""
    return np.array([[len(r.found), len(r.invented), len(r.missed)] for r in images], dtype=np.int64).reshape(-1, 3)


def _f1(found: np.ndarray, invented: np.ndarray, missed: np.ndarray) -> np.ndarray:
    """F1 from card counts, 2 TP / (2 TP + FP + FN), as ``EvalReport.f1`` works it out (0 where nothing counts)."""
    denominator = 2 * found + invented + missed
    return np.divide(2 * found, denominator, out=np.zeros(found.shape, np.float64), where=denominator > 0)


def compare_reports(
    reference: EvalReport, candidate: EvalReport, resamples: int = RESAMPLES, seed: int = 0
) -> Comparison:
    """Pair two reports' photos by name and measure the candidate against the reference.

    :raises ComparisonError: when the two reports do not hold the same photos.
    :raises ValueError: for fewer than one resample.
    """
    if resamples < 1:
        raise ValueError(f"the bootstrap needs at least one resample, not {resamples}")
    by_name = {result.image: result for result in reference.images}
    if len(by_name) != len(reference.images):
        raise ComparisonError("the reference report names a photo twice; photos are paired by name")
    names = [result.image for result in candidate.images]
    if sorted(names) != sorted(by_name):
        only_one = sorted(set(names) ^ set(by_name))
        shown = ", ".join(only_one[:3]) + (" ..." if len(only_one) > 3 else "")
        raise ComparisonError(f"the two readings are not of the same photos ({len(only_one)} in one only: {shown})")
    paired = [by_name[name] for name in names]
    before, after = _counts(paired), _counts(candidate.images)
    changed = tuple(
        PhotoChange(name, int(a[0] - b[0]), int(a[1] - b[1]))
        for name, b, a in zip(names, before, after, strict=True)
        if a[0] != b[0] or a[1] != b[1]
    )
    low = high = 0.0
    if names:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, len(names), size=(resamples, len(names)))
        weights = np.stack([np.bincount(row, minlength=len(names)) for row in draws])  # photos drawn per resample
        f1_before, f1_after = (_f1(*(weights @ counts).T) for counts in (before, after))
        change = f1_after - f1_before
        low, high = (float(value) for value in np.percentile(change, [2.5, 97.5]))
    return Comparison(reference, candidate, changed, (low, high), resamples)


def format_comparison(comparison: Comparison, reference_name: str, shown: int = CHANGED_SHOWN) -> str:
    """A few lines for the terminal: both F1s, the photos read better and worse, how sure the change is, and
    up to ``shown`` changed photos, the biggest changes first."""
    reference, candidate = comparison.reference, comparison.candidate
    low, high = comparison.interval

    def cards(report: EvalReport) -> str:
        return f"{report.true_positives} found / {report.invented} invented"

    lines = [
        f"against {reference_name}: F1 {reference.f1:.4f} -> {candidate.f1:.4f} ({comparison.f1_change:+.4f}); "
        f"cards {cards(reference)} -> {cards(candidate)}",
        f"photos read with fewer errors {comparison.photos_better}, with more {comparison.photos_worse}, "
        f"of {len(candidate.images)}; sign test p {comparison.sign_test:.3f}",
        f"paired bootstrap over photos ({comparison.resamples} resamples): F1 change 95% interval "
        f"[{low:+.4f}, {high:+.4f}]",
    ]
    ordered = sorted(comparison.changed, key=lambda change: (-abs(change.errors), change.image))  # biggest first
    for change in ordered[:shown]:
        lines.append(f"  {change.image}: found {change.found:+d}, invented {change.invented:+d}")
    if len(ordered) > shown:
        lines.append(f"  ... and {len(ordered) - shown} more photos changed")
    return "\n".join(lines)
