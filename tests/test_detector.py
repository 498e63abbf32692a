"""The detector: manifest checks, ultralytics-identical pre/post-processing, backend agreement, clear errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from conftest import copy_models, not_utf8, without_train_extra

from scorer.cards import CLASS_NAMES, Card
from scorer.extras import TRAIN_EXTRA_INSTALL
from scorer.vision import backends
from scorer.vision.backends import (
    CROPS_PER_RUN,
    OnnxBoxModel,
    OnnxCropModel,
    OnnxRuntimeEngine,
    OpenVinoEngine,
    UltralyticsBoxModel,
    UltralyticsCropModel,
    available_backends,
    decode_yolo,
    fit_within,
    grain_level,
    letterbox,
)
from scorer.vision.crops import NEGATIVE_BELOW, corner_crop, index_views, light_share, lightness_negative
from scorer.vision.detector import MOST_BOXES_NAMED, STRETCH_MARGIN, CardDetector, check_frame, surer_half
from scorer.vision.manifest import ModelError, ModelManifest, default_model_dir


def write_manifest(directory: Path, **fields: object) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    data = {"design": "one-stage", "detector_onnx": "det.onnx", **fields}
    (directory / "manifest.json").write_text(json.dumps(data))
    return directory


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"design": "three-stage"}, "design 'three-stage' is not one of"),
        ({"names": ["AC", "XX"]}, "unknown card 'XX'"),
        ({"names": list(CLASS_NAMES[:51])}, "must name each of the 52 cards once"),
        ({"detector_onnx": None}, "names no detector file"),
        ({"design": "two-stage"}, "a two-stage model needs a classifier"),
        ({"backend": "tpu"}, "backend 'tpu' is not one of"),
        ({"detector_imgsz": 1_000_000}, "detector_imgsz and detector_coarse_sizes must lie in 32..4096 px"),
        ({"crop_size": 0}, "crop_size 0 is outside 8..512 px"),
        ({"conf": float("nan")}, r"conf nan is outside \[0, 1\]"),
        ({"card_conf": 5}, r"card_conf 5.0 is outside \[0, 1\]"),
        ({"conf": "high"}, "could not convert string to float"),
        ({"detector_weight": 0}, r"detector_weight 0.0 is outside \(0, 1\]"),
        ({"classifier_rotations": [0, 45]}, "classifier_rotations must list some of 0, 90, 180, 270"),
        ({"classifier_rotations": []}, "classifier_rotations must list some of 0, 90, 180, 270"),
        ({"classifier_sure": 1.5}, r"classifier_sure 1.5 is outside \(0, 1\]"),
        ({"classifier_none_sure": 0}, r"classifier_none_sure 0.0 is outside \(0, 1\]"),
        ({"negative_below": 1}, r"negative_below 1.0 is outside \(0, 1\)"),
        ({"negative_look_after": 2}, "negative_look_after must be 1 or more, and needs negative_below"),
        ({"negative_below": 0.4, "negative_look_after": 0}, "negative_look_after must be 1 or more"),
        ({"grain_median_above": 0}, "grain_median_above 0.0 must be above 0"),
        ({"extra_crop_pads": [0.1, 1.5]}, "crop_pad and extra_crop_pads must lie in 0..1"),
        ({"crop_pad": -0.1}, "crop_pad and extra_crop_pads must lie in 0..1"),
        ({"extra_crop_pads": 0.1}, "not iterable"),
        ({"veto_classifiers": "v.pt"}, "veto_classifiers must be a list of file names"),
        ({"veto_classifiers": ["v.pt", 3]}, "veto_classifiers must be a list of file names"),
        ({"veto_classifiers": ["v.pt"]}, "veto_classifiers check a classifier, and a one-stage model has none"),
        ({"veto_below": 0}, r"veto_below 0.0 is outside \(0, 1\]"),
        ({"stretches": [1.0]}, "stretches must lie above 1 and at most 3.0"),
        ({"stretches": [1.5, 4]}, "stretches must lie above 1 and at most 3.0"),
        ({"detector_imgsz": float("inf")}, "cannot convert float infinity to integer"),  # was an OverflowError
        ({"classifier_rotations": [float("inf")]}, "cannot convert float infinity to integer"),
    ],
)
def test_bad_manifest_fields_are_named(tmp_path: Path, fields: dict[str, object], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        ModelManifest.load(write_manifest(tmp_path / "m", **fields))


def test_missing_model_directory_and_manifest_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelError, match=r"does not exist$"):
        CardDetector(tmp_path / "nowhere")
    monkeypatch.setenv("OKGIN_MODEL_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ModelError, match="does not exist; pass --model DIR or set OKGIN_MODEL_DIR"):
        CardDetector()  # the default folder: say how to name another
    with pytest.raises(ModelError, match=r"manifest\.json is missing"):
        CardDetector(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(ModelError, match="could not read"):
        CardDetector(tmp_path)


def test_missing_model_file_is_named_not_downloaded(tmp_path: Path) -> None:
    directory = write_manifest(tmp_path / "m", detector="det.pt")
    with pytest.raises(
        ModelError, match=r"no usable model files in '.*': its manifest.json names det\.pt, det\.onnx, not there"
    ):
        CardDetector(directory)
    with pytest.raises(ModelError, match=r"detector weights '.*det\.pt' is missing"):
        CardDetector(directory, backend="torch")
    with pytest.raises(ModelError, match=r"ONNX detector '.*det\.onnx' is missing"):
        CardDetector(directory, backend="onnx")


def test_unknown_backend_and_bad_threshold_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown backend 'cuda'"):
        CardDetector(tmp_path, backend="cuda")
    with pytest.raises(ModelError, match=r"outside 0\.\.1"):
        CardDetector(tmp_path, conf=1.5)


def test_model_dir_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OKGIN_MODEL_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(ModelError, match="elsewhere"):
        CardDetector()


def test_a_checkout_finds_its_models_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OKGIN_MODEL_DIR", raising=False)
    assert default_model_dir() == Path(__file__).resolve().parents[1] / "models"


def test_an_installed_package_is_told_where_the_model_is(tmp_path: Path) -> None:
    # the package alone, as a wheel installs it: no pyproject.toml, no models/ beside it
    site = tmp_path / "site-packages"
    shutil.copytree(
        Path(__file__).resolve().parents[1] / "scorer", site / "scorer", ignore=shutil.ignore_patterns("*.pyc")
    )
    code = "from scorer.vision.manifest import default_model_dir; print(default_model_dir())"
    env = {key: value for key, value in os.environ.items() if key != "OKGIN_MODEL_DIR"} | {"PYTHONPATH": str(site)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode != 0
    assert "ModelError: no model directory: okgin is installed without its models/ folder" in run.stderr
    assert "set OKGIN_MODEL_DIR to the folder holding manifest.json" in run.stderr
    env["OKGIN_MODEL_DIR"] = str(tmp_path / "weights")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.stdout.strip() == str(tmp_path / "weights")


def test_a_manifest_writes_and_reads_itself_back(tmp_path: Path) -> None:
    provenance = {"trained_on": "gen61", "thresholds_chosen_on": {"f1": 0.9}}
    names = tuple(sorted([*CLASS_NAMES, "none"]))
    manifest = ModelManifest(
        tmp_path / "m", classifier_onnx="c.onnx", detector_onnx="d.onnx", classifier_names=names, provenance=provenance
    )
    changed: dict[str, Any] = {"card_conf": 0.35, "classifier_rotations": (0, 180)}
    changed |= {"classifier_sure": 0.95, "classifier_none_sure": 0.5, "negative_below": 0.4, "negative_look_after": 2}
    changed |= {"extra_crop_pads": (0.1,), "grain_median_above": 3.0, "stretches": (1.333, 1.778)}
    changed |= {"veto_classifiers": ("c-veto-1.pt", "c-veto-2.pt"), "veto_below": 0.98}
    assert "extra_crop_pads" not in manifest.to_dict()  # written only when some are set
    assert "veto_classifiers" not in manifest.to_dict()
    manifest.replace(**changed).save()
    again = ModelManifest.load(tmp_path / "m")
    assert again == manifest.replace(**changed)
    assert again.provenance == provenance and again.classifier_classes == manifest.classifier_classes
    written = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert (written["classifier_rotations"], written["extra_crop_pads"]) == ([0, 180], [0.1])
    assert written["stretches"] == [1.333, 1.778] and "stretches" not in manifest.to_dict()
    assert written["veto_classifiers"] == ["c-veto-1.pt", "c-veto-2.pt"]
    assert again.veto_files("onnx") == ("c-veto-1.onnx", "c-veto-2.onnx")
    with pytest.raises(ModelError, match=r"detector_weight 2 is outside \(0, 1\]"):
        manifest.replace(detector_weight=2)


def test_classifier_names_in_any_order_map_to_cards(tmp_path: Path) -> None:
    names = sorted([*CLASS_NAMES, "none"])
    manifest = ModelManifest.load(
        write_manifest(tmp_path / "m", design="two-stage", classifier_onnx="c.onnx", classifier_names=names)
    )
    assert manifest.classifier_classes[names.index("none")] is None
    assert manifest.classifier_classes[names.index("QH")] == CLASS_NAMES.index("QH")


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ("not an image", "numpy BGR image, got str"),
        (np.zeros((10, 10), np.uint8), r"shape \(height, width, 3\)"),
        (np.zeros((0, 10, 3), np.uint8), r"shape \(height, width, 3\)"),
        (np.zeros((10, 10, 3), np.float32), "must be uint8"),
    ],
)
def test_bad_frames_are_refused(frame: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_frame(frame)


@pytest.mark.parametrize("shape", [(720, 1280), (640, 640), (481, 333), (1080, 1920)])
@pytest.mark.parametrize("minimal", [True, False])
def test_letterbox_matches_ultralytics(shape: tuple[int, int], minimal: bool) -> None:
    """The same size and padding as ultralytics' letterbox; the pixels are the same once the frame fits."""
    from ultralytics.data.augment import LetterBox

    image = np.random.default_rng(1).integers(0, 255, (*shape, 3), dtype=np.uint8)
    ours, _ = letterbox(image, (640, 640), minimal=minimal)
    theirs = LetterBox((640, 640), auto=minimal, stride=32)(image=fit_within(image, (640, 640)))
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)


def test_a_big_frame_is_shrunk_by_averaging_not_sampling() -> None:
    """Grain averages away and a one-pixel stroke stays, as in the detector's training tiles."""
    frame = np.full((1080, 1920, 3), 200, np.uint8)
    frame[:540] = np.where(np.indices((540, 1920)).sum(axis=0) % 2, 255, 0)[:, :, None]  # pixel-sized grain
    frame[540:, ::30] = 0  # one-pixel dark strokes, 30 px apart
    small = fit_within(frame, (640, 640))
    assert small.shape == (360, 640, 3)
    assert small[:170].std() < 20  # sampled bilinearly it stays black and white (a standard deviation of 127)
    strokes = small[190:].min(axis=0)[:, 0]
    assert (strokes[::10] < 150).all()  # sampled bilinearly, every one is lost


def test_decode_matches_ultralytics_nms() -> None:
    import torch
    from ultralytics.utils.nms import non_max_suppression

    rng = np.random.default_rng(2)
    anchors, classes = 400, 3
    raw = np.zeros((1, 4 + classes, anchors), np.float32)
    raw[0, 0:2] = rng.uniform(0, 320, (2, anchors))
    raw[0, 2:4] = rng.uniform(5, 60, (2, anchors))
    raw[0, 4:] = rng.uniform(0, 1, (classes, anchors))
    boxes, scores, labels = decode_yolo(raw, conf=0.6, iou=0.5)
    expected = non_max_suppression(torch.from_numpy(raw), 0.6, 0.5, agnostic=True, max_det=300)[0].numpy()
    assert len(boxes) == len(expected) > 10
    order = np.argsort(-scores)
    assert np.allclose(boxes[order], expected[:, :4], atol=1e-3)
    assert np.allclose(scores[order], expected[:, 4], atol=1e-6)
    assert np.array_equal(labels[order], expected[:, 5].astype(int))


def test_decode_of_nothing_is_empty() -> None:
    boxes, scores, labels = decode_yolo(np.zeros((1, 5, 10), np.float32), conf=0.25, iou=0.5)
    assert boxes.shape == (0, 4) and scores.shape == (0,) and labels.shape == (0,)


def test_importing_the_detector_loads_no_heavy_runtime() -> None:
    code = "import sys, scorer.vision.detector, scorer.vision.merge; print(' '.join(sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert not {"torch", "ultralytics", "onnxruntime"} & set(loaded)


# --- with tiny untrained models (built once per session, a few seconds) --------------------------------------------


@pytest.fixture(scope="module")
def frame() -> np.ndarray:
    return np.random.default_rng(3).integers(0, 255, (720, 1280, 3), dtype=np.uint8)


@pytest.mark.slow
def test_onnx_backend_matches_ultralytics_on_the_same_onnx_file(tiny_models: Path, frame: np.ndarray) -> None:
    path = tiny_models / "two-stage" / "det.onnx"
    ours = OnnxBoxModel(path, 320).predict(frame, 0.01, 0.5)
    theirs = UltralyticsBoxModel(path, 320).predict(frame, 0.01, 0.5)
    assert len(ours[0]) == len(theirs[0]) > 0
    assert np.allclose(ours[0], theirs[0], atol=0.05)
    assert np.allclose(ours[1], theirs[1], atol=1e-5)


ONNX_DETECTION = """
import sys
import numpy as np
from scorer.vision.detector import CardDetector
from scorer.vision.manifest import ModelError

detector = CardDetector(sys.argv[1], conf=0.01)
frame = np.random.default_rng(3).integers(0, 255, (720, 1280, 3), dtype=np.uint8)
found = detector.detect(frame)
try:
    CardDetector(sys.argv[1], backend="torch")
except ModelError as error:
    print("torch backend:", error)
print(detector.backend_name, len(detector.read_corners(frame)), len(found.cards))
print(" ".join(sorted(sys.modules)))
"""
"""Detection with a tiny model (``sys.argv[1]``) on the default backend, for ``without_train_extra``."""


@pytest.mark.slow
def test_onnx_serving_needs_neither_torch_nor_ultralytics(tiny_models: Path, tmp_path: Path) -> None:
    model = copy_models(tiny_models / "two-stage", tmp_path / "m", classifier_conf=0.0)
    run = subprocess.run(without_train_extra(ONNX_DETECTION, str(model)), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    message, reading, modules = run.stdout.splitlines()
    assert "the torch backend needs ultralytics" in message and TRAIN_EXTRA_INSTALL in message
    backend, corners, cards = reading.split()
    assert backend in ("onnx", "openvino") and int(corners) > 0 and int(cards) > 0
    assert {"onnxruntime", "openvino"} & set(modules.split())
    assert not {"torch", "ultralytics"} & set(modules.split())


@pytest.mark.slow
def test_onnx_and_torch_detectors_agree(tiny_models: Path, frame: np.ndarray) -> None:
    onnx = CardDetector(tiny_models / "one-stage", backend="onnx", conf=0.01).detect(frame)
    torch = CardDetector(tiny_models / "one-stage", backend="torch", conf=0.01).detect(frame)
    assert onnx.cards, "the tiny model should find something at this threshold"
    assert [c.card for c in onnx.cards] == [c.card for c in torch.cards]
    assert np.allclose([c.box for c in onnx.cards], [c.box for c in torch.cards], atol=0.05)
    assert np.allclose([c.confidence for c in onnx.cards], [c.confidence for c in torch.cards], atol=1e-4)
    assert (onnx.width, onnx.height) == (1280, 720)


@pytest.mark.slow
def test_the_onnx_classifier_reads_a_big_batch_a_bounded_chunk_at_a_time(tiny_models: Path) -> None:
    """ONNX Runtime keeps the memory of its biggest batch: a blurred frame's 955 crops at once grew a server by
    60 MB a frame (session 44). The readings do not depend on how the crops are chunked."""
    rng = np.random.default_rng(5)
    crops = [rng.integers(0, 255, (32, 32, 3), dtype=np.uint8) for _ in range(CROPS_PER_RUN * 2 + 3)]
    model = OnnxCropModel(tiny_models / "two-stage" / "cls.onnx", 32)
    assert model.fixed_batch is None  # the tiny export, like the shipped one, takes any batch
    run, sizes = model.engine.run, []

    def counted(blob: np.ndarray) -> np.ndarray:
        sizes.append(len(blob))
        return run(blob)

    model.engine.run = counted  # type: ignore[method-assign]
    together = model.predict(crops)
    assert sizes == [CROPS_PER_RUN, CROPS_PER_RUN, 3]
    assert np.array_equal(together, np.concatenate([model.predict(crops[i : i + 5]) for i in range(0, len(crops), 5)]))


def test_onnx_classifier_preprocessing_matches_ultralytics(tiny_models: Path) -> None:
    rng = np.random.default_rng(4)
    crops = [rng.integers(0, 255, (32, 32, 3), dtype=np.uint8) for _ in range(7)]
    ours = OnnxCropModel(tiny_models / "two-stage" / "cls.onnx", 32).predict(crops)
    theirs = UltralyticsCropModel(tiny_models / "two-stage" / "cls.pt", 32).predict(crops)
    assert ours.shape == theirs.shape == (7, 53)
    assert np.allclose(ours, theirs, atol=1e-5)
    assert np.array_equal(ours.argmax(1), theirs.argmax(1))


class BrightTopClassifier:
    """Says class 0 when a crop's top half is brighter than its bottom, class 1 otherwise; records its batches."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def predict(self, crops: Any) -> np.ndarray:
        self.batches.append(len(crops))
        top_brighter = [float(c[: len(c) // 2].mean() > c[len(c) // 2 :].mean()) for c in crops]
        return np.array([[t, 1 - t] for t in top_brighter], np.float32)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("turns", "expected"), [([0], [1.0, 0.0]), ([0, 180], [0.5, 0.5]), ([0, 90, 180, 270], [0.5, 0.5])]
)
def test_classifier_readings_are_averaged_over_turned_crops(
    tiny_models: Path, tmp_path: Path, turns: list[int], expected: list[float]
) -> None:
    detector = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "m", classifier_rotations=turns))
    detector.classifier = fake = BrightTopClassifier()
    crop = np.zeros((64, 64, 3), np.uint8)
    crop[:32, :40] = 255  # bright top (and left): a half turn makes it a bright bottom
    probabilities = detector._classify([crop, crop, crop])
    assert fake.batches == [3 * len(turns)]  # every turn of every crop in one batch
    assert probabilities.shape == (3, 2)
    assert np.allclose(probabilities, [expected] * 3)


class WhiteSureClassifier(BrightTopClassifier):
    """Sure (0.99) of class 0 for a white crop; otherwise 0.7 for the brighter half's class, 0.3 for the other."""

    def predict(self, crops: Any) -> np.ndarray:
        bright_top = super().predict(crops)[:, 0]
        white = np.array([float(c.min() == 255) for c in crops])
        first = np.where(white == 1, 0.99, 0.3 + 0.4 * bright_top)
        return np.stack([first, 1 - first], axis=1).astype(np.float32)


class CannedClassifier:
    """Reads the crops of each call as the next rows of ``table``; records its batches."""

    def __init__(self, table: np.ndarray) -> None:
        self.table, self.batches = table, []

    def predict(self, crops: Any) -> np.ndarray:
        start = sum(self.batches)
        self.batches.append(len(crops))
        return self.table[start : start + len(crops)]


def test_a_veto_lowers_a_doubtful_card_and_names_no_other(tiny_models: Path, tmp_path: Path) -> None:
    detector = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "m", veto_below=0.95))
    classes = detector.manifest.classifier_classes
    none, a, b = classes.index(None), classes.index(Card.parse("AC").class_id), classes.index(Card.parse("KS").class_id)
    readings = np.zeros((4, len(classes)), np.float32)
    readings[0, [a, none]] = 0.9, 0.1  # a doubtful card: shown to the veto, which reads no card
    readings[1, [a, none]] = 0.97, 0.03  # sure: not shown
    readings[2, [a, none]] = 0.2, 0.8  # read as no card: not shown
    readings[3, [a, none]] = 0.6, 0.4  # doubtful: the veto reads another card, surely
    canned = np.zeros((2, len(classes)), np.float32)
    canned[0, [a, none]] = 0.1, 0.9
    canned[1, b] = 1.0
    veto = CannedClassifier(canned)
    detector.veto_classifiers = [veto]
    before = readings.copy()
    detector._veto(readings, [np.zeros((64, 64, 3), np.uint8)] * 4)
    assert veto.batches == [2]  # the two doubtful cards, once each, in one batch
    assert np.allclose(readings[0, [a, none]], [0.5, 0.5])  # to the mean of the two beliefs in a card
    assert np.allclose(readings[1:], before[1:])  # a sure card, no card, and a card the veto also calls a card


@pytest.mark.slow
def test_a_crop_read_surely_at_its_first_turn_is_not_read_again(tiny_models: Path, tmp_path: Path) -> None:
    directory = copy_models(
        tiny_models / "two-stage", tmp_path / "m", classifier_rotations=[0, 90, 180, 270], classifier_sure=0.9
    )
    detector = CardDetector(directory)
    detector.classifier = fake = WhiteSureClassifier()
    white = np.full((64, 64, 3), 255, np.uint8)
    half = np.zeros((64, 64, 3), np.uint8)
    half[:32, :40] = 255  # read 0.7 one way at 0 and 270 degrees, the other way at 90 and 180
    probabilities = detector._classify([white, half, white])
    assert fake.batches == [3, 3]  # all three once, then only the unsure one at the three other turns
    assert np.allclose(probabilities, [[0.99, 0.01], [0.5, 0.5], [0.99, 0.01]])


@pytest.mark.slow
@pytest.mark.parametrize(("none_sure", "batches", "half_read"), [(0.6, [3, 3], [0.7, 0.3]), (0.8, [3, 9], [0.5, 0.5])])
def test_a_crop_first_read_as_no_index_is_not_turned(
    tiny_models: Path, tmp_path: Path, none_sure: float, batches: list[int], half_read: list[float]
) -> None:
    """Turning a crop the classifier first calls no index can only make it a card: most are false alarms."""
    directory = copy_models(
        tiny_models / "two-stage",
        tmp_path / "m",
        classifier_names=["none", *CLASS_NAMES],  # the fake's first column is no index, its second a card
        classifier_rotations=[0, 90, 180, 270],
        classifier_none_sure=none_sure,
    )
    detector = CardDetector(directory)
    detector.classifier = fake = WhiteSureClassifier()
    half = np.zeros((64, 64, 3), np.uint8)
    half[:32, :40] = 255  # no index, 0.7 surely, as it is; turned, 0.5 on average
    dark = np.zeros((64, 64, 3), np.uint8)  # a card, 0.7 surely, at every turn: turned whatever its surety
    probabilities = detector._classify([half, dark, half])
    assert fake.batches == batches
    assert np.allclose(probabilities, [half_read, [0.3, 0.7], half_read])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["onnx", "torch"])
def test_two_stage_detector_runs_end_to_end(tiny_models: Path, tmp_path: Path, frame: np.ndarray, backend: str) -> None:
    directory = copy_models(tiny_models / "two-stage", tmp_path / "m", classifier_conf=0.0)
    detector = CardDetector(directory, backend=backend, conf=0.01)
    assert detector.backend_name == backend
    found = detector.detect(frame)
    assert found.cards and len({c.card for c in found.cards}) == len(found.cards)
    assert all(0 <= c.box[0] <= c.box[2] <= 1280 and 0 <= c.box[1] <= c.box[3] <= 720 for c in found.cards)
    assert json.loads(json.dumps(found.to_dict()))["width"] == 1280


@pytest.mark.slow
def test_auto_backend_takes_the_fastest_onnx_runtime_then_falls_back_to_torch(
    tiny_models: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backends, "openvino_has_bfloat16", lambda: False)
    assert CardDetector(tiny_models / "two-stage").backend_name == "onnx"
    monkeypatch.setattr(backends, "openvino_has_bfloat16", lambda: True)
    assert CardDetector(tiny_models / "two-stage").backend_name == "openvino"
    assert CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "p", backend="torch")).backend_name == "torch"
    no_onnx = copy_models(tiny_models / "two-stage", tmp_path / "t")
    (no_onnx / "cls.onnx").unlink()
    assert CardDetector(no_onnx).backend_name == "torch"


def test_auto_falls_back_to_the_next_engine_when_one_cannot_load_the_files(
    tiny_models: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_cpu_plugin(*args: object, **kwargs: object) -> None:
        raise ModelError("could not load ONNX model into OpenVINO: no CPU plugin")

    monkeypatch.setattr(backends, "openvino_has_bfloat16", lambda: True)
    monkeypatch.setattr(backends.OpenVinoEngine, "__init__", no_cpu_plugin)
    assert CardDetector(tiny_models / "two-stage").backend_name == "onnx"
    assert "the openvino backend cannot run this model (could not load ONNX model" in caplog.text
    with pytest.raises(ModelError, match="no CPU plugin"):  # asked for by name, it is not replaced
        CardDetector(tiny_models / "two-stage", backend="openvino")


@pytest.mark.slow
def test_corrupt_or_swapped_model_files_give_model_errors(tiny_models: Path, tmp_path: Path) -> None:
    directory = copy_models(tiny_models / "two-stage", tmp_path / "m")
    (directory / "det.onnx").write_bytes(b"\x00garbage")
    with pytest.raises(ModelError, match=r"could not load ONNX model '.*det\.onnx'"):
        CardDetector(directory, backend="onnx")
    with pytest.raises(ModelError, match=r"could not load ONNX model '.*det\.onnx' into OpenVINO"):
        CardDetector(directory, backend="openvino")
    (directory / "det.pt").write_bytes(b"garbage")
    with pytest.raises(ModelError, match=r"could not load model '.*det\.pt'"):
        CardDetector(directory, backend="torch")
    swapped = copy_models(tiny_models / "two-stage", tmp_path / "s", classifier="det.pt")
    with pytest.raises(ModelError, match="is a detect model, expected a classify model"):
        CardDetector(swapped, backend="torch")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_onnx_files_that_are_not_what_the_manifest_says_are_refused_on_load(
    tiny_models: Path, tmp_path: Path, backend: str
) -> None:
    """The detector and classifier swapped in a manifest loaded, and the first frame stopped with an IndexError."""
    pytest.importorskip(backend)
    source = tiny_models / "two-stage"
    as_detector = copy_models(source, tmp_path / "d", detector_onnx="cls.onnx")
    with pytest.raises(
        ModelError, match=r"cls\.onnx' is no ONNX detector for this manifest: its output is \((\?|1), 53\)"
    ):
        CardDetector(as_detector, backend=backend)
    as_classifier = copy_models(source, tmp_path / "c", classifier_onnx="det.onnx")
    with pytest.raises(
        ModelError, match=r"det\.onnx' is no ONNX classifier for this manifest: its output is \((\?|1), 5, "
    ):
        CardDetector(as_classifier, backend=backend)
    # a one-stage detector's 52 classes are not the one class of a two-stage model's; where the export left that
    # size free (ONNX Runtime does not work it out), the first frame says so
    one_stage = copy_models(source, tmp_path / "o", detector_onnx="det1.onnx")
    shutil.copy(tiny_models / "one-stage" / "det.onnx", one_stage / "det1.onnx")
    with pytest.raises(
        ModelError, match=r"det1\.onnx' is no ONNX detector for this manifest: its output is \((\?|1), 56, "
    ):
        CardDetector(one_stage, backend=backend).detect(np.zeros((64, 64, 3), np.uint8))


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_a_model_folder_whose_name_is_not_utf8_is_named(tiny_models: Path, tmp_path: Path, backend: str) -> None:
    """ONNX Runtime answered such a path with four lines about its constructor's argument types."""
    pytest.importorskip(backend)
    folder = copy_models(tiny_models / "two-stage", not_utf8(tmp_path, "models"))
    with pytest.raises(ModelError, match=r"^cannot open ONNX model '.*det\.onnx': its path is not UTF-8 text"):
        CardDetector(folder, backend=backend)


# --- the shipped model (skipped until models/manifest.json exists) ---------------------------------------------------


@pytest.mark.model
@pytest.mark.slow
def test_shipped_backends_agree_on_rendered_tables(render_scene: Any) -> None:
    from conftest import shipped_model_or_skip

    model = shipped_model_or_skip()
    backends = available_backends(ModelManifest.load(model))
    if len(backends) < 2:
        pytest.skip(f"only {backends} shipped: nothing to compare")
    detectors = [CardDetector(model, backend=backend) for backend in backends]
    agreed = total = 0
    for seed in range(3):
        image, _ = render_scene(seed, hands={1: "AS 2S 3S 4H 5H 6H 7C 8C 9C KD", 2: "AD 2D 3D 4C 5C 6C 7H 8H 9H KS"})
        found = [{c.card for c in detector.detect(image).cards} for detector in detectors]
        agreed += len(set.intersection(*found))
        total += len(set.union(*found))
    # a static-shape ONNX export sees a square letterbox where torch sees a minimal one: near, not equal
    assert total == 0 or agreed / total >= 0.85, f"{backends} agree on {agreed} of {total} cards"


@pytest.mark.model
def test_shipped_onnx_classifier_matches_torch() -> None:
    from conftest import shipped_model_or_skip

    manifest = ModelManifest.load(shipped_model_or_skip())
    if manifest.design != "two-stage" or not {"onnx", "torch"} <= set(available_backends(manifest)):
        pytest.skip("needs a two-stage model shipped as both .pt and .onnx")
    rng = np.random.default_rng(5)
    size = manifest.crop_size
    crops = [rng.integers(0, 255, (size, size, 3), dtype=np.uint8) for _ in range(4)]
    theirs = UltralyticsCropModel(manifest.file(manifest.classifier, "classifier"), size).predict(crops)
    # the float export matches exactly; an int8 copy the manifest runs instead stays close
    exported = manifest.provenance.get("quantized", {}).get("from", {}).get("classifier_onnx", manifest.classifier_onnx)
    ours = OnnxCropModel(manifest.file(exported, "classifier"), size).predict(crops)
    assert np.allclose(ours, theirs, atol=1e-4)
    served = OnnxCropModel(manifest.file(manifest.classifier_onnx, "classifier"), size).predict(crops)
    assert np.abs(served - theirs).max() < 0.1


def test_openvino_backend_without_the_package(tiny_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "openvino" else real_find_spec(name, *a)
    )
    model = tiny_models / "two-stage"
    assert "openvino" not in available_backends(ModelManifest.load(model))
    with pytest.raises(ModelError, match="needs the 'openvino' package"):
        CardDetector(model, backend="openvino")


@pytest.mark.parametrize(("bfloat16", "order"), [(True, ["openvino", "onnx"]), (False, ["onnx", "openvino"])])
def test_openvino_goes_first_only_where_the_cpu_computes_in_bfloat16(
    tiny_models: Path, monkeypatch: pytest.MonkeyPatch, bfloat16: bool, order: list[str]
) -> None:
    monkeypatch.setattr(backends, "openvino_has_bfloat16", lambda: bfloat16)
    assert available_backends(ModelManifest.load(tiny_models / "two-stage"))[:2] == order


@pytest.mark.slow
def test_openvino_runs_the_onnx_files_as_onnx_runtime_does(tiny_models: Path, frame: np.ndarray) -> None:
    detector_file, classifier_file = tiny_models / "two-stage" / "det.onnx", tiny_models / "two-stage" / "cls.onnx"
    ours = OpenVinoEngine(classifier_file, full_precision=True)  # its input shape is free
    reference = OnnxRuntimeEngine(classifier_file)
    for shape in [(2, 3, 32, 32)] * OpenVinoEngine.STATIC_AFTER + [(5, 3, 32, 32)]:
        blob = np.random.default_rng(sum(shape)).random(shape, dtype=np.float32)
        assert np.allclose(ours.run(blob), reference.run(blob), atol=1e-5)
    assert list(ours.static) == [(2, 3, 32, 32)]  # a shape called often enough has its own network
    fixed = OpenVinoEngine(detector_file, full_precision=True)  # exported at 320 x 320 only
    blob = np.random.default_rng(5).random((1, 3, 320, 320), dtype=np.float32)
    for _ in range(OpenVinoEngine.STATIC_AFTER):
        assert np.allclose(fixed.run(blob), OnnxRuntimeEngine(detector_file).run(blob), atol=1e-3)
    assert not fixed.static  # nothing to compile again
    boxes = OnnxBoxModel(detector_file, 320, runtime="openvino").predict(frame, 0.01, 0.5)
    assert len(boxes[0]) > 0 and boxes[0].dtype == np.float32


def test_openvino_compiles_a_few_shapes_whatever_its_callers_send(tiny_models: Path) -> None:
    engine = OpenVinoEngine(tiny_models / "two-stage" / "cls.onnx")
    for batch in range(1, OpenVinoEngine.COUNTED_SHAPES + 5):  # many shapes once each: none compiled
        assert engine.run(np.zeros((batch, 3, 32, 32), np.float32)).shape == (batch, 53)
    assert not engine.static and len(engine.calls) <= OpenVinoEngine.COUNTED_SHAPES
    for batch in range(1, OpenVinoEngine.STATIC_SHAPES + 3):  # more shapes called often than are compiled
        for _ in range(OpenVinoEngine.STATIC_AFTER):
            assert engine.run(np.zeros((batch, 3, 32, 32), np.float32)).shape == (batch, 53)
    assert list(engine.static) == [(batch, 3, 32, 32) for batch in range(1, OpenVinoEngine.STATIC_SHAPES + 1)]


class StandInBoxes:
    """The part of a box model ``CardDetector.looks`` asks of each stand-in below: an input size no frame
    outgrows, so every stand-in is shown the frame as it is."""

    def input_size(self, size: int | None = None) -> tuple[int, int]:
        return (1 << 20, 1 << 20)


class SizedLooks(StandInBoxes):
    """A stand-in box model: a small box at the model's size, a big one (and the small one again, weaker) at a
    coarser size, recording the sizes it was asked for."""

    def __init__(self) -> None:
        self.sizes: list[int | None] = []

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> Any:
        self.sizes.append(size)
        if size is None:
            return np.array([[10, 10, 30, 40]], np.float32), np.array([0.9], np.float32), np.array([0])
        boxes = np.array([[11, 10, 30, 41], [100, 100, 400, 500]], np.float32)
        return boxes, np.array([0.6, 0.8], np.float32), np.array([0, 0])


@pytest.mark.slow
def test_a_coarse_look_finds_big_indices_and_keeps_one_box_per_index(tiny_models: Path, tmp_path: Path) -> None:
    frame = np.zeros((720, 1280, 3), np.uint8)
    plain = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "a"))
    plain.boxes = once = SizedLooks()
    assert len(plain.find_corners(frame)[0]) == 1 and once.sizes == [None]
    coarse = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "b", detector_coarse_sizes=[320]))
    assert coarse.manifest.detector_coarse_sizes == (320,)
    coarse.boxes = twice = SizedLooks()
    xyxy, scores, _ = coarse.find_corners(frame)
    assert twice.sizes == [None, 320]
    assert xyxy.tolist() == [[10, 10, 30, 40], [100, 100, 400, 500]]  # the weaker copy of the small box is gone
    assert scores.tolist() == pytest.approx([0.9, 0.8])


class PipAndIndex(StandInBoxes):
    """A stand-in box model for a close-up: at the model's size only the pip of a big index is boxed (and
    surely), at a coarser size the whole index around it (less surely), and a card's second index elsewhere."""

    PIP, INDEX, OTHER = [324.0, 178.0, 354.0, 222.0], [324.0, 172.0, 400.0, 225.0], [10.0, 10.0, 30.0, 40.0]

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> Any:
        if size is None:
            return np.array([self.PIP, self.OTHER], np.float32), np.array([0.5, 0.9], np.float32), np.array([0, 0])
        return np.array([self.INDEX], np.float32), np.array([0.45], np.float32), np.array([0])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stand_in_sure", "index_reading", "read"),
    [
        (0.98, ("AC", 0.99), {"AC": PipAndIndex.INDEX, "2H": PipAndIndex.OTHER}),  # the pip gives way to its index
        (0.98, ("AC", 0.9), {"2H": PipAndIndex.OTHER}),  # not sure enough
        (None, ("AC", 0.99), {"2H": PipAndIndex.OTHER}),  # a manifest without stand_in_sure reads as before
    ],
)
def test_a_box_read_as_no_card_gives_way_to_another_looks_box_read_surely(
    tiny_models: Path,
    tmp_path: Path,
    stand_in_sure: float | None,
    index_reading: tuple[str, float],
    read: dict[str, list[float]],
) -> None:
    models = copy_models(
        tiny_models / "two-stage", tmp_path / "m", detector_coarse_sizes=[320], stand_in_sure=stand_in_sure
    )
    detector = CardDetector(models)
    detector.boxes = PipAndIndex()
    readings = {
        tuple(PipAndIndex.PIP): (None, 0.9),
        tuple(PipAndIndex.INDEX): (Card.parse(index_reading[0]), index_reading[1]),
        tuple(PipAndIndex.OTHER): (Card.parse("2H"), 0.97),
    }
    asked: list[list[Any]] = []

    def name_boxes(image: np.ndarray, boxes: list[Any], stretch: Any = None) -> list[tuple[Card | None, float]]:
        asked.append(list(boxes))
        return [readings[tuple(box)] for box in boxes]

    detector.name_boxes = name_boxes  # type: ignore[method-assign]
    frame = np.zeros((640, 640, 3), np.uint8)
    fused = detector.find_boxes(frame)
    assert fused.xyxy.tolist() == [PipAndIndex.OTHER, PipAndIndex.PIP]  # the index's box is put out by the pip's
    assert fused.stand_ins == ((), ((tuple(PipAndIndex.INDEX), pytest.approx(0.45)),))
    corners = detector.read_corners(frame)
    assert {str(corner.card): list(corner.box) for corner in corners} == read
    # only a box read as no card has its stand-ins read, all in one batch after the kept boxes
    assert len(asked) == (2 if stand_in_sure else 1)


class FittedLooks:
    """A stand-in box model with a 320 px input: records the frame each look is shown and boxes its middle."""

    def __init__(self) -> None:
        self.shown: list[np.ndarray] = []

    def input_size(self, size: int | None = None) -> tuple[int, int]:
        return (320, 320)

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> Any:
        self.shown.append(image)
        height, width = image.shape[:2]
        box = [width / 4, height / 4, width / 2, height / 2]
        return np.array([box], np.float32), np.array([0.9], np.float32), np.array([0])


@pytest.mark.slow
@pytest.mark.parametrize(("grain", "filtered"), [(24.0, True), (0.0, False)])
def test_a_grainy_frame_is_looked_at_median_filtered_too(
    tiny_models: Path, tmp_path: Path, grain: float, filtered: bool
) -> None:
    rng = np.random.default_rng(4)
    frame = np.full((640, 960, 3), 150, np.uint8)
    frame[200:400, 300:500] = 40  # a dark card, its edges sharp
    grainy = np.clip(frame + rng.normal(0, grain, (640, 960, 1)), 0, 255).astype(np.uint8)
    models = copy_models(tiny_models / "two-stage", tmp_path / "m", grain_median_above=3.0)
    detector = CardDetector(models)
    detector.boxes = shown = FittedLooks()
    looks = detector.looks(grainy)
    # boxed in the fitted 320x213 frame, told in the frame's own pixels
    assert [look[0].tolist() for look in looks] == [[pytest.approx([240, 160, 480, 320])]] * len(looks)
    shrunk = fit_within(grainy, (320, 320))
    assert grain_level(shrunk) > 6.0 if filtered else grain_level(shrunk) < 1.0  # shrinking averaged a third away
    expected = [shrunk, cv2.medianBlur(shrunk, 3)] if filtered else [shrunk]
    assert len(shown.shown) == len(expected)
    assert all(np.array_equal(seen, wanted) for seen, wanted in zip(shown.shown, expected, strict=True))
    assert grain_level(shown.shown[-1]) < 3.0


def light_on_dark_frame(indices: int) -> tuple[np.ndarray, list[list[float]]]:
    """A light table with ``indices`` black-faced cards, each with a white glyph in its corner box; the boxes."""
    frame = np.full((480, 640, 3), 200, np.uint8)
    boxes = []
    for index in range(indices):
        x = 40 + 150 * index
        frame[40:240, x : x + 120] = 15  # the dark face
        frame[60:90, x + 18 : x + 28] = 240  # a light index
        boxes.append([x + 10.0, 55.0, x + 35.0, 95.0])
    return frame, boxes


class NegativeLooks(StandInBoxes):
    """A stand-in box model: the given boxes in the first frame it is shown, one more box in that frame's negative."""

    def __init__(self, boxes: list[list[float]], score: float) -> None:
        self.boxes, self.score, self.seen, self.negative_looks = boxes, score, None, 0

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> Any:
        if self.seen is not None and np.array_equal(image, np.invert(self.seen)):
            self.negative_looks += 1
            return np.array([[500, 300, 530, 340]], np.float32), np.array([0.7], np.float32), np.array([0])
        self.seen = image
        count = len(self.boxes)
        return np.array(self.boxes, np.float32).reshape(-1, 4), np.full(count, self.score, np.float32), np.zeros(count)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("indices", "score", "looks_in_negative"),
    [(2, 0.9, True), (1, 0.9, False), (2, 0.2, False)],  # two sure light-on-dark boxes are needed
)
def test_a_deck_printed_light_on_dark_is_looked_at_in_negative(
    tiny_models: Path, tmp_path: Path, indices: int, score: float, looks_in_negative: bool
) -> None:
    models = copy_models(tiny_models / "two-stage", tmp_path / "m", negative_below=0.4, negative_look_after=2)
    detector = CardDetector(models)
    frame, boxes = light_on_dark_frame(indices)
    detector.boxes = looks = NegativeLooks(boxes, score)
    found = detector.find_corners(frame)[0].tolist()
    assert looks.negative_looks == looks_in_negative
    assert found == boxes + ([[500, 300, 530, 340]] if looks_in_negative else [])
    # the same boxes printed dark on light (the frame's negative) never send it to look again
    detector.boxes = looks = NegativeLooks(boxes, score)
    assert detector.find_corners(np.invert(frame))[0].tolist() == boxes and looks.negative_looks == 0


def test_a_light_on_dark_index_is_read_in_negative_as_well() -> None:
    frame, (box, _) = light_on_dark_frame(2)
    plain = corner_crop(frame, box)
    assert light_share(frame, box) < NEGATIVE_BELOW
    negative, crop = index_views(frame, box, negative_below=NEGATIVE_BELOW)  # the view read surely most often first
    assert np.array_equal(crop, plain) and np.array_equal(negative, lightness_negative(plain))
    assert negative.mean() > 200 > plain.mean()  # a light card now, as the classifier learned most decks
    printed = np.invert(frame)  # dark ink on a light card: read as it is
    assert light_share(printed, box) > NEGATIVE_BELOW
    assert [view.tolist() for view in index_views(printed, box, negative_below=NEGATIVE_BELOW)] == [
        corner_crop(printed, box).tolist()
    ]
    assert len(index_views(frame, box)) == 1  # a model without negative_below reads every crop as it is
    assert light_share(frame, (700, 10, 720, 30)) == 1.0  # outside the frame: nothing to turn


def test_a_box_is_cut_at_every_pad_of_the_manifest(tiny_models: Path, tmp_path: Path) -> None:
    frame, (box, _) = light_on_dark_frame(2)
    manifest = ModelManifest.load(copy_models(tiny_models / "two-stage", tmp_path / "m", negative_below=0.4))
    assert len(manifest.index_views(frame, box)) == 2  # the crop and its negative, at crop_pad alone
    wider = manifest.replace(crop_pad=0.25, extra_crop_pads=(0.1,))
    views = wider.index_views(frame, box)
    expected = [view for pad in (0.25, 0.1) for view in index_views(frame, box, wider.crop_size, pad, 0.4)]
    assert [view.tolist() for view in views] == [view.tolist() for view in expected]
    assert not np.array_equal(views[0], views[2])  # a closer cut: the index fills more of the crop


def test_a_negative_keeps_red_ink_red() -> None:
    red_on_black = np.zeros((8, 8, 3), np.uint8)
    red_on_black[2:6, 2:6] = (30, 30, 200)  # BGR
    negative = lightness_negative(red_on_black).astype(int)
    blue, green, red = negative[3, 3]
    assert red > blue + 60 and red > green + 60  # still red ink (a plain negative turns it cyan)
    assert negative[0, 0].min() > 200  # on a light face


class StubClassifier:
    """A stand-in classifier: each crop's class probabilities from ``read`` (class index: probability), and the
    size of every batch it was given in ``seen``."""

    def __init__(self, read: Callable[[np.ndarray], dict[int, float]]) -> None:
        self.read = read
        self.seen: list[int] = []

    def predict(self, crops: list[np.ndarray]) -> np.ndarray:
        self.seen.append(len(crops))
        readings = np.zeros((len(crops), 53), np.float32)
        for row, crop in zip(readings, crops, strict=True):
            for index, probability in self.read(crop).items():
                row[index] = probability
        return readings


def test_a_box_read_in_negative_too_is_named_from_both_readings_averaged(tiny_models: Path, tmp_path: Path) -> None:
    models = copy_models(tiny_models / "two-stage", tmp_path / "m", negative_below=0.4, classifier_rotations=[0])
    detector = CardDetector(models)
    frame, boxes = light_on_dark_frame(1)
    printed = np.invert(frame)
    # a light crop reads as class 0, a dark one as class 1
    detector.classifier = stub = StubClassifier(lambda crop: {0 if crop.mean() > 128 else 1: 1.0})
    box = boxes[0]
    ((_, light_on_dark),) = detector.name_boxes(frame, [box])
    ((_, printed_dark),) = detector.name_boxes(printed, [box])
    assert stub.seen == [1, 1, 1]  # the negative, then the crop (no reading is ever settled here); a printed index once
    assert (light_on_dark, printed_dark) == (0.5, 1.0)


def test_a_box_read_surely_in_negative_is_not_read_as_printed(tiny_models: Path, tmp_path: Path) -> None:
    fields = {"classifier_rotations": [0], "classifier_sure": 0.98, "classifier_none_sure": 0.5, "negative_below": 0.4}
    detector = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "m", **fields))
    frame, boxes = light_on_dark_frame(2)
    frame[70:80, 218:222] = 240  # the second index's glyph is wider: the stub doubts it
    glyph = [float((detector.manifest.index_views(frame, box)[0] < 128).mean()) for box in boxes]

    def read(crop: np.ndarray) -> dict[int, float]:  # class 0 at 0.8 as printed (a dark crop), surer in negative
        if crop.mean() < 128:
            return {0: 0.8}
        return {0: 1.0 if (crop < 128).mean() < sum(glyph) / 2 else 0.9}

    detector.classifier = stub = StubClassifier(read)
    (sure, one), (doubtful, averaged) = detector.name_boxes(frame, boxes)
    assert stub.seen == [2, 1]  # both negatives; then only the doubtful box as printed
    assert sure == doubtful and (one, averaged) == (1.0, pytest.approx(0.85))  # its two views averaged


def test_a_doubtful_box_is_cut_again_closer_and_its_readings_averaged(tiny_models: Path, tmp_path: Path) -> None:
    fields = {"classifier_rotations": [0], "classifier_sure": 0.98, "classifier_none_sure": 0.5}
    detector = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "m", extra_crop_pads=[0.1], **fields))
    frame = np.zeros((240, 320, 3), np.uint8)
    frame[20:60, 20:50] = 128  # an index the stub reads surely
    frame[100:140, 100:130] = 255  # one it doubts: the more of the crop the glyph fills, the surer
    sure_box, doubtful_box = (20.0, 20.0, 50.0, 60.0), (100.0, 100.0, 130.0, 140.0)

    def read(crop: np.ndarray) -> dict[int, float]:
        glyph = float((crop > 200).mean())
        return {2: 1.0} if crop.max() < 200 else {0: 0.5 + glyph / 2, 1: 0.5 - glyph / 2}

    detector.classifier = stub = StubClassifier(read)
    (_, sure), (_, doubtful) = detector.name_boxes(frame, [sure_box, doubtful_box])
    assert stub.seen == [2, 1]  # both boxes at the first cut; only the doubtful one again
    share = [(corner_crop(frame, doubtful_box, detector.manifest.crop_size, pad) > 200).mean() for pad in (0.35, 0.1)]
    assert share[1] > share[0] and sure == 1.0
    assert doubtful == pytest.approx(0.5 + sum(share) / 4, abs=1e-6)  # both cuts' readings averaged
    stub.seen.clear()
    detector.manifest = detector.manifest.replace(extra_crop_pads=())
    detector.name_boxes(frame, [sure_box, doubtful_box])
    assert stub.seen == [2]


def tall_glyphs(squeeze: float = 1.0) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    """A light frame with three dark glyphs 16 x 32 px (as tall and narrow as a card's index), and their boxes,
    the frame narrowed to ``squeeze`` of its width as a resize to a square would narrow it."""
    frame = np.full((120, 400, 3), 230, np.uint8)
    for left in (40, 170, 300):
        frame[40:72, left : left + 16] = 20
    if squeeze != 1.0:
        frame = cv2.resize(frame, (round(400 * squeeze), 120), interpolation=cv2.INTER_AREA)
    boxes = [(left * squeeze, 40.0, (left + 16) * squeeze, 72.0) for left in (40, 170, 300)]
    return frame, boxes


def glyph_aspect(crop: np.ndarray) -> float:
    """Width over height of the dark glyph in a crop."""
    dark = crop.mean(axis=2) < 128
    return float(dark.any(axis=0).sum() / max(dark.any(axis=1).sum(), 1))


def test_a_squeezed_index_cut_at_its_stretch_is_cut_as_it_was_shot() -> None:
    shot, (box, *_) = tall_glyphs()
    squeezed, (narrow, *_) = tall_glyphs(0.5625)
    as_shot = corner_crop(shot, box).astype(int)
    stretched = corner_crop(squeezed, narrow, stretch=(1 / 0.5625, 1.0)).astype(int)
    as_shown = corner_crop(squeezed, narrow).astype(int)
    assert np.abs(stretched - as_shot).mean() < 8  # the same crop, up to resampling
    assert np.abs(as_shown - as_shot).mean() > 25  # a glyph half as wide
    assert glyph_aspect(as_shown) < 0.6 < 0.75 < glyph_aspect(stretched)


@pytest.mark.parametrize(
    ("squeeze", "stretches", "sure", "expected"),
    [
        (0.5625, [1.333, 1.778], 0.99, (1.778, 1.0)),  # read surely only as shot
        (1.0, [1.333, 1.778], 0.99, (1.0, 1.0)),  # a sure frame is not tried at any stretch
        (0.5625, [], 0.99, (1.0, 1.0)),  # a manifest without stretches reads every frame as shown
        (0.5625, [1.333, 1.778], 0.6 + STRETCH_MARGIN / 2, (1.0, 1.0)),  # barely surer stretched: within the margin
    ],
)
def test_a_doubtful_frame_is_read_at_the_stretch_its_indices_read_best(
    tiny_models: Path,
    tmp_path: Path,
    squeeze: float,
    stretches: list[float],
    sure: float,
    expected: tuple[float, float],
) -> None:
    fields = {"classifier_rotations": [0], "classifier_sure": 0.98, "classifier_none_sure": 0.5, "stretches": stretches}
    detector = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "m", **fields))
    # class 0 read surely only where the glyph has an index's shape, as printed (0.83 wide per tall in the crop)
    detector.classifier = stub = StubClassifier(lambda crop: {0: sure if glyph_aspect(crop) > 0.75 else 0.6})
    frame, boxes = tall_glyphs(squeeze)
    named, stretch = detector.name_frame_boxes(frame, boxes)
    assert stretch == expected
    read_surely = squeeze == 1 or stretch != (1, 1)
    assert [probability for _, probability in named] == pytest.approx([sure if read_surely else 0.6] * 3)
    searched = len(stretches) > 0 and squeeze != 1.0
    assert stub.seen == ([3, 3 * (1 + 2 * len(stretches))] if searched else [3]) + ([3] if stretch != (1, 1) else [])


class GlyphBoxes(FittedLooks):
    """A stand-in box model that boxes each dark glyph of the frame it is shown that is at least 0.3 as wide as
    tall (an index as printed; squeezed to 0.56 of its width, a 16 x 32 glyph is not)."""

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> Any:
        self.shown.append(image)
        dark = image.mean(axis=2) < 128
        rows, columns = np.flatnonzero(dark.any(axis=1)), dark.any(axis=0).astype(int)
        starts, ends = np.flatnonzero(np.diff(columns) == 1) + 1, np.flatnonzero(np.diff(columns) == -1) + 1
        boxes = [
            [left, rows[0], right, rows[-1] + 1]
            for left, right in zip(starts, ends, strict=True)
            if right - left >= 0.3 * (rows[-1] + 1 - rows[0])
        ]
        return np.array(boxes, np.float32).reshape(-1, 4), np.full(len(boxes), 0.9, np.float32), np.zeros(len(boxes))


@pytest.mark.parametrize(("stretches", "found"), [([1.778], 3), ([], 1)])
def test_a_frame_read_stretched_is_looked_at_stretched_too(
    tiny_models: Path, tmp_path: Path, stretches: list[float], found: int
) -> None:
    fields = {"classifier_rotations": [0], "classifier_sure": 0.98, "classifier_none_sure": 0.5, "stretches": stretches}
    detector = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "m", **fields))
    detector.classifier = StubClassifier(lambda crop: {0: 0.99 if glyph_aspect(crop) > 0.75 else 0.6})
    detector.boxes = looks = GlyphBoxes()
    frame, boxes = tall_glyphs(0.5625)
    frame[40:72, 22:34] = 20  # the first glyph 21 px wide as shot: boxed even squeezed, the other two only as shot
    corners = sorted(detector.read_corners(frame), key=lambda corner: corner.box[0])
    assert [shown.shape[:2] for shown in looks.shown] == [(120, 225)] + ([(96, 320)] if stretches else [])
    assert len(corners) == found
    # boxed in the frame stretched and shrunk to fit, told in the squeezed frame's own pixels
    assert [list(corner.box) for corner in corners[1:]] == [pytest.approx(box, abs=1.5) for box in boxes[1:found]]
    assert [corner.class_probability for corner in corners] == pytest.approx([0.99 if stretches else 0.6] * found)


def test_the_surer_half_of_a_frame() -> None:
    assert surer_half([]) == 0.0
    assert surer_half([0.5, 0.7]) == pytest.approx(0.6)  # fewer than three: all of them
    assert surer_half([0.1, 0.2, 0.9, 0.9, 0.8, 0.7, 0.1, 0.2]) == pytest.approx(0.825)


class ManyBoxes(StandInBoxes):
    """A stand-in box model for a motion-blurred frame: ``count`` boxes in a grid, each surer than the next, and
    at a coarser look each again a pixel lower and less surely (a stand-in for it)."""

    def __init__(self, count: int) -> None:
        self.xyxy = np.array(
            [[32 * (i % 40), 45 * (i // 40), 32 * (i % 40) + 20, 45 * (i // 40) + 30] for i in range(count)], np.float32
        )
        self.scores = np.linspace(0.9, 0.3, count, dtype=np.float32)

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> Any:
        shift = 0 if size is None else 1
        return (
            self.xyxy + np.array([0, shift, 0, shift], np.float32),
            self.scores - 0.1 * shift,
            np.zeros(len(self.scores), np.int64),
        )


@pytest.mark.parametrize("count", [200, 300])
def test_a_frame_of_many_boxes_has_only_its_surest_named(tiny_models: Path, tmp_path: Path, count: int) -> None:
    """A motion-blurred frame gave the detector 191 boxes, each read at four turns, cut again, stand-ins and all:
    5,932 crops and 9.5 to 14 s of a CPU, where the same table sharp took 158 crops (session 44's live probe)."""
    fields = {"classifier_rotations": [0], "classifier_sure": 0.98, "classifier_none_sure": 0.5}
    detector = CardDetector(copy_models(tiny_models / "two-stage", tmp_path / "m", **fields))
    detector.boxes = ManyBoxes(count)
    detector.classifier = stub = StubClassifier(lambda crop: {0: 0.6})  # a card, never surely: every box doubtful
    frame = np.zeros((720, 1280, 3), np.uint8)
    detector.read_corners(frame)
    assert stub.seen[0] == min(count, MOST_BOXES_NAMED)
    assert len(detector.find_boxes(frame).scores) == count
