"""What the light install leaves out, and the one way a command asks for it.

``pip install -e .`` installs what serving, scoring and ONNX detection need. Training, the
``torch`` inference backend and ``okgin eval --plots`` use packages that only the ``train``
extra installs (ultralytics, PyTorch, matplotlib); they import them through ``require``, so
that a missing one is one clear line naming the install command, never a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

TRAIN_EXTRA_INSTALL = "python3 -m pip install -e '.[train]'"
"""The command, run in the okgin checkout, that adds the ``train`` extra to the install."""


class MissingExtraError(ImportError):
    """A feature needs a package from an extra that is not installed."""


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``, or say which extra brings it.

    >>> require("json", "this example").__name__
    'json'
    >>> require("okgin_no_such_module", "okgin train")
    Traceback (most recent call last):
    ...
    scorer.extras.MissingExtraError: okgin train needs okgin_no_such_module (No module named 'okgin_no_such_module'), \
which the train extra installs: python3 -m pip install -e '.[train]'

    :raises MissingExtraError: when the import fails, with the import's own reason.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(
            f"{feature} needs {module} ({error}), which the train extra installs: {TRAIN_EXTRA_INSTALL}"
        ) from None
