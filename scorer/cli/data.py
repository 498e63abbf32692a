"""``okgin data``: render card faces, generate synthetic training scenes, and preview labelled datasets.

Heavy imports (OpenCV, numpy) happen inside the commands so that ``okgin --help`` stays instant.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from scorer.cli import FiniteFloatRange, UserError
from scorer.synth.faces import DEFAULT_FACES_DIR

SHEET_SUFFIXES = (".jpg", ".png")
"""What ``okgin data preview --out`` may name: the formats the contact sheet is written in."""


def _share_option(flag: str, default: float | None, help_text: str) -> Callable[[Any], Any]:
    """A ``--...-fraction`` option of ``generate``: a share of the scenes, from 0 to 1."""
    return click.option(
        flag, type=FiniteFloatRange(0, 1), default=default, show_default=default is not None, help=help_text
    )


@click.group()
def data() -> None:
    """Build the detector's training data from free card designs."""


@data.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_FACES_DIR,
    show_default=True,
    help="Where the rendered decks go.",
)
@click.option("--deck", "decks", multiple=True, help="Render only this deck (repeatable); default: every known deck.")
@click.option("--list", "list_only", is_flag=True, help="List the known decks and their sources, render nothing.")
def faces(out_dir: Path, decks: tuple[str, ...], list_only: bool) -> None:
    """Render each deck's 52 faces, backs and jokers, and measure its corner indices (calibration.json)."""
    from scorer.synth import faces as faces_module

    if list_only:
        for source in faces_module.DECKS:
            click.echo(f"{source.name:16} {source.svg}  [{source.package}: {source.licence}]")
        return
    missing = faces_module.missing_packages()
    if missing:
        click.echo(f"error: missing Debian package(s) {', '.join(missing)}; install them with:", err=True)
        click.echo(f"  {faces_module.INSTALL_COMMAND}", err=True)
        raise SystemExit(2)
    try:
        chosen = faces_module.select_decks(decks or None)
        with click.progressbar(
            chosen, label=f"rendering {len(chosen)} decks into {out_dir}", item_show_func=lambda s: s.name if s else ""
        ) as bar:
            for source in bar:
                faces_module.render_deck(source, out_dir)
    except faces_module.FacesUnavailableError as error:
        raise UserError(str(error)) from error
    click.echo(f"rendered {len(chosen)} decks: {', '.join(source.name for source in chosen)}")


@data.command()
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="Dataset folder to write."
)
@click.option("--n", "count", type=click.IntRange(min=1), required=True, help="Number of images.")
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed, same files.")
@click.option(
    "--width-range",
    type=(click.IntRange(min=64), click.IntRange(min=64)),
    default=(640, 1920),
    show_default=True,
    help="Smallest and largest frame width.",
)
@click.option("--val-fraction", type=FiniteFloatRange(0, 1, max_open=True), default=0.1, show_default=True)
@_share_option("--closeup-fraction", 0.25, "Share of phone-style close-ups.")
@click.option(
    "--faces",
    "faces_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_FACES_DIR,
    show_default=True,
)
@click.option("--deck", "decks", multiple=True, help="Use only this rendered deck (repeatable).")
@_share_option(
    "--procedural-fraction", 0.6, "Share of scenes drawn in a procedural index style rather than a packaged deck."
)
@click.option(
    "--style-pool",
    type=click.Choice(["train", "heldout"]),
    default="train",
    show_default=True,
    help="Fonts of procedural styles: heldout ones are never in training scenes (leave-styles-out validation).",
)
@_share_option(
    "--dark-fraction",
    None,
    "Share of procedural scenes printed on a dark face (default: as often as styles are drawn dark).",
)
@click.option(
    "--max-tilt",
    type=FiniteFloatRange(0, 60),
    default=40.0,
    show_default=True,
    help="Steepest camera, in degrees from looking straight down (a phone across the table: 50 to 60).",
)
@_share_option(
    "--keyboard-fraction",
    0.0,
    "Share of table scenes given one more keyboard under the cards, for a classifier's hard negatives.",
)
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, help="Rendering processes.")
def generate(
    out_dir: Path,
    count: int,
    seed: int,
    width_range: tuple[int, int],
    val_fraction: float,
    closeup_fraction: float,
    faces_dir: Path,
    decks: tuple[str, ...],
    procedural_fraction: float,
    style_pool: str,
    dark_fraction: float | None,
    max_tilt: float,
    keyboard_fraction: float,
    workers: int,
) -> None:
    """Render synthetic table scenes with one YOLO box per visible corner index."""
    from scorer.synth.dataset import write_dataset
    from scorer.synth.faces import FacesUnavailableError, available_decks
    from scorer.synth.scene import SceneConfig

    if width_range[0] > width_range[1]:
        raise click.BadParameter(
            f"smallest width {width_range[0]} is above largest {width_range[1]}", param_hint="--width-range"
        )
    rendered = available_decks(faces_dir)
    if not rendered and procedural_fraction < 1:
        raise UserError(
            f"no rendered decks in {faces_dir}; run first: okgin data faces --out {faces_dir} "
            "(or draw every scene in procedural styles: --procedural-fraction 1)"
        )
    unknown = sorted(set(decks) - set(rendered))
    if unknown:
        raise click.BadParameter(
            f"{', '.join(unknown)} not rendered; rendered: {', '.join(rendered)}", param_hint="--deck"
        )
    config = SceneConfig(
        faces_dir=faces_dir,
        decks=tuple(decks) or None,
        width_range=width_range,
        closeup_fraction=closeup_fraction,
        procedural_fraction=procedural_fraction,
        style_pool=style_pool,
        dark_fraction=dark_fraction,
        max_tilt=max_tilt,
        keyboard_fraction=keyboard_fraction,
    )
    try:
        fonts = _rank_font_count(style_pool) if procedural_fraction > 0 else None
        summary = write_dataset(out_dir, count, seed, config, val_fraction, workers, progress=True)
    except FacesUnavailableError as error:
        raise UserError(str(error)) from error
    drawn = "" if fonts is None else f", procedural styles from {fonts} {style_pool} rank fonts"
    click.echo(
        f"wrote {summary.images['train']} train + {summary.images['val']} val images, {summary.labels} index labels "
        f"({summary.cards} cards placed{drawn}) to {out_dir}; train with data={out_dir / 'data.yaml'}"
    )


def _rank_font_count(pool: str) -> int:
    """How many fonts draw the procedural styles' ranks in ``pool`` here, warning where the font packages are
    missing: the scenes of a seed then differ from those a machine with them renders.

    :raises FacesUnavailableError: when no font of the pool draws them.
    """
    from scorer.synth import procedural

    count = len(procedural.rank_fonts(pool))
    if count < procedural.FEW_RANK_FONTS:
        click.echo(
            f"warning: only {count} {pool} fonts draw ranks here (Debian's font packages missing? bash "
            "scripts/system-packages.sh): these scenes differ, seed for seed, from those of a machine with them",
            err=True,
        )
    return count


@data.command()
@click.argument("dataset", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Sheet image (default: DATASET/preview.jpg).",
)
@click.option("--n", "count", type=click.IntRange(min=1), default=16, show_default=True, help="Images on the sheet.")
def preview(dataset: Path, out_path: Path | None, count: int) -> None:
    """Draw the label boxes and class names of a dataset's first images onto one contact sheet."""
    from scorer.synth.preview import contact_sheet
    from scorer.vision.images import write_image

    out_path = out_path or dataset / "preview.jpg"
    if out_path.suffix.lower() not in SHEET_SUFFIXES:
        raise UserError(f"--out: {out_path} must end in {' or '.join(SHEET_SUFFIXES)} (the sheet is a picture)")
    try:
        sheet = contact_sheet(dataset, count)
    except FileNotFoundError as error:
        raise UserError(str(error)) from error
    out_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_image(out_path, sheet)
    except OSError as error:
        raise UserError(f"cannot write {out_path}: {error.strerror or error}") from error
    click.echo(f"wrote {out_path}")
