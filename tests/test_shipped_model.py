"""The shipped detector on rendered tables of several card designs, end to end: reading,
seat assignment and the score, and corrections turned into classifier examples."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import card_f1, seat_cards, shipped_model_or_skip, table_scene

from scorer.cards import CLASS_NAMES, Card
from scorer.cli import main
from scorer.synth.scene import SceneConfig

pytestmark = [pytest.mark.model, pytest.mark.slow]

DECKS = ("anglo", "kde-standard", "bellot", "paris")
MIN_CARD_F1 = 0.9  # per rendered table: the cards whose index is visible, found and named right


@pytest.fixture(scope="module")
def detector():  # type: ignore[no-untyped-def]
    from scorer.vision.detector import CardDetector

    return CardDetector(shipped_model_or_skip())


def readable_cards(truth) -> set[Card]:  # type: ignore[no-untyped-def]
    """Cards that show at least one labelled (visible) corner index."""
    return {label.card for label in truth.labels}


def assert_reads(detector, image: np.ndarray, truth, what: str) -> None:  # type: ignore[no-untyped-def]
    """Card-level F1 of one frame at least MIN_CARD_F1, naming what was missed and invented."""
    expected = readable_cards(truth)
    found = {detection.card for detection in detector.detect(image).cards}
    assert card_f1(found, expected) >= MIN_CARD_F1, (
        f"{what}: missed {sorted(map(str, expected - found))}, invented {sorted(map(str, found - expected))}"
    )


@pytest.mark.parametrize("deck", DECKS)
def test_reads_rendered_tables_of_several_decks(detector, scene_config: SceneConfig, deck: str) -> None:  # type: ignore[no-untyped-def]
    image, truth = table_scene(scene_config, 7, deck)
    assert_reads(detector, image, truth, deck)


def test_reads_decks_printed_light_on_dark(detector, scene_config: SceneConfig) -> None:  # type: ignore[no-untyped-def]
    """Each design's table turned into a black deck: in plain negative (white and cyan ink on black faces) and
    in lightness negative (white and red ink on black). Measured (models/HISTORY.md, Session 12): mean F1 0.975,
    the worst frame 0.923; 0.96 and 0.895 with one cut of each box (Session 11); without reading them in negative
    0.84, the worst 0.48 (bellot)."""
    from scorer.vision.crops import lightness_negative

    readings = {}
    for deck in DECKS:
        image, truth = table_scene(scene_config, 7, deck)
        for name, negative in (("negative", np.invert(image)), ("lightness negative", lightness_negative(image))):
            found = {detection.card for detection in detector.detect(negative).cards}
            readings[f"{deck} in {name}"] = card_f1(found, readable_cards(truth))
    assert np.mean(list(readings.values())) >= 0.93 and min(readings.values()) >= 0.85, readings


def _held_out_styles(dark: bool, count: int = 1) -> list[str]:
    """The first ``count`` procedural decks whose index fonts training never saw, with dark (or light) faces."""
    from scorer.synth import procedural

    try:
        procedural.rank_fonts("heldout")
    except procedural.FacesUnavailableError as error:
        pytest.skip(str(error))
    styles = (procedural.sample_style(number, "heldout") for number in range(400))
    found = [
        style.name
        for style in styles
        if (np.mean(style.paper) < 100) == dark and style.fade == 0 and style.pip_font is None
    ][:count]
    assert len(found) == count, f"only {len(found)} such held-out styles in 400"
    return found


DARK_STYLES_MEAN_F1 = 0.85
"""Ten dark-faced held-out decks are read at a mean card F1 of at least this. Measured (models/HISTORY.md,
Session 12): 0.876; 0.864 with one cut of each box, and 0.853 without the negative readings either (Session 11);
one deck alone moves by up to 0.3 either way."""


def test_reads_dark_faced_decks_in_fonts_it_never_trained_on(detector, scene_config: SceneConfig) -> None:  # type: ignore[no-untyped-def]
    readings = {}
    for deck in _held_out_styles(dark=True, count=10):
        image, truth = table_scene(scene_config, 7, deck)
        readings[deck] = card_f1({detection.card for detection in detector.detect(image).cards}, readable_cards(truth))
    assert np.mean(list(readings.values())) >= DARK_STYLES_MEAN_F1, readings


def test_reads_a_phone_close_up_of_big_cards(detector, scene_config: SceneConfig) -> None:  # type: ignore[no-untyped-def]
    """A close-up's index is a sixth of the frame; the sideways ace of clubs was missed by every model shipped
    before session 16's detector (a strict xfail until then; models/HISTORY.md, Session 16)."""
    from scorer.synth.scene import render_closeup_scene

    config = dataclasses.replace(scene_config, macro_fraction=1.0)
    for seed, deck in ((3, "anglo"), (4, _held_out_styles(dark=False)[0])):
        image, truth = render_closeup_scene(seed, 640, 640, deck=deck, config=config)
        assert_reads(detector, image, truth, f"close-up of {deck}")


def test_reads_a_noisy_webcam_frame_of_fanned_cards_without_phantoms(detector, scene_config: SceneConfig) -> None:  # type: ignore[no-untyped-def]
    from scorer.synth import camera

    image, truth = table_scene(scene_config, 9, "kde-standard", width=1138, height=640)
    rng = np.random.default_rng(0)
    noisy = camera.sensor_noise(image.astype(np.float32), rng, 1.5)
    noisy = camera.salt_and_pepper(noisy, rng, 0.5)
    noisy = np.clip(noisy, 0, 255).astype(np.uint8)
    assert_reads(detector, noisy, truth, "noisy webcam frame")
    placed = {placed.card for placed in truth.cards if placed.card is not None}
    phantoms = {detection.card for detection in detector.detect(noisy).cards} - placed
    assert not phantoms, f"cards read that are not on the table: {sorted(map(str, phantoms))}"


def test_score_image_scores_a_rendered_table(scene_config: SceneConfig, tmp_path: Path) -> None:
    import cv2

    shipped_model_or_skip()
    image, truth = table_scene(scene_config, 11, tilt=0.0)
    photo = tmp_path / "table.jpg"
    cv2.imwrite(str(photo), image)
    result = CliRunner().invoke(main, ["score-image", str(photo), "--upcard", "KS", "--knocker", "1", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert {seat: sorted(cards) for seat, cards in seat_cards(answer["reading"]).items()} == {
        str(seat): sorted(map(str, cards)) for seat, cards in truth.hands().items()
    }
    # seat 1 melds AS-2S-3S, 7s, 9C-10C-JC (KD 10); seat 2 melds the queens or 10-J-Q spades
    assert answer["outcome"] == "knock" and answer["players"]["1"]["deadwood_points"] == 10


def test_corrections_become_classifier_examples(scene_config: SceneConfig, tmp_path: Path) -> None:
    import cv2

    from scorer.training import NONE_CLASS, make_correction_crops

    model = shipped_model_or_skip()
    image, truth = table_scene(scene_config, 5, tilt=0.0)
    height, width = image.shape[:2]
    (tmp_path / "corrections" / "images").mkdir(parents=True)
    (tmp_path / "corrections" / "labels").mkdir(parents=True)
    cv2.imwrite(str(tmp_path / "corrections" / "images" / "frame.jpg"), image)
    lines = []
    for placed in truth.cards:
        if placed.card is not None and placed.zone == "upcard":  # one corrected card: the upcard, alone on the table
            outline = np.asarray(placed.outline)
            x1, y1 = outline.min(axis=0)
            x2, y2 = outline.max(axis=0)
            cx, cy, w, h = (x1 + x2) / 2 / width, (y1 + y2) / 2 / height, (x2 - x1) / width, (y2 - y1) / height
            lines.append(f"{placed.card.class_id} {cx} {cy} {w} {h}")
    (tmp_path / "corrections" / "labels" / "frame.txt").write_text("\n".join(lines) + "\n")
    written = make_correction_crops(tmp_path / "corrections", model, tmp_path / "crops", copies=2)
    assert written > 0
    per_class = {path.name: len(list(path.glob("*.png"))) for path in (tmp_path / "crops" / "train").iterdir()}
    assert per_class.get("KS", 0) >= 2, per_class
    assert set(per_class) <= {*CLASS_NAMES, NONE_CLASS}


def test_watch_reads_a_rendered_video_and_scores_it_once_stable(scene_config: SceneConfig, tmp_path: Path) -> None:
    """Hands laid down in front of the camera: empty table, then the cards, with sensor noise."""
    import cv2

    shipped_model_or_skip()
    table, truth = table_scene(scene_config, 11, tilt=0.0)
    video = tmp_path / "round.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (table.shape[1], table.shape[0]))
    rng = np.random.default_rng(0)
    empty = np.full_like(table, 60)
    for number in range(24):
        frame = empty if number < 4 else table
        noisy = np.clip(frame.astype(np.int16) + rng.integers(-6, 7, frame.shape), 0, 255).astype(np.uint8)
        writer.write(noisy)
    writer.release()
    args = ["watch", "--camera", str(video), "--upcard", "KS", "--knocker", "1", "--json", "--settle", "0.5"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    scores = [event for event in events if event["event"] == "score"]
    assert len(scores) == 1, "scored once, when the reading settled"
    assert {seat: sorted(cards) for seat, cards in seat_cards(scores[0]["reading"]).items()} == {
        str(seat): sorted(map(str, cards)) for seat, cards in truth.hands().items()
    }
    assert scores[0]["outcome"] == "knock"
