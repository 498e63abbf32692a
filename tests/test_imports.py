"""The library's light paths stay light: scoring never pays for torch, OpenCV or Flask; and the library
never imports the web app (the web app registers its commands through an entry point)."""

import ast
import subprocess
import sys
from pathlib import Path

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
    from scorer.cli import LAZY_COMMANDS, main, plugin_commands

    ctx = main.make_context("okgin", ["--help"], resilient_parsing=True)
    names = [*LAZY_COMMANDS, *plugin_commands()]
    missing = [name for name in names if main.get_command(ctx, name) is None]
    assert missing == []
    assert {"serve", "init-db"} <= set(main.list_commands(ctx))  # from the web app's entry points


def test_the_library_never_imports_the_web_app() -> None:
    scorer = Path(__file__).resolve().parents[1] / "scorer"
    offenders = []
    for path in scorer.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {name}" for name in names if name == "web" or name.startswith("web.")]
    assert offenders == []
