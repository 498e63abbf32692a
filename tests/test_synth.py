"""The synthetic data generator: faces are calibrated on their own ink, labels match scenes, output is repeatable."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from scorer.cards import CLASS_NAMES, Card, DuplicateCardError, parse_cards
from scorer.cli import main
from scorer.synth import faces, procedural
from scorer.synth.dataset import split_of, write_dataset
from scorer.synth.scene import (
    Placement,
    SceneConfig,
    SceneTruth,
    deck_named,
    render_cards,
    render_scene,
    render_table_scene,
)


@pytest.fixture(scope="session")
def config(scene_config: SceneConfig) -> SceneConfig:
    """The test decks (rendered on demand by conftest's ``faces_dir``) in small frames."""
    return dataclasses.replace(scene_config, width_range=(640, 960))


def test_calibration_finds_index_in_top_left_and_rotated_bottom_right(faces_dir: Path) -> None:
    deck = faces.load_deck("anglo", faces_dir)
    corners = {box.corner: box.box for box in deck.indices[parse_cards("AS")[0]]}
    assert set(corners) == {"tl", "br"}
    x1, y1, x2, y2 = corners["tl"]
    assert x1 < 0.1 and y1 < 0.1 and 0.05 < x2 - x1 < 0.25 and 0.1 < y2 - y1 < 0.35
    _, _, bx2, by2 = corners["br"]
    assert abs((1 - bx2) - x1) < 0.03 and abs((1 - by2) - y1) < 0.03  # printed 180 degrees round


def test_calibration_box_follows_each_cards_own_glyphs(faces_dir: Path) -> None:
    deck = faces.load_deck("anglo", faces_dir)
    top_left = [next(b.box for b in boxes if b.corner == "tl") for boxes in deck.indices.values()]
    assert len(set(top_left)) > 8  # measured per card, not one box for all
    heights = [y2 - y1 for _, y1, _, y2 in top_left]
    assert max(heights) < 1.5 * min(heights)


def test_index_box_covers_the_ink_of_the_index(faces_dir: Path) -> None:
    deck = faces.load_deck("simplistic", faces_dir)
    for card, face in deck.faces.items():
        ink = faces.ink_mask(face)
        height, width = face.shape[:2]
        x1, y1, x2, y2 = next(b.box for b in deck.indices[card] if b.corner == "tl")
        inside = ink[round(y1 * height) : round(y2 * height), round(x1 * width) : round(x2 * width)]
        assert inside.mean() > 0.1, card


def _face_view(image: np.ndarray, outline: tuple[tuple[float, float], ...], size: tuple[int, int]) -> np.ndarray:
    """The card region of a scene warped back to an upright face of ``size`` (width, height)."""
    width, height = size
    target = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    matrix = cv2.getPerspectiveTransform(np.float32(outline), target)
    return cv2.warpPerspective(image, matrix, size)


def _correlation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


@pytest.mark.parametrize("seed", [1, 2])
def test_labelled_indices_show_that_cards_index(config: SceneConfig, seed: int) -> None:
    image, truth = render_table_scene(seed, mild=True, config=config)
    deck = deck_named(truth.deck, config.faces_dir)
    width, height = deck.size
    scores = []
    for placed in truth.cards:
        if placed.card is None:
            continue
        seen = cv2.cvtColor(_face_view(image, placed.outline, (width, height)), cv2.COLOR_BGR2GRAY)
        face = cv2.cvtColor(deck.faces[placed.card][:, :, :3], cv2.COLOR_BGR2GRAY)
        for label in placed.indices:
            if not label.labelled or label.visible < 0.99:
                continue
            x1, y1, x2, y2 = next(b.box for b in deck.indices[placed.card] if b.corner == label.corner)
            crop = (slice(round(y1 * height), round(y2 * height)), slice(round(x1 * width), round(x2 * width)))
            scores.append(_correlation(seen[crop], face[crop]))
    assert len(scores) >= 10
    assert np.median(scores) > 0.6 and min(scores) > 0.2, scores


def test_label_boxes_match_meta_and_frame(config: SceneConfig) -> None:
    for seed in range(4):
        _, truth = render_scene(seed, config)
        lines = truth.yolo_lines()
        assert len(lines) == len(truth.labels)
        for line, label in zip(lines, truth.labels, strict=True):
            class_id, *box = line.split()
            assert int(class_id) == label.card.class_id
            cx, cy, w, h = map(float, box)
            slack = 1e-5  # six decimals in the label text
            assert -slack <= cx - w / 2 and cx + w / 2 <= 1 + slack and -slack <= cy - h / 2 and cy + h / 2 <= 1 + slack
            quad = np.array(label.quad)
            assert label.box[0] <= quad[:, 0].max() and label.box[2] >= quad[:, 0].min()


def test_index_under_a_later_card_is_not_labelled(config: SceneConfig) -> None:
    ace, king = parse_cards("AS KD")
    _, stacked = render_cards(
        0, [Placement(ace, (320, 240)), Placement(king, (320, 240))], deck="anglo", width=640, height=480, config=config
    )
    assert [str(label.card) for label in stacked.labels] == ["KD", "KD"]
    _, shifted = render_cards(
        0, [Placement(ace, (300, 240)), Placement(king, (360, 240))], deck="anglo", width=640, height=480, config=config
    )
    ace_corners = {label.corner: label.labelled for label in shifted.cards[0].indices}
    assert ace_corners == {"tl": True, "br": False}  # the king hides the ace's bottom-right index only


def test_index_outside_the_frame_is_not_labelled(config: SceneConfig) -> None:
    (ace,) = parse_cards("AS")
    _, truth = render_cards(0, [Placement(ace, (5, 5))], deck="anglo", width=640, height=480, config=config)
    assert {label.corner: label.labelled for label in truth.cards[0].indices} == {"tl": False, "br": True}


def test_table_scene_puts_hands_in_their_seats(config: SceneConfig) -> None:
    hands = {1: parse_cards("AS 2S 3S 4S 9H 9D 9C KD"), 2: parse_cards("5H 6H 7H QC QS QD JD")}
    (upcard,) = parse_cards("8C")
    image, truth = render_table_scene(3, hands=hands, upcard=upcard, deck="anglo", mild=True, config=config)
    assert image.shape == (720, 1280, 3)
    assert truth.hands() == hands and truth.upcard == upcard
    for placed in truth.cards:
        centre_x, centre_y = np.mean(placed.outline, axis=0)
        if placed.zone == "hand":
            assert (centre_y > 360) == (placed.seat == 1)
        if placed.zone == "upcard":
            assert centre_x > 640
    assert {label.card for label in truth.labels} >= set(hands[1] + hands[2] + [upcard])


def test_duplicate_cards_are_refused(config: SceneConfig) -> None:
    with pytest.raises(DuplicateCardError):
        render_table_scene(0, hands={1: parse_cards("AS 2S 3S"), 2: parse_cards("AS 5H 6H")}, config=config)


def test_same_seed_same_bytes(config: SceneConfig, tmp_path: Path) -> None:
    first = write_dataset(tmp_path / "a", 4, seed=7, config=config, val_fraction=0.25)
    write_dataset(tmp_path / "b", 4, seed=7, config=config, val_fraction=0.25)
    write_dataset(tmp_path / "c", 4, seed=8, config=config, val_fraction=0.25)
    assert first.images == {"train": 3, "val": 1}
    files = sorted(
        path.relative_to(tmp_path / "a")
        for path in (tmp_path / "a").rglob("*")
        if path.is_file() and path.name != "data.yaml"
    )
    assert len(files) == 12
    for relative in files:
        assert (tmp_path / "a" / relative).read_bytes() == (tmp_path / "b" / relative).read_bytes(), relative
    jpegs = sorted((tmp_path / "a" / "images").rglob("*.jpg"))
    other = sorted((tmp_path / "c" / "images").rglob("*.jpg"))
    assert [path.read_bytes() for path in jpegs] != [path.read_bytes() for path in other]


def test_rerun_replaces_its_seed_and_keeps_other_seeds(config: SceneConfig, tmp_path: Path) -> None:
    write_dataset(tmp_path, 3, seed=1, config=config, val_fraction=0)
    (tmp_path / "labels" / "train.cache").write_text("stale ultralytics cache")
    write_dataset(tmp_path, 1, seed=1, config=config, val_fraction=0)
    write_dataset(tmp_path, 1, seed=2, config=config, val_fraction=0)
    names = sorted(path.name for path in (tmp_path / "images" / "train").iterdir())
    assert names == ["s1_000000.jpg", "s2_000000.jpg"]
    assert not (tmp_path / "labels" / "train.cache").exists()


def test_split_keeps_at_least_one_val_image() -> None:
    assert [split_of(n, 8, 0.1) for n in range(8)] == ["train"] * 7 + ["val"]
    assert {split_of(n, 5, 0.0) for n in range(5)} == {"train"}


def test_cli_generate_writes_an_ultralytics_dataset_and_preview(faces_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "set"
    args = [
        "data",
        "generate",
        "--out",
        str(out),
        "--n",
        "3",
        "--seed",
        "1",
        "--faces",
        str(faces_dir),
        "--width-range",
        "640",
        "800",
    ]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    data = yaml.safe_load((out / "data.yaml").read_text())
    assert tuple(data["names"][i] for i in range(52)) == CLASS_NAMES
    assert (out / data["train"]).is_dir() and (out / data["val"]).is_dir()
    meta = sorted((out / "meta").rglob("*.json"))
    assert len(meta) == 3
    result = runner.invoke(main, ["data", "preview", str(out), "--out", str(tmp_path / "sheet.jpg"), "--n", "2"])
    assert result.exit_code == 0, result.output
    sheet = cv2.imread(str(tmp_path / "sheet.jpg"))
    assert sheet is not None and sheet.shape[0] > 100


def test_repo_dataset_yaml_uses_class_order() -> None:
    data = yaml.safe_load((Path(__file__).parent.parent / "datasets" / "cards-corners.yaml").read_text())
    assert tuple(data["names"][i] for i in range(52)) == CLASS_NAMES


def test_cli_errors_are_messages_not_tracebacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main, ["data", "generate", "--out", str(tmp_path / "x"), "--n", "2", "--faces", str(tmp_path / "none")]
    )
    assert result.exit_code != 0 and "okgin data faces" in result.output
    monkeypatch.setattr(faces, "missing_packages", lambda: ["gnome-cards-data"])
    result = runner.invoke(main, ["data", "faces", "--out", str(tmp_path / "f")])
    assert result.exit_code == 2 and "apt-get install" in result.output
    result = runner.invoke(main, ["data", "preview", str(tmp_path)])
    assert result.exit_code != 0 and "no images" in result.output


def test_generate_names_its_fonts_and_warns_when_few(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arguments = ["data", "generate", "--n", "1", "--procedural-fraction", "1", "--width-range", "640", "640"]
    result = CliRunner().invoke(main, [*arguments, "--out", str(tmp_path / "all")])
    fonts = len(procedural.rank_fonts("train"))
    assert result.exit_code == 0 and f"procedural styles from {fonts} train rank fonts" in result.output
    assert ("warning" in result.stderr) == (fonts < procedural.FEW_RANK_FONTS)
    three = procedural.rank_fonts("train")[:3]
    monkeypatch.setattr(procedural, "rank_fonts", lambda pool: three)
    result = CliRunner().invoke(main, [*arguments, "--out", str(tmp_path / "few")])
    assert result.exit_code == 0 and "warning: only 3 train fonts draw ranks here" in result.stderr
    assert "procedural styles from 3 train rank fonts" in result.output


def test_truth_json_round_trips_cards(config: SceneConfig) -> None:
    _, truth = render_scene(5, config)
    data = truth.to_json()
    assert isinstance(truth, SceneTruth) and len(data["cards"]) == len(truth.cards)
    names = [card["name"] for card in data["cards"]]
    assert names == [placed.name for placed in truth.cards]
    assert all(card["class_id"] is None or CLASS_NAMES[card["class_id"]] == card["name"] for card in data["cards"])


def test_no_decks_rendered_is_a_clear_error_when_only_packaged_designs_are_wanted(tmp_path: Path) -> None:
    with pytest.raises(faces.FacesUnavailableError, match="okgin data faces"):
        render_scene(0, SceneConfig(faces_dir=tmp_path, procedural_fraction=0.0))
    shutil.rmtree(tmp_path)


def test_four_index_variant_repeats_each_index_unmirrored_in_blank_corners(faces_dir: Path) -> None:
    two, four = faces.load_deck("anglo", faces_dir), faces.load_deck("anglo+4", faces_dir)
    assert four.name == "anglo+4"
    for card in (Card.parse("AS"), Card.parse("7H")):
        by_corner = {index.corner: index.box for index in four.indices[card]}
        assert set(by_corner) == {"tl", "tr", "br", "bl"}
        height, width = four.faces[card].shape[:2]
        x1, y1, x2, y2 = (round(v * s) for v, s in zip(by_corner["tl"], (width, height, width, height), strict=True))
        copied = four.faces[card][y1:y2, width - x2 : width - x1]
        assert np.array_equal(copied, two.faces[card][y1:y2, x1:x2])  # the same glyphs, not a mirror image
        assert not np.array_equal(copied, copied[:, ::-1])


def _keyboard(seed: int, style: str | None, legends: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A keyboard drawn on grey, and the mask of the pixels it covers."""
    from scorer.synth import clutter

    background = 120.0
    image = np.full((500, 700, 3), background, np.float32)
    real_legend = clutter._key_legend
    blank = lambda rng: (real_legend(rng), " ")[1]  # noqa: E731  (draws as many numbers as a real legend)
    with pytest.MonkeyPatch.context() as patch:
        if not legends:
            patch.setattr(clutter, "_key_legend", blank)
        clutter.draw_keyboard(image, np.random.default_rng(seed), 200, style)
    return image, np.abs(image - background).max(axis=2) > 1


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("style", ["light", "plain", "coloured", "backlit"])
def test_keyboard_keys_print_legends(seed: int, style: str | None) -> None:
    """Keys carry letters and digits (a laptop's "8" was read as a card), not only blank squares.
    (A keyboard seen edge-on, ``grazing``, shows no legends.)"""
    printed, keyboard = _keyboard(seed, style)
    blank, _ = _keyboard(seed, style, legends=False)
    assert keyboard.mean() > 0.01, "no keyboard drawn"
    legend = np.abs(printed - blank).max(axis=2) > 25
    assert legend.sum() > 0.005 * keyboard.sum(), "keys without legends"


def test_an_unknown_keyboard_style_is_named() -> None:
    with pytest.raises(ValueError, match="unknown keyboard style 'neon'"):
        _keyboard(0, "neon")


@pytest.mark.parametrize("seed", range(4))
def test_backlit_keyboard_glows_between_its_keys(seed: int) -> None:
    """A gaming keyboard's light leaks round each key in colour (its keys were read as cards in real photos);
    a plain dark keyboard has no coloured pixel at all."""
    import cv2

    def coloured(image: np.ndarray, keyboard: np.ndarray) -> float:
        hsv = cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV)
        return float(((hsv[:, :, 1] > 120) & (hsv[:, :, 2] > 60) & keyboard).sum() / keyboard.sum())

    assert coloured(*_keyboard(seed, "backlit", legends=False)) > 0.05
    assert coloured(*_keyboard(seed, "plain")) == 0


@pytest.mark.parametrize("seed", range(4))
def test_edge_on_keyboard_shows_lit_strokes_over_coloured_smears(seed: int) -> None:
    """Seen edge-on, a lit keyboard is grey strokes (caps' edges) over coloured smears (the light under the caps):
    what the black-deck photos' keyboards were read as cards for. Its pixels are dark but for those."""
    import cv2

    image, keyboard = _keyboard(seed, "grazing")
    assert keyboard.mean() > 0.01, "no keyboard drawn"
    hsv = cv2.cvtColor(np.clip(image, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV)
    inside = hsv[keyboard]
    grey_strokes = ((inside[:, 1] < 40) & (inside[:, 2] > 80)).mean()
    smears = ((inside[:, 1] > 120) & (inside[:, 2] > 60)).mean()
    assert grey_strokes > 0.005 and smears > 0.005
    assert np.median(inside[:, 2]) < 60, "the caps should stay dark"


@pytest.mark.parametrize("tilt", [0.0, 40.0, 60.0])
def test_a_camera_tilted_further_foreshortens_the_table_more(tilt: float) -> None:
    """At the frame's centre a camera tilted ``tilt`` degrees squashes the table by cos(tilt) along the tilt and
    keeps its area: a phone across the table (``--max-tilt 60``) sees indices half as tall as they are wide."""
    from scorer.synth.geometry import camera_homography, project

    homography = camera_homography(800, 600, tilt, 0.0, 0.0, focal=1200)
    centre = project(homography, np.array([[400.0, 300.0], [401.0, 300.0], [400.0, 301.0]]))
    stretch = np.linalg.svd(np.array([centre[1] - centre[0], centre[2] - centre[0]]), compute_uv=False)
    assert stretch[1] / stretch[0] == pytest.approx(np.cos(np.radians(tilt)), abs=0.02)
    assert stretch[0] * stretch[1] == pytest.approx(1.0, abs=0.01)


def test_cli_generate_names_a_camera_too_steep(tmp_path: Path) -> None:
    arguments = ["data", "generate", "--out", str(tmp_path / "x"), "--n", "1", "--max-tilt", "75"]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code != 0 and "--max-tilt" in result.output and "75" in result.output


def test_keyboard_fraction_puts_a_keyboard_under_every_table_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--keyboard-fraction 1`` gives each table scene a keyboard (hard negatives for the classifier's fine-tunes);
    at 0, the default, the scenes draw no more keyboards than ever."""
    from scorer.synth import clutter
    from scorer.synth.scene import SceneConfig, render_table_scene

    drawn: list[int] = []
    real_keyboard = clutter.draw_keyboard

    def counted(*args: object, **kwargs: object) -> None:
        drawn.append(1)
        real_keyboard(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(clutter, "draw_keyboard", counted)
    for seed in range(3):
        drawn.clear()
        render_table_scene(
            seed, width=640, height=360, config=SceneConfig(procedural_fraction=1.0, keyboard_fraction=1.0)
        )
        with_keyboard = len(drawn)
        drawn.clear()
        render_table_scene(seed, width=640, height=360, config=SceneConfig(procedural_fraction=1.0))
        assert with_keyboard == len(drawn) + 1  # the scene's own clutter is drawn first, from the same draws


def test_groups_spread_from_the_right_show_their_bottom_right_indices(config: SceneConfig) -> None:
    """``reversed_share``: a group spread from the right puts each card on top to the left of the one before, so its
    covered cards show their bottom-right index, not their top-left one."""

    def corners_shown(share: float) -> tuple[int, int]:
        shown_top_left = shown_bottom_right_only = 0
        for seed in range(3):
            _, truth = render_table_scene(seed, mild=True, config=dataclasses.replace(config, reversed_share=share))
            for placed in truth.cards:
                if placed.zone != "hand":
                    continue
                labelled = {index.corner for index in placed.indices if index.labelled}
                shown_top_left += "tl" in labelled
                shown_bottom_right_only += "tl" not in labelled and "br" in labelled
        return shown_top_left, shown_bottom_right_only

    left_first, right_first = corners_shown(0.0), corners_shown(1.0)
    assert left_first[0] > 3 * left_first[1] and right_first[1] > 3 * right_first[0], (left_first, right_first)
