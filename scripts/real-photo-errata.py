"""A copy of a real-photo yardstick with its label errata applied (datasets/real-photo-errata.csv).

    python scripts/real-photo-errata.py SOURCE DESTINATION [--errata datasets/real-photo-errata.csv]

Some labels of ``../shared/real-photos`` are plainly wrong: a card boxed under another card's code (the ace of
clubs labelled QC), or a card whose index is whole and readable left unlabelled (an ace of spades beside a joker).
A model that reads such a card right is counted as inventing one, and one that misreads it the labelled way as
finding one. The errata name each such label, checked by eye on the photo; only certain ones are listed (an index
cut by the photo's edge whose suit cannot be told is left alone). The yardstick itself is never edited: the
figures a candidate is judged by stay those of the set as published, and this copy gives the same set's figures
as labelled right, beside them (models/HISTORY.md, Session 25).

Each row: ``set`` (the folder name of SOURCE it applies to), ``photo`` (the start of one photo's file name),
``change`` (``relabel``: every label of card ``labelled`` becomes ``card``; ``add``: a box ``x1 y1 x2 y2`` in
pixels around the index of ``card``). A row that no longer applies (no such photo, no such label) is an error.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
from pathlib import Path

from PIL import Image

from scorer.vision.labels import LabelError, label_line, read_class_names, write_label_file

ERRATA = Path(__file__).resolve().parent.parent / "datasets" / "real-photo-errata.csv"


class ErratumError(ValueError):
    """An erratum that does not fit the photo set it names."""


def _photo(images: Path, start: str) -> Path:
    matches = sorted(path for path in images.iterdir() if path.name.startswith(start))
    if len(matches) != 1:
        raise ErratumError(f"{len(matches)} photos start with {start!r} in {images} (want exactly one)")
    return matches[0]


def apply_errata(source: Path, destination: Path, errata: Path) -> int:
    """Copy ``source`` (images/, labels/, classes.txt) to ``destination`` with its errata applied; their count."""
    if not (source / "images").is_dir() or not (source / "labels").is_dir():
        raise ErratumError(f"{source} has no images/ and labels/ folders")
    classes = read_class_names(source / "classes.txt")
    rows = [row for row in csv.DictReader(errata.read_text().splitlines()) if row.get("set") == source.name]
    shutil.copytree(source / "images", destination / "images", dirs_exist_ok=True)
    shutil.copytree(source / "labels", destination / "labels", dirs_exist_ok=True)
    shutil.copy(source / "classes.txt", destination / "classes.txt")
    for row in rows:
        for code in filter(None, (row["card"], row["labelled"])):
            if code not in classes:
                raise ErratumError(f"{code!r} is not a class of {source}")
        photo = _photo(destination / "images", row["photo"])
        labels = destination / "labels" / f"{photo.stem}.txt"
        lines = labels.read_text().splitlines()
        if row["change"] == "relabel":
            wrong, right = str(classes.index(row["labelled"])), str(classes.index(row["card"]))
            if not any(line.split()[0] == wrong for line in lines):
                raise ErratumError(f"{photo.name} has no label {row['labelled']!r} to correct")
            lines = [" ".join([right, *line.split()[1:]]) if line.split()[0] == wrong else line for line in lines]
        elif row["change"] == "add":
            width, height = Image.open(photo).size
            x1, y1, x2, y2 = (float(value) for value in row["box"].split())
            lines.append(label_line(classes.index(row["card"]), (x1, y1, x2, y2), width, height))
        else:
            raise ErratumError(f"unknown change {row['change']!r} for {photo.name}")
        write_label_file(labels, lines)
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("destination", type=Path)
    parser.add_argument("--errata", type=Path, default=ERRATA, help="errata CSV (default: the checkout's)")
    args = parser.parse_args()
    try:
        count = apply_errata(args.source, args.destination, args.errata)
    except (ErratumError, LabelError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"wrote {args.source.name} to {args.destination} with {count} errata applied")


if __name__ == "__main__":
    main()
