"""A labelled photo set as a webcam would give it: narrowed, noisy and compressed (a yardstick, not training data).

    python scripts/webcam-like.py SOURCE DEST [--narrow 0.75 | --square] [--noise 8] [--specks 0.004] [--quality 80]

SOURCE holds ``images/``, ``labels/`` (YOLO boxes, which stay right under any resize) and ``classes.txt``;
DEST gets the same, each photo narrowed to ``--narrow`` of its width (a 16:9 webcam frame exported
square is narrowed 0.56; with ``--square`` each photo is resized to a square of its shorter side, as a set exported
at one square size is), given grey sensor noise of ``--noise`` levels (standard deviation), ``--specks`` of its
pixels turned black or white (dead and hot pixels), and saved as JPEG at ``--quality``. The same arguments
write the same set (the noise is seeded by ``--seed``), so ``okgin eval`` on it can compare two models.
Narrowing and noise together cost the shipped model far more than either alone (models/HISTORY.md, Session 17),
and a real deck seen so says more about a webcam over a real table than rendered scenes do.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import cv2
import numpy as np

from scorer.synth.camera import fixed_grain


def webcam_like(
    image: np.ndarray, rng: np.random.Generator, narrow: float | None, noise: float, specks: float
) -> np.ndarray:
    """``image`` narrowed to ``narrow`` of its width (None: squeezed to a square of its shorter side), with grey
    noise of standard deviation ``noise`` and a ``specks`` share of black or white pixels."""
    height, width = image.shape[:2]
    size = (max(1, round(width * narrow)), height) if narrow is not None else (min(width, height),) * 2
    narrowed = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return fixed_grain(narrowed, rng, noise, specks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("destination", type=Path)
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--narrow", type=float, default=0.75, help="width kept (default 0.75)")
    shape.add_argument("--square", action="store_true", help="each photo squeezed to a square of its shorter side")
    parser.add_argument("--noise", type=float, default=8.0, help="grey noise, standard deviation (default 8)")
    parser.add_argument("--specks", type=float, default=0.004, help="share of black or white pixels (default 0.004)")
    parser.add_argument("--quality", type=int, default=80, help="JPEG quality (default 80)")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    if not (args.source / "images").is_dir() or not (args.source / "labels").is_dir():
        parser.error(f"{args.source} has no images/ and labels/ folders")
    rng = np.random.default_rng(args.seed)
    (args.destination / "images").mkdir(parents=True, exist_ok=True)
    shutil.copytree(args.source / "labels", args.destination / "labels", dirs_exist_ok=True)
    if (args.source / "classes.txt").is_file():
        shutil.copy(args.source / "classes.txt", args.destination / "classes.txt")
    written = 0
    for photo in sorted((args.source / "images").iterdir()):
        image = cv2.imread(str(photo))
        if image is None:
            print(f"skipped {photo.name}: not an image OpenCV reads")
            continue
        out = args.destination / "images" / f"{photo.stem}.jpg"
        cv2.imwrite(
            str(out),
            webcam_like(image, rng, None if args.square else args.narrow, args.noise, args.specks),
            [cv2.IMWRITE_JPEG_QUALITY, args.quality],
        )
        written += 1
    print(f"wrote {written} photos to {args.destination / 'images'}")


if __name__ == "__main__":
    main()
