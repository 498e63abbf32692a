"""Grouping benchmark: how often each seat's cards are read into the groups they were laid in.

    python benchmarks/bench_groups.py                 # 40 easy, 40 hard and 40 reversed rendered tables
    python benchmarks/bench_groups.py --tables 100 --seed 500

Tables come from the scene renderer (``scorer.synth``), whose every hand-laid card records
its group; they are read by a perfect detector (each labelled corner index, merged as the
detector merges them), so this measures ``scorer.vision.groups`` alone. Easy tables are the
renderer's ``mild`` ones (rows, a camera tilted under 15 degrees); hard ones add fans,
cascades, tilts up to 40 degrees, squeezed frames, strays and clutter; reversed ones are hard
tables whose groups are half of them spread from the other end (``SceneConfig.reversed_share``:
each card put on top to the left of the one before, the covered cards showing their
bottom-right index only). A seat counts as
read when its groups, restricted to its own laid cards, equal the rendered ones. Each table
holds one deck, so every conflict the merge reports (``scorer.vision.merge``) is a false one:
they are counted too.
"""

from __future__ import annotations

import argparse

from scorer.synth.scene import SceneConfig, SceneTruth, render_table_scene
from scorer.vision.detector import Detections
from scorer.vision.groups import group_reading
from scorer.vision.layout import TableLayout
from scorer.vision.merge import CornerDetection, merge_corners


def seats_read(truth: SceneTruth) -> tuple[int, int, list[str], int]:
    """(seats read into their groups, seats, a line per miss, conflicts the merge reported) for one rendered
    table."""
    corners = [CornerDetection(label.card, label.box, 0.99) for label in truth.labels]
    cards, conflicts = merge_corners(corners)
    players = max(placed.seat or 0 for placed in truth.cards)
    reading = TableLayout.default(players).assign(Detections(tuple(cards), tuple(conflicts), truth.width, truth.height))
    right, misses = 0, []
    for seat, groups in group_reading(reading).items():
        laid = {placed.card: placed.group for placed in truth.cards if placed.zone == "hand" and placed.seat == seat}
        seen = {detection.card for detection in reading.by_player[seat]}
        rendered: dict[int | None, list[str]] = {}
        for card, group in laid.items():
            if card in seen:
                rendered.setdefault(group, []).append(str(card))
        want = sorted(sorted(group) for group in rendered.values())
        got = sorted(sorted(str(card) for card in group.cards if card in laid) for group in groups)
        got = [group for group in got if group]
        right += got == want
        if got != want:
            misses.append(f"  seed {truth.seed} seat {seat}: read {got}, laid {want}")
    return right, len(reading.by_player), misses, len(conflicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=40, help="tables of each kind")
    parser.add_argument("--seed", type=int, default=100)
    args = parser.parse_args()
    kinds = (("easy", True, 0.0), ("hard", False, 0.0), ("reversed", False, 0.5))
    for kind, mild, reversed_share in kinds:
        right = total = conflicts = 0
        misses: list[str] = []
        for seed in range(args.seed, args.seed + args.tables):
            _, truth = render_table_scene(seed, mild=mild, config=SceneConfig(reversed_share=reversed_share))
            found = seats_read(truth)
            right, total, misses = right + found[0], total + found[1], misses + found[2]
            conflicts += found[3]
        print(f"{kind} tables ({args.tables}, seeds {args.seed}-{args.seed + args.tables - 1}): "
              f"{right}/{total} seats read into their groups ({100 * right / max(total, 1):.1f}%), "
              f"{conflicts} false conflicts")  # fmt: skip
        if misses:
            print("\n".join(misses))


if __name__ == "__main__":
    main()
