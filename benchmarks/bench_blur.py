"""What a motion-blurred live frame costs the detector against a sharp one, read as a photo and as a live frame.

    python benchmarks/bench_blur.py [--tables 3] [--blur 25] [--turns 3] [--model DIR] [--backend auto]
    python benchmarks/bench_blur.py FRAME... [--blur 0]     # frames of your own, as shot (and smeared unless 0)

Without frames: rendered 1280x720 tables of two hands of ten and an upcard in the packaged decks (``okgin data
faces``), with a webcam's grain and JPEG at 85, as the table page sends frames. Each frame is measured as shot and,
unless ``--blur 0``, smeared by a camera moving ``--blur`` pixels across it while the shutter is open (a 1 x N line:
session 44's bumped frame was smeared some 25 px). Printed per frame: the detector's boxes, and the classifier's
crops and the time read as a photo is (``detect``) and as a live frame is (``detect_live``, which declines a blurred
frame), the best of ``--turns`` turns taken in rotation, so that a machine slowing down slows them all alike; then
each kind's median time over the median of the frames as shot read as a photo.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np
from bench_still import webcam

from scorer.cards import DECK
from scorer.synth.faces import DEFAULT_FACES_DIR, available_decks
from scorer.synth.scene import SceneConfig, render_table_scene
from scorer.vision.detector import CardDetector
from scorer.vision.manifest import BACKENDS, ModelError
from scorer.vision.types import FrameNotRead

Row = tuple[int, int, float, int, float, str]
"""boxes, crops and seconds read as a photo, crops and seconds read live, and what the live reading gave."""


def rendered_tables(count: int) -> list[tuple[str, np.ndarray]]:
    """``count`` webcam-like frames of tables of two hands of ten and an upcard, in the packaged decks."""
    config = SceneConfig(faces_dir=DEFAULT_FACES_DIR, procedural_fraction=0.0)
    frames = []
    for seed in range(count):
        deal = [DECK[int(i)] for i in np.random.default_rng(seed).permutation(52)[:21]]
        image, _ = render_table_scene(seed, {1: deal[:10], 2: deal[10:20]}, deal[20], mild=True, config=config)
        frames.append((f"table {seed}", webcam(image, np.random.default_rng(seed))))
    return frames


def counting(detector: CardDetector) -> list[int]:
    """A one-item list that counts the crops ``detector``'s classifier reads from now on."""
    assert detector.classifier is not None
    read, count = detector.classifier.predict, [0]

    def counted(crops: list[np.ndarray]) -> np.ndarray:
        count[0] += len(crops)
        return read(crops)

    detector.classifier.predict = counted  # type: ignore[method-assign]
    return count


def measure(detector: CardDetector, crops: list[int], frame: np.ndarray) -> Row:
    """One frame read as a photo and as a live frame."""
    boxes = len(detector.find_boxes(frame).scores)
    crops[0], started = 0, time.perf_counter()
    detector.detect(frame)
    photo_crops, photo = crops[0], time.perf_counter() - started
    crops[0], started = 0, time.perf_counter()
    try:
        answer = f"{len(detector.detect_live(frame).cards)} cards"
    except FrameNotRead:
        answer = "declined"
    return boxes, photo_crops, photo, crops[0], time.perf_counter() - started, answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("frames", nargs="*", type=Path, help="frames to measure (default: rendered tables)")
    parser.add_argument("--tables", type=int, default=3, help="rendered tables without frames (default 3)")
    parser.add_argument("--blur", type=int, default=25, help="pixels the camera moves across a frame (default 25)")
    parser.add_argument("--turns", type=int, default=3, help="turns over all frames; the best is kept (default 3)")
    parser.add_argument("--model", type=Path, default=None, help="model directory (default: the shipped one)")
    parser.add_argument("--backend", default="auto", choices=BACKENDS)
    args = parser.parse_args(argv)
    if args.frames:
        shown = [(path.name, cv2.imread(str(path))) for path in args.frames]
        unreadable = [name for name, image in shown if image is None]
        if unreadable:
            print(f"bench_blur: cannot read {', '.join(unreadable)}", file=sys.stderr)
            return 2
        frames = [(name, image) for name, image in shown if image is not None]
    elif available_decks(DEFAULT_FACES_DIR):
        frames = rendered_tables(args.tables)
    else:
        print("bench_blur: no frames given and no packaged deck rendered here: run okgin data faces", file=sys.stderr)
        return 2
    try:
        detector = CardDetector(args.model, backend=args.backend)
    except ModelError as error:
        print(f"bench_blur: {error}", file=sys.stderr)
        return 2
    crops = counting(detector)
    kinds = {"as shot": frames}
    if args.blur > 0:
        kinds[f"smeared {args.blur} px"] = [(name, cv2.blur(image, (args.blur, 1))) for name, image in frames]
    detector.detect(frames[0][1])  # warm-up: the first inference allocates
    best: dict[tuple[str, str], Row] = {}
    for _ in range(args.turns):
        for kind, shown_frames in kinds.items():
            for name, image in shown_frames:
                row = measure(detector, crops, image)
                known = best.get((kind, name))
                best[(kind, name)] = (
                    row if known is None else (*row[:2], min(row[2], known[2]), row[3], min(row[4], known[4]), row[5])
                )
    print(f"{detector!r}, best of {args.turns} turns")
    print(f"  {'frame':34s} {'boxes':>5s}   {'photo: crops':>12s} {'ms':>7s}   {'live: crops':>11s} {'ms':>7s}  answer")
    for (kind, name), (boxes, photo_crops, photo, live_crops, live, answer) in best.items():
        photo_read, live_read = f"{photo_crops:12d} {1000 * photo:7.1f}", f"{live_crops:11d} {1000 * live:7.1f}"
        print(f"  {name + ', ' + kind:34s} {boxes:5d}   {photo_read}   {live_read}  {answer}")
    shot = statistics.median(best[("as shot", name)][2] for name, _ in frames)
    print("  median time over the frames' as shot, read as a photo:")
    for kind, shown_frames in kinds.items():
        photo = statistics.median(best[(kind, name)][2] for name, _ in shown_frames) / shot
        live = statistics.median(best[(kind, name)][4] for name, _ in shown_frames) / shot
        print(f"    {kind:20s} as a photo {photo:5.2f}   live {live:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
