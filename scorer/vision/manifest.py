"""The model directory and its ``manifest.json``: what is shipped, checked on load, written by training.

Where the model lives is decided once, by ``resolve_model_dir``: a directory given on the
command line, else ``$OKGIN_MODEL_DIR``, else the ``models/`` folder of the checkout this code
runs from. An installed wheel has no checkout, so there it must be told (a clear ``ModelError``
says how); nothing is ever downloaded.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scorer.cards import CLASS_NAMES, Card, InvalidCardError
from scorer.errors import OkginError
from scorer.files import why_not_a_folder
from scorer.vision.crops import AS_SHOWN, CROP_PAD, CROP_SIZE, Stretch, index_views
from scorer.vision.types import Box

BACKENDS: tuple[str, ...] = ("auto", "onnx", "openvino", "torch")
"""Accepted ``backend`` values; ``auto`` tries the others in this order."""

DESIGNS: tuple[str, ...] = ("two-stage", "one-stage")
MODEL_DIR_ENV = "OKGIN_MODEL_DIR"
MANIFEST = "manifest.json"

DEFAULT_CONF = 0.25
DEFAULT_IOU = 0.5  # corner indices of a fan barely overlap; 0.5 still removes double boxes on one index
DEFAULT_CLASSIFIER_CONF = 0.25
DEFAULT_NONE_CLASS = "none"


class ModelError(OkginError, RuntimeError):
    """A model that cannot be used: missing or corrupt files, a bad manifest, an unavailable backend."""


def checkout_model_dir() -> Path | None:
    """The ``models/`` folder of the source checkout this code runs from, or None when installed as a package."""
    root = Path(__file__).resolve().parents[2]
    return root / "models" if (root / "pyproject.toml").is_file() else None


def default_model_dir() -> Path:
    """Where the model is when none is named: ``$OKGIN_MODEL_DIR``, else the checkout's ``models/``.

    :raises ModelError: when neither exists (an installed package), saying how to point at the weights.
    """
    configured = os.environ.get(MODEL_DIR_ENV)
    if configured:
        return Path(configured)
    checkout = checkout_model_dir()
    if checkout is None:
        raise ModelError(
            f"no model directory: okgin is installed without its models/ folder; set {MODEL_DIR_ENV} to the "
            "folder holding manifest.json and the weights (the repository's models/), or pass --model DIR"
        )
    return checkout


def resolve_model_dir(model_dir: str | Path | None = None) -> Path:
    """The model directory: the argument, else ``default_model_dir()``.

    :raises ModelError: when none is given and there is no default.
    """
    return Path(model_dir) if model_dir is not None else default_model_dir()


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


MAX_STRETCH = 3.0
"""The most a manifest's ``stretches`` may widen a crop: past a 16:9 frame squeezed to a square (1.78) by far."""
MIN_LOOK_SIZE, MAX_LOOK_SIZE = 32, 4096
"""The sizes a manifest's detector may look at a frame at, in px: one stride of the network to a 4K frame (a
million px wide once asked for 3 TB)."""
MIN_CROP_SIZE, MAX_CROP_SIZE = 8, 512
"""The sides a classifier's crops may have, in px (the shipped one reads 64)."""

# manifest keys read into fields of the same name (``backend`` is ``preferred_backend``)
_FILE_KEYS = ("detector", "detector_onnx", "classifier", "classifier_onnx")
_SURE_KEYS = ("classifier_sure", "classifier_none_sure", "stand_in_sure", "veto_below")  # optional, in (0, 1]
_OPTIONAL_KEYS = (*_SURE_KEYS, "negative_below", "negative_look_after", "grain_median_above")  # written only when set
_KNOWN_KEYS = frozenset(
    {
        "design",
        *_FILE_KEYS,
        "detector_imgsz",
        "detector_coarse_sizes",
        "crop_size",
        "crop_pad",
        "extra_crop_pads",
        "classifier_rotations",
        "stretches",
        "veto_classifiers",
        *_OPTIONAL_KEYS,
        "names",
        "classifier_names",
        "none_class",
        "conf",
        "iou",
        "classifier_conf",
        "card_conf",
        "detector_weight",
        "backend",
    }
)


@dataclasses.dataclass(frozen=True)
class ModelManifest:
    """What ``manifest.json`` says is shipped: checked when built, read with ``load``, written with ``save``.

    ``provenance`` keeps every other key (``trained_on``, ``thresholds_chosen_on`` ...) as written.

    >>> manifest = ModelManifest(Path("m"), design="one-stage", detector_onnx="det.onnx")
    >>> ModelManifest.from_dict(manifest.to_dict(), Path("m")) == manifest
    True
    >>> manifest.replace(card_conf=0.4).card_conf
    0.4

    :raises ModelError: naming the manifest and the wrong field.
    """

    directory: Path
    design: str = "two-stage"
    detector: str | None = None
    detector_onnx: str | None = None
    detector_imgsz: int = 640
    detector_coarse_sizes: tuple[int, ...] = ()  # further, smaller looks at the frame: close-ups' big indices
    classifier: str | None = None
    classifier_onnx: str | None = None
    veto_classifiers: tuple[str, ...] = ()  # .pt (each .onnx beside it) that may veto a doubtful card (detector.py)
    crop_size: int = CROP_SIZE
    crop_pad: float = CROP_PAD
    extra_crop_pads: tuple[float, ...] = ()  # a box still unsure at crop_pad is cut at these too, readings averaged
    classifier_rotations: tuple[int, ...] = (0,)  # quarter turns of each crop whose class probabilities are averaged
    stretches: tuple[float, ...] = ()  # a doubtful frame's crops are tried this much wider and taller too (detector.py)
    classifier_sure: float | None = None  # a crop read this surely at its first turn is not read at the others
    classifier_none_sure: float | None = None  # nor one first read as no index at least this surely
    stand_in_sure: float | None = None  # a box read as no card gives way to another look's box read this surely
    veto_below: float | None = None  # a card read less surely than this is shown to them (None: every card)
    negative_below: float | None = None  # an index with a smaller light share is read in negative too (crops.py)
    negative_look_after: int | None = None  # this many sure light-on-dark boxes: the frame is looked at in negative
    grain_median_above: float | None = None  # a frame grainier than this (grain_level) is looked at median-filtered too
    names: tuple[str, ...] = CLASS_NAMES  # a one-stage detector's class names, in its class order
    classifier_names: tuple[str, ...] | None = None  # the classifier's, in its class order (default: names)
    none_class: str = DEFAULT_NONE_CLASS  # the classifier's "no card here" class
    conf: float = DEFAULT_CONF
    iou: float = DEFAULT_IOU
    classifier_conf: float = DEFAULT_CLASSIFIER_CONF
    card_conf: float = 0.0  # a merged card below this confidence is dropped
    detector_weight: float = 1.0  # exponent on the detector's score in a corner's confidence (see CornerEvidence)
    preferred_backend: str | None = None
    provenance: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    detector_classes: tuple[int | None, ...] = dataclasses.field(init=False, repr=False, compare=False)
    """One-stage detector class index -> ``Card.class_id``."""
    classifier_classes: tuple[int | None, ...] = dataclasses.field(init=False, repr=False, compare=False)
    """Classifier class index -> ``Card.class_id``; None = "no card here"."""

    def __post_init__(self) -> None:
        where = str(self.path)
        if self.design not in DESIGNS:
            raise ModelError(f"{where}: design {self.design!r} is not one of {', '.join(DESIGNS)}")
        if self.preferred_backend is not None and self.preferred_backend not in BACKENDS:
            raise ModelError(f"{where}: backend {self.preferred_backend!r} is not one of {', '.join(BACKENDS)}")
        try:
            detector_classes = (
                card_classes(self.names, self.none_class, "names") if self.design == "one-stage" else (None,)
            )
            classifier_names = self.names if self.classifier_names is None else self.classifier_names
            classifier_classes = card_classes(classifier_names, self.none_class, "classifier_names")
        except ValueError as error:
            raise ModelError(f"{where}: {error}") from None
        object.__setattr__(self, "detector_classes", detector_classes)
        object.__setattr__(self, "classifier_classes", classifier_classes)
        if not all(0 <= pad < 1 for pad in (self.crop_pad, *self.extra_crop_pads)):
            raise ModelError(f"{where}: crop_pad and extra_crop_pads must lie in 0..1 (a share of the box's side)")
        if not self.classifier_rotations or not set(self.classifier_rotations) <= {0, 90, 180, 270}:
            raise ModelError(f"{where}: classifier_rotations must list some of 0, 90, 180, 270 degrees")
        if not all(1 < factor <= MAX_STRETCH for factor in self.stretches):
            raise ModelError(f"{where}: stretches must lie above 1 and at most {MAX_STRETCH} (times wider or taller)")
        for key in _SURE_KEYS:
            value = getattr(self, key)
            if value is not None and not 0 < value <= 1:
                raise ModelError(f"{where}: {key} {value} is outside (0, 1]")
        if self.negative_below is not None and not 0 < self.negative_below < 1:
            raise ModelError(f"{where}: negative_below {self.negative_below} is outside (0, 1)")
        if self.negative_look_after is not None and (self.negative_look_after < 1 or self.negative_below is None):
            raise ModelError(f"{where}: negative_look_after must be 1 or more, and needs negative_below")
        if self.grain_median_above is not None and not self.grain_median_above > 0:
            raise ModelError(f"{where}: grain_median_above {self.grain_median_above} must be above 0 (grey levels)")
        if not 0 < self.detector_weight <= 1:
            raise ModelError(f"{where}: detector_weight {self.detector_weight} is outside (0, 1]")
        for key in ("conf", "iou", "classifier_conf", "card_conf"):
            if not 0 <= getattr(self, key) <= 1:  # nan too
                raise ModelError(f"{where}: {key} {getattr(self, key)} is outside [0, 1]")
        if not all(
            MIN_LOOK_SIZE <= size <= MAX_LOOK_SIZE for size in (self.detector_imgsz, *self.detector_coarse_sizes)
        ):
            raise ModelError(
                f"{where}: detector_imgsz and detector_coarse_sizes must lie in {MIN_LOOK_SIZE}..{MAX_LOOK_SIZE} px"
            )
        if not MIN_CROP_SIZE <= self.crop_size <= MAX_CROP_SIZE:
            raise ModelError(f"{where}: crop_size {self.crop_size} is outside {MIN_CROP_SIZE}..{MAX_CROP_SIZE} px")
        if not (self.detector or self.detector_onnx):
            raise ModelError(f"{where}: names no detector file (keys 'detector' / 'detector_onnx')")
        if self.design == "two-stage" and not (self.classifier or self.classifier_onnx):
            raise ModelError(f"{where}: a two-stage model needs a classifier ('classifier' / 'classifier_onnx')")
        if self.veto_classifiers and self.design != "two-stage":
            raise ModelError(f"{where}: veto_classifiers check a classifier, and a {self.design} model has none")

    @property
    def path(self) -> Path:
        """Where this manifest is (or will be) written."""
        return self.directory / MANIFEST

    @classmethod
    def load(cls, model_dir: str | Path | None = None) -> ModelManifest:
        """Read and check ``manifest.json`` in ``model_dir`` (see ``resolve_model_dir``).

        :raises ModelError: when the directory or manifest is missing or a field is wrong.
        """
        directory = resolve_model_dir(model_dir)
        path = directory / MANIFEST
        if not directory.is_dir():
            hint = f"; pass --model DIR or set {MODEL_DIR_ENV}" if model_dir is None else ""  # a folder named is one
            raise ModelError(f"model directory {str(directory)!r} {why_not_a_folder(directory)}{hint}")
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
        where = str(directory / MANIFEST)
        try:
            fields: dict[str, Any] = {
                "design": data.get("design", "two-stage"),
                **{key: _optional_str(data.get(key), key) for key in _FILE_KEYS},
                "veto_classifiers": _file_names(data.get("veto_classifiers", []), "veto_classifiers"),
                "detector_imgsz": int(data.get("detector_imgsz", 640)),
                "detector_coarse_sizes": tuple(int(size) for size in data.get("detector_coarse_sizes", ())),
                "crop_size": int(data.get("crop_size", CROP_SIZE)),
                "crop_pad": float(data.get("crop_pad", CROP_PAD)),
                "extra_crop_pads": tuple(float(pad) for pad in data.get("extra_crop_pads", ())),
                "classifier_rotations": tuple(int(turn) for turn in data.get("classifier_rotations", (0,))),
                "stretches": tuple(float(factor) for factor in data.get("stretches", ())),
                **{key: _optional_float(data.get(key)) for key in _SURE_KEYS},
                "negative_below": _optional_float(data.get("negative_below")),
                "negative_look_after": None
                if data.get("negative_look_after") is None
                else int(data["negative_look_after"]),
                "grain_median_above": _optional_float(data.get("grain_median_above")),
                "names": _names(data.get("names", CLASS_NAMES), "names"),
                "classifier_names": _names(data["classifier_names"], "classifier_names")
                if "classifier_names" in data
                else None,
                "none_class": str(data.get("none_class", DEFAULT_NONE_CLASS)),
                "conf": float(data.get("conf", DEFAULT_CONF)),
                "iou": float(data.get("iou", DEFAULT_IOU)),
                "classifier_conf": float(data.get("classifier_conf", DEFAULT_CLASSIFIER_CONF)),
                "card_conf": float(data.get("card_conf", 0.0)),
                "detector_weight": float(data.get("detector_weight", 1.0)),
                "preferred_backend": data.get("backend"),
            }
        except (TypeError, ValueError, OverflowError) as error:  # OverflowError: int() of an infinity (1e999)
            raise ModelError(f"{where}: {error}") from None
        provenance = {key: value for key, value in data.items() if key not in _KNOWN_KEYS}
        return cls(directory=directory, **fields, provenance=provenance)

    def to_dict(self) -> dict[str, Any]:
        """The manifest as ``manifest.json`` holds it (``from_dict`` reads it back)."""
        data: dict[str, Any] = {"design": self.design}
        data.update({key: getattr(self, key) for key in _FILE_KEYS if getattr(self, key)})
        if self.veto_classifiers:
            data["veto_classifiers"] = list(self.veto_classifiers)
        data.update(
            detector_imgsz=self.detector_imgsz,
            detector_coarse_sizes=list(self.detector_coarse_sizes),
            crop_size=self.crop_size,
            crop_pad=self.crop_pad,
        )
        if self.extra_crop_pads:
            data["extra_crop_pads"] = list(self.extra_crop_pads)
        data["classifier_rotations"] = list(self.classifier_rotations)
        if self.stretches:
            data["stretches"] = list(self.stretches)
        for key in _OPTIONAL_KEYS:
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.names != CLASS_NAMES:
            data["names"] = list(self.names)
        if self.classifier_names is not None:
            data["classifier_names"] = list(self.classifier_names)
        data.update(
            none_class=self.none_class,
            conf=self.conf,
            iou=self.iou,
            classifier_conf=self.classifier_conf,
            card_conf=self.card_conf,
            detector_weight=self.detector_weight,
        )
        if self.preferred_backend is not None:
            data["backend"] = self.preferred_backend
        return {**data, **self.provenance}

    def replace(self, **changes: Any) -> ModelManifest:
        """A copy with some fields changed, checked again.

        :raises ModelError: when the change makes the manifest wrong.
        """
        return dataclasses.replace(self, **changes)

    def save(self) -> Path:
        """Write ``manifest.json`` into the model directory (whole or not at all); returns its path."""
        self.directory.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".json.partial")
        partial.write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
        partial.replace(self.path)
        return self.path

    def index_views(
        self, image: np.ndarray, box: Box, pad: float | None = None, stretch: Stretch = AS_SHOWN
    ) -> list[np.ndarray]:
        """The classifier's inputs for one box of a BGR frame, cut as this model reads it: its ``index_views``
        at ``pad``, or by default at ``crop_pad`` and at each of ``extra_crop_pads`` (at ``stretch``).

        A second margin around the box is a second look at another zoom: a detector's box is drawn loose or
        tight, and the averaged readings of both cuts name more indices right than the first cut's alone
        (models/HISTORY.md, Session 12).
        """
        pads = (self.crop_pad, *self.extra_crop_pads) if pad is None else (pad,)
        return [
            view
            for each in pads
            for view in index_views(image, box, self.crop_size, each, self.negative_below, stretch)
        ]

    def file(self, name: str | None, what: str) -> Path:
        """The path of a shipped file, checked to exist.

        :raises ModelError: naming the missing path.
        """
        if not name:
            raise ModelError(f"{self.path} names no {what}")
        path = self.directory / name
        if not path.exists():
            raise ModelError(f"{what} {str(path)!r} is missing")
        return path

    def veto_files(self, kind: str) -> tuple[str, ...]:
        """The veto classifiers' files of ``kind``: "pt" as listed, "onnx" the same names with .onnx."""
        return tuple(name if kind == "pt" else str(Path(name).with_suffix(".onnx")) for name in self.veto_classifiers)

    def shipped(self, name: str | None) -> bool:
        """Whether the manifest names this file and it is there."""
        return bool(name) and (self.directory / str(name)).exists()

    def missing_files(self) -> list[str]:
        """The files this manifest names that are not in its folder, so that an error can say which."""
        named = [self.detector, self.detector_onnx, self.classifier, self.classifier_onnx]
        named += [*self.veto_files("pt"), *self.veto_files("onnx")]
        return [str(name) for name in named if name and not self.shipped(name)]


def _file_names(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, list) and all(isinstance(name, str) and name for name in value):
        return tuple(value)
    raise ValueError(f"{key} must be a list of file names, got {value!r}")


def _optional_str(value: Any, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"{key} must be a file name, got {value!r}")


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _names(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValueError(f"{key} must be a list of class names")
    return tuple(str(name) for name in value)
