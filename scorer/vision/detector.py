"""The card detector: shipped model files in, one ``CardDetection`` per visible card out.

The model directory and its ``manifest.json`` are read by ``scorer.vision.manifest``; the
inference engines are in ``scorer.vision.backends`` (ONNX Runtime and OpenVINO run the ONNX
files and need neither torch nor ultralytics; the ``torch`` backend imports ultralytics when
built). A missing file is an error, never a download.

Two designs are supported (``manifest.json`` ``"design"``):

- ``"two-stage"``: a one-class YOLO detector finds corner indices on the letterboxed
  frame, each is cut from the full-resolution frame with ``corner_crop`` and all crops
  are classified in one batch by a 52-class YOLO-cls model;
- ``"one-stage"``: one 52-class YOLO detector whose classes are the cards.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scorer.cards import Card
from scorer.vision.backends import (
    BoxArrays,
    CropModel,
    available_backends,
    fit_within,
    grain_level,
    in_frame_pixels,
    load_backend,
    load_veto_classifiers,
)
from scorer.vision.boxes import FusedBoxes, box_from_row, fuse_looks
from scorer.vision.crops import AS_SHOWN, Stretch, light_share
from scorer.vision.manifest import BACKENDS, ModelError, ModelManifest
from scorer.vision.merge import merge_corners
from scorer.vision.sharpness import BLURRED, blurred, box_sharpness
from scorer.vision.types import Box, CornerEvidence, Detections, FrameNotRead

log = logging.getLogger(__name__)

NEGATIVE_LOOK_SCORE = 0.25
"""A detector box this sure is an index, not a speck of the table, when counting light-on-dark indices."""

STRETCH_DOUBT = 0.97
"""A frame whose surer half of cards (``surer_half``) is read less surely than this is tried at other stretches."""

STRETCH_MARGIN = 0.03
"""A stretch is taken only when its surer half of indices reads this much more surely than the frame as it is.
Chosen on the real photos (models/HISTORY.md, Session 35): without it the black deck read worse."""


MOST_BOXES_NAMED = 256
"""A frame's boxes beyond its detector's surest this many are not read. A table of four shows at most 52 cards of
up to four corners; the real photos and rendered tables gave the detector at most 87 boxes, a motion-blurred
1280x720 frame 191 (its smears boxed as indices: session 44's live probe), and each look at a frame may give 300.
Each box costs up to some twenty crops read (pads, views, turns, stand-ins), so this bounds what one frame can cost."""


def surer_half(probabilities: Sequence[float] | np.ndarray) -> float:
    """The mean of the larger half of ``probabilities`` (at least three of them; 0 for none): how surely a frame's
    plain indices are read, whatever its pips, court art and table add.

    >>> round(surer_half([0.2, 0.4, 0.9, 1.0, 0.8, 0.3]), 2)
    0.9
    """
    ordered = np.sort(np.asarray(probabilities, np.float32))
    return float(ordered[-max(3, len(ordered) // 2) :].mean()) if len(ordered) else 0.0


def surest_named(found: FusedBoxes) -> FusedBoxes:
    """The boxes of ``found`` that are read: the ``MOST_BOXES_NAMED`` the detector is surest of."""
    if len(found.scores) <= MOST_BOXES_NAMED:
        return found
    keep = np.zeros(len(found.scores), bool)
    keep[np.argsort(-found.scores, kind="stable")[:MOST_BOXES_NAMED]] = True
    return found.subset(keep)


class CardDetector:
    """Find the cards in a BGR frame with the shipped model.

    ``model_dir`` defaults to ``scorer.vision.manifest.default_model_dir()``;
    ``backend="auto"`` takes the manifest's preferred backend, else the fastest usable one
    (``available_backends``), and the next when one cannot load the files; ``conf`` overrides the
    manifest's detection threshold.

    :raises ModelError: when the model is missing, corrupt or the backend is not shipped.
    """

    def __init__(self, model_dir: str | Path | None = None, backend: str = "auto", conf: float | None = None) -> None:
        if backend not in BACKENDS:
            raise ModelError(f"unknown backend {backend!r}: choose one of {', '.join(BACKENDS)}")
        if conf is not None and not 0 <= conf <= 1:
            raise ModelError(f"confidence threshold {conf} is outside 0..1")
        self.manifest = manifest = ModelManifest.load(model_dir)
        self.conf = manifest.conf if conf is None else conf
        candidates = [backend]
        if backend == "auto":
            candidates = available_backends(manifest)
            if not candidates:
                missing = manifest.missing_files()
                why = f"its manifest.json names {', '.join(missing)}, not there" if missing else "see its manifest.json"
                raise ModelError(f"no usable model files in {str(manifest.directory)!r}: {why}")
            candidates.sort(key=lambda name: name != manifest.preferred_backend)  # the manifest's first, if usable
        errors = []
        for name in candidates:  # auto falls back to the next engine if one cannot load the files here
            try:
                self.boxes, self.classifier = load_backend(manifest, name)
                self.veto_classifiers: list[CropModel] = load_veto_classifiers(manifest, name)
            except ModelError as error:
                errors.append(error)
                if name != candidates[-1]:
                    log.warning("the %s backend cannot run this model (%s); trying the next", name, error)
                continue
            self.backend_name: str = name
            return
        raise errors[0]

    def find_corners(self, image_bgr: np.ndarray) -> BoxArrays:
        """Stage one: every corner index the detector finds (boxes in frame pixels, scores, model classes).

        :raises ValueError: for a frame that is not a BGR image (see ``check_frame``).
        """
        return self.find_boxes(image_bgr).arrays

    def find_boxes(self, image_bgr: np.ndarray) -> FusedBoxes:
        """Stage one as ``read_corners`` takes it: ``find_corners``'s boxes, each with the boxes other looks at
        the frame found for the same index (``FusedBoxes.stand_ins``).

        :raises ValueError: for a frame that is not a BGR image (see ``check_frame``).
        """
        check_frame(image_bgr)
        manifest = self.manifest
        # A close-up's index can be a third of the frame: at the detector's size it is bigger than anything it
        # learned from, while a coarser look (a quarter of the work at half the size) sees it at a familiar size.
        looks = [look for size in (None, *manifest.detector_coarse_sizes) for look in self.looks(image_bgr, size)]
        found = fuse_looks(looks, manifest.iou) if len(looks) > 1 else FusedBoxes.of(looks[0])
        if not self.light_on_dark(image_bgr, found.arrays):
            return found
        # A deck printed light on dark faces: the detector learned mostly dark ink on light cards, and finds far
        # more of its indices in the frame's negative.
        return fuse_looks([found, *self.looks(np.invert(image_bgr))], manifest.iou)

    def look_stretched(self, image_bgr: np.ndarray, found: FusedBoxes, stretch: Stretch) -> FusedBoxes:
        """``found`` with the boxes of one more look at the frame made ``stretch`` wider and taller (at the
        detector's own size, and in negative too for a deck printed light on dark), in the frame's pixels.

        Where the classifier reads a frame best stretched (``frame_stretch``: a frame squeezed by a resize to a
        square), the detector, which learned indices as printed, finds more of them in the frame as it was shot:
        the poker deck narrowed to 0.56 of its width found 8 cards more so (models/HISTORY.md, Session 36).
        """
        negatives = (False, True) if self.light_on_dark(image_bgr, found.arrays) else (False,)
        looks = [look for negative in negatives for look in self.looks(image_bgr, stretch=stretch, negative=negative)]
        return fuse_looks([found, *looks], self.manifest.iou)

    def looks(
        self, image_bgr: np.ndarray, size: int | None = None, stretch: Stretch = AS_SHOWN, negative: bool = False
    ) -> list[BoxArrays]:
        """The detector's boxes (in frame pixels) for a look at a frame ``size`` px across (default: its own), made
        ``stretch`` wider and taller first and, with ``negative``, looked at in negative once fitted.

        A bigger frame is shrunk to that size here (``fit_within``). At the detector's own size, where the frame's
        grain is above the manifest's ``grain_median_above`` (``grain_level``), the detector looks at it
        median-filtered as well, and both looks' boxes are given: a webcam's sensor noise and dead pixels, at a
        small frame's own scale, hid big plain indices from the detector, which learned on tiles whose noise
        shrinking had averaged away. On grainy rendered scenes the filtered look alone found fewer cards than
        the plain one, the two together more. A coarser look is not filtered: shrinking averages the grain, and
        at half the size the estimate counts a table's texture as grain (models/HISTORY.md, Session 19).
        """
        import cv2

        fitted = fit_within(image_bgr, self.boxes.input_size(size), grow=False, stretch=stretch)
        if negative:
            fitted = np.invert(fitted)
        shown = [fitted]
        limit = self.manifest.grain_median_above
        if size is None and limit is not None and grain_level(fitted) > limit:
            shown.append(cv2.medianBlur(fitted, 3))
        looks = []
        for frame in shown:
            xyxy, scores, classes = self.boxes.predict(frame, self.conf, self.manifest.iou, size)
            looks.append((in_frame_pixels(xyxy, frame, image_bgr), scores, classes))
        return looks

    def light_on_dark(self, image_bgr: np.ndarray, found: BoxArrays) -> bool:
        """Whether the frame shows a deck printed light on dark: ``negative_look_after`` of the boxes found
        score ``NEGATIVE_LOOK_SCORE`` or more and are light on dark (``light_share``)."""
        needed, below = self.manifest.negative_look_after, self.manifest.negative_below
        if needed is None or below is None:
            return False
        xyxy, scores, _ = found
        sure = (box_from_row(row) for row, score in zip(xyxy, scores, strict=True) if score >= NEGATIVE_LOOK_SCORE)
        return sum(light_share(image_bgr, box) < below for box in sure) >= needed

    def name_frame_boxes(
        self, image_bgr: np.ndarray, boxes: Sequence[Box]
    ) -> tuple[list[tuple[Card | None, float]], Stretch]:
        """Stage two as inference runs it: ``name_boxes`` at the stretch the frame reads best (``frame_stretch``),
        and that stretch."""
        named = self.name_boxes(image_bgr, boxes)
        stretch = self.frame_stretch(image_bgr, boxes, named)
        return (named, stretch) if stretch == AS_SHOWN else (self.name_boxes(image_bgr, boxes, stretch), stretch)

    def frame_stretch(
        self, image_bgr: np.ndarray, boxes: Sequence[Box], named: Sequence[tuple[Card | None, float]]
    ) -> Stretch:
        """How much wider or taller the frame's crops read best: as it shows them, unless the manifest lists
        ``stretches``, the frame's boxes as ``named`` are in doubt (their surer half of cards under
        ``STRETCH_DOUBT``), and at one of the stretches, each way, the surer half of the boxes' first views,
        read once, beats the frame as it is by ``STRETCH_MARGIN``.

        A frame resized without its aspect ratio (a 16:9 webcam frame stretched to a square, as photo datasets
        are) squeezes every index alike, and the classifier, though it learned squeezed indices too, names far
        fewer of them: the poker deck's photos narrowed to 0.56 of their width lost a fifth of their cards, and
        a third of those came back read at the stretches tried (models/HISTORY.md, Session 35). A sure frame
        costs nothing more; a doubtful one a reading of each box's first view at each stretch, in one batch.
        """
        manifest = self.manifest
        if not manifest.stretches or not boxes or self.classifier is None:
            return AS_SHOWN
        if surer_half([probability for card, probability in named if card is not None]) >= STRETCH_DOUBT:
            return AS_SHOWN
        stretches = [AS_SHOWN, *((factor, 1.0) for factor in manifest.stretches)]
        stretches += [(1.0, factor) for factor in manifest.stretches]
        pad = manifest.crop_pad
        crops = [manifest.index_views(image_bgr, box, pad, each)[0] for each in stretches for box in boxes]
        readings = self.classifier.predict(crops).reshape(len(stretches), len(boxes), -1)
        cards = np.array([class_id is not None for class_id in manifest.classifier_classes])
        sureness = [surer_half(reading[:, cards].max(axis=1)) for reading in readings]
        best = int(np.argmax(sureness))
        return stretches[best] if sureness[best] - sureness[0] >= STRETCH_MARGIN else AS_SHOWN

    def name_boxes(
        self, image_bgr: np.ndarray, boxes: Sequence[Box], stretch: Stretch = AS_SHOWN
    ) -> list[tuple[Card | None, float]]:
        """Stage two: what the classifier reads in each box, cut from the frame (at ``stretch``) as inference
        cuts it.

        Per box, the card it names (None for its no-card class) and that class's probability, averaged over the
        box's readings. A box is cut at ``crop_pad`` first; one its readings leave unsettled (``_settled``) is cut
        at each of ``extra_crop_pads`` as well, and read again: a sure reading rarely changes, and most boxes are
        sure. Of each cut's views (``index_views``: a light-on-dark index in negative first, then as printed) the
        first is read, and the others only where it leaves the box unsettled: a black deck's index is mostly
        read surely in negative, and its printed view then changed no yardstick figure (models/HISTORY.md,
        Session 13).

        :raises ModelError: for a one-stage model, which has no classifier.
        """
        if self.classifier is None:
            raise ModelError(f"the {self.manifest.design} model in {str(self.manifest.directory)!r} has no classifier")
        manifest = self.manifest
        totals = np.zeros((len(boxes), len(manifest.classifier_classes)), np.float32)
        counts = np.zeros((len(boxes), 1), np.float32)
        todo = np.arange(len(boxes))
        first_views: list[np.ndarray] = []  # every box's first view at crop_pad: what a veto is shown
        for number, pad in enumerate((manifest.crop_pad, *manifest.extra_crop_pads)):
            if number:
                todo = todo[~self._settled(totals[todo] / counts[todo])]
            if not len(todo):
                break
            views = [manifest.index_views(image_bgr, boxes[int(index)], pad, stretch) for index in todo]
            cut = [box_views[0] for box_views in views]
            if not number:
                first_views = cut
            first = self._classify(cut)
            totals[todo] += first
            counts[todo] += 1
            again = [(todo[row], crop) for row in np.flatnonzero(~self._settled(first)) for crop in views[row][1:]]
            if again:  # each further view's reading is added to its box's
                owners = [index for index, _ in again]
                np.add.at(totals, owners, self._classify([crop for _, crop in again]))
                np.add.at(counts, owners, 1)
        readings = totals / counts  # every box has a reading of its first cut at least
        if self.veto_classifiers:
            self._veto(readings, first_views)
        named = []
        for probabilities in readings:
            best = int(probabilities.argmax())
            class_id = manifest.classifier_classes[best]
            named.append((None if class_id is None else Card.from_class_id(class_id), float(probabilities[best])))
        return named

    def _veto(self, readings: np.ndarray, first_views: Sequence[np.ndarray]) -> None:
        """Let the veto classifiers lower, in place, the belief in each card read less surely than ``veto_below``:
        to their mean with the classifier's where that is lower, the card's name kept. ``first_views`` are the
        boxes' first views at ``crop_pad``, as the classifier read them first.

        A classifier taught hard negatives (keyboards seen edge-on) reads the classifier's doubtful false cards
        on them as no card, but it reads suits worse (spades as clubs), and averaged with the classifier, in
        weights or in readings, it cost the poker deck's and the webcam-like photos' suits (models/HISTORY.md,
        Session 31). A veto alone takes no name from the classifier, and asked once a doubtful box, at its
        first cut and turn, it costs little: most boxes are read surely, as a card or as none.
        """
        manifest = self.manifest
        if None not in manifest.classifier_classes:
            return
        none = manifest.classifier_classes.index(None)
        below = manifest.veto_below
        doubtful = readings.argmax(axis=1) != none
        if below is not None:
            doubtful &= readings.max(axis=1) < below
        rows = np.flatnonzero(doubtful)
        if not rows.size:
            return
        turn = manifest.classifier_rotations[0]
        views = [_turned(first_views[row], turn) for row in rows.tolist()]
        card_belief = 1 - readings[rows, none]
        others = [1 - veto.predict(views)[:, none] for veto in self.veto_classifiers]
        vetoed = np.minimum(card_belief, np.mean([card_belief, *others], axis=0))
        readings[rows] *= (vetoed / np.maximum(card_belief, 1e-9))[:, None]
        readings[rows, none] = 1 - vetoed

    def read_corners(self, image_bgr: np.ndarray, found: BoxArrays | FusedBoxes | None = None) -> list[CornerEvidence]:
        """Every corner index found and named, with the two stages' scores kept apart.

        ``found`` is stage one's answer (``find_boxes``, or ``find_corners`` without stand-ins) for this frame,
        when the caller has it already. A box the classifier reads as no card, or too unsurely, gives way to the
        best of its stand-ins that it reads as a card at least ``stand_in_sure`` surely: the box another look
        drew around the whole index where the kept one holds only its pip (models/HISTORY.md, Session 16). A frame
        read best stretched (``name_frame_boxes``) is looked at once more so (``look_stretched``), and the boxes
        that look adds are named at that stretch too. Only the ``MOST_BOXES_NAMED`` boxes the detector is surest of
        are read.
        """
        manifest = self.manifest
        fused = surest_named(self.find_boxes(image_bgr) if found is None else FusedBoxes.of(found))
        boxes = [box_from_row(row) for row in fused.xyxy]
        if self.classifier is None:
            return [
                CornerEvidence(Card.from_class_id(class_id), box, float(score), 1.0)
                for box, score, k in zip(boxes, fused.scores, fused.classes, strict=True)
                if (class_id := manifest.detector_classes[int(k)]) is not None
            ]
        named, stretch = self.name_frame_boxes(image_bgr, boxes)
        if stretch != AS_SHOWN:
            fused = self.look_stretched(image_bgr, fused, stretch)
            read = dict(zip(boxes, named, strict=True))
            boxes = [box_from_row(row) for row in fused.xyxy]
            new = [box for box in boxes if box not in read]
            read.update(zip(new, self.name_boxes(image_bgr, new, stretch) if new else [], strict=True))
            named = [read[box] for box in boxes]
        corners: list[CornerEvidence | None] = [
            # the classifier's "none" class vetoes a detector false alarm; a weak label is dropped, not guessed
            CornerEvidence(card, box, float(score), probability)
            if card is not None and probability >= manifest.classifier_conf
            else None
            for box, score, (card, probability) in zip(boxes, fused.scores, named, strict=True)
        ]
        if manifest.stand_in_sure is not None:
            self._read_stand_ins(image_bgr, fused, corners, manifest.stand_in_sure, stretch)
        return [corner for corner in corners if corner is not None]

    def _read_stand_ins(
        self,
        image_bgr: np.ndarray,
        fused: FusedBoxes,
        corners: list[CornerEvidence | None],
        sure: float,
        stretch: Stretch = AS_SHOWN,
    ) -> None:
        """Fill each vetoed box's place in ``corners`` with its best stand-in read as a card ``sure``ly or
        more (by fused confidence), all stand-ins read in one batch."""
        vetoed = [place for place, corner in enumerate(corners) if corner is None]
        asked = [(place, stand_in) for place in vetoed for stand_in in fused.stand_ins[place]]
        if not asked:
            return
        weight, least = self.manifest.detector_weight, max(self.manifest.classifier_conf, sure)
        readings = self.name_boxes(image_bgr, [box for _, (box, _) in asked], stretch)
        for (place, (box, score)), (card, probability) in zip(asked, readings, strict=True):
            if card is None or probability < least:
                continue
            stand_in = CornerEvidence(card, box, score, probability)
            current = corners[place]
            if current is None or stand_in.detection(weight).confidence > current.detection(weight).confidence:
                corners[place] = stand_in

    def _classify(self, crops: list[np.ndarray]) -> np.ndarray:
        """Class probabilities per crop, averaged over the manifest's rotations of it.

        The classifier was trained on indices at every angle (cards lie any way round), so a
        turned crop is the same card; averaging its readings steadies a glyph it half-knows.
        A crop settled by its first turn keeps that reading and only the others are read again,
        turned: one read at least ``classifier_sure`` surely (on a table most indices are plain,
        and the turns were most of the classifier's time), and one first read as no index at least
        ``classifier_none_sure`` surely (most are the detector's false alarms, and turning can only
        make one of them a card). Without either, every turn of every crop goes through in one batch.
        """
        assert self.classifier is not None
        manifest = self.manifest
        turns, sure, none_sure = manifest.classifier_rotations, manifest.classifier_sure, manifest.classifier_none_sure
        if not crops:
            return np.zeros((0, len(manifest.classifier_classes)), np.float32)
        if (sure is None and none_sure is None) or len(turns) == 1:
            batch = [_turned(crop, turn) for turn in turns for crop in crops]
            return self.classifier.predict(batch).reshape(len(turns), len(crops), -1).mean(axis=0)
        readings = self.classifier.predict([_turned(crop, turns[0]) for crop in crops])
        unsure = np.flatnonzero(~self._settled(readings))
        if len(unsure):
            batch = [_turned(crops[index], turn) for turn in turns[1:] for index in unsure]
            again = self.classifier.predict(batch).reshape(len(turns) - 1, len(unsure), -1)
            readings[unsure] = (readings[unsure] + again.sum(axis=0)) / len(turns)
        return readings

    def _settled(self, readings: np.ndarray) -> np.ndarray:
        """Which rows of class probabilities need no further reading: a card read at least ``classifier_sure``
        surely, or no index at least ``classifier_none_sure`` surely (neither, for a manifest without them)."""
        manifest = self.manifest
        sure, none_sure = manifest.classifier_sure, manifest.classifier_none_sure
        settled = readings.max(axis=1) >= (sure if sure is not None else np.inf)
        if none_sure is not None and None in manifest.classifier_classes:
            none = manifest.classifier_classes.index(None)
            settled |= (readings.argmax(axis=1) == none) & (readings[:, none] >= none_sure)
        return settled

    def detect(self, image_bgr: np.ndarray) -> Detections:
        """The cards in a BGR frame, each once (corners merged), with one-deck conflicts."""
        height, width = image_bgr.shape[:2]
        return self.cards_from(self.read_corners(image_bgr), width, height)

    def detect_live(self, image_bgr: np.ndarray) -> Detections:
        """``detect`` for a live camera's frame, which is not read where the boxes it would read are smeared
        (``scorer.vision.sharpness.blurred``): the camera was moving.

        Such a frame cost the classifier up to 38 times a sharp frame's crops (session 44's bumped probe frame: 5,965
        against 130 to 192), seconds of the CPU that every other table waits for, and read next to nothing; the
        camera still again, the next frame is read. Judging costs the boxes cut once more, in grey (a few percent of
        a sharp frame's time). A photo is read whatever its sharpness (``detect``): it is taken once, and some
        blurred photos are read well. A frame read gives what ``detect`` gives.

        :raises FrameNotRead: for a blurred frame, saying so in the players' words.
        """
        found = self.find_boxes(image_bgr)
        boxes = [box_from_row(row) for row in surest_named(found).xyxy]
        if blurred(box_sharpness(image_bgr, boxes, self.manifest.crop_size, self.manifest.crop_pad)):
            raise FrameNotRead(BLURRED)
        height, width = image_bgr.shape[:2]
        return self.cards_from(self.read_corners(image_bgr, found), width, height)

    def cards_from(self, corners: Sequence[CornerEvidence], width: int, height: int) -> Detections:
        """The cards that named corners of a ``width`` x ``height`` frame show: fused with the manifest's
        detector weight, merged one per card, and kept above its card threshold."""
        manifest = self.manifest
        fused = [corner.detection(manifest.detector_weight) for corner in corners]
        cards, conflicts = merge_corners(fused, min_confidence=manifest.card_conf)
        return Detections(tuple(cards), tuple(conflicts), width, height)

    def __repr__(self) -> str:
        return f"CardDetector({str(self.manifest.directory)!r}, backend={self.backend_name!r}, conf={self.conf})"


def _turned(crop: np.ndarray, degrees: int) -> np.ndarray:
    """``crop`` turned anticlockwise by a multiple of 90 degrees, contiguous for the batch."""
    return np.ascontiguousarray(np.rot90(crop, k=degrees // 90))


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
