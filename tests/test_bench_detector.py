"""The detector benchmark times the models it compares frame by frame in turn, so that a machine slowing down
part-way (this one's speed drifts within a run) slows them all alike and their ratio holds; and it says which
decks its frames show, since unfamiliar index styles take far longer to read than packaged decks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import FakeDetector, detection

from scorer.vision.detector import CardDetector

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_detector import benchmark_frames, plain_design, time_against_frames, time_detectors


class Recording(FakeDetector):
    """A fake detector that writes its name into a shared log at each frame."""

    def __init__(self, name: str, log: list[str], cards: int) -> None:
        super().__init__([[detection(code, (100 * i + 50, 100)) for i, code in enumerate(["7C", "8D", "9H"][:cards])]])
        self.name, self.log = name, log

    def detect(self, image_bgr: np.ndarray) -> Any:
        self.log.append(self.name)
        return super().detect(image_bgr)


def test_the_models_take_each_frame_in_turn() -> None:
    log: list[str] = []
    frames = [np.zeros((8, 8, 3), np.uint8)] * 5
    results = time_detectors([Recording("model", log, 3), Recording("plain", log, 1)], frames, warmup=1)  # type: ignore[list-item]
    assert log == ["model", "plain"] * 6  # one warm-up frame, then five timed, alternating
    assert [cards for _, _, cards in results] == [3, 1]
    assert all(0 <= median <= p90 for median, p90, _ in results)


def test_the_plain_design_reads_once_with_the_same_networks(tiny_models: Path) -> None:
    detector = CardDetector(tiny_models / "two-stage")
    detector.manifest = detector.manifest.replace(
        detector_coarse_sizes=(320,), classifier_rotations=(0, 90, 180, 270), classifier_sure=0.98
    )
    plain = plain_design(detector)
    assert (plain.boxes, plain.classifier) == (detector.boxes, detector.classifier)
    assert (plain.manifest.detector_coarse_sizes, plain.manifest.classifier_rotations) == ((), (0,))
    assert detector.manifest.classifier_rotations == (0, 90, 180, 270)  # the model timed beside it is untouched


def test_the_frames_show_the_decks_asked_for_and_say_so(
    faces_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packaged, shown = benchmark_frames(1, "packaged", faces_dir)
    assert shown == "rendered table scenes of packaged decks" and packaged[0].shape == (720, 1280, 3)
    procedural, shown = benchmark_frames(1, "procedural", faces_dir)
    assert shown == "rendered table scenes of procedural decks" and not np.array_equal(procedural[0], packaged[0])
    dark, shown = benchmark_frames(1, "dark", faces_dir)
    assert shown == "rendered table scenes of procedural decks printed light on dark faces"
    assert not np.array_equal(dark[0], procedural[0])
    _, shown = benchmark_frames(1, "packaged", tmp_path)  # nothing rendered there
    assert shown == "rendered table scenes of procedural decks"
    assert "no packaged deck rendered here" in capsys.readouterr().err


def test_the_cpu_is_named_with_what_openvino_computes_in_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import bench_detector

    monkeypatch.setattr(bench_detector, "openvino_cpu", lambda: ("Some CPU", ("FP32", "BF16")))
    assert bench_detector.describe_cpu() == "Some CPU (OpenVINO computes in FP32, BF16)"
    monkeypatch.setattr(bench_detector, "openvino_cpu", lambda: None)
    assert bench_detector.describe_cpu().endswith("(OpenVINO not installed)")


def test_openvino_names_this_cpu_and_its_number_formats() -> None:
    from scorer.vision.backends import openvino_cpu, openvino_has_bfloat16

    cpu = openvino_cpu()
    assert cpu is not None, "openvino is a dependency of the plain install"
    name, formats = cpu
    assert name and "FP32" in formats
    assert openvino_has_bfloat16() == ("BF16" in formats)


def test_changed_frames_are_timed_in_turn_with_the_frames_as_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[int] = []

    class Seeing:
        def detect(self, image_bgr: np.ndarray) -> None:
            seen.append(int(image_bgr[0, 0, 0]))

    frames, grainy = [np.zeros((8, 8, 3), np.uint8)] * 3, [np.full((8, 8, 3), 9, np.uint8)] * 3
    time_against_frames(Seeing(), frames, grainy, "with grain (looked at filtered too on 3")  # type: ignore[arg-type]
    assert seen == [0, 9] * 3
    assert "the frames with grain (looked at filtered too on 3 of 3): " in capsys.readouterr().out


def test_every_backend_is_timed_in_one_rotation(
    tiny_models: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Backends timed one after another on a shared machine read 1.46 times apart one way and 1.35 the other when
    timed again: so every backend's model and plain design take each frame in one rotation, and each row says its
    time over the default backend's."""
    import bench_detector

    rotations: list[list[str]] = []

    def recorded(detectors: list[CardDetector], frames: list[np.ndarray]) -> list[tuple[float, float, float]]:
        rotations.append([detector.backend_name for detector in detectors])
        return [(10.0 * (1 + index // 2), 20.0, 1.0) for index in range(len(detectors))]

    monkeypatch.setattr(bench_detector, "time_detectors", recorded)
    monkeypatch.setattr(
        bench_detector, "benchmark_frames", lambda count, decks: ([np.zeros((72, 128, 3), np.uint8)], "x")
    )
    monkeypatch.setattr(bench_detector, "time_light_on_dark", lambda detector, frames: None)
    monkeypatch.setattr(bench_detector, "time_grainy", lambda detector, frames: None)
    assert bench_detector.main(["--model", str(tiny_models / "two-stage"), "--frames", "1", "--no-eval"]) == 0
    backends = bench_detector.available_backends(bench_detector.ModelManifest.load(tiny_models / "two-stage"))
    assert len(backends) > 1
    assert rotations == [[backend for backend in backends for _ in ("model", "plain")]]
    rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.split()[:1] == [backends[1]]]
    assert rows and rows[0][-1] == "2.00"  # its 20 ms over the default's 10
