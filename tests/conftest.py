"""Shared fixtures: tiny untrained YOLO models (built from yaml, never downloaded), a fake
detector with canned answers, and helpers to write small images and videos."""

from __future__ import annotations

import json
import os
import shutil
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from scorer.cards import CLASS_NAMES, Card, parse_cards
from scorer.vision.types import Box, CardDetection, Conflict

if TYPE_CHECKING:
    from scorer.synth.scene import SceneConfig

os.environ.setdefault("YOLO_OFFLINE", "1")  # ultralytics reads this at import: no network, ever
os.environ.setdefault("YOLO_AUTOINSTALL", "false")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHIPPED_MODELS = REPO_ROOT / "models"
REAL_PHOTOS = REPO_ROOT.parent / "shared" / "real-photos" / "poker-cards-fmjio"  # CI lays shared/ beside the clone

TINY_DETECTOR_IMGSZ = 320
TINY_CROP_SIZE = 32
NONE_CLASS = "none"


SCENE_DECKS = ("anglo", "simplistic", "bellot", "paris", "kde-standard")
"""The card designs of the tests' rendered scenes: aisleriot's and KDE's, two and four indices."""


@pytest.fixture(scope="session")
def faces_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``SCENE_DECKS`` rendered into a fresh folder once per session (a few seconds), for the tests that ask.

    Never the checkout's ``datasets/faces``, which may hold any subset of decks or none; skips,
    naming the install command, where the Debian decks or ``rsvg-convert`` are absent.
    """
    from scorer.synth import faces

    folder = tmp_path_factory.mktemp("faces")
    try:
        faces.render_decks(folder, SCENE_DECKS)
    except faces.FacesUnavailableError as error:
        pytest.skip(f"cannot render the test decks: {error}")
    return folder


@pytest.fixture(scope="session")
def scene_config(faces_dir: Path) -> SceneConfig:
    """A ``SceneConfig`` drawing only on ``SCENE_DECKS`` (no procedural styles, whose fonts depend on the
    machine's font packages), so a seed gives the same scene on every machine."""
    from scorer.synth.scene import SceneConfig

    return SceneConfig(faces_dir=faces_dir, decks=SCENE_DECKS, procedural_fraction=0.0)


TRAIN_EXTRA_MODULES = {
    "ultralytics": "ultralytics",
    "torch": "torch",
    "torchvision": "torchvision",  # brought by ultralytics
    "matplotlib": "matplotlib",
    "onnx": "onnx",
}
"""The packages of pyproject's ``train`` extra, distribution -> module: what the light install lacks."""
REFUSED_IMPORT = "refused import of the train extra:"
_REFUSE_TRAIN_EXTRA = f"""
import importlib.abc, sys

class TrainExtraAbsent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {sorted(TRAIN_EXTRA_MODULES.values())!r}:
            print({REFUSED_IMPORT!r}, name, file=sys.stderr, flush=True)
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, TrainExtraAbsent())
"""


def without_train_extra(code: str, *args: str) -> list[str]:
    """The command line that runs ``code`` (with ``args`` in ``sys.argv[1:]``) as if okgin were installed
    without the ``train`` extra: importing any of ``TRAIN_EXTRA_MODULES`` fails, and each refused import is
    reported on stderr after ``REFUSED_IMPORT``, so that even an import the code catches can be seen."""
    return [sys.executable, "-c", _REFUSE_TRAIN_EXTRA + code, *args]


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


def not_utf8(folder: Path, name: str) -> Path:
    """``folder / name`` with two bytes that are no UTF-8 before the name, as a Linux file name may have (Python holds
    them as lone surrogates)."""
    return Path(os.fsdecode(os.fsencode(folder) + b"/\xff\xfe" + os.fsencode(name)))


def in_a_child_process(check: Callable[[], None]) -> None:
    """Run ``check`` in a forked child and fail when it fails or dies: a call that crashes the process (OpenCV
    segfaulted on a file name that is no UTF-8) then fails its test instead of ending the whole test run."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports only through its exit status
        try:
            check()
        except BaseException:
            import traceback

            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert not os.WIFSIGNALED(status), f"the process died of signal {os.WTERMSIG(status)}"
    assert os.WEXITSTATUS(status) == 0, "the check failed in the child process (its traceback is on stderr)"


def copy_models(source: Path, target: Path, **changes: object) -> Path:
    """A copy of the model set in ``source`` at ``target``, its manifest's keys changed as given."""
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest.update(changes)
    (target / "manifest.json").write_text(json.dumps(manifest))
    return target


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


TABLE_HANDS = {1: parse_cards("AS 2S 3S 7H 7D 7C 9C 10C JC KD"), 2: parse_cards("QS QC QH 10S JS 3D 5H 7S AD 6D")}
TABLE_UPCARD = Card.parse("KS")


def table_scene(config: SceneConfig, seed: int, deck: str = "anglo", **options: Any) -> tuple[np.ndarray, Any]:
    """``TABLE_HANDS`` laid down and ``TABLE_UPCARD`` turned up on a mildly tilted table, in ``deck``'s design:
    what the shipped-model tests read. Returns (BGR image, SceneTruth)."""
    from scorer.synth.scene import render_table_scene

    return render_table_scene(
        seed, hands=TABLE_HANDS, upcard=TABLE_UPCARD, deck=deck, mild=True, config=config, **options
    )


def card_f1(found: set[Card], expected: set[Card]) -> float:
    """How well a reading found ``expected``: the harmonic mean of precision and recall over cards.

    >>> card_f1({Card.parse("AS")}, {Card.parse("AS"), Card.parse("2S")})
    0.6666666666666666
    """
    return 2 * len(found & expected) / (len(found) + len(expected)) if found or expected else 1.0


@pytest.fixture
def render_scene(scene_config: SceneConfig) -> Callable[..., tuple[np.ndarray, Any]]:
    """``render(seed, hands={seat: "cards"}, upcard="QH", **options)`` -> (BGR image, SceneTruth), a mild scene."""
    from scorer.synth.scene import render_table_scene

    def render(seed: int, hands: dict[int, str], upcard: str | None = None, **options: Any) -> tuple[np.ndarray, Any]:
        cards = {seat: parse_cards(text) for seat, text in hands.items()}
        upcard_card = Card.parse(upcard) if upcard else None
        return render_table_scene(seed, hands=cards, upcard=upcard_card, mild=True, config=scene_config, **options)

    return render


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    """For the browser tests: a live okgin server on a fresh database, on a free loopback port; its base URL."""
    from browser_support import live_server

    from web import create_app

    with live_server(create_app({"DATA_DIR": str(tmp_path / "data")})) as url:
        yield url


@pytest.fixture
def browser() -> Iterator[Any]:
    """For the browser tests: Debian's Chromium (``browser_support.chromium``)."""
    from browser_support import chromium

    with chromium() as chromium_browser:
        yield chromium_browser
