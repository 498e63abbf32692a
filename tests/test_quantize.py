"""Int8 copies of a model (``scorer.quantize``): calibrated on val scenes, read like the float model,
pointed at by the manifest, never quantized twice."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import copy_models

from scorer.cli import main
from scorer.quantize import INT8_SUFFIX, QuantizeError, output_layers, quantize_model
from scorer.vision.detector import CardDetector
from scorer.vision.manifest import ModelManifest

pytestmark = pytest.mark.slow


def write_val_scenes(directory: Path, count: int = 3) -> Path:
    """``count`` val scenes (noise with a bright card-like patch) labelled with one index box each."""
    rng = np.random.default_rng(7)
    for split in ("images", "labels"):
        (directory / split / "val").mkdir(parents=True)
    (directory / "images" / "train").mkdir()  # what 'okgin train' takes for a folder of generated scenes
    for index in range(count):
        frame = rng.integers(0, 120, (360, 640, 3), dtype=np.uint8)
        frame[100:260, 200:310] = 235
        cv2.putText(frame, "7", (205, 135), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 200), 2)
        cv2.imwrite(str(directory / "images" / "val" / f"s{index}.jpg"), frame)
        (directory / "labels" / "val" / f"s{index}.txt").write_text("6 0.33 0.33 0.04 0.11\n")
    return directory


@pytest.fixture
def float_and_int8(tiny_models: Path, tmp_path: Path) -> tuple[Path, Path]:
    source = copy_models(tiny_models / "two-stage", tmp_path / "float")
    quantized = copy_models(source, tmp_path / "int8")
    quantize_model(quantized, write_val_scenes(tmp_path / "scenes"), parts=("detector", "classifier"), frames=3)
    return source, quantized


def test_the_manifest_names_the_int8_files_and_where_they_were_calibrated(
    float_and_int8: tuple[Path, Path], tmp_path: Path
) -> None:
    _, quantized = float_and_int8
    manifest = ModelManifest.load(quantized)
    assert manifest.detector_onnx == "det" + INT8_SUFFIX and manifest.classifier_onnx == "cls" + INT8_SUFFIX
    assert (quantized / "det.onnx").exists() and (quantized / "det.int8.onnx").exists()
    assert manifest.provenance["quantized"] == {
        "from": {"classifier_onnx": "cls.onnx", "detector_onnx": "det.onnx"},
        "calibrated_on": str(tmp_path / "scenes"),
        "frames": 3,
    }
    with pytest.raises(QuantizeError, match="names an int8 classifier already"):
        quantize_model(quantized, tmp_path / "scenes")


def test_the_int8_classifier_reads_crops_as_the_float_one_does(float_and_int8: tuple[Path, Path]) -> None:
    source, quantized = float_and_int8
    crops = [np.random.default_rng(seed).integers(0, 255, (32, 32, 3), dtype=np.uint8) for seed in range(8)]
    before = CardDetector(source).classifier
    after = CardDetector(quantized).classifier
    assert before is not None and after is not None
    expected, got = before.predict(crops), after.predict(crops)
    assert got.shape == expected.shape == (8, 53)
    assert np.allclose(got.sum(axis=1), 1, atol=1e-4)  # the softmax head stayed float
    assert np.abs(got - expected).max() < 0.05


def test_the_int8_detector_runs_on_a_frame_at_every_look(float_and_int8: tuple[Path, Path]) -> None:
    _, quantized = float_and_int8
    detector = CardDetector(quantized)
    frame = np.full((720, 1280, 3), 90, np.uint8)
    assert detector.detect(frame).width == 1280


def test_the_output_layers_stay_float(tiny_models: Path) -> None:
    kept = output_layers(tiny_models / "two-stage" / "det.onnx")
    final_convs = [name for name in kept if name.endswith("Conv")]
    # the three class maps and the box decoder's DFL (the box maps reach the output through it)
    assert len(final_convs) == 4 and any("dfl" in name for name in final_convs)
    assert not any("/model.0/" in name for name in kept)  # the backbone is quantized


def test_by_default_only_the_classifier_is_quantized(tiny_models: Path, tmp_path: Path) -> None:
    model = copy_models(tiny_models / "two-stage", tmp_path / "m")
    manifest = quantize_model(model, write_val_scenes(tmp_path / "scenes"), frames=2)
    assert (manifest.detector_onnx, manifest.classifier_onnx) == ("det.onnx", "cls.int8.onnx")
    assert ModelManifest.load(model) == manifest


@pytest.mark.parametrize(
    ("parts", "scenes", "message"),
    [
        (("classifier",), "empty", "no val images"),
        (("backbone",), "scenes", "cannot quantize 'backbone': choose among detector, classifier"),
    ],
)
def test_what_cannot_be_quantized_is_named(
    tiny_models: Path, tmp_path: Path, parts: tuple[str, ...], scenes: str, message: str
) -> None:
    model = copy_models(tiny_models / "two-stage", tmp_path / "m")
    write_val_scenes(tmp_path / "scenes")
    with pytest.raises(QuantizeError, match=message):
        quantize_model(model, tmp_path / scenes, parts=parts)
    assert ModelManifest.load(model).classifier_onnx == "cls.onnx"  # nothing changed


def test_okgin_train_quantizes_a_model_in_place(tiny_models: Path, tmp_path: Path) -> None:
    model = copy_models(tiny_models / "two-stage", tmp_path / "m")
    scenes = write_val_scenes(tmp_path / "scenes")
    args = ["train", "--stage", "quantize", "--init", str(model), "--data", str(scenes)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"{model}/manifest.json now names det.onnx and cls.int8.onnx" in result.output
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and "names an int8 classifier already" in again.output
