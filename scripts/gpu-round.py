"""One training round on a lent GPU inside a fixed number of seconds.

A lent GPU comes for minutes, with many CPU cores and no network, and what can be carried to it is small:
so the scenes are rendered there, on every core, from the fonts and rendered decks carried along, then cut
into detector tiles and classifier crops, and both networks are fine-tuned at once from ``--init`` (or one
alone, ``--stages``), each bounded by wall time (``scorer.training.train_stage``'s ``hours``). The weights
(best by synthetic val and last) and each stage's ``results.csv`` land in ``--out``; the shipping decision is
made afterwards, on the yardsticks (``scripts/yardsticks.sh``), like any candidate's.

    python3 scripts/gpu-round.py --init models --work /tmp/round --out "$OUT" --seed 4000 --seconds 500 --device 0
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout, where nothing is installed

from scorer.synth.dataset import write_dataset
from scorer.synth.scene import SceneConfig
from scorer.training import (
    CROP_SIZE,
    MODEL_FILES,
    TILE_SIZE,
    make_classifier_crops,
    make_detector_tiles,
    train_stage,
)

SCENES_PER_SHARD = 12
"""Scenes one worker renders and cuts at a time: small, so the last shards end near the render deadline."""
FINAL_VALIDATION_SECONDS = 45
"""Kept from the training time for ultralytics' last validation and the copying."""


def render_shard(job: tuple[Path, int, SceneConfig, bool]) -> float:
    """Render one shard of scenes and cut its tiles (and crops, if asked); returns the seconds it took."""
    work, seed, config, with_crops = job
    started = time.monotonic()
    scenes = work / "scenes" / str(seed)
    write_dataset(scenes, SCENES_PER_SHARD, seed, config, val_fraction=0.09)
    make_detector_tiles(scenes, work / "tiles" / str(seed), tiles_per_image=3, seed=seed)
    if with_crops:
        make_classifier_crops(scenes, work / "crops", seed, crops_per_corner=2)  # one tree: names hold the seed
    return time.monotonic() - started


def render_until(
    work: Path, first_seed: int, deadline: float, processes: int, config: SceneConfig, crop_every: int
) -> list[int]:
    """Keep every core rendering shards while one more can end before ``deadline``; returns the shard seeds.
    Every ``crop_every``-th shard is cut into classifier crops too (none when ``crop_every`` is 0): a shard's
    crops outnumber its tiles tenfold, and the classifier's loaders, not the GPU, set its pace."""
    done: list[int] = []
    slowest = 0.0
    pending: dict[int, multiprocessing.pool.AsyncResult] = {}
    next_seed = first_seed
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        while True:
            while len(pending) < processes and time.monotonic() + max(slowest, 1.0) < deadline:
                with_crops = crop_every > 0 and (next_seed - first_seed) % crop_every == 0
                job = (work, next_seed, config, with_crops)
                pending[next_seed] = pool.apply_async(render_shard, (job,))
                next_seed += 1
            if not pending:
                return done
            for seed in [seed for seed, result in pending.items() if result.ready()]:
                slowest = max(slowest, pending.pop(seed).get())
                done.append(seed)
            time.sleep(0.2)


def merge(work: Path, seeds: list[int]) -> tuple[Path, Path]:
    """One detector dataset YAML over every shard's tiles; the crops' ImageFolder tree, made fit to load."""
    tiles = {
        split: [str(work / "tiles" / str(seed) / "images" / split) for seed in seeds] for split in ("train", "val")
    }
    tiles_yaml = work / "tiles.yaml"
    tiles_yaml.write_text(json.dumps({"train": tiles["train"], "val": tiles["val"], "names": {0: "corner"}}))
    crops = work / "crops"
    val_dirs = (crops / "val").iterdir() if (crops / "val").is_dir() else ()  # none when only the detector trains
    for val_dir in val_dirs:  # ImageFolder refuses an empty class: lend it one train crop
        spare = next((crops / "train" / val_dir.name).iterdir(), None)
        if spare is not None and not any(val_dir.iterdir()):
            spare.rename(val_dir / spare.name)
    return tiles_yaml, crops


def train_stages(
    stages: set[str], work: Path, tiles_yaml: Path, crops: Path, init: Path, device: str, deadline: float, cores: int
) -> None:
    """Fine-tune the ``stages`` (detector, classifier or both side by side) until ``deadline``
    (``time.monotonic()``); with both, the detector's mosaics take most of the ``cores`` that feed them. A run
    still going at the deadline (its last epoch or final validation ran long) is stopped: each epoch has saved
    its weights."""
    both = len(stages) > 1
    detector_cores = cores * 5 // 8 if both else cores  # a stage alone takes every core
    classifier_cores = cores - detector_cores if both else cores
    hours = max(deadline - time.monotonic() - FINAL_VALIDATION_SECONDS, 30) / 3600
    detector = {
        "task": "detect", "data": tiles_yaml, "run_dir": work / "detector", "imgsz": TILE_SIZE, "batch": 128,
        "init_weights": init / MODEL_FILES["detector"], "lr0": 0.005, "workers": max(1, detector_cores),
    }  # fmt: skip
    classifier = {
        "task": "classify", "data": crops, "run_dir": work / "classifier", "imgsz": CROP_SIZE, "batch": 512,
        "init_weights": init / MODEL_FILES["classifier"], "lr0": 0.0005, "workers": max(1, classifier_cores),
    }  # fmt: skip
    context = multiprocessing.get_context("spawn")
    runs = [
        context.Process(
            target=train_stage, kwargs={**stage, "epochs": 1000, "device": device, "hours": hours, "cache": True}
        )
        for name, stage in (("detector", detector), ("classifier", classifier))
        if name in stages
    ]
    for run in runs:
        run.start()
    for run in runs:
        run.join(timeout=max(deadline - time.monotonic(), 0))
        if run.is_alive():
            run.terminate()
            run.join()


def copy_results(work: Path, out: Path) -> None:
    """Each stage's best and last weights and its ``results.csv``, as ``det-*`` and ``cls-*`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for stage, short in (("detector", "det"), ("classifier", "cls")):
        for name in ("weights/best.pt", "weights/last.pt", "results.csv"):
            source = work / stage / name
            if source.exists():
                shutil.copy(source, out / f"{short}-{Path(name).name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--init", type=Path, required=True, help="folder of the weights to fine-tune (models/)")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder for scenes, tiles, crops and runs")
    parser.add_argument("--out", type=Path, required=True, help="where the weights and results.csv files go")
    parser.add_argument("--seed", type=int, required=True, help="first shard's seed; shard k renders with seed+k")
    parser.add_argument("--seconds", type=float, default=500, help="the whole round, rendering to last epoch")
    parser.add_argument("--render-share", type=float, default=0.4, help="share of the seconds spent rendering")
    parser.add_argument("--crop-every", type=int, default=3, help="cut classifier crops from every n-th shard")
    parser.add_argument("--stages", default="detector,classifier", help="detector, classifier or both")
    parser.add_argument("--closeup-percent", type=int, default=35, help="share of phone-style close-ups, in %%")
    parser.add_argument("--dark-percent", type=int, default=None, help="share of procedural styles on dark faces")
    parser.add_argument("--device", default="0", help="ultralytics device: 0 for the first GPU, cpu to try it out")
    args = parser.parse_args()

    started = time.monotonic()
    deadline = started + args.seconds
    processes = len(os.sched_getaffinity(0))  # a container's cpu_count() can be the host's
    stages = set(args.stages.split(","))  # "detector,detector" is the detector alone, with every core
    if not stages <= {"detector", "classifier"}:
        parser.error(f"--stages takes detector, classifier or both, comma-separated, not {args.stages!r}")
    config = SceneConfig(
        closeup_fraction=args.closeup_percent / 100,
        dark_fraction=None if args.dark_percent is None else args.dark_percent / 100,
    )
    seeds = render_until(
        args.work, args.seed, started + args.seconds * args.render_share, processes, config,
        args.crop_every if "classifier" in stages else 0,
    )  # fmt: skip
    rendered = time.monotonic() - started
    tiles_yaml, crops = merge(args.work, seeds)
    merged = time.monotonic() - started
    try:
        train_stages(stages, args.work, tiles_yaml, crops, args.init, args.device, deadline, processes)
    finally:
        copy_results(args.work, args.out)
    summary = {
        "shards": len(seeds),
        "scenes": len(seeds) * SCENES_PER_SHARD,
        "seeds": [min(seeds), max(seeds)] if seeds else [],
        "tiles": sum(1 for _ in args.work.glob("tiles/*/images/train/*")),
        "crops": sum(1 for _ in crops.glob("train/*/*")),
        "render_seconds": round(rendered),
        "merge_seconds": round(merged - rendered),
        "total_seconds": round(time.monotonic() - started),
    }
    (args.out / "round.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
