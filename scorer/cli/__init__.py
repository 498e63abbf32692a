"""The ``okgin`` command. Subcommands load lazily so that ``okgin solve`` never imports torch,
OpenCV or Flask: each lives in its own module and is imported only when invoked.

Errors: a user error (any ``scorer.errors.OkginError``, a file that cannot be read or written) is one
line on stderr and exit status 2, from every command; exit status 1 with a traceback means a bug.

The library's own commands are listed here; packages layered above it (the web app's ``serve`` and
``init-db``) register theirs under the ``okgin.commands`` entry-point group, so ``scorer`` never
imports ``web`` and the CLI is assembled from whatever is installed.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import math
import os
import sys
from typing import IO, Any, NoReturn

import click

from scorer.errors import OkginError

USAGE_ERROR = 2

# command name -> "module:attribute"; the module is imported only when the command runs.
LAZY_COMMANDS: dict[str, str] = {
    "solve": "scorer.cli.engine:solve",
    "score": "scorer.cli.engine:score",
    "data": "scorer.cli.data:data",
    "train": "scorer.cli.train:train",
    "average-weights": "scorer.cli.train:average_weights",
    "veto-classifiers": "scorer.cli.train:veto_classifiers",
    "detect": "scorer.cli.vision:detect",
    "eval": "scorer.cli.vision:evaluate",
    "watch": "scorer.cli.live:watch",
    "score-image": "scorer.cli.live:score_image",
}
PLUGIN_GROUP = "okgin.commands"


def plugin_commands() -> dict[str, importlib.metadata.EntryPoint]:
    """Commands other installed packages register under ``[project.entry-points."okgin.commands"]``."""
    return {entry.name: entry for entry in importlib.metadata.entry_points(group=PLUGIN_GROUP)}


INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C, as shells report it (128 + SIGINT)."""
READER_GONE = 141
"""The exit status of a command whose output's reader went away (``okgin watch --json | head -1``), as shells report
a program stopped by SIGPIPE (128 + 13)."""


class UserError(click.ClickException):
    """A mistake the user can fix: ``okgin: <message>`` on stderr, exit status 2, no traceback."""

    exit_code = USAGE_ERROR

    def show(self, file: IO[Any] | None = None) -> None:
        with contextlib.suppress(OSError):  # stderr closed: the exit status still says it
            click.echo(f"okgin: {self.format_message()}", err=True, file=file)


class FiniteFloatRange(click.FloatRange):
    """``click.FloatRange`` that also refuses nan and inf (which pass every range check, being unordered or
    beyond it: ``--settle nan`` left ``okgin watch`` waiting for ever)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def fail(message: str) -> NoReturn:
    """Stop the command: ``okgin: <message>`` on stderr, exit status 2."""
    raise UserError(message)


def _drop_output() -> None:
    """Send what is still buffered for a closed pipe nowhere: flushed at exit, it raised BrokenPipeError again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def describe_os_error(error: OSError) -> str:
    """An ``OSError`` as one line naming the file: ``cannot use '/x/y': Not a directory``.

    >>> describe_os_error(PermissionError(13, "Permission denied", "/root/plots"))
    "cannot use '/root/plots': Permission denied"
    """
    reason = error.strerror or str(error)
    return f"cannot use {str(error.filename)!r}: {reason}" if error.filename else reason


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use, and whose user errors exit 2 in one line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # not click's "Aborted!" and exit 1, the status of a bug
            click.echo("okgin: interrupted", err=True)
            sys.exit(INTERRUPTED)
        except OkginError as error:
            raise UserError(str(error)) from error
        except BrokenPipeError:  # no user error ("okgin: Broken pipe"): the reader had what it wanted
            _drop_output()
            sys.exit(READER_GONE)
        except OSError as error:  # a file or folder the user named cannot be read or written
            raise UserError(describe_os_error(error)) from error

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(LAZY_COMMANDS.keys() | plugin_commands().keys())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = LAZY_COMMANDS.get(cmd_name)
        if target is None:
            plugin = plugin_commands().get(cmd_name)
            return None if plugin is None else _load_plugin(plugin)
        module_name, attribute = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and error.name.startswith("scorer."):
                return None  # a command whose module is not written yet is simply absent
            raise
        command: click.Command = getattr(module, attribute)
        return command


def _load_plugin(entry: importlib.metadata.EntryPoint) -> click.Command:
    try:
        command = entry.load()
    except ImportError as error:
        raise click.ClickException(f"the {entry.name} command cannot load ({entry.value}): {error}") from error
    if not isinstance(command, click.Command):
        raise click.ClickException(f"{entry.value} (the {entry.name} command) is not a click command")
    return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="okgin")
def main() -> None:
    """okgin: score Oklahoma Gin from the cards on the table."""


def run() -> Any:  # pragma: no cover - console-script entry point
    prepare_streams()
    return main(prog_name="okgin", args=sys.argv[1:])


def prepare_streams() -> None:
    """Make the standard streams safe to write: a card suit or a player's name that the terminal's encoding
    cannot show is escaped, not a traceback; a command whose standard output is closed stops at once (exit 2)
    rather than losing its answer silently."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if sys.stdout is None:
        if sys.stderr is not None:
            print("okgin: standard output is closed: there is nowhere to write the answer", file=sys.stderr)
        sys.exit(USAGE_ERROR)
