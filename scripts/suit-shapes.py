"""How surely a model tells clubs from spades, per pip shape: gold on black faces, small and blurred.

    python scripts/suit-shapes.py [MODEL_DIR] [--styles 6] [--backend onnx]

Takes the first ``--styles`` dark train-pool styles whose parametric pips are of the kind the generator drew
before session 20 (small club lobes just touching, straight stems, squat spades), prints them in one gold ink on
black (as the black deck of rf-zk7wu-phone is printed) and draws their 13 clubs and 13 spades twice: as they are
and with round clubs on a trumpet foot (``procedural.ROUND_CLUB_SHARE``'s shapes, which most printed decks have).
Each face lies on a white desk, scaled so that its index is 20, 30 or 45 px tall, sharp or blurred by 0.8 px,
JPEG 75, and its index box is read as inference reads it (``CardDetector.name_boxes``). Prints, per shape, size
and blur, the share of those indices named right and the share named the other black suit. It measures the
classifier on pip shapes alone: the real deck's photos say how much that matters (models/HISTORY.md, Session 20).
"""

from __future__ import annotations

import argparse
import dataclasses

import cv2
import numpy as np

from scorer.cards import DECK
from scorer.synth import procedural
from scorer.vision.detector import CardDetector

GOLD = (60, 175, 215)
DESK = 225
HEIGHTS = (20, 30, 45)
BLURS = (0.0, 0.8)


def gold_on_black(count: int) -> list[procedural.FaceStyle]:
    """The first ``count`` dark train styles with parametric pips of the kind drawn before session 20, in one
    gold ink on black."""
    styles = []
    for style_id in range(10_000):
        if len(styles) == count:
            break
        if not procedural.is_dark_style(style_id):
            continue
        style = procedural.sample_style(style_id)
        if style.pip_font is not None or style.pip_shape.round_club:  # pips as every style drew them before
            continue
        styles.append(
            dataclasses.replace(
                style, paper=(20, 20, 20), black_ink=GOLD, red_ink=GOLD, suit_inks=dict.fromkeys("CDHS", GOLD)
            )
        )
    return styles


def with_pips(style: procedural.FaceStyle, round_clubs: bool) -> procedural.FaceStyle:
    """``style`` as it is, or with round clubs on a trumpet foot (and its spades on that foot)."""
    if not round_clubs:
        return style
    shape = dataclasses.replace(style.pip_shape, lobe=0.24, spread=0.16, point=1.0, foot=1.5, flare=0.5, round_club=0.8)
    return dataclasses.replace(style, pip_shape=shape)


def on_a_desk(
    face: np.ndarray, index: tuple[float, float, float, float], scale: float, blur: float
) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """The BGRA face scaled and laid on a white desk, blurred and JPEG-compressed, and its ``index`` box (fractions
    of the face) in the photo's pixels."""
    small = cv2.resize(face, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    margin = 20
    height, width = small.shape[:2]
    desk = np.full((height + 2 * margin, width + 2 * margin, 3), DESK, np.float32)
    alpha = small[:, :, 3:4].astype(np.float32) / 255
    region = desk[margin : margin + height, margin : margin + width]
    desk[margin : margin + height, margin : margin + width] = small[:, :, :3] * alpha + region * (1 - alpha)
    photo = desk.astype(np.uint8)
    if blur:
        photo = cv2.GaussianBlur(photo, (0, 0), blur)
    _, encoded = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 75])
    x1, y1, x2, y2 = index
    box = (margin + x1 * width, margin + y1 * height, margin + x2 * width, margin + y2 * height)
    return cv2.imdecode(encoded, cv2.IMREAD_COLOR), box


def read_black_suits(
    detector: CardDetector, style: procedural.FaceStyle, index_height: int, blur: float
) -> tuple[int, int, int]:
    """(right, the other black suit, indices read) over a style's clubs and spades at one size and blur."""
    right = swapped = total = 0
    for card in (card for card in DECK if card.suit in "CS"):
        face, boxes = procedural.draw_face(style, card)
        index = boxes[0].box
        photo, box = on_a_desk(face, index, index_height / ((index[3] - index[1]) * face.shape[0]), blur)
        ((named, _),) = detector.name_boxes(photo, [box])
        total += 1
        right += named == card
        swapped += named is not None and named.rank == card.rank and named.suit != card.suit
    return right, swapped, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", nargs="?", default=None, help="model folder (default: the shipped one)")
    parser.add_argument("--styles", type=int, default=6)
    parser.add_argument("--backend", default="onnx")
    args = parser.parse_args()
    detector = CardDetector(args.model, backend=args.backend)
    styles = gold_on_black(args.styles)
    print(f"{len(styles)} gold-on-black styles, 26 clubs and spades each; share named right (other black suit)")
    for round_clubs in (False, True):
        label = "round clubs, trumpet feet" if round_clubs else "pips as drawn before session 20"
        for blur in BLURS:
            cells = []
            for index_height in HEIGHTS:
                counts = np.array(
                    [read_black_suits(detector, with_pips(s, round_clubs), index_height, blur) for s in styles]
                )
                right, swapped, total = counts.sum(axis=0)
                cells.append(f"{index_height} px {right / total:.2f} ({swapped / total:.2f})")
            print(f"{label:32} blur {blur:.1f}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
