"""Detector benchmark: ms per 1280x720 frame for every shipped backend, and each one's F1 on the real photos.

    python benchmarks/bench_detector.py                    # the shipped models/ (or $OKGIN_MODEL_DIR)
    python benchmarks/bench_detector.py --model DIR --frames 10 --no-eval
    python benchmarks/bench_detector.py --no-eval --against OLD_MODEL_DIR   # ratio to another model
    python benchmarks/bench_detector.py --no-eval --decks procedural       # unfamiliar index styles
    python benchmarks/bench_detector.py --no-eval --decks dark             # ... all printed light on dark

The frames are rendered table scenes (``scorer.synth``), so the two-stage design has real corners
to classify: of the packaged decks (``okgin data faces``, in ``$OKGIN_FACES_DIR`` or the checkout's
``datasets/faces``) by default, of the procedural training styles with ``--decks procedural`` (all printed
light on dark faces with ``--decks dark``); the output says which. Without a scene renderer a real photo
scaled to 1280x720 is used.
Timing is per ``CardDetector.detect`` call (pre-processing, inference, decoding, NMS,
classifier batch, merging): median and 90th percentile over the frames, after a warm-up.

This machine's speed varies from day to day (the same model took 39 ms one session and 67 ms
another) and within a run, so each backend is also timed in the same run as the plain design of
session 1 (one look at the frame, one reading of each crop), frame by frame in turn with the model:
the ratio is what the coarse look and the turned readings cost, whatever the machine. ``--against
DIR`` times another model (the one shipped before, say) in the same rotation. Every backend is timed in that
one rotation too, and its ``/ auto`` column is its time over the first backend's (the one ``auto`` takes): one
backend run after another on a shared machine once read 1.46 times apart one way, and 1.35 the other way when
timed again alone.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("YOLO_OFFLINE", "1")

from scorer.synth.camera import fixed_grain
from scorer.vision.backends import available_backends, cpu_count, openvino_cpu
from scorer.vision.detector import CardDetector
from scorer.vision.evaluate import evaluate_dataset
from scorer.vision.manifest import ModelError, ModelManifest

REAL_PHOTOS = Path(__file__).resolve().parents[1].parent / "shared" / "real-photos" / "poker-cards-fmjio"
WIDTH, HEIGHT = 1280, 720


def benchmark_frames(count: int, decks: str, faces_dir: Path | None = None) -> tuple[list[np.ndarray], str]:
    """``count`` 1280x720 BGR frames of card tables, and what they show.

    ``decks`` is ``"packaged"`` (the designs ``okgin data faces`` renders from real decks: what a table
    usually holds), ``"procedural"`` (the random index styles of training: unfamiliar fonts, dark faces,
    faint prints, which leave the classifier doubtful far more often, so a frame takes longer) or ``"dark"``
    (procedural styles all printed light on dark faces, as a black deck is: looked at and read in negative
    too, and slower than the packaged frames in negative, which stand in for such a deck otherwise). The
    choice is explicit because they differ by half: packaged decks fall back to procedural ones,
    saying so, where none is rendered in ``faces_dir`` (default: ``scorer.synth.faces.DEFAULT_FACES_DIR``).
    """
    try:
        from scorer.synth.faces import DEFAULT_FACES_DIR, available_decks
        from scorer.synth.scene import SceneConfig, render_table_scene

        faces_dir = DEFAULT_FACES_DIR if faces_dir is None else faces_dir
        if decks == "packaged" and not available_decks(faces_dir):
            print("(no packaged deck rendered here: run okgin data faces; using procedural decks)", file=sys.stderr)
            decks = "procedural"
        config = SceneConfig(
            faces_dir=faces_dir,
            procedural_fraction=0.0 if decks == "packaged" else 1.0,
            dark_fraction=1.0 if decks == "dark" else None,
        )
        frames = [
            render_table_scene(seed, width=WIDTH, height=HEIGHT, mild=True, config=config)[0] for seed in range(count)
        ]
        shown = "procedural decks printed light on dark faces" if decks == "dark" else f"{decks} decks"
        return frames, f"rendered table scenes of {shown}"
    except Exception as error:  # no scene renderer here: fall back to real photos
        print(f"(scene renderer unavailable: {error}; using real photos)", file=sys.stderr)
    import cv2

    from scorer.vision.images import load_image

    photos = sorted((REAL_PHOTOS / "images").glob("*.jpg"))[:count]
    return [cv2.resize(load_image(photo), (WIDTH, HEIGHT)) for photo in photos], f"real photos of {REAL_PHOTOS.name}"


def describe_cpu() -> str:
    """The CPU and what OpenVINO computes in on it: only where it has bfloat16 is OpenVINO the faster engine
    (README, Speed), so a figure means little without them."""
    cpu = openvino_cpu()
    if cpu is None:
        return f"{platform.processor() or 'an unnamed CPU'} (OpenVINO not installed)"
    name, formats = cpu
    return f"{name} (OpenVINO computes in {', '.join(formats)})"


def time_detectors(
    detectors: Sequence[CardDetector], frames: list[np.ndarray], warmup: int = 2
) -> list[tuple[float, float, float]]:
    """(median ms, p90 ms, mean cards found) per frame, for each detector.

    The detectors take each frame in turn, so a machine that slows down part-way (another job, a
    noisy neighbour) slows them all alike and their ratios hold.
    """
    for frame in frames[:warmup]:
        for detector in detectors:
            detector.detect(frame)
    times: list[list[float]] = [[] for _ in detectors]
    cards: list[list[int]] = [[] for _ in detectors]
    for frame in frames:
        for index, detector in enumerate(detectors):
            start = time.perf_counter()
            found = detector.detect(frame)
            times[index].append((time.perf_counter() - start) * 1000)
            cards[index].append(len(found.cards))
    results = []
    for taken, counted in zip(times, cards, strict=True):
        taken.sort()
        results.append((statistics.median(taken), taken[int(0.9 * (len(taken) - 1))], statistics.mean(counted)))
    return results


def read_otherwise(detector: CardDetector, **changes: Any) -> CardDetector:
    """The same networks (the loaded sessions are shared) read with some manifest fields changed."""
    other = copy.copy(detector)
    other.manifest = detector.manifest.replace(**changes)
    return other


def plain_design(detector: CardDetector) -> CardDetector:
    """The same networks read as in session 1: one look at the frame, one reading of each crop (one cut, none in
    negative)."""
    return read_otherwise(
        detector,
        detector_coarse_sizes=(),
        extra_crop_pads=(),
        classifier_rotations=(0,),
        negative_below=None,
        negative_look_after=None,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="model directory (default: the shipped one)")
    parser.add_argument("--frames", type=int, default=20, help="timed frames per backend")
    parser.add_argument("--no-eval", action="store_true", help="skip the F1 on the real photos")
    parser.add_argument("--photos", type=Path, default=REAL_PHOTOS, help="YOLO-labelled photo set for F1")
    parser.add_argument("--against", type=Path, default=None, help="another model folder, timed in the same rotation")
    parser.add_argument(
        "--decks", choices=("packaged", "procedural", "dark"), default="packaged", help="what the rendered frames show"
    )
    args = parser.parse_args(argv)
    try:
        manifest = ModelManifest.load(args.model)
        against = None if args.against is None else ModelManifest.load(args.against)
    except ModelError as error:
        print(f"bench_detector: {error}", file=sys.stderr)
        return 2
    backends = available_backends(manifest)
    print(f"model {manifest.directory} ({manifest.design}, imgsz {manifest.detector_imgsz})")
    print(f"{cpu_count()} cores of {describe_cpu()}")
    print(f"backends, fastest first (auto takes the first): {', '.join(backends) or 'none'}")
    frames, shown = benchmark_frames(args.frames, args.decks)
    print(f"{len(frames)} frames of {WIDTH}x{HEIGHT}: {shown}")
    header = f"{'backend':<10}{'median ms':>10}{'p90 ms':>9}{'frames/s':>10}{'cards':>7}{'F1 real':>9}"
    against_header = "" if against is None else f"{'against ms':>12}{'ratio':>7}"
    print(f"{header}{'plain ms':>10}{'ratio':>7}{'/ auto':>8}{against_header}")
    loaded: list[tuple[str, list[CardDetector]]] = []
    for backend in backends:
        try:
            detector = CardDetector(manifest.directory, backend=backend)
            others = [plain_design(detector)]
            if against is not None:
                others.append(CardDetector(against.directory, backend=backend))
        except ModelError as error:
            print(f"{backend:<10} unavailable: {error}")
            continue
        loaded.append((backend, [detector, *others]))
    # every backend's detectors in one rotation, so that a machine slowing down part-way slows them all alike
    timed = iter(time_detectors([each for _, detectors in loaded for each in detectors], frames))
    default_median = None
    for backend, (detector, *others) in loaded:
        (median, p90, cards), (plain, _, _), *other = (next(timed) for _ in range(1 + len(others)))
        default_median = default_median or median
        f1 = "-"
        if not args.no_eval and (args.photos / "images").is_dir():
            report = evaluate_dataset(
                detector, args.photos / "images", args.photos / "labels", args.photos / "classes.txt"
            )
            f1 = f"{report.f1:.2f}"
        row = f"{backend:<10}{median:>10.1f}{p90:>9.1f}{1000 / median:>10.1f}{cards:>7.1f}{f1:>9}"
        compared = "".join(f"{ms:>12.1f}{median / ms:>7.2f}" for ms, _, _ in other)
        print(f"{row}{plain:>10.1f}{median / plain:>7.2f}{median / default_median:>8.2f}{compared}")
        if backend == backends[0] and detector.manifest.negative_look_after is not None:
            time_light_on_dark(detector, frames)
        if backend == backends[0] and detector.manifest.grain_median_above is not None:
            time_grainy(detector, frames)
    return 0


def time_light_on_dark(detector: CardDetector, frames: list[np.ndarray]) -> None:
    """The default backend on the frames in negative: a deck printed light on dark faces, which is looked at in
    negative as well (``CardDetector.find_boxes``), against the frames as they are, in the same rotation."""
    negatives = [np.invert(frame) for frame in frames]
    as_printed = read_otherwise(detector, negative_look_after=None)  # the looks before the negative one
    looked = sum(detector.light_on_dark(frame, as_printed.find_corners(frame)) for frame in negatives)
    time_against_frames(detector, frames, negatives, f"in negative (light on dark; looked at in negative on {looked}")


def time_grainy(detector: CardDetector, frames: list[np.ndarray], noise: float = 8.0, specks: float = 0.004) -> None:
    """The default backend on the frames with a webcam's grain (grey noise of standard deviation ``noise`` and a
    ``specks`` share of dead and hot pixels, as ``scripts/webcam-like.py`` adds), which are looked at
    median-filtered as well where it is over ``grain_median_above`` at the detector's size (``CardDetector.looks``),
    against the frames as they are, in the same rotation."""
    rng = np.random.default_rng(8)
    grainy = [fixed_grain(frame, rng, noise, specks) for frame in frames]
    looked = sum(len(detector.looks(frame)) > 1 for frame in grainy)
    time_against_frames(detector, frames, grainy, f"with grain (looked at filtered too on {looked}")


def time_against_frames(detector: CardDetector, frames: list[np.ndarray], changed: list[np.ndarray], what: str) -> None:
    """Time ``detector`` on ``frames`` and on ``changed`` (the same frames otherwise), one and the other in turn."""
    timed = [frame for pair in zip(frames, changed, strict=True) for frame in pair]
    taken: list[list[float]] = [[], []]
    for index, frame in enumerate(timed):
        start = time.perf_counter()
        detector.detect(frame)
        taken[index % 2].append((time.perf_counter() - start) * 1000)
    as_they_are, other = (statistics.median(times) for times in taken)
    print(
        f"  the frames {what} of {len(frames)}): {other:.1f} ms median ({1000 / other:.1f} frames/s), "
        f"{other / as_they_are:.2f} of the frames as they are"
    )


if __name__ == "__main__":
    sys.exit(main())
