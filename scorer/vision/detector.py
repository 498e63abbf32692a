"""The card detector: shipped model files in, one ``CardDetection`` per visible card out.

This is the only module that imports ultralytics, and only inside a backend's
constructor, so ``import scorer`` never loads torch. Models load from an explicit
directory described by ``manifest.json``; a missing file is an error, never a download.

Two designs are supported (``manifest.json`` ``"design"``):

- ``"two-stage"``: a one-class YOLO detector finds corner indices on the letterboxed
  frame, each is cut from the full-resolution frame with ``corner_crop`` and all crops
  are classified in one batch by a 52-class YOLO-cls model;
- ``"one-stage"``: one 52-class YOLO detector whose classes are the cards.

Backends: ``"torch"`` (ultralytics on ``.pt`` files), ``"onnx"`` (onnxruntime with this
module's own letterbox, decoding and NMS) and ``"openvino"`` (ultralytics on an exported
``*_openvino_model`` directory, when the ``openvino`` package is installed).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from scorer.cards import CLASS_NAMES, Card, InvalidCardError
from scorer.errors import OkginError
from scorer.vision.crops import CROP_PAD, CROP_SIZE, corner_crop
from scorer.vision.merge import CornerDetection, merge_corners
from scorer.vision.types import Box, CardDetection, Conflict

BACKENDS: tuple[str, ...] = ("auto", "onnx", "openvino", "torch")
"""Accepted ``backend`` values; ``auto`` tries the others in this order."""

DESIGNS: tuple[str, ...] = ("two-stage", "one-stage")
MODEL_DIR_ENV = "OKGIN_MODEL_DIR"
DEFAULT_MODEL_DIR = Path(__file__).resolve().parents[2] / "models"

DEFAULT_CONF = 0.25
DEFAULT_IOU = 0.5  # corner indices of a fan barely overlap; 0.5 still removes double boxes on one index
DEFAULT_CLASSIFIER_CONF = 0.25
MAX_DETECTIONS = 300
LETTERBOX_FILL = 114  # grey used by ultralytics' LetterBox, so both backends see the same pixels
STRIDE = 32  # largest YOLO stride: a dynamic-shape input must be a multiple of it


@dataclasses.dataclass(frozen=True)
class CornerEvidence:
    """One named corner index before any card threshold: what each stage said, kept apart.

    Its confidence is ``detector_score ** detector_weight * class_probability``. A weight
    below 1 lets a sure classifier (which has its own ``none`` class to veto false alarms)
    carry an index the detector found only faintly, e.g. a thin glyph under glare. The
    weight and the card threshold are chosen together on synthetic validation scenes
    (``scorer.vision.tuning``), which is why both scores are kept.

    >>> CornerEvidence(Card.parse("7C"), (0, 0, 8, 16), 0.16, 1.0).detection(0.5).confidence
    0.4
    """

    card: Card
    box: Box
    detector_score: float
    class_probability: float

    def detection(self, detector_weight: float) -> CornerDetection:
        confidence = self.detector_score**detector_weight * self.class_probability
        return CornerDetection(self.card, self.box, confidence)


class ModelError(OkginError, RuntimeError):
    """A model that cannot be used: missing or corrupt files, a bad manifest, an unavailable backend."""


@dataclasses.dataclass(frozen=True)
class Detections:
    """The cards found in one frame, each once, and what contradicts one deck."""

    cards: tuple[CardDetection, ...]
    conflicts: tuple[Conflict, ...]
    width: int
    height: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"width", "height", "cards": [...], "conflicts": [...]}``."""
        return {
            "width": self.width,
            "height": self.height,
            "cards": [card.to_dict() for card in self.cards],
            "conflicts": [conflict.to_dict() for conflict in self.conflicts],
        }


def card_classes(names: Any, none_class: str, key: str) -> tuple[int | None, ...]:
    """Map a model's class names (any order) to ``Card.class_id``; ``none_class`` maps to None.

    ultralytics orders a classifier's classes by folder name, so the order is read, never assumed.

    >>> card_classes(["AC", "none", *CLASS_NAMES[1:]], "none", "names")[:3]
    (0, None, 1)

    :raises ValueError: unless every card is named exactly once.
    """
    if not isinstance(names, list | tuple):
        raise ValueError(f"{key} must be a list of class names")
    try:
        classes = tuple(None if str(name) == none_class else Card.parse(str(name)).class_id for name in names)
    except InvalidCardError as error:
        raise ValueError(f"{key}: {error}") from None
    cards = sorted(c for c in classes if c is not None)
    if cards != list(range(52)):
        raise ValueError(f"{key} must name each of the 52 cards once (got {len(cards)} card names)")
    return classes


def resolve_model_dir(model_dir: str | Path | None = None) -> Path:
    """The model directory: the argument, else ``$OKGIN_MODEL_DIR``, else the repository's ``models/``."""
    if model_dir is not None:
        return Path(model_dir)
    return Path(os.environ.get(MODEL_DIR_ENV) or DEFAULT_MODEL_DIR)


@dataclasses.dataclass(frozen=True)
class ModelManifest:
    """What ``models/manifest.json`` says is shipped, checked on load."""

    directory: Path
    design: str
    detector: str | None
    detector_onnx: str | None
    detector_imgsz: int
    classifier: str | None
    classifier_onnx: str | None
    crop_size: int
    crop_pad: float
    classifier_rotations: tuple[int, ...]  # quarter turns of each crop whose class probabilities are averaged
    detector_classes: tuple[int | None, ...]  # one-stage detector class index -> Card.class_id
    classifier_classes: tuple[int | None, ...]  # classifier class index -> Card.class_id, None = "no card here"
    conf: float
    iou: float
    classifier_conf: float
    card_conf: float  # a merged card below this confidence is dropped
    detector_weight: float  # exponent on the detector's score in a corner's confidence (see CornerEvidence)
    preferred_backend: str | None

    @classmethod
    def load(cls, model_dir: str | Path | None = None) -> ModelManifest:
        """Read and check ``manifest.json`` in ``model_dir`` (see ``resolve_model_dir``).

        :raises ModelError: when the directory or manifest is missing or a field is wrong.
        """
        directory = resolve_model_dir(model_dir)
        path = directory / "manifest.json"
        if not directory.is_dir():
            hint = f"pass --model DIR or set {MODEL_DIR_ENV}"
            raise ModelError(f"model directory {str(directory)!r} does not exist; {hint}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ModelError(f"no model in {str(directory)!r}: manifest.json is missing") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ModelError(f"could not read {str(path)!r}: {error}") from None
        if not isinstance(data, dict):
            raise ModelError(f"{str(path)!r} must hold a JSON object")
        return cls.from_dict(data, directory)

    @classmethod
    def from_dict(cls, data: dict[str, Any], directory: Path) -> ModelManifest:
        """Check a parsed manifest; ``directory`` is where its files live.

        :raises ModelError: naming the manifest and the wrong field.
        """
        where = str(directory / "manifest.json")
        design = data.get("design", "two-stage")
        if design not in DESIGNS:
            raise ModelError(f"{where}: design {design!r} is not one of {', '.join(DESIGNS)}")
        none_class = str(data.get("none_class", "none"))
        names = data.get("names", list(CLASS_NAMES))
        preferred = data.get("backend")
        if preferred is not None and preferred not in BACKENDS:
            raise ModelError(f"{where}: backend {preferred!r} is not one of {', '.join(BACKENDS)}")
        try:
            manifest = cls(
                directory=directory,
                design=design,
                detector=data.get("detector"),
                detector_onnx=data.get("detector_onnx"),
                detector_imgsz=int(data.get("detector_imgsz", 640)),
                classifier=data.get("classifier"),
                classifier_onnx=data.get("classifier_onnx"),
                crop_size=int(data.get("crop_size", CROP_SIZE)),
                crop_pad=float(data.get("crop_pad", CROP_PAD)),
                classifier_rotations=tuple(int(turn) for turn in data.get("classifier_rotations", (0,))),
                detector_classes=card_classes(names, none_class, "names") if design == "one-stage" else (None,),
                classifier_classes=card_classes(data.get("classifier_names", names), none_class, "classifier_names"),
                conf=float(data.get("conf", DEFAULT_CONF)),
                iou=float(data.get("iou", DEFAULT_IOU)),
                classifier_conf=float(data.get("classifier_conf", DEFAULT_CLASSIFIER_CONF)),
                card_conf=float(data.get("card_conf", 0.0)),
                detector_weight=float(data.get("detector_weight", 1.0)),
                preferred_backend=preferred,
            )
        except (TypeError, ValueError) as error:
            raise ModelError(f"{where}: {error}") from None
        if not manifest.classifier_rotations or not set(manifest.classifier_rotations) <= {0, 90, 180, 270}:
            raise ModelError(f"{where}: classifier_rotations must list some of 0, 90, 180, 270 degrees")
        if not 0 < manifest.detector_weight <= 1:
            raise ModelError(f"{where}: detector_weight {manifest.detector_weight} is outside (0, 1]")
        if not (manifest.detector or manifest.detector_onnx):
            raise ModelError(f"{where}: names no detector file (keys 'detector' / 'detector_onnx')")
        if design == "two-stage" and not (manifest.classifier or manifest.classifier_onnx):
            raise ModelError(f"{where}: a two-stage model needs a classifier ('classifier' / 'classifier_onnx')")
        return manifest

    def file(self, name: str | None, what: str) -> Path:
        """The path of a shipped file, checked to exist.

        :raises ModelError: naming the missing path.
        """
        if not name:
            raise ModelError(f"{self.directory / 'manifest.json'} names no {what}")
        path = self.directory / name
        if not path.exists():
            raise ModelError(f"{what} {str(path)!r} is missing")
        return path

    def _shipped(self, name: str | None) -> bool:
        return bool(name) and (self.directory / str(name)).exists()

    def openvino_dir(self, name: str | None) -> Path | None:
        """Where ultralytics exports ``name`` for OpenVINO (``<stem>_openvino_model/``)."""
        return self.directory / f"{Path(name).stem}_openvino_model" if name else None

    def available_backends(self) -> list[str]:
        """The backends whose files are all shipped (and whose runtime is installed), fastest first."""
        two_stage = self.design == "two-stage"
        found = []
        if self._shipped(self.detector_onnx) and (not two_stage or self._shipped(self.classifier_onnx)):
            found.append("onnx")
        detector_ov, classifier_ov = self.openvino_dir(self.detector), self.openvino_dir(self.classifier)
        if (
            importlib.util.find_spec("openvino") is not None
            and detector_ov is not None
            and detector_ov.is_dir()
            and (not two_stage or (classifier_ov is not None and classifier_ov.is_dir()))
        ):
            found.append("openvino")
        if self._shipped(self.detector) and (not two_stage or self._shipped(self.classifier)):
            found.append("torch")
        return found


# --- backends -------------------------------------------------------------------------------------------------------

BoxArrays = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(xyxy float32 (N, 4) in frame pixels, score float32 (N,), model class int (N,))."""


class BoxModel(Protocol):
    """A YOLO detector: boxes, scores and model class indices for one BGR frame."""

    def predict(self, image: np.ndarray, conf: float, iou: float) -> BoxArrays: ...


class CropModel(Protocol):
    """A YOLO classifier: class probabilities (N, classes) for N BGR crops, in one batch."""

    def predict(self, crops: Sequence[np.ndarray]) -> np.ndarray: ...


def _load_ultralytics(path: Path, task: str) -> Any:
    """An ultralytics YOLO model from a local file; never downloads (YOLO_OFFLINE is set first)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    try:
        from ultralytics import YOLO
    except ImportError as error:  # pragma: no cover - ultralytics is a dependency
        raise ModelError(f"the torch backend needs ultralytics: {error}") from None
    try:
        model = YOLO(str(path), task=task)
    except Exception as error:  # ultralytics raises many types for a bad file; all mean "unusable model"
        raise ModelError(f"could not load model {str(path)!r}: {type(error).__name__}: {error}") from None
    if model.task != task:
        raise ModelError(f"model {str(path)!r} is a {model.task} model, expected a {task} model")
    return model


class UltralyticsBoxModel:
    """Detection through ultralytics ``predict`` (``.pt`` weights or an OpenVINO directory)."""

    def __init__(self, path: Path, imgsz: int) -> None:
        self.model = _load_ultralytics(path, "detect")
        self.imgsz = imgsz

    def predict(self, image: np.ndarray, conf: float, iou: float) -> BoxArrays:
        result = self.model.predict(
            image,
            imgsz=self.imgsz,
            conf=conf,
            iou=iou,
            agnostic_nms=True,
            max_det=MAX_DETECTIONS,
            verbose=False,
            device="cpu",
        )[0]
        boxes = result.boxes
        return (
            boxes.xyxy.cpu().numpy().astype(np.float32).reshape(-1, 4),
            boxes.conf.cpu().numpy().astype(np.float32),
            boxes.cls.cpu().numpy().astype(np.int64),
        )


class UltralyticsCropModel:
    """Classification through ultralytics ``predict``: one call for all crops."""

    def __init__(self, path: Path, imgsz: int) -> None:
        self.model = _load_ultralytics(path, "classify")
        self.imgsz = imgsz

    def predict(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        if not crops:
            return np.zeros((0, 0), dtype=np.float32)
        results = self.model.predict(list(crops), imgsz=self.imgsz, verbose=False, device="cpu")
        return np.stack([r.probs.data.cpu().numpy() for r in results]).astype(np.float32)


def cpu_count() -> int:
    """Cores this process may use (affinity-aware where the OS tells)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _onnx_session(path: Path) -> Any:
    """An onnxruntime CPU session using every core for one inference (intra-op threads), without spinning."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = cpu_count()
    options.inter_op_num_threads = 1
    # idle worker threads sleep instead of spinning: on a shared CPU (the web server, a camera
    # thread) spinning doubled inference time here, and it only saves microseconds when idle
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own Fail/InvalidProtobuf types
        raise ModelError(f"could not load ONNX model {str(path)!r}: {error}") from None


@dataclasses.dataclass(frozen=True)
class Letterbox:
    """How a frame was resized and padded into the network input, to map boxes back."""

    gain_x: float
    gain_y: float
    pad_x: int
    pad_y: int


def letterbox(image: np.ndarray, size: tuple[int, int], minimal: bool) -> tuple[np.ndarray, Letterbox]:
    """Resize keeping aspect ratio and pad with grey, exactly as ultralytics' ``LetterBox`` does.

    ``size`` is (height, width). With ``minimal`` the padding only reaches the next multiple
    of the stride (a 1280x720 frame at 640 becomes 640x384), which a dynamic-shape model allows.

    >>> out, lb = letterbox(np.zeros((720, 1280, 3), np.uint8), (640, 640), minimal=True)
    >>> out.shape, lb
    ((384, 640, 3), Letterbox(gain_x=0.5, gain_y=0.5, pad_x=0, pad_y=12))
    """
    import cv2

    height, width = image.shape[:2]
    ratio = min(size[0] / height, size[1] / width)
    new_w, new_h = max(round(width * ratio), 1), max(round(height * ratio), 1)
    pad_w, pad_h = size[1] - new_w, size[0] - new_h
    if minimal:
        pad_w, pad_h = pad_w % STRIDE, pad_h % STRIDE
    if (new_w, new_h) != (width, height):
        image = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    top, bottom = round(pad_h / 2 - 0.1), round(pad_h / 2 + 0.1)
    left, right = round(pad_w / 2 - 0.1), round(pad_w / 2 + 0.1)
    padded = cv2.copyMakeBorder(image, top, bottom, left, right, cv2.BORDER_CONSTANT, value=(LETTERBOX_FILL,) * 3)
    return padded, Letterbox(new_w / width, new_h / height, left, top)


def decode_yolo(output: np.ndarray, conf: float, iou: float, max_det: int = MAX_DETECTIONS) -> BoxArrays:
    """Decode a YOLO detect head output (1, 4 + classes, anchors) into boxes after class-agnostic NMS.

    Boxes stay in network-input pixels; scores are the best class score per anchor.

    >>> raw = np.zeros((1, 5, 3), np.float32)
    >>> raw[0, :, 0] = [50, 50, 20, 20, 0.9]; raw[0, :, 1] = [52, 50, 20, 20, 0.8]; raw[0, :, 2] = [9, 9, 4, 4, 0.1]
    >>> boxes, scores, classes = decode_yolo(raw, conf=0.25, iou=0.5)
    >>> boxes.tolist(), [round(float(s), 2) for s in scores], classes.tolist()
    ([[40.0, 40.0, 60.0, 60.0]], [0.9], [0])
    """
    import cv2

    predictions = output[0]
    class_scores = predictions[4:]
    classes = class_scores.argmax(axis=0)
    scores = class_scores.max(axis=0)
    keep = scores > conf
    xywh, scores, classes = predictions[:4, keep].T, scores[keep], classes[keep]
    if not len(scores):
        return np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64)
    corner_xywh = np.column_stack([xywh[:, :2] - xywh[:, 2:] / 2, xywh[:, 2:]]).astype(np.float32)
    nms: Any = cv2.dnn.NMSBoxes  # OpenCV's stubs type boxes as nested lists; an (N, 4) array is accepted
    scores = scores.astype(np.float32)
    # OpenCV's top_k limits the candidates, not the survivors; cap the survivors as ultralytics does
    chosen = np.asarray(nms(corner_xywh, scores, conf, iou), dtype=np.int64).reshape(-1)[:max_det]
    xyxy = np.column_stack([corner_xywh[chosen, :2], corner_xywh[chosen, :2] + corner_xywh[chosen, 2:]])
    return xyxy.astype(np.float32), scores[chosen].astype(np.float32), classes[chosen].astype(np.int64)


def _is_fixed(dimension: Any) -> bool:
    return isinstance(dimension, int) and dimension > 0


class OnnxBoxModel:
    """Detection with onnxruntime: letterbox, one inference, vectorised decoding, OpenCV NMS."""

    def __init__(self, path: Path, imgsz: int) -> None:
        self.session = _onnx_session(path)
        model_input = self.session.get_inputs()[0]
        self.input_name = model_input.name
        _, _, height, width = model_input.shape
        # a fixed-shape export must get exactly its size; a dynamic one gets ultralytics' minimal rectangle
        self.dynamic = not (_is_fixed(height) and _is_fixed(width))
        self.size = (imgsz, imgsz) if self.dynamic else (int(height), int(width))

    def predict(self, image: np.ndarray, conf: float, iou: float) -> BoxArrays:
        import cv2

        padded, box = letterbox(image, self.size, minimal=self.dynamic)
        blob = cv2.dnn.blobFromImage(padded, scalefactor=1 / 255, swapRB=True)
        output = self.session.run(None, {self.input_name: blob})[0]
        xyxy, scores, classes = decode_yolo(output, conf, iou)
        xyxy[:, [0, 2]] = ((xyxy[:, [0, 2]] - box.pad_x) / box.gain_x).clip(0, image.shape[1])
        xyxy[:, [1, 3]] = ((xyxy[:, [1, 3]] - box.pad_y) / box.gain_y).clip(0, image.shape[0])
        return xyxy, scores, classes


class OnnxCropModel:
    """Classification with onnxruntime: crops as RGB, /255, CHW, exactly what ultralytics feeds YOLO-cls."""

    def __init__(self, path: Path, imgsz: int) -> None:
        self.session = _onnx_session(path)
        model_input = self.session.get_inputs()[0]
        self.input_name = model_input.name
        batch, _, height, width = model_input.shape
        self.size = (int(height), int(width)) if _is_fixed(height) and _is_fixed(width) else (imgsz, imgsz)
        self.fixed_batch = int(batch) if _is_fixed(batch) else None

    def predict(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        import cv2

        if not crops:
            return np.zeros((0, 0), dtype=np.float32)
        blob = cv2.dnn.blobFromImages(list(crops), scalefactor=1 / 255, size=self.size[::-1], swapRB=True)
        if self.fixed_batch is None:
            return np.asarray(self.session.run(None, {self.input_name: blob})[0], dtype=np.float32)
        # a fixed-batch export (ultralytics' default) takes its batch size per call; pad the last chunk
        step = self.fixed_batch
        chunks = []
        for start in range(0, len(blob), step):
            chunk = blob[start : start + step]
            filled = np.concatenate([chunk, np.zeros((step - len(chunk), *chunk.shape[1:]), chunk.dtype)])
            chunks.append(self.session.run(None, {self.input_name: filled})[0][: len(chunk)])
        return np.concatenate(chunks).astype(np.float32)


# --- the detector ---------------------------------------------------------------------------------------------------


class CardDetector:
    """Find the cards in a BGR frame with the shipped model.

    ``model_dir`` defaults to ``$OKGIN_MODEL_DIR`` or the repository's ``models/``;
    ``backend="auto"`` takes the manifest's preferred backend, else the first shipped of
    onnx, openvino, torch; ``conf`` overrides the manifest's detection threshold.

    :raises ModelError: when the model is missing, corrupt or the backend is not shipped.
    """

    def __init__(self, model_dir: str | Path | None = None, backend: str = "auto", conf: float | None = None) -> None:
        if backend not in BACKENDS:
            raise ModelError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
        if conf is not None and not 0 <= conf <= 1:
            raise ModelError(f"confidence threshold {conf} is outside 0..1")
        self.manifest = manifest = ModelManifest.load(model_dir)
        available = manifest.available_backends()
        if backend == "auto":
            if not available:
                raise ModelError(f"no usable model files in {str(manifest.directory)!r} (see its manifest.json)")
            preferred = manifest.preferred_backend
            backend = preferred if preferred in available else available[0]
        self.backend_name: str = backend
        self.conf = manifest.conf if conf is None else conf
        self.boxes, self.classifier = self._load(backend)

    def _load(self, backend: str) -> tuple[BoxModel, CropModel | None]:
        manifest = self.manifest
        two_stage = manifest.design == "two-stage"
        if backend == "onnx":
            detector_file = manifest.file(manifest.detector_onnx, "ONNX detector")
            boxes: BoxModel = OnnxBoxModel(detector_file, manifest.detector_imgsz)
            if not two_stage:
                return boxes, None
            return boxes, OnnxCropModel(manifest.file(manifest.classifier_onnx, "ONNX classifier"), manifest.crop_size)
        if backend == "openvino":
            if importlib.util.find_spec("openvino") is None:
                raise ModelError("the openvino backend needs the 'openvino' package, which is not installed")
            detector_path, classifier_path = manifest.openvino_dir(manifest.detector), None
            if two_stage:
                classifier_path = manifest.openvino_dir(manifest.classifier)
        else:
            detector_path = manifest.file(manifest.detector, "detector weights")
            classifier_path = manifest.file(manifest.classifier, "classifier weights") if two_stage else None
        for path in (detector_path, classifier_path):
            if path is not None and not path.exists():
                raise ModelError(f"{backend} model {str(path)!r} is missing")
        assert detector_path is not None
        boxes = UltralyticsBoxModel(detector_path, manifest.detector_imgsz)
        classifier = UltralyticsCropModel(classifier_path, manifest.crop_size) if classifier_path else None
        return boxes, classifier

    def read_corners(self, image_bgr: np.ndarray) -> list[CornerEvidence]:
        """Every corner index found and named, with the two stages' scores kept apart."""
        check_frame(image_bgr)
        manifest = self.manifest
        xyxy, scores, classes = self.boxes.predict(image_bgr, self.conf, manifest.iou)
        if self.classifier is None:
            return [
                CornerEvidence(Card.from_class_id(card), _box(box), float(score), 1.0)
                for box, score, k in zip(xyxy, scores, classes, strict=True)
                if (card := manifest.detector_classes[int(k)]) is not None
            ]
        crops = [corner_crop(image_bgr, _box(b), size=manifest.crop_size, pad=manifest.crop_pad) for b in xyxy]
        probabilities = self._classify(crops)
        corners = []
        for box, score, probs in zip(xyxy, scores, probabilities, strict=True):
            best = int(probs.argmax())
            card = manifest.classifier_classes[best]
            # the classifier's "none" class vetoes a detector false alarm; a weak label is dropped, not guessed
            if card is not None and probs[best] >= manifest.classifier_conf:
                corners.append(CornerEvidence(Card.from_class_id(card), _box(box), float(score), float(probs[best])))
        return corners

    def _classify(self, crops: list[np.ndarray]) -> np.ndarray:
        """Class probabilities per crop, averaged over the manifest's rotations of it, in one batch.

        The classifier was trained on indices at every angle (cards lie any way round), so a
        turned crop is the same card; averaging its readings steadies a glyph it half-knows.
        """
        assert self.classifier is not None
        turns = self.manifest.classifier_rotations
        if not crops:
            return np.zeros((0, len(self.manifest.classifier_classes)), np.float32)
        batch = [np.ascontiguousarray(np.rot90(crop, k=turn // 90)) for turn in turns for crop in crops]
        return self.classifier.predict(batch).reshape(len(turns), len(crops), -1).mean(axis=0)

    def detect_corners(self, image_bgr: np.ndarray) -> list[CornerDetection]:
        """Every corner index found, before one-deck merging, with the manifest's confidence fusion."""
        return [corner.detection(self.manifest.detector_weight) for corner in self.read_corners(image_bgr)]

    def detect(self, image_bgr: np.ndarray) -> Detections:
        """The cards in a BGR frame, each once (corners merged), with one-deck conflicts."""
        cards, conflicts = merge_corners(self.detect_corners(image_bgr))
        kept = tuple(card for card in cards if card.confidence >= self.manifest.card_conf)
        height, width = image_bgr.shape[:2]
        return Detections(kept, tuple(conflicts), width, height)

    def __repr__(self) -> str:
        return f"CardDetector({str(self.manifest.directory)!r}, backend={self.backend_name!r}, conf={self.conf})"


def _box(row: np.ndarray) -> tuple[float, float, float, float]:
    return (float(row[0]), float(row[1]), float(row[2]), float(row[3]))


def check_frame(image: Any) -> None:
    """Refuse anything that is not a non-empty BGR ``uint8`` image, naming what it is instead.

    :raises ValueError: for a wrong type, shape or dtype.
    """
    if not isinstance(image, np.ndarray):
        raise ValueError(f"a frame must be a numpy BGR image, got {type(image).__name__}")
    if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"a frame must have shape (height, width, 3), got {image.shape}")
    if image.dtype != np.uint8:
        raise ValueError(f"a frame must be uint8, got {image.dtype}")
