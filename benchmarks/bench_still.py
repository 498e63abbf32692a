"""How much a still table's frames differ, against a changed table's, and what keeping a still table's reading saves.

    python benchmarks/bench_still.py [--tables 12] [--frames 20] [--model DIR] [--backend auto]

Part one (no model): rows of ten fanned cards of the packaged decks (``okgin data faces``) rendered at three card
sizes (indices about 13, 22 and 38 px tall on a 1280x720 frame), each frame given a webcam's grain (8 or 16 grey
levels, 0.4% dead pixels) and JPEG at 85, as the table page sends it. Printed per kind of change: the largest
difference of any cell of ``StillTable``'s thumbnail against the first frame (min / median / max over the tables),
which ``STILL_LEVELS`` must sit between: above every still pair, below the changes a hand makes.

Part two (the model): ``--frames`` frames of one still table (fresh grain each) through ``TablePipeline`` with the
still table's reading kept and without (``still_seconds=0``), taking turns, frames 0.25 s apart as the page sends
them, the stabiliser as served (a reading is kept only once it reads stable, after 7 frames and a second); printed:
frames read, time per frame, and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from scorer.cards import DECK
from scorer.synth.camera import fixed_grain
from scorer.synth.faces import DEFAULT_FACES_DIR, available_decks
from scorer.synth.scene import Placement, SceneConfig, render_cards
from scorer.vision.detector import CardDetector
from scorer.vision.layout import TableLayout
from scorer.vision.manifest import BACKENDS, ModelError
from scorer.vision.pipeline import STILL_LEVELS, STILL_SIDE, StillTable, TablePipeline

WIDTH, HEIGHT = 1280, 720
CARD_WIDTHS = {40: 13, 70: 22, 120: 38}
"""Card widths in pixels, and their indices' height: a card 63 mm wide with an index 20 mm tall."""
KINDS = ("still, grain 8", "still, grain 16", "last card swapped", "a middle card swapped", "last card taken away")


def webcam(image: np.ndarray, rng: np.random.Generator, grain: float = 8.0) -> np.ndarray:
    noisy = fixed_grain(image, rng, grain, 0.004)
    return cv2.imdecode(cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 85])[1], cv2.IMREAD_COLOR)


def differences(tables: int, config: SceneConfig) -> dict[tuple[int, str], list[float]]:
    """The largest thumbnail cell difference from each table's first frame, by card width and kind of change."""
    still = StillTable()
    found: dict[tuple[int, str], list[float]] = {}
    for card_width in CARD_WIDTHS:
        for seed in range(tables):
            rng = np.random.default_rng(1000 + seed)
            cards = [DECK[int(i)] for i in rng.permutation(52)[:12]]
            x0, y0, angle = rng.uniform(200, 500), rng.uniform(200, 400), rng.uniform(-20, 20)
            places = [Placement(cards[i], (x0 + i * card_width * 0.3, y0), angle) for i in range(10)]

            def render(placements: list[Placement], seed: int = seed, card_width: int = card_width) -> np.ndarray:
                size = {"width": WIDTH, "height": HEIGHT, "card_width": card_width}
                image, _ = render_cards(seed, placements, **size, config=config)
                return image

            table = render(places)
            swapped_last = render([*places[:-1], Placement(cards[10], places[-1].centre, angle)])
            swapped_middle = render([*places[:4], Placement(cards[11], places[4].centre, angle), *places[5:]])
            grain = np.random.default_rng(seed)
            first = still.thumbnail(webcam(table, grain))
            others = [
                webcam(table, grain),
                webcam(table, grain, 16.0),
                webcam(swapped_last, grain),
                webcam(swapped_middle, grain),
                webcam(render(places[:-1]), grain),
            ]
            for kind, frame in zip(KINDS, others, strict=True):
                found.setdefault((card_width, kind), []).append(float(np.abs(still.thumbnail(frame) - first).max()))
    return found


def still_table_speed(detector: CardDetector, frames: list[np.ndarray]) -> dict[str, tuple[int, float]]:
    """Frames read and seconds per frame of a still table, the reading kept and not, best of three turns."""
    best: dict[str, tuple[int, float]] = {}
    for _ in range(3):
        for name, seconds in (("kept", 1.0), ("every frame read", 0.0)):
            pipeline = TablePipeline(detector, TableLayout.default(2), still_seconds=seconds)
            started = time.perf_counter()
            for number, frame in enumerate(frames):
                pipeline.process(frame, number * 0.25)
            took = (time.perf_counter() - started) / len(frames)
            if name not in best or took < best[name][1]:
                best[name] = (pipeline.frames_read, took)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=12, help="tables per card size (default 12)")
    parser.add_argument("--frames", type=int, default=20, help="frames of the still table timed (default 20)")
    parser.add_argument("--model", type=Path, default=None, help="model directory (default: the shipped one)")
    parser.add_argument("--backend", default="auto", choices=BACKENDS)
    parser.add_argument("--no-speed", action="store_true", help="part one only")
    args = parser.parse_args(argv)
    if not available_decks(DEFAULT_FACES_DIR):
        print("bench_still: no packaged deck is rendered here: run okgin data faces", file=sys.stderr)
        return 2
    config = SceneConfig(faces_dir=DEFAULT_FACES_DIR, procedural_fraction=0.0)
    found = differences(args.tables, config)
    print(
        f"largest thumbnail cell difference ({STILL_SIDE} cells on its longer side; STILL_LEVELS {STILL_LEVELS:g}), "
        f"min / median / max over {args.tables} tables:"
    )
    for card_width, index in CARD_WIDTHS.items():
        print(f"  indices about {index} px tall (cards {card_width} px wide)")
        for kind in KINDS:
            values = found[(card_width, kind)]
            print(f"    {kind:24s} {min(values):5.1f} / {statistics.median(values):5.1f} / {max(values):5.1f}")
    if args.no_speed:
        return 0
    try:
        detector = CardDetector(args.model, backend=args.backend)
    except ModelError as error:
        print(f"bench_still: {error}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(7)
    places = [Placement(DECK[i], (300 + i * 36.0, 360), 0.0) for i in range(10)]
    table = render_cards(7, places, width=WIDTH, height=HEIGHT, card_width=120, config=config)[0]
    frames = [webcam(table, rng) for _ in range(args.frames)]
    detector.detect(frames[0])  # warm-up: the first inference allocates
    speed = still_table_speed(detector, frames)
    print(f"{detector!r}: {args.frames} frames of a still table, 0.25 s apart")
    for name, (read, seconds) in speed.items():
        print(f"  {name:18s} {read:3d} frames read, {1000 * seconds:6.1f} ms a frame")
    print(f"  kept / every frame read: {speed['kept'][1] / speed['every frame read'][1]:.2f} of the time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
