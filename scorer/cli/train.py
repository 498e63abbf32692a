"""``okgin train``: the whole detector recipe, each stage skipped when done and resumed when cut short."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from scorer.cli import UserError


@click.command()
@click.option(
    "--data", "scene_dir", type=click.Path(path_type=Path), required=True, help="Scenes from 'okgin data generate'."
)
@click.option("--run", "run_dir", type=click.Path(path_type=Path), default=Path("runs/corners"), show_default=True)
@click.option("--detector-epochs", type=int, default=30, show_default=True)
@click.option("--classifier-epochs", type=int, default=15, show_default=True)
@click.option("--batch", type=int, default=32, show_default=True)
@click.option("--tiles-per-image", type=int, default=3, show_default=True)
@click.option("--crops-per-corner", type=int, default=2, show_default=True)
@click.option(
    "--init",
    "init_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Fine-tune from the weights shipped in this models/ folder instead of starting from scratch.",
)
@click.option("--device", default="cpu", show_default=True, help="cpu, or a CUDA index such as 0 on a GPU machine.")
@click.option("--workers", type=int, default=2, show_default=True)
@click.option(
    "--stage",
    type=click.Choice(["all", "detector", "classifier", "validate", "tune"]),
    default="all",
    show_default=True,
    help="validate: print the synthetic validation metrics of the model in --init (default models/); "
    "tune: choose that model's card threshold on the --data val scenes and write it into its manifest.",
)
@click.option("--ship", "ship_dir", type=click.Path(path_type=Path), default=None, help="Export the result to here.")
@click.option(
    "--corrections",
    "corrections_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Add the web page's corrected frames (its corrections/ folder) to the classifier's examples.",
)
@click.option("--seed", type=int, default=0, show_default=True)
def train(
    scene_dir: Path,
    run_dir: Path,
    detector_epochs: int,
    classifier_epochs: int,
    batch: int,
    tiles_per_image: int,
    crops_per_corner: int,
    init_dir: Path | None,
    device: str,
    workers: int,
    stage: str,
    ship_dir: Path | None,
    corrections_dir: Path | None,
    seed: int,
) -> None:
    """Train the corner detector and the rank/suit classifier on generated scenes.

    Re-running the same command resumes: tiles and crops already cut are kept, and a
    stage whose run stopped part-way resumes from its last checkpoint.
    """
    from scorer import training

    if not (scene_dir / "images" / "train").is_dir():
        hint = f"run 'okgin data generate --out {scene_dir}'"
        raise UserError(f"{scene_dir} holds no generated scenes; {hint}")
    model_dir = init_dir or Path(__file__).resolve().parents[2] / "models"
    if stage == "tune":
        _tune(model_dir, scene_dir)
        return
    if stage == "validate":
        crops = run_dir / "crops"
        try:
            metrics = training.validate(scene_dir, model_dir, crops if (crops / "val").is_dir() else None)
        except training.TrainingError as error:
            raise UserError(str(error)) from error
        click.echo(json.dumps({name: round(value, 4) for name, value in metrics.items()}))
        return
    init_detector = init_classifier = None
    if init_dir is not None:
        init_detector = init_dir / training.MODEL_FILES["detector"]
        init_classifier = init_dir / training.MODEL_FILES["classifier"]
        for path in (init_detector, init_classifier):
            if not path.exists():
                raise UserError(f"--init: no weights at {path}")
    try:
        detector_weights = run_dir / "detector" / "weights" / "best.pt"
        classifier_weights = run_dir / "classifier" / "weights" / "best.pt"
        if stage in {"all", "detector"}:
            tiles_yaml = run_dir / "tiles" / "data.yaml"
            if not tiles_yaml.exists():
                click.echo("cutting detector tiles ...")
                training.make_detector_tiles(scene_dir, run_dir / "tiles", tiles_per_image, seed)
            detector_weights = training.train_stage(
                "detect", tiles_yaml, run_dir / "detector", detector_epochs, training.TILE_SIZE, batch,
                init_detector, device, workers,
            )  # fmt: skip
        if stage in {"all", "classifier"}:
            crops = run_dir / "crops"
            if not training.crops_dataset_is_complete(crops):
                click.echo("cutting classifier crops ...")
                training.make_classifier_crops(scene_dir, crops, seed, crops_per_corner)
            if corrections_dir is not None:
                added = training.make_correction_crops(corrections_dir, init_dir, crops)
                click.echo(f"added {added} crops from the corrections in {corrections_dir}")
            classifier_weights = training.train_stage(
                "classify", crops, run_dir / "classifier", classifier_epochs, training.CROP_SIZE, batch * 4,
                init_classifier, device, workers,
            )  # fmt: skip
        if ship_dir is not None:
            extra: dict[str, object] = {
                "trained_on": str(scene_dir),
                "train_command": "okgin train " + " ".join(sys.argv[2:]),
            }
            manifest = training.ship(detector_weights, classifier_weights, ship_dir, extra)
            _tune(ship_dir, scene_dir)
            click.echo(json.dumps(json.loads(manifest.read_text()), indent=2))
    except training.TrainingError as error:
        raise UserError(str(error)) from error


def _tune(model_dir: Path, scene_dir: Path) -> None:
    """Choose the card threshold of the model in ``model_dir`` and say what was chosen and what it beat."""
    from scorer import training

    click.echo(f"choosing the card threshold of {model_dir} on the val scenes of {scene_dir} ...")
    try:
        before = json.loads((model_dir / "manifest.json").read_text(encoding="utf-8"))
        scores = training.tune_thresholds(model_dir, scene_dir)
    except (OSError, json.JSONDecodeError) as error:
        raise UserError(f"cannot read {model_dir}/manifest.json: {error}") from error
    except training.TrainingError as error:
        raise UserError(str(error)) from error
    previous = (before.get("detector_weight", 1.0), before.get("card_conf"))
    for score in scores:
        if (score.detector_weight, score.card_conf) == previous:
            click.echo("before: " + json.dumps(score.to_dict()))
    for score in scores[:5]:
        click.echo(json.dumps(score.to_dict()))
    best = scores[0]
    click.echo(f"wrote card_conf {best.card_conf}, detector_weight {best.detector_weight} to {model_dir}/manifest.json")
