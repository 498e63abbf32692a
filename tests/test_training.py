"""The training recipe runs end to end on a handful of generated scenes: tiles, crops,
both stages, resume, ONNX export and the manifest the detector reads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from scorer.cards import CLASS_NAMES
from scorer.cli import main
from scorer.synth.scene import SceneConfig
from scorer.training import (
    CLASSIFIER_NONE_SURE,
    CLASSIFIER_SURE,
    CROP_SIZE,
    EXTRA_CROP_PADS,
    GRAIN_MEDIAN_ABOVE,
    MINED_MARKER,
    MODEL_FILES,
    NEGATIVE_LOOK_AFTER,
    NONE_CLASS,
    TILE_SIZE,
    TrainConfig,
    TrainingError,
    make_classifier_crops,
    make_detector_tiles,
    mine_detector_tiles,
    mine_hard_negatives,
    noisy_at_detector_scale,
    read_split,
    train,
    train_stage,
)
from scorer.vision.boxes import FusedBoxes
from scorer.vision.crops import NEGATIVE_BELOW
from scorer.vision.detector import CardDetector
from scorer.vision.manifest import ModelManifest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory, scene_config: SceneConfig) -> Path:
    from scorer.synth.dataset import write_dataset

    root = tmp_path_factory.mktemp("scenes")
    write_dataset(root, count=8, seed=3, val_fraction=0.25, config=scene_config)
    return root


def test_tiles_are_cut_at_inference_scale_with_one_class(scenes: Path, tmp_path: Path) -> None:
    yaml_path = make_detector_tiles(scenes, tmp_path / "tiles", tiles_per_image=2, seed=1)
    assert "0: corner" in yaml_path.read_text()
    labels = list((tmp_path / "tiles" / "labels" / "train").glob("*.txt"))
    assert len(labels) == 2 * 6
    rows = [line.split() for path in labels for line in path.read_text().splitlines()]
    assert rows, "tiles centred on corners must hold labelled corners"
    assert {row[0] for row in rows} == {"0"}
    assert all(0 <= float(value) <= 1 for row in rows for value in row[1:])
    from PIL import Image

    sizes = {Image.open(path).size for path in (tmp_path / "tiles" / "images" / "train").glob("*.jpg")}
    assert all(max(size) <= TILE_SIZE for size in sizes)


def test_some_scenes_tiles_are_noisy_at_the_detectors_scale(scenes: Path, tmp_path: Path) -> None:
    import cv2
    import numpy as np

    plain = make_detector_tiles(scenes, tmp_path / "plain", seed=1, noise_share=0).parent
    noisy = make_detector_tiles(scenes, tmp_path / "noisy", seed=1, noise_share=1).parent
    names = sorted(path.name for path in (plain / "labels" / "train").glob("*.txt"))
    assert names == sorted(path.name for path in (noisy / "labels" / "train").glob("*.txt"))
    for name in names:  # the same tiles, labelled the same, only grainier
        assert (plain / "labels" / "train" / name).read_text() == (noisy / "labels" / "train" / name).read_text()
    grain = []
    for folder in (plain, noisy):
        tiles = [
            cv2.imread(str(path), cv2.IMREAD_GRAYSCALE).astype(np.float32)
            for path in sorted((folder / "images" / "train").glob("*.jpg"))
        ]
        grain.append(np.mean([np.abs(tile - cv2.medianBlur(tile.astype(np.uint8), 3)).mean() for tile in tiles]))
    assert grain[1] > 1.5 * grain[0]


def test_noise_at_the_detectors_scale_keeps_the_picture() -> None:
    import numpy as np

    flat = np.full((64, 64, 3), 128, np.uint8)
    noisy = noisy_at_detector_scale(flat, np.random.default_rng(3))
    assert noisy.dtype == np.uint8 and noisy.shape == flat.shape
    assert abs(float(noisy.mean()) - 128) < 6  # grain around the same grey, not a different picture


def test_crops_hold_every_labelled_corner_and_negatives(scenes: Path, tmp_path: Path) -> None:
    make_classifier_crops(scenes, tmp_path / "crops", crops_per_corner=1, negatives_per_image=3)
    labelled = sum(
        min(x2 - x1, y2 - y1) >= 7.0 for item in read_split(scenes, "train") for x1, y1, x2, y2 in item.boxes
    )
    written = {name: sorted((tmp_path / "crops" / "train" / name).glob("*.png")) for name in (*CLASS_NAMES, NONE_CLASS)}
    seconds = [path for paths in written.values() for path in paths if path.stem.endswith("_v1")]
    # a light-on-dark index is written in negative and as printed, side by side: both readings inference may make
    assert all(path.with_name(path.name.replace("_v1", "")).exists() for path in seconds)
    cards = sum(len(written[name]) for name in CLASS_NAMES) - sum(path.parent.name != NONE_CLASS for path in seconds)
    assert cards == labelled
    assert len(written[NONE_CLASS]) - sum(path.parent.name == NONE_CLASS for path in seconds) == 3 * 6


def test_the_recipe_runs_resumes_and_ships(scenes: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    models = tmp_path / "models"
    config = TrainConfig(
        scenes, run, detector_epochs=1, classifier_epochs=1, batch=4, tiles_per_image=1, crops_per_corner=1,
        ship_dir=models, provenance={"trained_on": "eight test scenes"},
    )  # fmt: skip
    said: list[str] = []
    result = train(config, log=said.append)  # no command line needed
    assert said[:2] == ["cutting detector tiles ...", "cutting classifier crops ..."]
    assert result.manifest == models / "manifest.json"
    manifest = json.loads((models / "manifest.json").read_text())
    assert manifest["design"] == "two-stage" and manifest["trained_on"] == "eight test scenes"
    assert sorted(manifest["classifier_names"]) == sorted([*CLASS_NAMES, NONE_CLASS])
    for key in ("detector", "detector_onnx", "classifier", "classifier_onnx"):
        assert (models / manifest[key]).stat().st_size > 100_000
    # the shipped copy's card threshold was chosen for these weights on the val scenes
    assert result.tuning is not None
    chosen = manifest["thresholds_chosen_on"]
    assert chosen["scenes"] == str(scenes) and chosen["images"] == 2
    assert (manifest["card_conf"], manifest["detector_weight"]) == (chosen["card_conf"], chosen["detector_weight"])
    assert ModelManifest.load(models).card_conf == result.tuning.best.card_conf
    # the turns are read only where the first reading is unsure
    assert (manifest["classifier_sure"], manifest["classifier_none_sure"]) == (CLASSIFIER_SURE, CLASSIFIER_NONE_SURE)
    # light-on-dark indices are read in negative, as its crops were cut
    assert (manifest["negative_below"], manifest["negative_look_after"]) == (NEGATIVE_BELOW, NEGATIVE_LOOK_AFTER)
    assert manifest["extra_crop_pads"] == list(EXTRA_CROP_PADS)
    assert manifest["grain_median_above"] == GRAIN_MEDIAN_ABOVE  # a grainy frame is looked at filtered too
    import numpy as np
    import onnxruntime

    session = onnxruntime.InferenceSession(str(models / manifest["classifier_onnx"]))
    crops = np.zeros((3, 3, manifest["crop_size"], manifest["crop_size"]), np.float32)  # dynamic batch: 3 crops at once
    (probabilities,) = session.run(None, {session.get_inputs()[0].name: crops})
    assert probabilities.shape == (3, len(manifest["classifier_names"]))
    # the same run from the command line finds both stages finished and only ships again
    args = ["train", "--data", str(scenes), "--run", str(run), "--detector-epochs", "1", "--classifier-epochs", "1"]
    args += ["--batch", "4", "--tiles-per-image", "1", "--crops-per-corner", "1", "--ship", str(models)]
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, again.output
    assert "cutting" not in again.output
    assert "wrote card_conf" in again.output
    assert json.loads(again.output[again.output.index("{\n") :])["train_command"].startswith("okgin train")


@pytest.fixture
def init(tiny_models: Path, tmp_path: Path) -> Path:
    """A models folder holding the tiny two-stage networks, as ``--init`` takes one."""
    folder = tmp_path / "init"
    folder.mkdir()
    for tiny, name in (("det.pt", MODEL_FILES["detector"]), ("cls.pt", MODEL_FILES["classifier"])):
        (folder / name).write_bytes((tiny_models / "two-stage" / tiny).read_bytes())
    return folder


def test_a_stage_not_trained_ships_as_it_was_in_init(scenes: Path, init: Path, tmp_path: Path) -> None:
    config = TrainConfig(
        scenes, tmp_path / "run", classifier_epochs=1, batch=4, crops_per_corner=1, stage="classifier",
        init_dir=init, ship_dir=tmp_path / "models",
    )  # fmt: skip
    result = train(config, log=lambda _: None)
    assert result.manifest is not None
    shipped = tmp_path / "models" / MODEL_FILES["detector"]
    assert shipped.read_bytes() == (init / MODEL_FILES["detector"]).read_bytes()
    assert (tmp_path / "models" / MODEL_FILES["classifier"]).read_bytes() != (
        init / MODEL_FILES["classifier"]
    ).read_bytes()


def test_a_frozen_fine_tune_keeps_the_first_layers_and_trains_the_rest(
    scenes: Path, init: Path, tmp_path: Path
) -> None:
    import torch

    config = TrainConfig(
        scenes, tmp_path / "run", classifier_epochs=1, batch=4, crops_per_corner=1, stage="classifier",
        init_dir=init, freeze=2,
    )  # fmt: skip
    result = train(config, log=lambda _: None)

    def weights(path: Path) -> dict[str, torch.Tensor]:
        checkpoint = torch.load(path, map_location="cpu", weights_only=False)
        return {name: value.float() for name, value in (checkpoint["ema"] or checkpoint["model"]).state_dict().items()}

    before, after = weights(init / MODEL_FILES["classifier"]), weights(result.classifier_weights)
    frozen = [name for name in before if name.startswith(("model.0.", "model.1.")) and name.endswith("conv.weight")]
    trained = [name for name in before if name.startswith("model.2.") and name.endswith("conv.weight")]
    assert frozen and trained
    assert all(torch.equal(before[name], after[name]) for name in frozen)
    assert any(not torch.equal(before[name], after[name]) for name in trained)


def _one_scene(root: Path) -> Path:
    """A 400 x 300 scene with one card: its top-left index labelled, its bottom-right index half under
    another card (visible, too little to label), plus that card's own index wholly hidden."""
    import cv2
    import numpy as np

    for folder in ("images", "labels", "meta"):
        (root / folder / "train").mkdir(parents=True)
    (root / "images" / "val").mkdir()
    cv2.imwrite(str(root / "images" / "train" / "s.jpg"), np.full((300, 400, 3), 90, np.uint8))
    # class 0, the labelled index at (20, 20)-(40, 50) in pixels
    (root / "labels" / "train" / "s.txt").write_text(f"0 {30 / 400} {35 / 300} {20 / 400} {30 / 300}\n")
    indices = [
        {"corner": "tl", "box": [20, 20, 40, 50], "visible": 1.0, "labelled": True},
        {"corner": "br", "box": [120, 150, 140, 180], "visible": 0.4, "labelled": False},
        {"corner": "tl", "box": [300, 200, 320, 230], "visible": 0.0, "labelled": False},
    ]
    (root / "meta" / "train" / "s.json").write_text(json.dumps({"cards": [{"name": "AS", "indices": indices}]}))
    return root


@pytest.fixture
def stub_reader(tiny_models: Path) -> CardDetector:
    """A two-stage model whose two stages answer for ``_one_scene`` as the comments below say."""
    import numpy as np

    from scorer.cards import Card
    from scorer.vision.detector import CardDetector

    detector = CardDetector(tiny_models / "two-stage")
    found = {
        (20.0, 20.0, 40.0, 50.0): ("2C", 0.9),  # the labelled index
        (122.0, 152.0, 142.0, 182.0): ("3C", 0.9),  # the index half under another card
        (300.0, 200.0, 320.0, 230.0): ("4C", 0.9),  # on a card over a hidden index: a false alarm
        (200.0, 40.0, 220.0, 70.0): ("5C", 0.8),  # blank table: a false alarm
        (250.0, 40.0, 270.0, 70.0): ("6C", 0.95),  # the most confident false alarm
        (350.0, 40.0, 370.0, 70.0): (None, 0.99),  # vetoed by the classifier already: not hard
        (200.0, 100.0, 220.0, 130.0): ("7C", 0.1),  # too weak a reading to become a card
    }
    boxes = np.array(list(found), np.float32)
    scores = np.full(len(boxes), 0.5, np.float32)
    detector.find_boxes = lambda image: FusedBoxes.of((boxes, scores, np.zeros(len(boxes), int)))  # type: ignore[method-assign]
    detector.name_boxes = lambda image, asked, stretch=None: [  # type: ignore[method-assign]
        (None if found[box][0] is None else Card.parse(found[box][0]), found[box][1]) for box in asked
    ]
    return detector


def test_mined_negatives_are_the_false_cards_away_from_every_index(stub_reader: CardDetector, tmp_path: Path) -> None:
    scenes = _one_scene(tmp_path / "scenes")
    written = mine_hard_negatives(scenes, stub_reader, tmp_path / "crops", per_image=2)
    assert written == 2
    mined = sorted(path.name for path in (tmp_path / "crops" / "train" / NONE_CLASS).glob("*.png"))
    assert mined == ["s_m0.png", "s_m1.png"]
    assert (tmp_path / "crops" / MINED_MARKER).exists()
    assert mine_hard_negatives(scenes, stub_reader, tmp_path / "all", per_image=5) == 3


def test_mined_tiles_hold_the_false_cards_at_inference_scale(stub_reader: CardDetector, tmp_path: Path) -> None:
    from PIL import Image

    scenes = _one_scene(tmp_path / "scenes")
    tiles = tmp_path / "tiles"
    for folder in ("images", "labels"):
        (tiles / folder / "train").mkdir(parents=True)
    assert mine_detector_tiles(scenes, stub_reader, tiles, per_image=5) == 3
    names = sorted(path.name for path in (tiles / "images" / "train").glob("*.jpg"))
    assert names == ["s_m0.jpg", "s_m1.jpg", "s_m2.jpg"]
    assert {Image.open(tiles / "images" / "train" / name).size for name in names} == {(TILE_SIZE, TILE_SIZE)}
    # 400 x 300 is seen at 640 x 480: the labelled index (20, 20)-(40, 50) is (32, 32)-(64, 80) there, and a
    # tile that holds it labels it as the corner it is
    for name in names:
        for line in (tiles / "labels" / "train" / f"{Path(name).stem}.txt").read_text().splitlines():
            cls, _, _, w, h = line.split()
            assert cls == "0" and (float(w), float(h)) == pytest.approx((32 / TILE_SIZE, 48 / TILE_SIZE), abs=1e-3)
    assert (tiles / MINED_MARKER).exists()


def test_mining_needs_the_model_that_makes_the_false_alarms(scenes: Path, tmp_path: Path) -> None:
    config = TrainConfig(scenes, tmp_path / "run", stage="classifier", mine_negatives=True)
    with pytest.raises(TrainingError, match="give --init"):
        train(config, log=lambda _: None)


def test_freezing_needs_the_networks_it_keeps(scenes: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["train", "--data", str(scenes), "--run", str(tmp_path / "run"), "--freeze", "6"])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)  # a message, not a traceback
    assert "--freeze keeps layers of the networks being fine-tuned: give --init" in result.output
    assert not (tmp_path / "run").exists()


def test_the_learning_rate_reaches_the_trainer(scenes: Path, init: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = CliRunner().invoke(
        main,
        ["train", "--data", str(scenes), "--run", str(run), "--stage", "classifier", "--init", str(init),
         "--classifier-epochs", "1", "--batch", "1", "--crops-per-corner", "1", "--lr0", "0.0003"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    args = (run / "classifier" / "args.yaml").read_text(encoding="utf-8")
    assert "lr0: 0.0003\n" in args  # what ultralytics trained with, as it wrote it down


@pytest.mark.parametrize("lr0", ["0", "-0.01", "1.5"])
def test_a_learning_rate_that_cannot_train_is_refused(scenes: Path, init: Path, tmp_path: Path, lr0: str) -> None:
    run = tmp_path / "run"
    result = CliRunner().invoke(
        main, ["train", "--data", str(scenes), "--run", str(run), "--init", str(init), "--lr0", lr0]
    )
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert f"a learning rate of {float(lr0)} cannot train" in result.output
    assert not run.exists()


def test_train_refuses_a_folder_without_scenes(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["train", "--data", str(tmp_path)])
    assert result.exit_code == 2
    assert "holds no generated scenes" in result.output


def test_tune_names_a_folder_without_a_model(scenes: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["train", "--data", str(scenes), "--stage", "tune", "--init", str(tmp_path)])
    assert result.exit_code == 2
    assert f"no model in '{tmp_path}': manifest.json is missing" in result.output


def test_average_weights_puts_the_mean_of_runs_into_a_model_folder(tiny_models: Path, tmp_path: Path) -> None:
    import shutil

    import torch

    models = tmp_path / "models"
    shutil.copytree(tiny_models / "two-stage", models)
    before = ModelManifest.load(models)
    first = tmp_path / "a.pt"
    shutil.copyfile(models / "cls.pt", first)
    checkpoint = torch.load(first, map_location="cpu", weights_only=False)
    with torch.no_grad():
        for parameter in checkpoint["model"].parameters():
            parameter += 1.0
    second = tmp_path / "b.pt"
    torch.save(checkpoint, second)

    result = CliRunner().invoke(main, ["average-weights", str(first), str(second), "--into", str(models)])
    assert result.exit_code == 0, result.output

    def weights(path: Path) -> torch.Tensor:
        model = torch.load(path, map_location="cpu", weights_only=False)["model"].float()
        return next(model.parameters()).detach().clone()

    assert torch.allclose(weights(models / "cls.pt"), weights(first) + 0.5, atol=1e-2)  # stored in half precision
    after = ModelManifest.load(models)
    assert after.provenance["classifier_averaged_from"] == [str(first), str(second)]
    assert (after.conf, after.crop_size, after.classifier_onnx) == (before.conf, before.crop_size, "cls.onnx")
    CardDetector(models, backend="onnx")  # the new ONNX classifier loads where the manifest says

    mixed = CliRunner().invoke(main, ["average-weights", str(first), str(models / "det.pt"), "--into", str(models)])
    assert mixed.exit_code == 2 and "all be classifiers, or all detectors" in mixed.output
    alone = CliRunner().invoke(main, ["average-weights", str(first), "--into", str(models)])
    assert alone.exit_code == 2 and "two or more" in alone.output


def _nudged_copy(weights: Path, target: Path, by: float) -> Path:
    """A copy of a checkpoint with every weight moved at random by about ``by``: a run grown apart from it."""
    import torch

    checkpoint = torch.load(weights, map_location="cpu", weights_only=False)
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for parameter in checkpoint["model"].parameters():
            parameter += by * torch.randn(parameter.shape, generator=generator).to(parameter.dtype)
    torch.save(checkpoint, target)
    return target


def test_veto_classifiers_are_copied_beside_the_classifier_and_loaded(tiny_models: Path, tmp_path: Path) -> None:
    import shutil

    from scorer.vision.backends import OnnxCropModel, UltralyticsCropModel, available_backends

    models = tmp_path / "models"
    shutil.copytree(tiny_models / "two-stage", models)
    veto = _nudged_copy(models / "cls.pt", tmp_path / "veto.pt", 0.1)
    result = CliRunner().invoke(main, ["veto-classifiers", str(veto), "--into", str(models), "--below", "0.9"])
    assert result.exit_code == 0, result.output

    manifest = ModelManifest.load(models)
    assert (manifest.veto_classifiers, manifest.veto_below) == (("cls-veto-1.pt",), 0.9)
    assert manifest.provenance["veto_classifiers_from"] == [str(veto)]
    assert (manifest.classifier, manifest.classifier_onnx) == ("cls.pt", "cls.onnx")  # the classifier is kept
    rng = np.random.default_rng(3)
    crops = [rng.integers(0, 255, (40, 30, 3), dtype=np.uint8) for _ in range(5)]
    exported = OnnxCropModel(models / "cls-veto-1.onnx", manifest.crop_size).predict(crops)
    copied = UltralyticsCropModel(models / "cls-veto-1.pt", manifest.crop_size).predict(crops)
    assert np.allclose(exported, copied, atol=1e-3)  # the ONNX file beside the copy is that classifier
    own = OnnxCropModel(models / "cls.onnx", manifest.crop_size).predict(crops)
    assert not np.allclose(exported, own, atol=1e-3)
    for backend in ("onnx", "torch"):
        assert len(CardDetector(models, backend=backend).veto_classifiers) == 1
    (models / "cls-veto-1.onnx").unlink()
    assert available_backends(ModelManifest.load(models)) == ["torch"]  # a veto missing: ONNX cannot run the model


def test_a_veto_classifier_must_read_the_models_classes(tiny_models: Path, tmp_path: Path) -> None:
    import shutil

    models = tmp_path / "models"
    shutil.copytree(tiny_models / "two-stage", models)
    none = CliRunner().invoke(main, ["veto-classifiers", "--into", str(models)])
    assert none.exit_code == 2 and "one or more veto classifier" in none.output
    detector = CliRunner().invoke(main, ["veto-classifiers", str(models / "det.pt"), "--into", str(models)])
    assert detector.exit_code == 2 and "must be a classifier of the model's classes" in detector.output
    assert ModelManifest.load(models).veto_classifiers == ()


def test_a_stage_bounded_by_wall_time_and_cached_says_so_to_the_trainer(
    scenes: Path, init: Path, tmp_path: Path
) -> None:
    crops = make_classifier_crops(scenes, tmp_path / "crops", crops_per_corner=1)
    weights = train_stage(
        "classify", crops, tmp_path / "run", 1, CROP_SIZE, 4, init / MODEL_FILES["classifier"], hours=0.01, cache=True
    )
    assert weights.exists()
    args = (tmp_path / "run" / "args.yaml").read_text(encoding="utf-8")
    assert "time: 0.01\n" in args and "cache: ram\n" in args  # what ultralytics trained with, as it wrote it down
