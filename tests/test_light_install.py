"""The light install: ``pip install -e .`` leaves PyTorch and ultralytics out (they come with the
``train`` extra), so ``okgin serve`` and ``okgin detect`` must work without them, and the
commands that do need the extra must say so in one line.

Each test runs the real ``okgin`` command in a fresh interpreter whose import system refuses the
train extra's packages (ultralytics, torch, torchvision, matplotlib), as an environment
without the extra would; every refused import is reported on stderr, so for serve and detect even
an import that the code catches fails the test.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest
from conftest import (
    REFUSED_IMPORT,
    REPO_ROOT,
    TABLE_HANDS,
    TABLE_UPCARD,
    TRAIN_EXTRA_MODULES,
    card_f1,
    shipped_model_or_skip,
    table_scene,
    without_train_extra,
)

from scorer.cards import Card
from scorer.extras import TRAIN_EXTRA_INSTALL
from scorer.synth.scene import SceneConfig

OKGIN = "from scorer.cli import main\nmain(prog_name='okgin', args=sys.argv[1:])"
"""``okgin ARGS`` as a ``without_train_extra`` program."""

MIN_CARD_F1 = 0.9  # as test_shipped_model asks of the same table


def okgin_without_train_extra(*args: str) -> list[str]:
    """The command line of ``okgin ARGS`` as if installed without the train extra."""
    return without_train_extra(OKGIN, *args)


@pytest.fixture(scope="module")
def table_photo(scene_config: SceneConfig, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JPEG of two laid-down hands and the upcard (the shipped model reads it: see test_shipped_model)."""
    image, _ = table_scene(scene_config, 11, tilt=0.0)
    path = tmp_path_factory.mktemp("photo") / "table.jpg"
    cv2.imwrite(str(path), image)
    return path


def assert_reads_the_table(cards: list[dict[str, object]]) -> None:
    """``cards`` (JSON, as ``/api/detect`` and ``okgin detect --json`` give them) are the table's, near enough."""
    found = {Card.parse(str(card["card"])) for card in cards}
    expected = {*TABLE_HANDS[1], *TABLE_HANDS[2], TABLE_UPCARD}
    missed, invented = sorted(map(str, expected - found)), sorted(map(str, found - expected))
    assert card_f1(found, expected) >= MIN_CARD_F1, f"missed {missed}, invented {invented}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``okgin serve`` with the shipped model, started without the training stack; its base URL."""
    port = free_port()
    command = okgin_without_train_extra(
        "serve", "--port", str(port), "--data-dir", str(tmp_path / "data"), "--model", str(shipped_model_or_skip())
    )
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/", timeout=5).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    pytest.fail(f"okgin serve did not start: {process.communicate()}")
                time.sleep(0.2)
        yield base, process
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.model
@pytest.mark.slow
def test_serve_detects_cards_with_onnx_runtime_alone(
    server: tuple[str, subprocess.Popen[str]], table_photo: Path
) -> None:
    base, process = server
    request = urllib.request.Request(
        f"{base}/api/detect", data=table_photo.read_bytes(), headers={"Content-Type": "image/jpeg"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        assert answer.status == 200
        body = json.load(answer)
    assert_reads_the_table(body["cards"])
    process.terminate()
    _, stderr = process.communicate(timeout=10)
    assert REFUSED_IMPORT not in stderr, stderr


@pytest.mark.model
@pytest.mark.slow
def test_detect_command_reads_a_photo_with_onnx_runtime_alone(table_photo: Path) -> None:
    shipped = str(shipped_model_or_skip())
    run = subprocess.run(
        okgin_without_train_extra("detect", str(table_photo), "--json", "--model", shipped),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert_reads_the_table(json.loads(run.stdout)["cards"])
    assert REFUSED_IMPORT not in run.stderr, run.stderr


def okgin_fails_asking_for_the_train_extra(tmp_path: Path, *args: str) -> str:
    """Run ``okgin ARGS`` without the training stack; it must fail in one line naming the extra. Returns that line."""
    run = subprocess.run(okgin_without_train_extra(*args), capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode != 0
    message = run.stderr.replace(REFUSED_IMPORT, "").strip().splitlines()[-1]
    assert "Traceback" not in run.stderr and TRAIN_EXTRA_INSTALL in message, run.stderr
    return message


def test_training_asks_for_the_train_extra(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "images" / "train").mkdir(parents=True)
    message = okgin_fails_asking_for_the_train_extra(tmp_path, "train", "--data", str(tmp_path / "scenes"))
    assert "okgin train needs ultralytics" in message
    assert not (tmp_path / "runs").exists()
    args = ["train", "--stage", "quantize", "--data", str(tmp_path / "scenes"), "--init", str(tmp_path)]
    assert "okgin train --stage quantize needs onnx" in okgin_fails_asking_for_the_train_extra(tmp_path, *args)


def test_evaluation_plots_ask_for_the_train_extra(tmp_path: Path) -> None:
    photos = str(tmp_path)  # never read: the missing package is named before any work
    args = ["eval", "--images", photos, "--labels", photos, "--classes", photos, "--plots", str(tmp_path / "plots")]
    assert "okgin eval --plots needs matplotlib" in okgin_fails_asking_for_the_train_extra(tmp_path, *args)


@pytest.mark.model
def test_the_torch_backend_asks_for_the_train_extra(tmp_path: Path) -> None:
    photo = tmp_path / "blank.jpg"
    cv2.imwrite(str(photo), np.full((480, 640, 3), 90, np.uint8))
    args = ["detect", str(photo), "--backend", "torch", "--model", str(shipped_model_or_skip())]
    assert "the torch backend needs ultralytics" in okgin_fails_asking_for_the_train_extra(tmp_path, *args)


def test_the_light_install_declares_no_training_stack() -> None:
    """What ``pip install -e .`` installs, and the extra that brings the rest."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    light = {distribution_name(requirement) for requirement in project["dependencies"]}
    train = {distribution_name(requirement) for requirement in project["optional-dependencies"]["train"]}
    assert not light & set(TRAIN_EXTRA_MODULES)
    assert train == set(TRAIN_EXTRA_MODULES) - {"torchvision"}, "the modules the tests refuse are the train extra's"


def distribution_name(requirement: str) -> str:
    """``"torch>=2.2"`` -> ``"torch"``."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return match.group().lower()
