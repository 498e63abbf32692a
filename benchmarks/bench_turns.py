"""How long a table of plain cards waits while another client sends frames that cost many network runs.

    python benchmarks/bench_turns.py [--seconds 8] [--rounds 2] [--heavy FRAME] [--light FRAME] [--backend auto]

``okgin serve`` reads the frames of several tables with one detector. Each frame used to hold it from its first
network run to its last, so a table of plain cards waited for the whole of a costly frame (a sharp keyboard
under the camera: 7,992 classifier crops, 10 s of two cores); now the frames take turns run by run
(``web.detection.Turns``). Two clients post at once for ``--seconds``, each its next frame once the last is
answered: one the costly frame, one the plain table. Both ways are timed in rotation, ``--rounds`` times each, the
old way (a frame read whole, one turn) as the reference. Without frames the costly one is a rendered table of an
unfamiliar deck that leaves most boxes in doubt (``bench_detector.benchmark_frames``' procedural decks, seed 7:
some 2,200 crops) and the plain one another of those tables (seed 3, some 50 crops).
Printed: the plain table's median and slowest answer, how many frames each client got, and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from bench_detector import benchmark_frames

from scorer.vision.detector import CardDetector
from scorer.vision.manifest import BACKENDS, ModelError
from web.detection import DetectorService


class WholeFrame:
    """The detector as the service held it before: a frame read whole, in one turn."""

    def __init__(self, detector: CardDetector) -> None:
        self.detector = detector

    def detect(self, image_bgr: np.ndarray) -> Any:
        return self.detector.detect(image_bgr)


def clients(service: DetectorService, heavy: np.ndarray, light: np.ndarray, seconds: float) -> dict[str, list[float]]:
    """Each client's answer times, both posting their next frame as soon as the last is answered."""
    answers: dict[str, list[float]] = {"costly": [], "plain": []}
    stop = time.perf_counter() + seconds

    def post(name: str, frame: np.ndarray) -> None:
        while time.perf_counter() < stop:
            started = time.perf_counter()
            service.detect(frame)
            answers[name].append(time.perf_counter() - started)

    posting = (("costly", heavy), ("plain", light))
    threads = [threading.Thread(target=post, args=(name, frame)) for name, frame in posting]
    for thread in threads:
        thread.start()
        time.sleep(0.05)  # the costly frame first, as a keyboard already under the camera
    for thread in threads:
        thread.join()
    return answers


def read_frame(path: Path) -> np.ndarray:
    """A frame given, or exit 2 naming it."""
    frame = cv2.imread(str(path))
    if frame is None:
        raise SystemExit(f"bench_turns: cannot read {path}")
    return frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="how long both clients post (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each way, in rotation (default 2)")
    parser.add_argument("--heavy", type=Path, default=None, help="the costly frame (default: rendered)")
    parser.add_argument("--light", type=Path, default=None, help="the plain table's frame (default: rendered)")
    parser.add_argument("--model", type=Path, default=None, help="model directory (default: the shipped one)")
    parser.add_argument("--backend", default="auto", choices=BACKENDS)
    args = parser.parse_args(argv)
    rendered = benchmark_frames(8, "procedural")[0] if args.heavy is None or args.light is None else []
    heavy = read_frame(args.heavy) if args.heavy is not None else rendered[7]
    light = read_frame(args.light) if args.light is not None else rendered[3]
    try:
        detector = CardDetector(args.model, backend=args.backend)
    except ModelError as error:
        print(f"bench_turns: {error}", file=sys.stderr)
        return 2
    ways = {
        "whole frame": DetectorService(WholeFrame(detector), None, queue_limit=4, wait_seconds=600),
        "turns": DetectorService(detector, None, queue_limit=4, wait_seconds=600),
    }
    for service in ways.values():  # warm-up: the first inferences allocate
        service.detect(light)
        service.detect(heavy)
    timed: dict[str, dict[str, list[float]]] = {way: {"costly": [], "plain": []} for way in ways}
    for _ in range(args.rounds):
        for way, service in ways.items():
            for name, times in clients(service, heavy, light, args.seconds).items():
                timed[way][name] += times
    print(f"{detector!r}, {args.rounds} x {args.seconds:g} s each way")
    print(f"  {'way':12s} {'plain: frames':>13s} {'median ms':>9s} {'slowest ms':>10s}   {'costly: frames':>14s} ms")
    for way, times in timed.items():
        plain, costly = times["plain"], times["costly"]
        print(
            f"  {way:12s} {len(plain):13d} {1000 * statistics.median(plain):9.1f} {1000 * max(plain):10.1f}"
            f"   {len(costly):14d} {1000 * statistics.median(costly):9.1f}"
        )
    old, new = timed["whole frame"], timed["turns"]
    median = {way: statistics.median(times["plain"]) for way, times in timed.items()}
    costly = {way: statistics.median(times["costly"]) for way, times in timed.items()}
    print(
        f"  turns / whole frame: the plain table's median answer {median['turns'] / median['whole frame']:.2f},"
        f" slowest {max(new['plain']) / max(old['plain']):.2f}; the costly frame's median"
        f" {costly['turns'] / costly['whole frame']:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
