"""A live frame blurred by a moving camera is not read: the sharpness of its indices, and the live detector's gate.

Session 44's live probe: a camera bumped mid-frame gave the detector 191 boxes around smears and the classifier 5,932
crops, some 5 s of two cores while every other table waited, to read one card of 21 (models/HISTORY.md, Session 45).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest
from conftest import shipped_model_or_skip, table_scene

from scorer.synth.scene import SceneConfig
from scorer.vision.sharpness import BLURRED, SMEARED_BELOW, blurred, box_sharpness
from scorer.vision.types import FrameNotRead


def bumped(image: np.ndarray, length: int = 25, down: bool = False) -> np.ndarray:
    """``image`` as a camera moving ``length`` pixels across it (or ``down`` it) while the shutter is open shows it."""
    return cv2.blur(image, (1, length) if down else (length, 1))


def test_a_table_smeared_by_a_bumped_camera_is_blurred_and_a_sharp_or_dim_one_is_not(scene_config: SceneConfig) -> None:
    """Measured on the table's own indices (its truth's boxes, no model): a dim table is as sharp as a bright one,
    a frame shrunk to half its size still sharp, and a frame smeared 25 px across blurred."""
    image, truth = table_scene(scene_config, 7, "anglo")
    boxes = [label.box for label in truth.labels]
    assert len(boxes) >= 16
    half = [tuple(value / 2 for value in box) for box in boxes]
    dim = (image * 0.3).astype(np.uint8)
    shrunk = cv2.resize(image, (640, 360), interpolation=cv2.INTER_AREA)
    assert not blurred(box_sharpness(image, boxes))
    assert not blurred(box_sharpness(dim, boxes))
    assert not blurred(box_sharpness(shrunk, half))  # type: ignore[arg-type]
    assert blurred(box_sharpness(bumped(image), boxes))
    assert blurred(box_sharpness(bumped(dim), boxes))
    # along the indices' length as across them: in the classifier's own crop, stretched, 42 boxes in 100 smeared
    assert blurred(box_sharpness(bumped(image, 19, down=True), boxes))


def test_a_few_boxes_are_never_judged_blurred(scene_config: SceneConfig) -> None:
    """A frame of a few boxes costs little to read even blurred, and a few boxes on plain surfaces (a card's back,
    glare) measure as smeared however sharp the picture."""
    image, truth = table_scene(scene_config, 7, "anglo")
    boxes = [label.box for label in truth.labels][:15]
    sharpness = box_sharpness(bumped(image), boxes)
    assert (sharpness < SMEARED_BELOW).all() and not blurred(sharpness)


@pytest.fixture(scope="module")
def counted_detector() -> Any:
    """The shipped detector, counting the crops its classifier reads (``crops``)."""
    from scorer.vision.detector import CardDetector

    detector = CardDetector(shipped_model_or_skip())
    predict = detector.classifier.predict
    detector.crops = 0  # type: ignore[attr-defined]

    def counted(crops: list[np.ndarray]) -> np.ndarray:
        detector.crops += len(crops)  # type: ignore[attr-defined]
        return predict(crops)

    detector.classifier.predict = counted  # type: ignore[method-assign,union-attr]
    return detector


@pytest.mark.model
@pytest.mark.slow
def test_the_live_detector_declines_a_bumped_frame_before_reading_a_crop(
    counted_detector: Any, scene_config: SceneConfig
) -> None:
    """The blurred frame costs the detector's looks and the gate, never a crop; a sharp frame reads as a photo does,
    and a photo, however blurred, is read (``detect``)."""
    image, _ = table_scene(scene_config, 7, "anglo")
    counted_detector.crops = 0
    with pytest.raises(FrameNotRead, match=BLURRED):
        counted_detector.detect_live(bumped(image))
    assert counted_detector.crops == 0
    counted_detector.detect(bumped(image))
    assert counted_detector.crops > 0
    assert counted_detector.detect_live(image) == counted_detector.detect(image)
