"""Procedurally drawn faces: many index styles, exact index boxes, held-out fonts, and the camera's harm."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scorer.cards import Card
from scorer.synth import camera, procedural
from scorer.synth.faces import FacesUnavailableError
from scorer.synth.scene import SceneConfig, render_scene


@pytest.fixture(scope="module", autouse=True)
def fonts() -> None:
    try:
        procedural.rank_fonts("train")
        procedural.rank_fonts("heldout")
    except FacesUnavailableError as error:
        pytest.skip(str(error))


def _ink(face: np.ndarray, paper: tuple[float, float, float]) -> np.ndarray:
    return np.abs(face[:, :, :3].astype(np.int16) - np.array(paper, np.int16)).max(axis=2) > 60


def test_a_style_is_a_pure_function_of_its_id_and_pool() -> None:
    assert procedural.sample_style(11) == procedural.sample_style(11)
    assert procedural.sample_style(11) != procedural.sample_style(12)
    assert procedural.sample_style(11, "heldout").pool == "heldout"
    with pytest.raises(ValueError, match="pool"):
        procedural.sample_style(1, "test")


def test_hundreds_of_distinct_index_styles() -> None:
    styles = [procedural.sample_style(number) for number in range(400)]
    looks = {(s.rank_font, s.pip_font, round(s.rank_height, 2), s.corners, s.paper) for s in styles}
    fonts = {s.rank_font for s in styles}
    assert len(looks) >= 390 and len(fonts) >= 100
    dark = [s for s in styles if np.mean(s.paper) < 100]
    assert 0.12 < len(dark) / len(styles) < 0.35  # dark faces printed in light, gold or silver ink
    assert all(np.mean(s.black_ink) > np.mean(s.paper) + 80 for s in dark)
    assert {s.corners for s in styles} == {2, 4}
    # some dark decks print every suit in one ink (gold foil), so a pip's shape, not its colour, names the suit
    one_ink = [s for s in styles if len(set(s.suit_inks.values())) == 1]
    assert one_ink and all(s in dark for s in one_ink)
    assert 0.2 < len(one_ink) / len(dark) < 0.6


def test_held_out_fonts_never_appear_in_training_styles() -> None:
    train_families = {procedural.family_of(path) for path in procedural.rank_fonts("train")}
    held_out = {procedural.sample_style(number, "heldout").rank_font for number in range(100)}
    assert held_out and not {procedural.family_of(path) for path in held_out} & train_families


@pytest.mark.parametrize("style_id", [3, 17, 42, 99])
def test_index_boxes_hold_the_index_ink_in_their_corners(style_id: int) -> None:
    style = procedural.sample_style(style_id)
    for card in (Card.parse("10C"), Card.parse("QH"), Card.parse("AS")):
        face, boxes = procedural.draw_face(style, card)
        height, width = face.shape[:2]
        ink = _ink(face, style.paper)
        corners = {box.corner: box.box for box in boxes}
        assert set(corners) == ({"tl", "br"} if style.corners == 2 else {"tl", "tr", "br", "bl"})
        x1, y1, x2, y2 = corners["tl"]
        assert x2 < 0.5 and y2 < 0.5
        _, _, bx2, by2 = corners["br"]
        assert abs((1 - bx2) - x1) < 0.02 and abs((1 - by2) - y1) < 0.02  # printed 180 degrees round
        region = ink[round(y1 * height) : round(y2 * height), round(x1 * width) : round(x2 * width)]
        assert region.mean() > 0.1  # rank and pip ink fill part of the box
        # the box is tight: the rows just above it and the columns just left of it are blank paper
        top, left = round(y1 * height), round(x1 * width)
        if top >= 2 and left >= 2:
            above = ink[top - 2 : top, left : round(x2 * width)]
            assert above.mean() < 0.05


def test_big_centre_pips_crowd_the_index_but_never_touch_it() -> None:
    import dataclasses

    crowded = [style for style in map(procedural.sample_style, range(80)) if style.pip_size > 1]
    assert 0.1 < len(crowded) / 80 < 0.4  # about CROWDED_PIPS_SHARE of the styles
    for style in crowded[:8]:
        style = dataclasses.replace(style, border=False, wear=0.0, fade=0.0, gloss=0.0)
        for card in (Card.parse("10C"), Card.parse("9D"), Card.parse("4S")):
            face, boxes = procedural.draw_face(style, card)
            height, width = face.shape[:2]
            ink = _ink(face, style.paper)
            x2 = next(box.box for box in boxes if box.corner == "tl")[2]
            # beside the index, down the whole card, a gap of paper before the first column of pips
            gap = ink[
                round(0.05 * height) : round(0.95 * height),
                round(x2 * width) + 2 : round(x2 * width + 0.02 * width) - 1,
            ]
            assert not gap.any(), (style.name, str(card))
            # and that column is there, its pips within a tenth of the card's width of the index
            near = ink[round(0.05 * height) : round(0.95 * height), round(x2 * width) + 2 : round((x2 + 0.1) * width)]
            assert near.any(), (style.name, str(card))


def test_pips_of_the_four_suits_differ_in_shape() -> None:
    shape = procedural.sample_style(5).pip_shape
    masks = {suit: procedural.draw_pip_mask(suit, shape, 48) for suit in "CDHS"}
    for first, second in (("C", "S"), ("H", "D"), ("H", "S"), ("C", "D")):
        a, b = (np.asarray(masks[s] > 127, np.uint8) for s in (first, second))
        resized = np.zeros((48, 48, 2), np.uint8)
        resized[: a.shape[0], : a.shape[1], 0] = a
        resized[: b.shape[0], : b.shape[1], 1] = b
        overlap = (
            np.logical_and(resized[:, :, 0], resized[:, :, 1]).sum()
            / np.logical_or(resized[:, :, 0], resized[:, :, 1]).sum()
        )
        assert overlap < 0.85, (first, second)


def test_half_the_styles_draw_round_clubs_on_a_trumpet_foot() -> None:
    shapes = [procedural.sample_style(style_id).pip_shape for style_id in range(200)]
    rounded = [shape for shape in shapes if shape.round_club]
    assert 0.35 < len(rounded) / len(shapes) < 0.65  # about ROUND_CLUB_SHARE
    assert all(shape.foot > 0 for shape in rounded)
    assert not any(shape.foot for shape in shapes if not shape.round_club)


def test_a_trumpet_foot_is_narrow_under_the_lobes_and_wide_at_the_bottom() -> None:
    import dataclasses

    rounded = next(shape for shape in (procedural.sample_style(i).pip_shape for i in range(50)) if shape.round_club)
    straight = dataclasses.replace(rounded, foot=0.0)
    for suit in "CS":
        widths = []
        for shape in (rounded, straight):
            ink = procedural.draw_pip_mask(suit, shape, 96) > 127
            rows = ink.sum(axis=1)
            bottom = len(rows) - 1
            widths.append((rows[bottom - round(0.12 * len(rows))], rows[bottom - 1]))
        (trumpet_middle, trumpet_bottom), (straight_middle, straight_bottom) = widths
        assert trumpet_middle < straight_middle, suit  # the sides curve out late
        assert trumpet_bottom >= 0.8 * straight_bottom, suit  # to as wide a foot


def test_a_round_club_stays_whole_and_unlike_a_spade() -> None:
    for shape in (procedural.sample_style(i).pip_shape for i in range(60)):
        if not shape.round_club:
            continue
        club = procedural.draw_pip_mask("C", shape, 64) > 127
        spade = procedural.draw_pip_mask("S", shape, 64) > 127
        height, width = club.shape
        assert 0.75 < width / height < 1.25  # three lobes as wide as the club is tall, not cut flat by the mask
        top_row_club = np.flatnonzero(club[round(0.08 * height)])
        top_row_spade = np.flatnonzero(spade[round(0.08 * spade.shape[0])])
        # near the top a club is a round lobe, a spade its point
        assert len(top_row_club) / width > 1.5 * len(top_row_spade) / spade.shape[1]


def test_scenes_need_no_packaged_decks_when_every_scene_is_procedural(tmp_path: Path) -> None:
    config = SceneConfig(faces_dir=tmp_path, procedural_fraction=1.0, width_range=(640, 800), style_pool="heldout")
    image, truth = render_scene(5, config)
    assert truth.deck.startswith("procedural-heldout-")
    assert image.shape[:2] == (truth.height, truth.width)
    assert truth.labels, "a procedural scene labels its visible indices"
    again, _ = render_scene(5, config)
    assert np.array_equal(image, again)


@pytest.mark.parametrize("dark_fraction", [0.0, 1.0])
def test_dark_fraction_chooses_how_many_scenes_have_dark_faces(tmp_path: Path, dark_fraction: float) -> None:
    config = SceneConfig(
        faces_dir=tmp_path, procedural_fraction=1.0, width_range=(640, 700), dark_fraction=dark_fraction
    )
    for seed in range(4):
        _, truth = render_scene(seed, config)
        parsed = procedural.parse_procedural_name(truth.deck)
        assert parsed is not None
        style = procedural.sample_style(parsed[1], parsed[0])
        assert procedural.is_dark_style(parsed[1], parsed[0]) == (sum(style.paper) < 300) == bool(dark_fraction)


def test_a_procedural_deck_name_renders_that_style(tmp_path: Path) -> None:
    assert procedural.parse_procedural_name("procedural-train-7") == ("train", 7)
    with pytest.raises(FacesUnavailableError, match="procedural"):
        procedural.parse_procedural_name("procedural-nope-x")
    deck = procedural.procedural_deck(7)
    assert deck.name == "procedural-train-7" and len(deck.faces) == 52 and deck.jokers and deck.backs


def test_camera_damage_keeps_the_frame_and_adds_what_webcams_add() -> None:
    rng = np.random.default_rng(0)
    image = np.full((120, 160, 3), 128.0, np.float32)
    specked = camera.salt_and_pepper(image, rng, 1.0)
    changed = np.any(specked != image, axis=2)
    assert changed.any() and set(np.unique(specked[changed])) <= {0.0, 255.0}
    for effect in (camera.webcam_processing, camera.low_resolution, camera.exposure_clipping):
        assert effect(image, rng, 1.0).shape == image.shape
    steps = np.zeros((64, 64, 3), np.float32)
    steps[:, 32:] = 200
    sharpened = camera.webcam_processing(steps, np.random.default_rng(3), 1.0)
    assert sharpened.shape == steps.shape


def test_some_training_cameras_see_in_black_and_white() -> None:
    red_heart = np.zeros((8, 8, 3), np.float32)
    red_heart[2:6, 2:6] = (40, 30, 200)  # BGR red ink
    grey = camera.greyscale(red_heart)
    assert grey.shape == red_heart.shape and np.allclose(grey[..., 0], grey[..., 2])
    assert 0 < grey[3, 3, 0] < 200  # red ink becomes a mid grey, not black or white
    # with training strength about GREYSCALE_SHARE of scenes lose their colour; readable scenes (0.3) rarely do
    colourful = np.zeros((4, 4, 3), np.float32)
    colourful[..., 2] = 200

    def grey_share(strength: float) -> float:
        outputs = [camera.apply_camera(colourful, np.random.default_rng(seed), strength) for seed in range(400)]
        return float(np.mean([np.allclose(out[..., 0], out[..., 2]) for out in outputs]))

    assert abs(grey_share(1.0) - camera.GREYSCALE_SHARE) < 0.05
    assert grey_share(0.3) < camera.GREYSCALE_SHARE / 2
