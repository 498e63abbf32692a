"""Int8 copies of a model's ONNX files, calibrated on generated scenes.

On a laptop CPU most of a frame's time is the two networks' convolutions; ONNX Runtime runs them
in 8-bit integers far faster than in floats. Everything is quantized but the output layers: each
convolution that reaches an output through no other convolution (the detector's class maps and box
decoder, the classifier's head) and what follows it, whose values feed thresholds directly. The
activations' ranges are measured on what inference sees: val frames letterboxed at each of the
manifest's sizes, and crops of their labelled indices and of what the detector finds, at each of the
manifest's turns. The manifest is then pointed at the int8 files; the float ones stay beside them.

A tool, not a default: no shipped model runs int8 (models/HISTORY.md, Session 5, says what was measured).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from scorer.vision.manifest import ModelError, ModelManifest
from scorer.vision.types import Box

INT8_SUFFIX = ".int8.onnx"
CALIBRATION_FRAMES = 48
CALIBRATION_CROPS = 2048
CROP_BATCH = 64
PARTS = ("detector", "classifier")
DEFAULT_PARTS = ("classifier",)
"""The detector stays float unless asked: in session 5 the int8 detector and an int8 classifier each read
poker-cards-fmjio as well as the float ones, but together they invented 7 more cards (models/HISTORY.md, Session 5)."""


class QuantizeError(ModelError):
    """The model cannot be quantized (already int8, no ONNX file, no scenes to calibrate on)."""


def output_layers(model_path: Path) -> list[str]:
    """Names of the nodes that stay float: the Conv nodes that reach a graph output through no other
    Conv, and every node between them and the outputs."""
    import onnx

    graph = onnx.load(str(model_path)).graph
    producer = {output: node for node in graph.node for output in node.output}
    seen: set[str] = set()
    stack = [output.name for output in graph.output]
    while stack:
        tensor = stack.pop()
        node = producer.get(tensor)
        if node is None or node.name in seen:
            continue
        seen.add(node.name)
        if node.op_type != "Conv":
            stack.extend(node.input)
    return sorted(seen)


def _calibration_scenes(scene_dir: Path, count: int, seed: int) -> list[tuple[np.ndarray, tuple[Box, ...]]]:
    """Up to ``count`` val scenes of ``scene_dir``, each as its frame and labelled index boxes."""
    from scorer.training import TrainingError, read_split
    from scorer.vision.images import ImageError, load_image

    try:
        scenes = list(read_split(scene_dir, "val"))
        chosen = random.Random(seed).sample(scenes, min(count, len(scenes)))
        loaded = [(load_image(scene.image_path), scene.boxes) for scene in chosen]
    except (TrainingError, ImageError) as error:
        raise QuantizeError(str(error)) from None
    if not loaded:
        raise QuantizeError(f"no val scenes in {scene_dir} to calibrate on (run 'okgin data generate')")
    return loaded


class _Feed:
    """onnxruntime's CalibrationDataReader protocol over a list of input blobs."""

    def __init__(self, name: str, blobs: list[np.ndarray]) -> None:
        self.name, self.blobs = name, iter(blobs)

    def get_next(self) -> dict[str, np.ndarray] | None:
        blob = next(self.blobs, None)
        return None if blob is None else {self.name: blob}


def _quantize_file(source: Path, input_name: str, blobs: list[np.ndarray]) -> Path:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    target = source.with_name(source.name.removesuffix(".onnx") + INT8_SUFFIX)
    quantize_static(
        str(source),
        str(target),
        _Feed(input_name, blobs),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        per_channel=True,
        nodes_to_exclude=output_layers(source),
    )
    return target


def _crops(manifest: ModelManifest, scenes: list[tuple[np.ndarray, tuple[Box, ...]]], seed: int) -> list[np.ndarray]:
    """What the classifier reads: crops of the labelled indices and of whatever the float detector finds
    (pips, art, table: its ``none``), at each of the manifest's turns."""
    from scorer.vision.boxes import box_from_row
    from scorer.vision.detector import CardDetector

    detector = CardDetector(manifest.directory, backend="onnx")
    crops = []
    for frame, labelled in scenes:
        found = [box_from_row(row) for row in detector.find_corners(frame)[0]]
        crops += [view for box in (*labelled, *found) for view in manifest.index_views(frame, box)]
    if not crops:
        raise QuantizeError("the calibration scenes have no labelled indices and the detector finds none")
    crops = random.Random(seed).sample(crops, min(CALIBRATION_CROPS, len(crops)))
    return [
        np.ascontiguousarray(np.rot90(crop, k=turn // 90)) for crop in crops for turn in manifest.classifier_rotations
    ]


def quantize_model(
    model_dir: Path,
    scene_dir: Path,
    parts: Sequence[str] = DEFAULT_PARTS,
    frames: int = CALIBRATION_FRAMES,
    seed: int = 0,
) -> ModelManifest:
    """Write int8 copies of ``model_dir``'s ONNX ``parts`` (``detector``, ``classifier``), calibrated on
    the val scenes of ``scene_dir``, and point its manifest at them (recorded under ``quantized``).

    :raises QuantizeError: when a part is int8 already or has no ONNX file, or there is nothing to
        calibrate on.
    """
    manifest = ModelManifest.load(model_dir)
    sources: dict[str, Path] = {}
    for part in parts:
        if part not in PARTS:
            raise QuantizeError(f"cannot quantize {part!r}: choose among {', '.join(PARTS)}")
        name = getattr(manifest, f"{part}_onnx")
        if not name:
            raise QuantizeError(f"{manifest.path} names no ONNX {part} to quantize")
        if name.endswith(INT8_SUFFIX):
            raise QuantizeError(f"{manifest.path} names an int8 {part} already: quantize the float one")
        sources[part] = manifest.directory / name
    from scorer.vision.backends import OnnxBoxModel, OnnxCropModel

    scenes = _calibration_scenes(scene_dir, frames, seed)
    changes: dict[str, str] = {}
    if "classifier" in parts:  # crops are cut with the detector as it is, before the manifest changes
        source = sources["classifier"]
        classifier = OnnxCropModel(source, manifest.crop_size)
        crops = _crops(manifest, scenes, seed)
        blobs = [
            blob
            for start in range(0, len(crops), CROP_BATCH)
            for blob in classifier.input_blobs(crops[start : start + CROP_BATCH])
        ]
        changes["classifier_onnx"] = _quantize_file(source, classifier.engine.input_name, blobs).name
    if "detector" in parts:
        source = sources["detector"]
        detector = OnnxBoxModel(source, manifest.detector_imgsz)
        sizes = (manifest.detector_imgsz, *manifest.detector_coarse_sizes)
        blobs = [detector.input_blob(frame, size)[0] for frame, _ in scenes for size in sizes]
        changes["detector_onnx"] = _quantize_file(source, detector.engine.input_name, blobs).name
    quantized = {"from": {key: getattr(manifest, key) for key in changes}, "calibrated_on": str(scene_dir),
                 "frames": len(scenes)}  # fmt: skip
    updated = manifest.replace(**changes, provenance={**manifest.provenance, "quantized": quantized})
    updated.save()
    return updated
