"""Inference engines for the shipped model: the ONNX files run by ONNX Runtime or OpenVINO Runtime, and the
``.pt`` weights run by PyTorch (ultralytics).

The ``onnx`` and ``openvino`` backends are this module's own letterbox, decoding and NMS around the runtime and
OpenCV: they never import torch or ultralytics, so a server installed without the ``[train]`` extra serves the
model. The ``torch`` backend goes through ultralytics, imported only when it is built (never at import time),
with downloads switched off first.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from scorer.extras import MissingExtraError, require
from scorer.files import is_utf8
from scorer.vision.boxes import centre_xywh_to_corner_xywh, xywh_to_xyxy
from scorer.vision.crops import AS_SHOWN, Stretch
from scorer.vision.manifest import ModelError, ModelManifest

MAX_DETECTIONS = 300
CROPS_PER_RUN = 256
"""The most crops the ONNX classifier reads in one inference. ONNX Runtime keeps the memory its biggest batch
needed: a motion-blurred 1280x720 frame sent it 955 crops at once, and a server's RSS grew about 60 MB with each
such frame, to 1.4 GB (session 44's live probe, /work/s44/live/blur_rss.py). The readings are the same, bit for
bit, in batches of any size, and a sharp frame's batches are smaller than this anyway."""
LETTERBOX_FILL = 114  # grey used by ultralytics' LetterBox, so both backends see the same pixels
STRIDE = 32  # largest YOLO stride: a dynamic-shape input must be a multiple of it

BoxArrays = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(xyxy float32 (N, 4) in frame pixels, score float32 (N,), model class int (N,))."""


class BoxModel(Protocol):
    """A YOLO detector: boxes, scores and model class indices for one BGR frame."""

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> BoxArrays:
        """``size``: the network's input side for this call (default: the model's), for a coarser look."""
        ...

    def input_size(self, size: int | None = None) -> tuple[int, int]:
        """(height, width) a frame is fitted into (``fit_within``) when ``predict`` is asked for ``size``."""
        ...


class CropModel(Protocol):
    """A YOLO classifier: class probabilities (N, classes) for N BGR crops, in one batch."""

    def predict(self, crops: Sequence[np.ndarray]) -> np.ndarray: ...


def available_backends(manifest: ModelManifest) -> list[str]:
    """The backends whose files are all shipped (and whose runtime is installed), fastest first.

    ``openvino`` (the detector in OpenVINO, the classifier in ONNX Runtime) comes before ``onnx`` only on a CPU
    with bfloat16 arithmetic, where it runs the detector in half the time; elsewhere it is no faster.
    """
    two_stage = manifest.design == "two-stage"
    found = []
    onnx_classifiers = (manifest.classifier_onnx, *manifest.veto_files("onnx"))
    torch_classifiers = (manifest.classifier, *manifest.veto_files("pt"))
    if manifest.shipped(manifest.detector_onnx) and (not two_stage or all(map(manifest.shipped, onnx_classifiers))):
        found.append("onnx")
        if importlib.util.find_spec("openvino") is not None:
            found.insert(0 if openvino_has_bfloat16() else 1, "openvino")
    if manifest.shipped(manifest.detector) and (not two_stage or all(map(manifest.shipped, torch_classifiers))):
        found.append("torch")
    return found


def load_backend(manifest: ModelManifest, backend: str) -> tuple[BoxModel, CropModel | None]:
    """The corner (or card) detector and, for a two-stage model, the classifier, run by ``backend``.

    :raises ModelError: when a file is missing or unusable, or the backend's runtime is not installed.
    """
    two_stage = manifest.design == "two-stage"
    if backend in ("onnx", "openvino"):
        runtime = "onnxruntime" if backend == "onnx" else "openvino"
        detector_file = manifest.file(manifest.detector_onnx, "ONNX detector")
        classes = len(manifest.detector_classes)
        boxes: BoxModel = OnnxBoxModel(detector_file, manifest.detector_imgsz, runtime, classes)
    else:
        boxes = UltralyticsBoxModel(manifest.file(manifest.detector, "detector weights"), manifest.detector_imgsz)
    if not two_stage:
        return boxes, None
    return boxes, _crop_model(manifest, backend, manifest.classifier, manifest.classifier_onnx, "classifier")


def load_veto_classifiers(manifest: ModelManifest, backend: str) -> list[CropModel]:
    """The manifest's veto classifiers (``CardDetector.name_boxes``), run by ``backend``'s classifier runtime.

    :raises ModelError: when a file is missing or unusable.
    """
    files = zip(manifest.veto_files("pt"), manifest.veto_files("onnx"), strict=True)
    return [_crop_model(manifest, backend, weights, onnx, "veto classifier") for weights, onnx in files]


def _crop_model(manifest: ModelManifest, backend: str, weights: str | None, onnx: str | None, what: str) -> CropModel:
    """A classifier of crops run by ``backend``: its ONNX export for onnx and openvino, its weights for torch."""
    if backend in ("onnx", "openvino"):
        classes = len(manifest.classifier_classes)
        return OnnxCropModel(manifest.file(onnx, f"ONNX {what}"), manifest.crop_size, classes, f"ONNX {what}")
    return UltralyticsCropModel(manifest.file(weights, f"{what} weights"), manifest.crop_size)


# --- PyTorch, through ultralytics ----------------------------------------------------------------------------------


def _load_ultralytics(path: Path, task: str) -> Any:
    """An ultralytics YOLO model from a local file; never downloads (YOLO_OFFLINE is set first)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    try:
        ultralytics = require("ultralytics", "the torch backend")
    except MissingExtraError as error:
        raise ModelError(str(error)) from None
    try:
        model = ultralytics.YOLO(str(path), task=task)
    except Exception as error:  # ultralytics raises many types for a bad file; all mean "unusable model"
        raise ModelError(f"could not load model {str(path)!r}: {type(error).__name__}: {error}") from None
    if model.task != task:
        raise ModelError(f"model {str(path)!r} is a {model.task} model, expected a {task} model")
    return model


class UltralyticsBoxModel:
    """Detection through ultralytics ``predict`` on ``.pt`` weights."""

    def __init__(self, path: Path, imgsz: int) -> None:
        self.model = _load_ultralytics(path, "detect")
        self.imgsz = imgsz

    def input_size(self, size: int | None = None) -> tuple[int, int]:
        return (size or self.imgsz, size or self.imgsz)

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> BoxArrays:
        imgsz = size or self.imgsz
        fitted = fit_within(image, (imgsz, imgsz))  # ultralytics' letterbox then only pads it: the same pixels
        result = self.model.predict(
            fitted,
            imgsz=imgsz,
            conf=conf,
            iou=iou,
            agnostic_nms=True,
            max_det=MAX_DETECTIONS,
            verbose=False,
            device="cpu",
        )[0]
        boxes = result.boxes
        return (
            in_frame_pixels(boxes.xyxy.cpu().numpy().astype(np.float32).reshape(-1, 4), fitted, image),
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


# --- ONNX files, run by ONNX Runtime or OpenVINO Runtime ---------------------------------------------------------


def cpu_count() -> int:
    """Cores this process may use (affinity-aware where the OS tells)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


class OnnxEngine(Protocol):
    """One ONNX network and the runtime that runs it on the CPU."""

    input_name: str
    input_shape: tuple[int | None, ...]
    """(batch, channels, height, width) of its input, None where the export left a dimension free."""
    output_shape: tuple[int | None, ...]
    """The shape of its first output, None where the export left a dimension free."""

    def run(self, blob: np.ndarray) -> np.ndarray:
        """The network's first output for one input blob."""
        ...


def onnx_engine(path: Path, runtime: str) -> OnnxEngine:
    """``path`` run by ``runtime``: "onnxruntime" or "openvino" (at OpenVINO's default precision)."""
    if runtime == "onnxruntime":
        return OnnxRuntimeEngine(path)
    if runtime == "openvino":
        return OpenVinoEngine(path)
    raise ModelError(f"unknown ONNX runtime {runtime!r}")


def _engine_path(path: Path) -> str:
    """``path`` as the text the runtimes open, which must be UTF-8.

    >>> _engine_path(Path(b"models\\xff/det.onnx".decode("utf-8", "surrogateescape")))
    Traceback (most recent call last):
    ...
    scorer.vision.manifest.ModelError: cannot open ONNX model 'models\\udcff/det.onnx': its path is not UTF-8 text...

    :raises ModelError: for a path with bytes that are no UTF-8 (held by Python as lone surrogates): ONNX Runtime
        answered it with four lines about its constructor's argument types.
    """
    text = str(path)
    if not is_utf8(text):
        raise ModelError(
            f"cannot open ONNX model {text!r}: its path is not UTF-8 text, which ONNX Runtime and OpenVINO need"
        )
    return text


class OnnxRuntimeEngine:
    """An onnxruntime CPU session using every core for one inference (intra-op threads), without spinning."""

    def __init__(self, path: Path) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = cpu_count()
        options.inter_op_num_threads = 1
        # idle worker threads sleep instead of spinning: on a shared CPU (the web server, a camera
        # thread) spinning doubled inference time here, and it only saves microseconds when idle
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        name = _engine_path(path)
        try:
            self.session = onnxruntime.InferenceSession(name, options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime raises its own Fail/InvalidProtobuf types
            raise ModelError(f"could not load ONNX model {str(path)!r}: {error}") from None
        model_input = self.session.get_inputs()[0]
        self.input_name = model_input.name
        self.input_shape = tuple(int(size) if _is_fixed(size) else None for size in model_input.shape)
        output = self.session.get_outputs()[0].shape
        self.output_shape = tuple(int(size) if _is_fixed(size) else None for size in output)

    def run(self, blob: np.ndarray) -> np.ndarray:
        return np.asarray(self.session.run(None, {self.input_name: blob})[0])


def openvino_cpu() -> tuple[str, tuple[str, ...]] | None:
    """This CPU's name and the number formats OpenVINO computes in on it (``FP32``, ``BF16``, ``INT8`` ...), or
    None where OpenVINO or its CPU plugin is missing. The detector's speed depends on both (Speed, README)."""
    try:
        import openvino

        core = openvino.Core()
        return str(core.get_property("CPU", "FULL_DEVICE_NAME")), tuple(
            core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        )
    except Exception:  # not installed, or no CPU plugin
        return None


def openvino_has_bfloat16() -> bool:
    """Whether OpenVINO computes in bfloat16 on this CPU (AVX-512 BF16 or AMX), as it then does by default."""
    cpu = openvino_cpu()
    return cpu is not None and "BF16" in cpu[1]


class OpenVinoEngine:
    """OpenVINO Runtime on an ONNX file, on the CPU, every core for one inference.

    Where the CPU has bfloat16 arithmetic OpenVINO computes in it by default, and the detector takes half of
    ONNX Runtime's time; in float32 (``full_precision``, or a CPU without it) it is no faster.

    One network compiled for any input shape runs every call, except that the first few shapes called
    ``STATIC_AFTER`` times get a network of their own: a camera's frames all letterbox to one or two shapes,
    and a network compiled for its shape ran a fifth faster. Compiling takes a few hundred milliseconds, so it
    happens at most ``STATIC_SHAPES`` times in a process's life, whatever shapes its clients send.
    """

    STATIC_SHAPES = 4
    STATIC_AFTER = 3
    COUNTED_SHAPES = 64  # calls are counted for this many shapes at most

    def __init__(self, path: Path, full_precision: bool = False) -> None:
        if importlib.util.find_spec("openvino") is None:
            raise ModelError("the openvino backend needs the 'openvino' package, which is not installed")
        import openvino

        self.core = openvino.Core()
        self.config: dict[str, Any] = {"INFERENCE_NUM_THREADS": cpu_count(), "PERFORMANCE_HINT": "LATENCY"}
        if full_precision:
            self.config["INFERENCE_PRECISION_HINT"] = "f32"
        name = _engine_path(path)
        try:
            self.model = self.core.read_model(name)
            self.input_name = self.model.inputs[0].any_name
            partial = self.model.inputs[0].get_partial_shape()
            self.input_shape = tuple(d.get_length() if d.is_static else None for d in partial)
            output = self.model.outputs[0].get_partial_shape()
            self.output_shape = tuple(d.get_length() if d.is_static else None for d in output)
            self.any_shape = self._compile()
        except Exception as error:  # OpenVINO raises RuntimeError (and others) for a file it cannot use
            raise ModelError(f"could not load ONNX model {str(path)!r} into OpenVINO: {error}") from None
        self.static: dict[tuple[int, ...], Any] = {}
        self.calls: dict[tuple[int, ...], int] = {}
        self.lock = threading.Lock()  # an infer request serves one call at a time

    def _compile(self) -> Any:
        return self.core.compile_model(self.model, "CPU", self.config).create_infer_request()

    def _request(self, shape: tuple[int, ...]) -> Any:
        if shape in self.static:
            return self.static[shape]
        if None not in self.input_shape or len(self.static) >= self.STATIC_SHAPES:
            return self.any_shape
        if shape not in self.calls and len(self.calls) >= self.COUNTED_SHAPES:
            self.calls.clear()
        self.calls[shape] = self.calls.get(shape, 0) + 1
        if self.calls[shape] < self.STATIC_AFTER:
            return self.any_shape
        self.model.reshape({self.input_name: list(shape)})
        self.static[shape] = self._compile()
        return self.static[shape]

    def run(self, blob: np.ndarray) -> np.ndarray:
        with self.lock:
            output = self._request(tuple(blob.shape)).infer({0: blob})[0]
            return np.array(output, dtype=np.float32)  # a copy: the request's buffer is reused by the next call


@dataclasses.dataclass(frozen=True)
class Letterbox:
    """How a frame was resized and padded into the network input, to map boxes back."""

    gain_x: float
    gain_y: float
    pad_x: int
    pad_y: int


def fit_within(image: np.ndarray, size: tuple[int, int], grow: bool = True, stretch: Stretch = AS_SHOWN) -> np.ndarray:
    """``image`` resized to fit ``size`` (height, width) with its aspect ratio kept, to the size ultralytics'
    ``LetterBox`` gives it: shrunk by averaging the pixels each output pixel covers, grown bilinearly (without
    ``grow``, an image that fits already is returned as it is). With a ``stretch``, the image made that many times
    wider and taller is fitted, in one resize (a 40-megapixel photo stretched whole first would take 200 MB).

    ultralytics shrinks bilinearly too, which samples a big frame's pixels rather than averaging them: its grain
    stays and thin strokes break, where the detector's training tiles were shrunk by area
    (``scorer.training``). Shrunk by area, the held-out scenes' indices were found more often (models/HISTORY.md,
    Session 19).

    >>> fit_within(np.zeros((1080, 1920, 3), np.uint8), (640, 640)).shape
    (360, 640, 3)
    >>> fit_within(np.zeros((640, 640, 3), np.uint8), (640, 640), stretch=(1.778, 1.0)).shape
    (360, 640, 3)
    """
    import cv2

    height, width = image.shape[:2]
    across, down = stretch
    ratio = min(size[0] / (height * down), size[1] / (width * across))
    if not grow:
        ratio = min(ratio, 1.0)
    new_w, new_h = max(round(width * across * ratio), 1), max(round(height * down * ratio), 1)
    if (new_w, new_h) == (width, height):
        return image
    shrunk = new_w <= width and new_h <= height
    return cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_AREA if shrunk else cv2.INTER_LINEAR)


def in_frame_pixels(xyxy: np.ndarray, fitted: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """Boxes drawn on ``fitted`` (``frame`` resized by ``fit_within``), scaled in place to ``frame``'s pixels.

    >>> boxes = np.array([[10, 10, 20, 30]], np.float32)
    >>> in_frame_pixels(boxes, np.zeros((360, 640, 3)), np.zeros((720, 1280, 3))).tolist()
    [[20.0, 20.0, 40.0, 60.0]]
    """
    if fitted.shape[:2] != frame.shape[:2]:
        xyxy[:, [0, 2]] *= frame.shape[1] / fitted.shape[1]
        xyxy[:, [1, 3]] *= frame.shape[0] / fitted.shape[0]
    return xyxy


GRAIN_KERNEL = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)
"""Immerkær's mask: the difference of two Laplacians, blind to flat shading and straight edges."""


def grain_level(image: np.ndarray) -> float:
    """The standard deviation of an image's pixel noise in grey levels, estimated as Immerkær does ("Fast noise
    variance estimation", 1996: the mean absolute response of ``GRAIN_KERNEL``, scaled) over its flatter half
    (the pixels of least gradient), so that edges, print and a table's texture are not counted as grain.
    Real photos of cards at 640 px read under 3.2; with grey noise of standard deviation 8 added, and JPEG, 3.6 to 7.5.

    >>> flat = np.full((120, 160, 3), 128, np.uint8)
    >>> grain_level(flat)
    0.0
    >>> noisy = np.clip(flat + np.random.default_rng(0).normal(0, 8, (120, 160, 1)), 0, 255).astype(np.uint8)
    >>> 5 < grain_level(noisy) < 9
    True
    """
    import cv2

    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    if min(grey.shape) < 3:
        return 0.0
    response = np.abs(cv2.filter2D(grey.astype(np.float32), -1, GRAIN_KERNEL))[1:-1, 1:-1]
    gradient = np.abs(cv2.Sobel(grey, cv2.CV_16S, 1, 0)) + np.abs(cv2.Sobel(grey, cv2.CV_16S, 0, 1))
    gradient = gradient[1:-1, 1:-1]
    flatter = (gradient <= np.median(gradient[::7, ::7])).astype(np.uint8)  # a sample's median: the same split
    return float(np.sqrt(np.pi / 2) * cv2.mean(response, mask=flatter)[0] / 6)


def letterbox(image: np.ndarray, size: tuple[int, int], minimal: bool) -> tuple[np.ndarray, Letterbox]:
    """Resize keeping aspect ratio (``fit_within``) and pad with grey, as ultralytics' ``LetterBox`` does.

    ``size`` is (height, width). With ``minimal`` the padding only reaches the next multiple
    of the stride (a 1280x720 frame at 640 becomes 640x384), which a dynamic-shape model allows.

    >>> out, lb = letterbox(np.zeros((720, 1280, 3), np.uint8), (640, 640), minimal=True)
    >>> out.shape, lb
    ((384, 640, 3), Letterbox(gain_x=0.5, gain_y=0.5, pad_x=0, pad_y=12))
    """
    import cv2

    height, width = image.shape[:2]
    image = fit_within(image, size)
    new_h, new_w = image.shape[:2]
    pad_w, pad_h = size[1] - new_w, size[0] - new_h
    if minimal:
        pad_w, pad_h = pad_w % STRIDE, pad_h % STRIDE
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
    corner_xywh = centre_xywh_to_corner_xywh(xywh).astype(np.float32)
    nms: Any = cv2.dnn.NMSBoxes  # OpenCV's stubs type boxes as nested lists; an (N, 4) array is accepted
    scores = scores.astype(np.float32)
    # OpenCV's top_k limits the candidates, not the survivors; cap the survivors as ultralytics does
    chosen = np.asarray(nms(corner_xywh, scores, conf, iou), dtype=np.int64).reshape(-1)[:max_det]
    xyxy = xywh_to_xyxy(corner_xywh[chosen])
    return xyxy.astype(np.float32), scores[chosen].astype(np.float32), classes[chosen].astype(np.int64)


def _is_fixed(dimension: Any) -> bool:
    return isinstance(dimension, int) and dimension > 0


def check_shapes(path: Path, engine: OnnxEngine, what: str, output: tuple[int | None, ...]) -> None:
    """Refuse an ONNX file that cannot be the ``what`` its manifest names it as: its input must be a batch of
    3-channel pictures, its first output of ``output``'s shape (None: any size there). The detector and the
    classifier swapped in a manifest, or another network's export, had loaded and then stopped the first frame
    with an IndexError deep in the classifier's readings. A size the export left free is checked on each run
    (``check_output``).

    :raises ModelError: naming the file and the shape that does not fit.
    """
    inputs = engine.input_shape
    if len(inputs) != 4 or inputs[1] not in (None, 3):
        raise ModelError(f"{str(path)!r} is no {what}: its input is {_shown(inputs)}, not (batch, 3, height, width)")
    check_output(path, what, engine.output_shape, output)


def check_output(path: Path, what: str, found: Sequence[int | None], output: tuple[int | None, ...]) -> None:
    """Refuse an output of shape ``found`` where ``output`` was expected (None: any size there).

    >>> check_output(Path("det.onnx"), "ONNX classifier", (None, 5, None), (None, 53))
    Traceback (most recent call last):
    ...
    scorer.vision.manifest.ModelError: 'det.onnx' is no ONNX classifier for this manifest: its output is (?, 5, ?)...

    :raises ModelError: naming the file, its output's shape and the one expected.
    """
    fits = len(found) == len(output) and all(
        a is None or b is None or a == b for a, b in zip(found, output, strict=True)
    )
    if not fits:
        raise ModelError(
            f"{str(path)!r} is no {what} for this manifest: its output is {_shown(tuple(found))}, where "
            f"{_shown(output)} was expected"
        )


def _shown(shape: tuple[int | None, ...]) -> str:
    return "(" + ", ".join("?" if size is None else str(size) for size in shape) + ")"


class OnnxBoxModel:
    """Detection from an ONNX file: letterbox, one inference, vectorised decoding, OpenCV NMS.

    ``runtime`` is "onnxruntime" or "openvino" (see ``onnx_engine``).
    """

    def __init__(self, path: Path, imgsz: int, runtime: str = "onnxruntime", classes: int | None = None) -> None:
        """``classes``: how many classes the manifest says the detector names, checked against the file's output
        (4 box sides and a score per class, per anchor); None checks only the shapes' ranks."""
        self.engine = onnx_engine(path, runtime)
        self.path = path
        self.output: tuple[int | None, ...] = (None, None if classes is None else 4 + classes, None)
        check_shapes(path, self.engine, "ONNX detector", self.output)
        _, _, height, width = self.engine.input_shape
        # a fixed-shape export must get exactly its size; a dynamic one gets ultralytics' minimal rectangle
        self.dynamic = height is None or width is None
        self.size = (height, width) if height is not None and width is not None else (imgsz, imgsz)

    def input_size(self, size: int | None = None) -> tuple[int, int]:
        return (size, size) if size and self.dynamic else self.size  # a fixed-shape export takes only its own

    def input_blob(self, image: np.ndarray, size: int | None = None) -> tuple[np.ndarray, Letterbox]:
        """The network input for a BGR frame looked at ``size`` px (default: the model's), and how it was made."""
        import cv2

        padded, box = letterbox(image, self.input_size(size), minimal=self.dynamic)
        return cv2.dnn.blobFromImage(padded, scalefactor=1 / 255, swapRB=True), box

    def predict(self, image: np.ndarray, conf: float, iou: float, size: int | None = None) -> BoxArrays:
        blob, box = self.input_blob(image, size)
        output = self.engine.run(blob)
        check_output(self.path, "ONNX detector", output.shape, self.output)  # a size the export left free
        xyxy, scores, classes = decode_yolo(output, conf, iou)
        # from network-input pixels back to the frame's, cut to the frame
        xyxy[:, [0, 2]] = ((xyxy[:, [0, 2]] - box.pad_x) / box.gain_x).clip(0, image.shape[1])
        xyxy[:, [1, 3]] = ((xyxy[:, [1, 3]] - box.pad_y) / box.gain_y).clip(0, image.shape[0])
        return xyxy, scores, classes


class OnnxCropModel:
    """Classification from an ONNX file with ONNX Runtime: crops as RGB, /255, CHW, exactly what ultralytics
    feeds YOLO-cls.

    Both ONNX backends classify with ONNX Runtime. OpenVINO was no faster in float32, its batches change shape
    with every frame (each a new network to compile), and in bfloat16 it lost cards on the black deck
    (models/HISTORY.md, Session 10).
    """

    def __init__(self, path: Path, imgsz: int, classes: int | None = None, what: str = "ONNX classifier") -> None:
        """``classes``: how many classes the manifest says the classifier names (its "none" too), checked against
        the file's output; None checks only the shapes' ranks."""
        self.engine = OnnxRuntimeEngine(path)
        self.path, self.what, self.output = path, what, (None, classes)
        check_shapes(path, self.engine, what, self.output)
        batch, _, height, width = self.engine.input_shape
        self.size = (height, width) if height is not None and width is not None else (imgsz, imgsz)
        self.fixed_batch = batch

    def input_blobs(self, crops: Sequence[np.ndarray]) -> Iterator[np.ndarray]:
        """The network inputs for BGR crops, one per inference, made as each is asked for: ``CROPS_PER_RUN`` at
        a time, or for a fixed-batch export (ultralytics' default) its batch size at a time, the last one padded
        with zeros."""
        import cv2

        step = self.fixed_batch or CROPS_PER_RUN
        for start in range(0, len(crops), step):
            chunk = list(crops[start : start + step])
            blob = cv2.dnn.blobFromImages(chunk, scalefactor=1 / 255, size=self.size[::-1], swapRB=True)
            if self.fixed_batch is not None and len(blob) < step:
                blob = np.concatenate([blob, np.zeros((step - len(blob), *blob.shape[1:]), blob.dtype)])
            yield blob

    def predict(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        if not crops:
            return np.zeros((0, 0), dtype=np.float32)
        outputs = [self.engine.run(blob) for blob in self.input_blobs(crops)]
        check_output(self.path, self.what, outputs[0].shape, self.output)  # a size the export left free
        return np.concatenate(outputs)[: len(crops)].astype(np.float32)
