"""``okgin watch`` and ``okgin score-image``: read the table from a camera or a photo and score it.

Seats are numbered from 1 as in ``TableLayout.default``: with two players seat 1 sits at
the bottom of the picture and seat 2 at the top; the layout's playing order says who plays
after whom. Unreadable tables (a hand of the wrong
size, a conflict) are not guessed at: the command says what it saw and exits 2.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scorer.cards import Card, InvalidCardError, format_cards
from scorer.cli import FiniteFloatRange
from scorer.cli import vision as vision_cli
from scorer.cli.engine import alternatives_text, player_text
from scorer.cli.vision import USAGE_ERROR, fail, model_options
from scorer.proposal import table_status
from scorer.rules import (
    PRESETS,
    IllegalKnockError,
    IllegalLayoffError,
    InvalidHandError,
    RoundResult,
    Rules,
    score_round,
)
from scorer.vision.types import FrameReading

if TYPE_CHECKING:
    from scorer.vision.layout import TableLayout
    from scorer.vision.pipeline import TablePipeline
    from scorer.vision.sources import CameraSource
    from scorer.vision.types import StableReading


def _rules(preset: str, players: int) -> Rules:
    """The rules preset, switched to the multi-player one for 3-4 players when the plain one was asked."""
    if players > 2 and preset == "oklahoma":
        preset = "oklahoma-multi"
    try:
        rules = Rules.preset_named(preset)
        rules.hand_size(players)
    except InvalidHandError as error:
        fail(str(error))
    return rules


def _card(text: str, what: str) -> Card:
    try:
        return Card.parse(text)
    except InvalidCardError as error:
        fail(f"{what}: {error}")


def _seat(knocker: str | None, players: int) -> str | None:
    if knocker is not None and knocker not in {str(n) for n in range(1, players + 1)}:
        fail(f"--knocker must be a seat number from 1 to {players}, got {knocker!r}")
    return knocker


def seat_cards(reading: FrameReading) -> dict[str, list[str]]:
    """Cards per seat as text, seat numbers as keys: ``{"1": ["AS", ...], "2": [...]}``: the hands to score
    (JSON output prints the whole reading, ``FrameReading.to_dict``)."""
    return {str(seat): [str(c.card) for c in cards] for seat, cards in sorted(reading.by_player.items())}


def describe_reading(reading: FrameReading) -> list[str]:
    """What the camera saw, a line per seat, then the upcard zone, unplaced cards and conflicts."""
    lines = [
        f"seat {seat} ({len(cards)} cards): {format_cards(c.card for c in cards) or '-'}"
        for seat, cards in sorted(reading.by_player.items())
    ]
    lines.append(f"upcard zone: {format_cards(c.card for c in reading.upcard) or '-'}")
    if reading.unassigned:
        lines.append(f"not in any seat: {format_cards(c.card for c in reading.unassigned)}")
    lines.extend(f"conflict: {conflict.reason}" for conflict in reading.conflicts)
    return lines


def seated_hands(layout: TableLayout, reading: FrameReading) -> dict[str, list[Card]]:
    """Each seat's cards by seat number, in the layout's playing order (each player's left neighbour next)."""
    seats = seat_cards(reading)
    return {zone.name: [Card.parse(text) for text in seats[zone.name]] for zone in layout.playing_order}


def score_reading(rules: Rules, layout: TableLayout, reading: FrameReading, upcard: Card, knocker: str) -> RoundResult:
    """Score the round on the table with ``knocker`` (a seat number) knocking, as it was laid.

    Hands go to the engine in the layout's playing order, which decides layoff order and multi-player undercut ties.
    The cards' positions say what was laid (``scorer.vision.groups``): the knocker's melds, a discard set
    aside, cards laid off against his melds (moved back to whoever laid them); what they cannot tell, the
    engine chooses.

    :raises InvalidHandError: when the hands cannot be scored.
    :raises IllegalKnockError: when the knocker's deadwood is over the limit.
    :raises IllegalLayoffError: when a card against the knocker's melds is no layoff the table allows.
    """
    from scorer.vision.groups import group_reading, read_laydown

    order = [int(zone.name) for zone in layout.playing_order]
    laid = read_laydown(group_reading(reading), int(knocker), rules.hand_size(len(order)), order)
    hands = {str(seat): list(laid.hands[seat]) for seat in order}
    return score_round(rules, upcard, hands, knocker, **laid.laydown.arguments())


def result_lines(result: RoundResult) -> list[str]:
    """A scored round in a few lines: each seat's melds, layoffs and deadwood, then the outcome."""
    lines = [f"upcard {result.upcard}: knock limit {result.knock_limit}; seat {result.knocker} knocks"]
    if result.discard is not None:
        lines.append(f"seat {result.knocker} discards {result.discard}")
    lines += [f"seat {seat}: {player_text(player)}" for seat, player in result.hands.items()]
    points = ", ".join(f"seat {seat} {value:+d}" for seat, value in result.points.items())
    lines.append(f"{result.outcome}: seat {result.winner} wins; points {points}")
    return lines + alternatives_text(result, LAY_IT_OUT)


PLAYERS_HELP = "Players at the table; their seats: 1 bottom of the picture, 2 top, 3 left, 4 right."
RULES_HELP = "The rules' preset; oklahoma is taken as oklahoma-multi for 3-4 players."
LAY_IT_OUT = "lay each meld out as one overlapping row and set the discard apart to score the table as laid"


def _unreadable(reason: str, reading: FrameReading) -> None:
    click.echo(f"okgin: {reason}", err=True)
    for line in describe_reading(reading):
        click.echo(f"  {line}", err=True)
    sys.exit(USAGE_ERROR)


@click.command("score-image")
@click.argument("photo", type=click.Path(path_type=Path))
@click.option("--upcard", required=True, help="The upcard, e.g. KS (sets the Oklahoma knock limit).")
@click.option("--knocker", required=True, help="The knocker's seat number (1 = bottom of the picture).")
@click.option("--players", type=click.IntRange(2, 4), default=2, show_default=True, help=PLAYERS_HELP)
@click.option(
    "--rules", "preset", type=click.Choice(sorted(PRESETS)), default="oklahoma", show_default=True, help=RULES_HELP
)
@click.option("--json", "as_json", is_flag=True, help='Print `okgin score --json` output plus the "reading".')
@model_options
def score_image(
    photo: Path,
    upcard: str,
    knocker: str,
    players: int,
    preset: str,
    as_json: bool,
    model_dir: Path | None,
    backend: str,
    conf: float | None,
) -> None:
    """Score the round shown in one photo of the table.

    Default layout: seat 1 = bottom half, seat 2 = top half (3-4 players: see
    TableLayout.default). Exits 2, listing what it saw, when a hand cannot be read.
    """
    from scorer.vision.images import ImageError
    from scorer.vision.layout import TableLayout

    rules = _rules(preset, players)
    up = _card(upcard, "--upcard")
    seat = _seat(knocker, players)
    assert seat is not None
    try:
        image = vision_cli.read_photo(photo)
    except ImageError as error:
        fail(str(error))
    detector = vision_cli.load_detector(model_dir, backend, conf)
    layout = TableLayout.default(players)
    # No max_cards: the knocker's seat also holds the cards laid off against his melds; hand sizes are
    # checked once the layoffs are back with whoever laid them.
    reading = layout.assign(detector.detect(image))
    if reading.conflicts:
        _unreadable(f"cannot score {str(photo)!r}: the table is inconsistent", reading)
    try:
        result = score_reading(rules, layout, reading, up, seat)
    except (InvalidHandError, IllegalKnockError, IllegalLayoffError) as error:
        _unreadable(f"cannot score {str(photo)!r}: {error}", reading)
    if as_json:
        click.echo(json.dumps({**result.to_dict(), "reading": reading.to_dict()}))
    else:
        click.echo("\n".join([*describe_reading(reading), *result_lines(result)]))


class _Reporter:
    """Prints the stable reading when it changes and, once the table is complete, its score."""

    def __init__(
        self,
        rules: Rules,
        layout: TableLayout,
        upcard: Card | None,
        knocker: str | None,
        as_json: bool,
        echo: Callable[[str], None],
    ) -> None:
        self.rules, self.layout, self.upcard, self.knocker = rules, layout, upcard, knocker
        self.as_json = as_json
        self.echo = echo
        self._shown: Any = None
        self._scored: Any = None
        self._lock = threading.Lock()

    def __call__(self, result: StableReading) -> None:
        with self._lock:
            self._report(result)

    def _report(self, result: StableReading) -> None:
        reading = result.reading
        upcards = [c.card for c in reading.upcard]
        # what is on the table, not the order the detector listed it in: a steady table is scored once
        hands = tuple(tuple(sorted(cards)) for cards in seat_cards(reading).values())
        signature = (hands, tuple(sorted(map(str, upcards))), reading.conflicts, result.stable)
        if signature != self._shown:
            self._shown = signature
            if self.as_json:
                self.echo(json.dumps({"event": "reading", **result.to_dict()}))
            else:
                state = "stable" if result.stable else "settling"
                self.echo(f"[{state}] " + "; ".join(describe_reading(reading)))
        upcard = self.upcard or (upcards[0] if len(upcards) == 1 else None)
        complete = all(reading.by_player.values()) and upcard is not None and not reading.conflicts
        if not (result.stable and complete) or signature == self._scored:
            return
        self._scored = signature
        assert upcard is not None
        self._score(reading, upcard)

    def _score(self, reading: FrameReading, upcard: Card) -> None:
        """Score with the given knocker, or the knock ``scorer.proposal`` proposes (the web page's policy too);
        else say why not."""
        knocker = self.knocker
        if knocker is None:
            hands = {f"seat {seat}": cards for seat, cards in seated_hands(self.layout, reading).items()}
            try:
                status = table_status(self.rules, upcard, hands)
            except InvalidHandError as error:
                return self._cannot(str(error))
            if status.proposed_knocker is None:
                return self._cannot(f"{status.reason} (--knocker SEAT scores a given seat's knock)")
            knocker = status.proposed_knocker.removeprefix("seat ")
        try:
            result = score_reading(self.rules, self.layout, reading, upcard, knocker)
        except (InvalidHandError, IllegalKnockError, IllegalLayoffError) as error:
            return self._cannot(f"seat {knocker} knocking: {error}")
        if self.as_json:
            self.echo(json.dumps({"event": "score", "reading": reading.to_dict(), **result.to_dict()}))
        else:
            self.echo("\n".join(result_lines(result)))

    def _cannot(self, reason: str) -> None:
        event = {"event": "cannot-score", "reason": reason}
        self.echo(json.dumps(event) if self.as_json else f"cannot score: {reason}")


def _open(source: CameraSource) -> list[str]:
    """Open ``source``, what FFmpeg prints about it said in okgin's words: a source that will not open is one message,
    FFmpeg's last line its reason ("Connection refused"), not lines of its own beside it. Answers its lines about a
    source that opened, for the caller to say.

    :raises SourceError: from ``source``.
    """
    from scorer.vision.images import decoder_output
    from scorer.vision.sources import SourceError

    with decoder_output() as said:
        try:
            source.open()
            failed = None
        except SourceError as error:
            failed = error
    # "Immediate exit requested": FFmpeg given up on at STREAM_TIMEOUT_SECONDS, which the message says already
    reasons = [line for line in said if not line.endswith("Immediate exit requested")]
    if failed is not None:
        raise SourceError(f"{failed} ({reasons[-1]})" if reasons else str(failed)) from None
    return reasons


def _say(source: CameraSource, said: list[str]) -> None:
    """FFmpeg's lines about a source that opened and gave frames: not hidden, said as okgin's."""
    for line in said:
        click.echo(f"okgin: {source.name}: {line}", err=True)


def _watch_video(
    source: CameraSource, pipeline: TablePipeline, reporter: _Reporter, settle: float, said: list[str]
) -> None:
    """Every frame of a video file, in turn. A file OpenCV opens but yields no frame of is no video (exit 2, the
    decoder's last line ``said`` while opening it or reading its first frame the reason: a text file named ``.jpg``
    had FFmpeg's "[mjpeg @ 0x55...] No JPEG data found in image" printed beside okgin's message); one that ends before
    the reading settled says so, since nothing was scored and the readings alone do not say why.

    :raises SourceError: from ``source``.
    """
    from scorer.vision.images import decoder_output

    video = iter(source)
    with decoder_output() as reading:
        first = next(video, None)
    said = [*said, *reading]
    frames, settled = 0, False
    for frame in itertools.chain([first] if first is not None else [], video):
        if not frames:
            _say(source, said)
        result = pipeline.process(frame.image, frame.timestamp)
        reporter(result)
        frames += 1
        settled = settled or result.stable
    if not frames:
        reason = f" ({said[-1]})" if said else ""
        fail(f"could not read a frame from {source.name}: not a video OpenCV can read{reason}")
    if not settled:
        photo = "; to score a photo, use 'okgin score-image'" if frames == 1 else ""
        click.echo(
            f"okgin: {source.name} ended after {frames} frame{'s' if frames > 1 else ''}, "
            f"before the reading settled (--settle {settle:g} s){photo}",
            err=True,
        )


@click.command()
@click.option("--camera", "camera", required=True, help="Camera index (0), video file or rtsp/http URL.")
@click.option("--players", type=click.IntRange(2, 4), default=2, show_default=True, help=PLAYERS_HELP)
@click.option("--upcard", default=None, help="The upcard, if it is not in the picture's upcard zone.")
@click.option("--knocker", default=None, help="The knocker's seat; default: score every seat that may knock.")
@click.option(
    "--rules", "preset", type=click.Choice(sorted(PRESETS)), default="oklahoma", show_default=True, help=RULES_HELP
)
@click.option("--window", type=click.IntRange(1, 100), default=7, show_default=True, help="Frames voted over.")
@click.option(
    "--settle", type=FiniteFloatRange(0, 3600), default=1.0, show_default=True, help="Seconds unchanged = stable."
)
@click.option("--json", "as_json", is_flag=True, help="JSON lines: reading, score and cannot-score events.")
@model_options
def watch(
    camera: str,
    players: int,
    upcard: str | None,
    knocker: str | None,
    preset: str,
    window: int,
    settle: float,
    as_json: bool,
    model_dir: Path | None,
    backend: str,
    conf: float | None,
) -> None:
    """Watch the table and print the reading when it changes, and the score once it is stable.

    A live camera is read on a background thread that always takes the newest frame; a
    video file is read frame by frame, and if it ends before the reading settled, that is
    said on stderr. Stop with Ctrl-C.
    """
    from scorer.vision.layout import TableLayout
    from scorer.vision.pipeline import LatestFrameWorker, TablePipeline
    from scorer.vision.sources import CameraSource, SourceError
    from scorer.vision.stabilise import Stabiliser

    rules = _rules(preset, players)
    layout = TableLayout.default(players)
    reporter = _Reporter(
        rules, layout, _card(upcard, "--upcard") if upcard else None, _seat(knocker, players), as_json, click.echo
    )
    detector = vision_cli.load_detector(model_dir, backend, conf)
    pipeline = TablePipeline(detector, layout, Stabiliser(window, settle))  # no max_cards: see score_image
    source = CameraSource(camera, on_event=lambda message: click.echo(f"okgin: {message}", err=True))
    try:
        said = _open(source)
        if not source.is_live:
            _watch_video(source, pipeline, reporter, settle, said)
            return
        _say(source, said)
        with LatestFrameWorker(pipeline, on_result=reporter) as worker:
            for frame in source:
                worker.push(frame.image, frame.timestamp)
    except SourceError as error:
        fail(str(error))
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
