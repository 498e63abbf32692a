"""Card F1 of generated scenes split by face (dark or light) and kind (table or close-up): the held-out table in
models/HISTORY.md, Session 15.

    okgin eval --images SCENES/images/val --labels SCENES/labels/val --plots DIR --no-stages
    python scripts/face-split.py DIR/per-image.json SCENES/meta/val
    okgin eval --images ... --labels ... $(python scripts/face-split.py --only dark SCENES/meta/val)

The second form prints ``--only`` options naming the scenes of one face, for ``okgin eval``'s per-stage figures.
Each scene's ``meta/<stem>.json`` (written by ``okgin data generate``) names its deck; a procedural style is dark
when ``scorer.synth.procedural.is_dark_style`` says so, and a packaged deck is light.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scorer.synth.procedural import is_dark_style, parse_procedural_name
from scorer.vision.evaluate import EvalReport, ImageResult


def face_of(deck: str) -> str:
    parsed = parse_procedural_name(deck)
    return "dark" if parsed is not None and is_dark_style(parsed[1], parsed[0]) else "light"


def only_options(face: str, meta: Path) -> str:
    """``--only STEM.*`` for every scene in ``meta`` with that face."""
    stems = sorted(path.stem for path in meta.glob("*.json") if face_of(json.loads(path.read_text())["deck"]) == face)
    return " ".join(f"--only {stem}.*" for stem in stems)


def main(per_image: Path, meta: Path) -> None:
    groups: dict[str, list[ImageResult]] = {}
    for entry in json.loads(per_image.read_text())["images"]:
        result = ImageResult.from_dict(entry)
        scene = json.loads((meta / f"{Path(result.image).stem}.json").read_text())
        groups.setdefault(f"{face_of(scene['deck'])} face, {scene['kind']}", []).append(result)
    for group, results in sorted(groups.items()):
        print(f"{group:<20} scenes {len(results):>4}  {EvalReport(tuple(results)).summary_line()}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--only" and sys.argv[2] in ("dark", "light"):
        print(only_options(sys.argv[2], Path(sys.argv[3])))
    elif len(sys.argv) == 3:
        main(Path(sys.argv[1]), Path(sys.argv[2]))
    else:
        sys.exit(__doc__)
