"""Shared fixtures: tiny untrained YOLO models (built from yaml, never downloaded), a fake
detector with canned answers, and helpers to write small images and videos."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scorer.cards import CLASS_NAMES, Card, parse_cards
from scorer.vision.types import Box, CardDetection, Conflict

os.environ.setdefault("YOLO_OFFLINE", "1")  # ultralytics reads this at import: no network, ever
os.environ.setdefault("YOLO_AUTOINSTALL", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHIPPED_MODELS = REPO_ROOT / "models"
REAL_PHOTOS = REPO_ROOT.parent / "shared" / "real-photos" / "poker-cards-fmjio"  # CI lays shared/ beside the clone

TINY_DETECTOR_IMGSZ = 320
TINY_CROP_SIZE = 32
NONE_CLASS = "none"


@pytest.fixture(scope="session", autouse=True)
def rendered_faces() -> Path:
    """Card faces rendered once per machine (a fresh clone has none: they are never committed)."""
    from scorer.synth import faces

    if not faces.available_decks():
        faces.render_decks(faces.DEFAULT_FACES_DIR)
    return faces.DEFAULT_FACES_DIR


def shipped_model_or_skip() -> Path:
    """The shipped model directory, or skip the calling test with the reason."""
    if not (SHIPPED_MODELS / "manifest.json").exists():
        pytest.skip(f"no shipped model: {SHIPPED_MODELS / 'manifest.json'} is absent (train one first)")
    return SHIPPED_MODELS


def _reinitialise(model: Any, seed: int) -> None:
    """Give an untrained model weights whose activations survive its depth.

    ultralytics' default initialisation shrinks activations layer by layer until an
    untrained network outputs constants; He-normal weights keep them alive, so the
    torch-versus-ONNX comparisons compare something that depends on the input.
    """
    import torch

    torch.manual_seed(seed)
    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d | torch.nn.Linear):
            torch.nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
    head = model.model[-1]
    for branch in getattr(head, "cv3", ()):  # detect head: lift class scores from ~0.01 to ~0.3, so boxes appear
        torch.nn.init.normal_(branch[-1].weight, 0.0, 0.3)
        branch[-1].bias.data.fill_(-1.0)


def build_tiny_models(directory: Path, *, dynamic_detector: bool = False) -> Path:
    """Build, save and export a two-stage and a one-stage tiny model set under ``directory``.

    Writes ``two-stage/`` (one-class detector + 53-class classifier whose names are in
    ultralytics' alphabetical folder order, ``none`` included) and ``one-stage/`` (a
    52-class detector), each with ``.pt``, ``.onnx`` and ``manifest.json``.
    """
    from ultralytics import YOLO
    from ultralytics.nn.tasks import ClassificationModel, DetectionModel

    classifier_names = sorted([*CLASS_NAMES, NONE_CLASS])  # what a folder-per-class dataset gives

    def save(model: Any, names: Sequence[str], task_yaml: str, path: Path, imgsz: int, dynamic: bool) -> None:
        model.names = dict(enumerate(names))
        model.task = "classify" if "cls" in task_yaml else "detect"
        _reinitialise(model, seed=len(names))
        wrapper = YOLO(task_yaml)
        wrapper.model = model
        wrapper.save(str(path))
        with warnings.catch_warnings():  # the exporter's tracer warnings say nothing about our code
            warnings.simplefilter("ignore")
            exported = YOLO(str(path), task=wrapper.task).export(
                format="onnx", imgsz=imgsz, simplify=False, dynamic=dynamic, device="cpu", verbose=False
            )
        Path(exported).replace(path.with_suffix(".onnx"))

    two = directory / "two-stage"
    two.mkdir(parents=True)
    save(
        DetectionModel("yolo11n.yaml", nc=1, verbose=False),
        ["corner"],
        "yolo11n.yaml",
        two / "det.pt",
        TINY_DETECTOR_IMGSZ,
        dynamic_detector,
    )
    save(
        ClassificationModel("yolo11n-cls.yaml", nc=len(classifier_names), verbose=False),
        classifier_names,
        "yolo11n-cls.yaml",
        two / "cls.pt",
        TINY_CROP_SIZE,
        True,
    )
    manifest = {
        "design": "two-stage",
        "detector": "det.pt",
        "detector_onnx": "det.onnx",
        "detector_imgsz": TINY_DETECTOR_IMGSZ,
        "classifier": "cls.pt",
        "classifier_onnx": "cls.onnx",
        "crop_size": TINY_CROP_SIZE,
        "crop_pad": 0.35,
        "names": list(CLASS_NAMES),
        "classifier_names": classifier_names,
        "none_class": NONE_CLASS,
        "conf": 0.25,
    }
    (two / "manifest.json").write_text(json.dumps(manifest))

    one = directory / "one-stage"
    one.mkdir(parents=True)
    save(
        DetectionModel("yolo11n.yaml", nc=52, verbose=False),
        CLASS_NAMES,
        "yolo11n.yaml",
        one / "det.pt",
        TINY_DETECTOR_IMGSZ,
        True,
    )
    one_manifest = {
        "design": "one-stage",
        "detector": "det.pt",
        "detector_onnx": "det.onnx",
        "detector_imgsz": TINY_DETECTOR_IMGSZ,
        "names": list(CLASS_NAMES),
        "conf": 0.25,
    }
    (one / "manifest.json").write_text(json.dumps(one_manifest))
    return directory


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory with ``two-stage/`` and ``one-stage/`` tiny untrained model sets (see ``build_tiny_models``)."""
    return build_tiny_models(tmp_path_factory.mktemp("tiny-models"))


# --- canned detections ----------------------------------------------------------------------------------------------


def detection(card: str, centre: tuple[float, float], size: tuple[float, float] = (40, 60), conf: float = 0.9):
    """A ``CardDetection`` of ``card`` whose box is centred on ``centre`` (pixels)."""
    x, y = centre
    w, h = size
    box: Box = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
    return CardDetection(Card.parse(card), box, conf)


def seat_cards(reading_json: dict[str, Any]) -> dict[str, list[str]]:
    """The card names per seat of a reading's JSON form (``FrameReading.to_dict``)."""
    return {zone: [c["card"] for c in cards] for zone, cards in reading_json["zones"].items() if zone.isdigit()}


def row_of(cards: str, y: float, x0: float = 100, step: float = 60) -> list[CardDetection]:
    """Cards laid in a row at height ``y``, one every ``step`` pixels from ``x0``."""
    return [detection(str(card), (x0 + i * step, y)) for i, card in enumerate(parse_cards(cards))]


class FakeDetector:
    """A detector with canned answers: each ``detect`` returns the next item of ``frames`` (the last repeats).

    Items are lists of ``CardDetection`` (no conflicts) or ready ``Detections``. Boxes are in a
    ``width`` x ``height`` frame whatever the size of the image given, so tiny test videos do.
    """

    backend_name = "fake"

    def __init__(self, frames: Sequence[Any], width: int = 1280, height: int = 720) -> None:
        self.frames = list(frames)
        self.width, self.height = width, height
        self.calls = 0

    def detect(self, image_bgr: np.ndarray) -> Any:
        from scorer.vision.types import Detections

        item = self.frames[min(self.calls, len(self.frames) - 1)]
        self.calls += 1
        if isinstance(item, Detections):
            return item
        conflicts: tuple[Conflict, ...] = ()
        return Detections(tuple(item), conflicts, self.width, self.height)


@pytest.fixture
def blank_frame() -> np.ndarray:
    """A grey 1280x720 BGR frame."""
    return np.full((720, 1280, 3), 90, np.uint8)


@pytest.fixture
def write_video(tmp_path: Path) -> Callable[..., Path]:
    """Write ``count`` frames (each drawn by ``draw(index)``) to an MJPG ``.avi``; returns its path."""

    def write(count: int, draw: Callable[[int], np.ndarray] | None = None, fps: float = 10.0) -> Path:
        import cv2

        path = tmp_path / "clip.avi"
        first = draw(0) if draw else np.zeros((72, 128, 3), np.uint8)
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (first.shape[1], first.shape[0]))
        for index in range(count):
            writer.write(draw(index) if draw else np.full_like(first, index * 10 % 255))
        writer.release()
        return path

    return write


# --- rendered scenes (scorer.synth) with a perfect detector -------------------------------------------------------


def truth_detections(truth: Any) -> Any:
    """What a perfect corner detector would report for a rendered scene: its labelled indices, merged."""
    from scorer.vision.merge import merge_corners
    from scorer.vision.types import CornerDetection, Detections

    corners = [CornerDetection(label.card, label.box, 0.99) for label in truth.labels]
    cards, conflicts = merge_corners(corners)
    return Detections(tuple(cards), tuple(conflicts), truth.width, truth.height)


@pytest.fixture
def render_scene() -> Callable[..., tuple[np.ndarray, Any]]:
    """``render(seed, hands={seat: "cards"}, upcard="QH", **options)`` -> (BGR image, SceneTruth).

    Skips the test when the renderer or its deck faces are unavailable.
    """
    try:
        from scorer.synth.faces import FacesUnavailableError
        from scorer.synth.scene import render_table_scene
    except ImportError as error:  # the renderer is another module's work; its absence skips, never fails
        pytest.skip(f"scene renderer unavailable: {error}")

    def render(seed: int, hands: dict[int, str], upcard: str | None = None, **options: Any) -> tuple[np.ndarray, Any]:
        cards = {seat: parse_cards(text) for seat, text in hands.items()}
        try:
            return render_table_scene(
                seed, hands=cards, upcard=Card.parse(upcard) if upcard else None, mild=True, **options
            )
        except FacesUnavailableError as error:
            pytest.skip(f"no rendered deck faces: {error}")

    return render
