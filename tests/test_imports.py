"""The library's light paths stay light: scoring never pays for torch, OpenCV or Flask."""

import subprocess
import sys

import pytest

HEAVY = ("torch", "ultralytics", "cv2", "flask", "onnxruntime")


def modules_loaded_by(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize(
    "code",
    [
        "import scorer",
        "import scorer.vision.types",
        "from scorer.cli import main",
        "from scorer.cli import LAZY_COMMANDS, main\nfrom click.testing import CliRunner\n"
        "CliRunner().invoke(main, ['solve', '--json', 'AS', '2S', '3S', 'KD'])",
    ],
)
def test_light_paths_import_no_heavy_module(code: str) -> None:
    loaded = modules_loaded_by(code)
    assert not [name for name in HEAVY if name in loaded]


def test_every_registered_command_loads() -> None:
    from scorer.cli import LAZY_COMMANDS, main

    ctx = main.make_context("okgin", ["--help"], resilient_parsing=True)
    missing = [name for name in LAZY_COMMANDS if main.get_command(ctx, name) is None]
    assert missing == []
