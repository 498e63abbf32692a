"""Write rendered scenes as an ultralytics detection dataset, byte-for-byte the same for the same seed.

Layout (what ``yolo train data=DIR/data.yaml`` expects, plus the scene truth for other tools)::

    DIR/data.yaml
    DIR/images/{train,val}/NAME.jpg
    DIR/labels/{train,val}/NAME.txt    # class cx cy w h, one line per visible corner index
    DIR/meta/{train,val}/NAME.json     # SceneTruth.to_json(): every card's outline, zone, seat, z-order
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from scorer.cards import CLASS_NAMES
from scorer.synth.scene import DEFAULT_CONFIG, SceneConfig, render_scene
from scorer.vision.labels import dataset_yaml, write_label_file

SPLITS = ("train", "val")


@dataclasses.dataclass(frozen=True)
class DatasetSummary:
    """What ``write_dataset`` wrote."""

    root: Path
    images: dict[str, int]
    labels: int
    cards: int


def scene_seed(seed: int, number: int) -> int:
    """The seed of image ``number`` of a dataset generated with ``seed``: independent streams per image."""
    return int(np.random.SeedSequence([seed, number]).generate_state(1)[0])


def split_of(number: int, count: int, val_fraction: float) -> str:
    """Which split image ``number`` of ``count`` goes to: the last ``val_fraction`` (at least one) are val."""
    val_count = round(count * val_fraction)
    if val_fraction > 0 and count >= 2:
        val_count = max(1, val_count)
    return "val" if number >= count - val_count else "train"


def data_yaml(root: Path) -> str:
    """The ultralytics dataset file for a dataset at ``root``; class names in ``scorer.cards`` order."""
    return dataset_yaml(root.resolve(), CLASS_NAMES, "images/train", "images/val")


def _render_one(job: tuple[int, int, SceneConfig]) -> tuple[int, bytes, list[str], str, int]:
    number, seed, config = job
    image, truth = render_scene(seed, config)
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, truth.jpeg_quality])
    if not ok:
        raise RuntimeError(f"JPEG encoding failed for scene {seed}")
    meta = json.dumps(truth.to_json(), separators=(",", ":"))
    return number, encoded.tobytes(), truth.yolo_lines(), meta, len(truth.cards)


def _jobs(count: int, seed: int, config: SceneConfig) -> Iterator[tuple[int, int, SceneConfig]]:
    for number in range(count):
        yield number, scene_seed(seed, number), config


def write_dataset(
    root: Path,
    count: int,
    seed: int,
    config: SceneConfig = DEFAULT_CONFIG,
    val_fraction: float = 0.1,
    workers: int = 1,
    progress: bool = False,
) -> DatasetSummary:
    """Render ``count`` scenes into ``root`` as an ultralytics dataset, with worker processes if asked.

    Each image depends only on ``(seed, its number, config)``, so the files are identical whatever the number
    of workers. File names start with ``s<seed>_``: runs with other seeds can share a folder (their images add
    up), while a rerun with the same seed first removes that seed's earlier files.

    :raises ValueError: for a negative count or a val fraction outside 0..1.
    """
    if count < 0:
        raise ValueError(f"image count must be >= 0, got {count}")
    if not 0 <= val_fraction < 1:
        raise ValueError(f"val fraction must be in [0, 1), got {val_fraction}")
    root = Path(root)
    for kind in ("images", "labels", "meta"):
        for split in SPLITS:
            folder = root / kind / split
            folder.mkdir(parents=True, exist_ok=True)
            for stale in folder.glob(f"s{seed}_*"):  # an earlier run with this seed; other seeds' files stay
                stale.unlink()
    for cache in (root / "labels").glob("*.cache"):  # ultralytics' label cache would describe the old files
        cache.unlink()
    (root / "data.yaml").write_text(data_yaml(root))

    images = dict.fromkeys(SPLITS, 0)
    labels = cards = 0
    jobs = _jobs(count, seed, config)
    pool = multiprocessing.get_context("spawn").Pool(workers) if workers > 1 else None
    try:
        results = pool.imap(_render_one, jobs, chunksize=4) if pool else map(_render_one, jobs)
        if progress:
            from tqdm import tqdm

            results = tqdm(results, total=count, unit="scene", desc=f"rendering into {root}")
        for number, jpeg, lines, meta, card_count in results:
            split = split_of(number, count, val_fraction)
            name = f"s{seed}_{number:06d}"
            (root / "images" / split / f"{name}.jpg").write_bytes(jpeg)
            write_label_file(root / "labels" / split / f"{name}.txt", lines)
            (root / "meta" / split / f"{name}.json").write_text(meta)
            images[split] += 1
            labels += len(lines)
            cards += card_count
    finally:
        if pool:
            pool.close()
            pool.join()
    return DatasetSummary(root, images, labels, cards)
