"""Detector benchmark: ms per 1280x720 frame for every shipped backend, and each one's F1 on the real photos.

    python benchmarks/bench_detector.py                    # the shipped models/ (or $OKGIN_MODEL_DIR)
    python benchmarks/bench_detector.py --model DIR --frames 10 --no-eval

The frames are rendered table scenes (``scorer.synth``), so the two-stage design has
real corners to classify; without rendered decks a real photo scaled to 1280x720 is used.
Timing is per ``CardDetector.detect`` call (pre-processing, inference, decoding, NMS,
classifier batch, merging): median and 90th percentile over the frames, after a warm-up.

This machine's speed varies from day to day (the same model took 39 ms one session and 67 ms
another), so each backend is also timed in the same run as the plain design of session 1 (one look
at the frame, one reading of each crop): the ratio is what the coarse look and the turned readings
cost, whatever the machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("YOLO_OFFLINE", "1")

from scorer.vision.backends import available_backends, cpu_count
from scorer.vision.detector import CardDetector
from scorer.vision.evaluate import evaluate_dataset
from scorer.vision.manifest import ModelError, ModelManifest

REAL_PHOTOS = Path(__file__).resolve().parents[1].parent / "shared" / "real-photos" / "poker-cards-fmjio"
WIDTH, HEIGHT = 1280, 720


def benchmark_frames(count: int) -> list[np.ndarray]:
    """``count`` 1280x720 BGR frames of card tables."""
    try:
        from scorer.synth.scene import render_table_scene

        return [render_table_scene(seed, width=WIDTH, height=HEIGHT, mild=True)[0] for seed in range(count)]
    except Exception as error:  # no rendered decks here: fall back to real photos
        print(f"(scene renderer unavailable: {error}; using real photos)", file=sys.stderr)
    import cv2

    from scorer.vision.images import load_image

    photos = sorted((REAL_PHOTOS / "images").glob("*.jpg"))[:count]
    return [cv2.resize(load_image(photo), (WIDTH, HEIGHT)) for photo in photos]


def time_detector(detector: CardDetector, frames: list[np.ndarray], warmup: int = 2) -> tuple[float, float, float]:
    """(median ms, p90 ms, mean cards found) per frame."""
    for frame in frames[:warmup]:
        detector.detect(frame)
    times, cards = [], []
    for frame in frames:
        start = time.perf_counter()
        found = detector.detect(frame)
        times.append((time.perf_counter() - start) * 1000)
        cards.append(len(found.cards))
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))], statistics.mean(cards)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model directory (default: the shipped one)")
    parser.add_argument("--frames", type=int, default=20, help="timed frames per backend")
    parser.add_argument("--no-eval", action="store_true", help="skip the F1 on the real photos")
    parser.add_argument("--photos", type=Path, default=REAL_PHOTOS, help="YOLO-labelled photo set for F1")
    args = parser.parse_args(argv)
    try:
        manifest = ModelManifest.load(args.model)
    except ModelError as error:
        print(f"bench_detector: {error}", file=sys.stderr)
        return 2
    backends = available_backends(manifest)
    print(f"model {manifest.directory} ({manifest.design}, imgsz {manifest.detector_imgsz}); {cpu_count()} cores")
    print(f"backends shipped: {', '.join(backends) or 'none'}")
    frames = benchmark_frames(args.frames)
    header = f"{'backend':<10}{'median ms':>10}{'p90 ms':>9}{'frames/s':>10}{'cards':>7}{'F1 real':>9}"
    print(f"{header}{'plain ms':>10}{'ratio':>7}")
    for backend in backends:
        try:
            detector = CardDetector(manifest.directory, backend=backend)
        except ModelError as error:
            print(f"{backend:<10} unavailable: {error}")
            continue
        median, p90, cards = time_detector(detector, frames)
        detector.manifest = detector.manifest.replace(detector_coarse_sizes=(), classifier_rotations=(0,))
        plain, _, _ = time_detector(detector, frames)
        detector.manifest = manifest
        f1 = "-"
        if not args.no_eval and (args.photos / "images").is_dir():
            report = evaluate_dataset(
                detector, args.photos / "images", args.photos / "labels", args.photos / "classes.txt"
            )
            f1 = f"{report.f1:.2f}"
        row = f"{backend:<10}{median:>10.1f}{p90:>9.1f}{1000 / median:>10.1f}{cards:>7.1f}{f1:>9}"
        print(f"{row}{plain:>10.1f}{median / plain:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
