"""``okgin detect`` and ``okgin eval``: the card detector on photos, and its score on labelled ones.

The model loads only when a command runs, so ``okgin --help`` stays fast. Every failure
(a missing model, an unreadable photo) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scorer.vision.manifest import BACKENDS

if TYPE_CHECKING:
    import numpy as np

    from scorer.vision.types import Detector

from scorer.cli import USAGE_ERROR, FiniteFloatRange, describe_os_error, fail


def load_detector(model_dir: Path | None, backend: str, conf: float | None, option: str | None = None) -> Detector:
    """The card detector for a command, or exit 2 naming what is wrong with the model (and the ``option``
    that named it, where that is not ``--model``)."""
    from scorer.vision.detector import CardDetector
    from scorer.vision.manifest import ModelError

    try:
        return CardDetector(model_dir, backend=backend, conf=conf)
    except ModelError as error:
        fail(str(error) if option is None else f"{option}: {error}")


def model_options(command: Any) -> Any:
    """The ``--model``, ``--backend`` and ``--conf`` options every vision command shares."""
    command = click.option(
        "--conf", type=FiniteFloatRange(0, 1), default=None, help="Detection threshold (default: the model's)."
    )(command)
    command = click.option(
        "--backend",
        type=click.Choice(BACKENDS),
        default="auto",
        show_default=True,
        help="Inference engine; auto takes the fastest shipped.",
    )(command)
    return click.option(
        "--model",
        "model_dir",
        type=click.Path(path_type=Path),
        default=None,
        help="Model directory with manifest.json (default: $OKGIN_MODEL_DIR, else the checkout's models/).",
    )(command)


@click.command()
@click.argument("images", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per image per line.")
@click.option(
    "--annotate",
    "annotate_dir",
    type=click.Path(file_okay=False),  # a str: an empty one (an unset variable) must not become "."
    default=None,
    help="Write a copy of each image with boxes and labels into this folder.",
)
@model_options
def detect(
    images: tuple[Path, ...],
    as_json: bool,
    annotate_dir: str | None,
    model_dir: Path | None,
    backend: str,
    conf: float | None,
) -> None:
    """Find the cards in photos, each card once.

    JSON lines: {"image", "width", "height", "cards": [{"card", "confidence", "box":
    [x1, y1, x2, y2]}], "conflicts": [{"card", "reason"}]}. An unreadable photo is
    reported on stderr and the others are still read; the exit status is then 2.
    """
    from scorer.vision.images import ImageError

    targets: dict[Path, Path] = {}
    if annotate_dir is not None:
        if not annotate_dir.strip():
            fail("--annotate: give a folder to write the boxed copies into")
        _ensure_folder(Path(annotate_dir), "--annotate")
        targets = annotation_targets(images, Path(annotate_dir))
    detector = load_detector(model_dir, backend, conf)
    failed = 0
    for path in images:
        try:
            image = read_photo(path)
        except ImageError as error:
            click.echo(f"okgin: {error}", err=True)
            failed += 1
            continue
        found = detector.detect(image)
        if as_json:
            click.echo(json.dumps({"image": str(path), **found.to_dict()}))
        else:
            cards = ", ".join(f"{c.card} {c.confidence:.2f}" for c in found.cards) or "no cards"
            click.echo(f"{path}: {len(found.cards)} cards: {cards}")
            for conflict in found.conflicts:
                click.echo(f"{path}: conflict: {conflict.reason}")
        if path in targets:
            _write_annotated(image, found, targets[path])
    if failed:
        sys.exit(USAGE_ERROR)


def read_photo(path: str | Path) -> np.ndarray:
    """A photo as a command reads it: a decoder's complaint about a picture read all the same ("Corrupt JPEG data")
    said as okgin's, and so is how a picture of several was read (only an animation's first frame); one that cannot
    be read is the ``ImageError`` alone, no decoder lines ("libpng error: IDAT: CRC error") printed beside its message.

    :raises ImageError: from ``scorer.vision.images.load_image``.
    """
    from scorer.vision.images import decoder_output, load_image

    notes: list[str] = []
    with decoder_output() as said:
        image = load_image(path, notes=notes)
    for line in [*said, *notes]:
        click.echo(f"okgin: {path}: {line}", err=True)
    return image


def annotation_targets(images: tuple[Path, ...], folder: Path) -> dict[Path, Path]:
    """Where each image's boxed copy goes: ``folder/<stem>.jpg``, numbered ``<stem>-2.jpg`` ... where two images
    share a stem, and never an input image itself (``--annotate`` naming the photos' own folder would have
    written over ``photo.jpg``).

    >>> targets = annotation_targets((Path("a/x.jpg"), Path("b/x.png"), Path("out/y.jpg")), Path("out"))
    >>> [str(target) for target in targets.values()]
    ['out/x.jpg', 'out/x-2.jpg', 'out/y-2.jpg']
    """
    inputs = {_identity(path) for path in images}
    taken: set[Path] = set()
    targets = {}
    for path in dict.fromkeys(images):
        number = 1
        target = folder / f"{path.stem}.jpg"
        while target in taken or _identity(target) in inputs:
            number += 1
            target = folder / f"{path.stem}-{number}.jpg"
        taken.add(target)
        targets[path] = target
    return targets


def _identity(path: Path) -> Path:
    """A path as the file system resolves it (symbolic links followed), to tell when two names are one file."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: compared as written
        return path.absolute()


def _ensure_folder(folder: Path, option: str) -> None:
    """Create an output folder before any work, or stop naming why it cannot be one."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        fail(f"{option}: {describe_os_error(error)}")


def _write_annotated(image: Any, found: Any, target: Path) -> None:
    from scorer.vision.annotate import annotate
    from scorer.vision.images import write_image

    try:
        write_image(target, annotate(image, found))
    except OSError as error:
        fail(f"--annotate: {describe_os_error(error)}")


@click.command()
@click.option("--images", "images_dir", required=True, type=click.Path(path_type=Path), help="Folder of photos.")
@click.option("--labels", "labels_dir", required=True, type=click.Path(path_type=Path), help="YOLO label folder.")
@click.option(
    "--classes",
    "classes_file",
    type=click.Path(path_type=Path),
    default=None,
    help="classes.txt: one class name a line, in class-id order; names that are not cards (joker, back) mark "
    "things that must not be read as cards, and a code that names no card (JK, 0C) is refused as a typo. "
    "Default: the classes.txt in the --labels folder (labelImg's layout), else the one beside it (a set's images/, "
    "labels/ and classes.txt side by side, as Roboflow exports them), a note saying which; else okgin's own "
    "order, as 'okgin data generate' writes.",
)
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write confusions.png and per-image.json here, and with per-stage figures indices.png: the labelled "
    "indices a stage got wrong, each cut from its photo.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the totals as JSON.")
@click.option(
    "--only",
    multiple=True,
    metavar="PATTERN",
    help="Score only the photos whose file name matches this shell pattern (repeatable), e.g. one deck "
    "of a mixed set: --only 'IMG_77*' --only 'IMG_78*'.",
)
@click.option(
    "--stages/--no-stages",
    default=None,
    help="Per-stage figures (detector recall of the labelled indices, classifier accuracy on them, by index "
    "height); needs corner-index labels. Default: on when the labels box corner indices.",
)
@click.option(
    "--against",
    "reference_dir",
    type=click.Path(path_type=Path),
    default=None,
    metavar="MODEL_DIR",
    help="Read the photos with this model too (its own threshold) and say whether --model reads them better: "
    "photos read with fewer and more errors, a sign test, and a paired bootstrap interval of the F1 change (in "
    "the JSON under 'against').",
)
@click.option(
    "--against-backend",
    "reference_backend",
    type=click.Choice(BACKENDS),
    default=None,
    help="The engine that runs the --against model (default: --backend's); with the same folder as --model, how "
    "much two engines' readings differ.",
)
@model_options
def evaluate(
    images_dir: Path,
    labels_dir: Path,
    classes_file: Path | None,
    plots_dir: Path | None,
    as_json: bool,
    only: tuple[str, ...],
    stages: bool | None,
    reference_dir: Path | None,
    reference_backend: str | None,
    model_dir: Path | None,
    backend: str,
    conf: float | None,
) -> None:
    """Card-level precision, recall, F1 and exact photos against YOLO-labelled photos.

    A predicted card counts when the photo is labelled with it and it lies on the label's
    box (whole-card or corner boxes alike); a card read on a label that is not a card (a
    joker) is invented. With corner-index labels, a per-stage table follows: per index
    height, how many indices the detector found and what the classifier named them
    (right, club/spade and heart/diamond swaps, another card, none). The output ends with
    "precision P recall R F1 F exact-images K/N"; with --against, the comparison follows it.
    A photo that cannot be read is reported on stderr and left out; the exit status is then 2.
    """
    from scorer.extras import MissingExtraError, require
    from scorer.vision.comparison import ComparisonError, compare_reports, format_comparison
    from scorer.vision.evaluate import EvalError, evaluate_dataset, format_report, write_plots

    if plots_dir is not None:
        try:
            require("matplotlib", "okgin eval --plots")
        except MissingExtraError as error:
            fail(str(error))
        _ensure_folder(plots_dir, "--plots")
    if reference_backend is not None and reference_dir is None:
        fail("--against-backend needs --against MODEL_DIR")
    detector = load_detector(model_dir, backend, conf)
    reference = (
        None if reference_dir is None else load_detector(reference_dir, reference_backend or backend, None, "--against")
    )
    comparison = None
    try:
        report = evaluate_dataset(detector, images_dir, labels_dir, classes_file, stages=stages, only=only)
        if reference is not None:
            # the per-stage figures are not compared: the reference is spared naming every labelled box again
            against = evaluate_dataset(reference, images_dir, labels_dir, classes_file, only=only)
            comparison = compare_reports(against, report)
    except (EvalError, ComparisonError) as error:
        fail(str(error))
    if as_json:
        totals = report.to_dict()
        if comparison is not None:
            totals["against"] = comparison.to_dict()
        click.echo(json.dumps(totals))
    else:
        click.echo(format_report(report))
        if comparison is not None:
            engine = "" if reference_backend is None else f" on {reference_backend}"
            click.echo(format_comparison(comparison, f"{reference_dir}{engine}"))
    for unreadable in report.errors:  # on stderr, as detect reports them
        click.echo(f"okgin: {unreadable}", err=True)
    if plots_dir is not None:
        try:
            written = write_plots(report, plots_dir)
        except OSError as error:
            fail(f"--plots: {describe_os_error(error)}")
        for path in written:
            click.echo(f"wrote {path}", err=True)
    if report.errors:
        sys.exit(USAGE_ERROR)
