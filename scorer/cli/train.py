"""``okgin train``: the detector recipe (``scorer.training.train``) from the command line, each stage
skipped when done and resumed when cut short."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scorer.cli import FiniteFloatRange, UserError
from scorer.training import STAGES, TrainConfig

if TYPE_CHECKING:
    from scorer.training import Tuning


def _default(name: str) -> Any:
    """The recipe's own default for an option, so the command and ``TrainConfig`` never disagree."""
    return TrainConfig.__dataclass_fields__[name].default


@click.command()
@click.option(
    "--data", "scene_dir", type=click.Path(path_type=Path), required=True, help="Scenes from 'okgin data generate'."
)
@click.option(
    "--run",
    "run_dir",
    type=click.Path(path_type=Path),
    default=_default("run_dir"),
    show_default=True,
    help="Folder of this run's tiles, crops and weights; the same --run resumes it.",
)
@click.option(
    "--detector-epochs",
    type=int,
    default=_default("detector_epochs"),
    show_default=True,
    help="Corner detector epochs.",
)
@click.option(
    "--classifier-epochs",
    type=int,
    default=_default("classifier_epochs"),
    show_default=True,
    help="Card classifier epochs.",
)
@click.option("--batch", type=int, default=_default("batch"), show_default=True, help="Training batch size.")
@click.option(
    "--tiles-per-image",
    type=int,
    default=_default("tiles_per_image"),
    show_default=True,
    help="Detector tiles cut from each scene, most centred near a labelled index.",
)
@click.option(
    "--tile-noise",
    type=FiniteFloatRange(0, 1),
    default=_default("tile_noise"),
    show_default=True,
    help="Share of scenes whose detector tiles get sensor noise and dead pixels at the detector's own scale.",
)
@click.option(
    "--crops-per-corner",
    type=int,
    default=_default("crops_per_corner"),
    show_default=True,
    help="Classifier crops cut around each labelled index, each box jittered afresh.",
)
@click.option(
    "--init",
    "init_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Fine-tune from the weights shipped in this models/ folder instead of starting from scratch.",
)
@click.option(
    "--device", default=_default("device"), show_default=True, help="cpu, or a CUDA index such as 0 on a GPU machine."
)
@click.option("--workers", type=int, default=_default("workers"), show_default=True, help="Data-loading processes.")
@click.option(
    "--stage",
    type=click.Choice([*STAGES, "validate", "tune", "quantize"]),
    default=_default("stage"),
    show_default=True,
    help="validate: print the synthetic validation metrics of the model in --init "
    "(default: $OKGIN_MODEL_DIR or the checkout's models/); "
    "tune: choose that model's card threshold on the --data val scenes and write it into its manifest; "
    "quantize: write an int8 copy of that model's ONNX classifier, calibrated on the --data val scenes, "
    "and point its manifest at it.",
)
@click.option("--ship", "ship_dir", type=click.Path(path_type=Path), default=None, help="Export the result to here.")
@click.option(
    "--corrections",
    "corrections_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Add the web page's corrected frames (its corrections/ folder) to the classifier's examples.",
)
@click.option(
    "--mine-negatives",
    is_flag=True,
    default=_default("mine_negatives"),
    help="Add the --init model's false alarms on the scenes to the detector's tiles and the classifier's 'none' crops.",
)
@click.option(
    "--freeze",
    type=click.IntRange(0),
    default=_default("freeze"),
    show_default=True,
    help="Keep the first N layers of the --init networks as they are (their low-level features) while fine-tuning.",
)
@click.option(
    "--lr0",
    type=float,
    default=_default("lr0"),
    help="Starting learning rate of the stages trained (default: 0.01 for the detector, 0.002 for the classifier); "
    "a fine-tune that should keep what --init reads well takes less.",
)
@click.option(
    "--seed",
    type=int,
    default=_default("seed"),
    show_default=True,
    help="Seed of the tiles, crops and training; use a fresh one for each new set of scenes.",
)
def train(
    scene_dir: Path,
    run_dir: Path,
    detector_epochs: int,
    classifier_epochs: int,
    batch: int,
    tiles_per_image: int,
    tile_noise: float,
    crops_per_corner: int,
    init_dir: Path | None,
    device: str,
    workers: int,
    stage: str,
    ship_dir: Path | None,
    corrections_dir: Path | None,
    mine_negatives: bool,
    freeze: int,
    lr0: float | None,
    seed: int,
) -> None:
    """Train the corner detector and the rank/suit classifier on generated scenes.

    Re-running the same command resumes: tiles and crops already cut are kept, and a
    stage whose run stopped part-way resumes from its last checkpoint.
    """
    from scorer import training
    from scorer.extras import MissingExtraError, require
    from scorer.vision.manifest import ModelError, default_model_dir

    try:
        training.check_scenes(scene_dir)
        if stage == "quantize":
            require("onnx", "okgin train --stage quantize")
        elif stage != "tune":  # tuning runs the model through ONNX Runtime: the light install suffices
            require("ultralytics", "okgin train")
        if stage in {"tune", "validate", "quantize"}:
            model_dir = init_dir or default_model_dir()
            if stage == "quantize":
                from scorer.quantize import quantize_model

                manifest = quantize_model(model_dir, scene_dir)
                quantized = f"{manifest.detector_onnx} and {manifest.classifier_onnx}"
                click.echo(f"{model_dir}/manifest.json now names {quantized}")
            elif stage == "tune":
                click.echo(f"choosing the card threshold of {model_dir} on the val scenes of {scene_dir} ...")
                _report(training.tune_thresholds(model_dir, scene_dir), model_dir)
            else:
                crops = run_dir / "crops"
                metrics = training.validate(scene_dir, model_dir, crops if (crops / "val").is_dir() else None)
                click.echo(json.dumps({name: round(value, 4) for name, value in metrics.items()}))
            return
        config = training.TrainConfig(
            scene_dir=scene_dir,
            run_dir=run_dir,
            detector_epochs=detector_epochs,
            classifier_epochs=classifier_epochs,
            batch=batch,
            tiles_per_image=tiles_per_image,
            tile_noise=tile_noise,
            crops_per_corner=crops_per_corner,
            init_dir=init_dir,
            device=device,
            workers=workers,
            stage=stage,
            ship_dir=ship_dir,
            corrections_dir=corrections_dir,
            mine_negatives=mine_negatives,
            freeze=freeze,
            lr0=lr0,
            seed=seed,
            provenance={"trained_on": str(scene_dir), "train_command": "okgin train " + " ".join(sys.argv[2:])},
        )
        result = training.train(config, log=click.echo)
    except (training.TrainingError, ModelError, MissingExtraError) as error:
        raise UserError(str(error)) from error
    if result.tuning is not None and ship_dir is not None:
        _report(result.tuning, ship_dir)
    if result.manifest is not None:
        click.echo(result.manifest.read_text(encoding="utf-8").rstrip())


def _report(tuning: Tuning, model_dir: Path) -> None:
    """Say which card threshold was chosen and what it beat."""
    if tuning.before is not None:
        click.echo("before: " + json.dumps(tuning.before.to_dict()))
    for score in tuning.scores[:5]:
        click.echo(json.dumps(score.to_dict()))
    best = tuning.best
    click.echo(f"wrote card_conf {best.card_conf}, detector_weight {best.detector_weight} to {model_dir}/manifest.json")


def _into_model_folder(what: str) -> Any:
    """The ``--into`` option of the commands that put weights files into a models/ folder."""
    return click.option(
        "--into",
        "model_dir",
        type=click.Path(path_type=Path, exists=True, file_okay=False),
        required=True,
        help=f"A models/ folder: {what}.",
    )


def _weights_into(
    build: Callable[[list[Path], Path], Path], weights: tuple[Path, ...], model_dir: Path, command: str
) -> Path:
    """Run ``build(weights, model_dir)`` (a ``scorer.training`` function), its errors as usage errors."""
    from scorer import training
    from scorer.extras import MissingExtraError, require
    from scorer.vision.manifest import ModelError

    try:
        require("ultralytics", command)
        return build(list(weights), model_dir)
    except (training.TrainingError, ModelError, MissingExtraError) as error:
        raise UserError(str(error)) from error


_WEIGHTS = click.argument("weights", nargs=-1, type=click.Path(path_type=Path, exists=True, dir_okay=False))


@click.command("average-weights")
@_WEIGHTS
@_into_model_folder("its classifier (or detector, as the weights are) becomes their average")
def average_weights(weights: tuple[Path, ...], model_dir: Path) -> None:
    """Average runs fine-tuned from one start (a "model soup") into a model folder, thresholds kept.

    WEIGHTS are two or more .pt files, e.g. runs/c11/classifier/weights/best.pt.
    """
    from scorer import training

    manifest = _weights_into(training.average_weights, weights, model_dir, "okgin average-weights")
    click.echo(f"wrote the average of {len(weights)} weights files into {model_dir}; its manifest: {manifest}")


@click.command("veto-classifiers")
@_WEIGHTS
@_into_model_folder("these classifiers may veto the cards its classifier is unsure of")
@click.option(
    "--below",
    type=FiniteFloatRange(0, 1, min_open=True),
    default=None,
    help="Only cards the classifier reads less surely than this are shown to them (default: every card).",
)
def veto_classifiers(weights: tuple[Path, ...], model_dir: Path, below: float | None) -> None:
    """Give a model folder's classifier classifiers that may veto its doubtful cards, never name another.

    WEIGHTS are one or more classifier .pt files, e.g. one fine-tuned on hard negatives (keyboards): each costs
    a pass over the boxes it is shown, once each; averaged into the classifier (average-weights) it would cost
    nothing, but dilute the veto and change the classifier's own names.
    """
    from scorer import training

    def build(vetoes: list[Path], into: Path) -> Path:
        return training.add_veto_classifiers(vetoes, into, below)

    manifest = _weights_into(build, weights, model_dir, "okgin veto-classifiers")
    click.echo(f"gave the classifier of {model_dir} {len(weights)} veto classifiers; its manifest: {manifest}")
