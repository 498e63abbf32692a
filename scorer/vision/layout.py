"""Where each player's cards lie in the camera picture: seat zones and the upcard zone.

Zones are polygons in normalised image coordinates (0..1, origin top-left), so one
layout fits any camera resolution. A card belongs to the zone holding its box centre;
the upcard zone is looked at first because it may sit inside a seat's area.

Default layouts, matching where the scene renderer (``scorer.synth``) puts things, the
camera looking down with seat 1 at the bottom edge:

- every table: the upcard lies right of centre (x 0.58..0.82, y 0.36..0.64); the stock
  and discard pile lie left of it on the midline (x 0.25..0.58, y 0.4..0.6), an
  *ignored* zone whose cards are reported as unassigned, never as a hand's;
- 2 players: seat 1 = bottom half, seat 2 = top half (its cards appear upside down);
- 3-4 players: seat 1 bottom, 2 top, 3 left (x < 0.22), 4 right (x > 0.78), the side
  strips spanning y 0.15..0.85; with 3 players the right strip is left unassigned, and
  the upcard zone ends at x 0.78. Hands reaching into a table's corners are ambiguous
  for any fixed zones: check 3-4 player readings, or pass your own layout.

Seat names say where a seat is; ``TableLayout.order`` says who plays after whom (each
player's left neighbour next, which decides layoff order and multi-player undercut ties).
Around a table seen from above, the left neighbour of the player at the bottom edge sits
at the left edge, so the default order is bottom, left, top, right: seats 1, 3, 2, 4.
Everything that gives seats to players (the CLI, the web page) takes this order.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scorer.cards import Card
from scorer.errors import OkginError
from scorer.vision.types import CardDetection, Conflict, Detections, FrameReading

Point = tuple[float, float]

UPCARD = "upcard"
PILE = "pile"
SIDE_STRIP = (0.22, 0.15)
"""3-4 players: the side seats' strips are this wide (x) and leave this much (y) to the top and bottom seats."""
STRADDLE_SHARE = 0.25
"""A seat card with at least this share of its box inside another seat is reported as straddling."""

_SAMPLES = 5  # a card box is probed on a 5 x 5 grid to measure how much of it lies in each zone


class LayoutError(OkginError):
    """A table layout that cannot be used: bad coordinates, unnamed or misnamed zones."""


def _rectangle(x1: float, y1: float, x2: float, y2: float) -> tuple[Point, ...]:
    return ((x1, y1), (x2, y1), (x2, y2), (x1, y2))


def points_in_polygon(points: np.ndarray, polygon: Sequence[Point]) -> np.ndarray:
    """Which of ``points`` (N, 2) lie inside ``polygon`` (even-odd rule, vectorised over points).

    Points on the lower/right edges of a rectangle count as outside, on the upper/left as
    inside, so two zones sharing an edge never both claim a point.

    >>> points_in_polygon(np.array([[0.5, 0.5], [1.5, 0.5]]), _rectangle(0, 0, 1, 1)).tolist()
    [True, False]
    """
    x, y = points[:, 0], points[:, 1]
    inside = np.zeros(len(points), dtype=bool)
    vertices = list(polygon)
    for (x1, y1), (x2, y2) in zip(vertices, vertices[1:] + vertices[:1], strict=True):
        crosses = (y1 <= y) != (y2 <= y)
        with np.errstate(divide="ignore", invalid="ignore"):
            x_at_y = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (x < x_at_y)
    return inside


@dataclasses.dataclass(frozen=True)
class Zone:
    """A named region of the picture: a seat ("1", "2", ...) or the upcard zone ("upcard")."""

    name: str
    polygon: tuple[Point, ...]

    def __post_init__(self) -> None:
        if len(self.polygon) < 3:
            raise LayoutError(f"zone {self.name!r} needs at least 3 corners, got {len(self.polygon)}")
        for x, y in self.polygon:
            if not (0 <= x <= 1 and 0 <= y <= 1):
                raise LayoutError(f"zone {self.name!r}: point ({x}, {y}) is outside the picture (0..1)")

    @classmethod
    def rectangle(cls, name: str, x1: float, y1: float, x2: float, y2: float) -> Zone:
        """A rectangular zone from its normalised corners."""
        if not (x1 < x2 and y1 < y2):
            raise LayoutError(f"zone {name!r}: rectangle [{x1}, {y1}, {x2}, {y2}] must have x1 < x2 and y1 < y2")
        return cls(name, _rectangle(x1, y1, x2, y2))

    @classmethod
    def from_spec(cls, name: str, spec: Any) -> Zone:
        """A zone from ``[x1, y1, x2, y2]``, ``[[x, y], ...]`` or ``{"rect"|"polygon": ...}``.

        :raises LayoutError: naming the zone and what is wrong with it.
        """
        if isinstance(spec, Mapping):
            spec = spec.get("rect", spec.get("polygon"))
        try:
            if isinstance(spec, Sequence) and len(spec) == 4 and all(isinstance(v, int | float) for v in spec):
                return cls.rectangle(name, *(float(v) for v in spec))
            if isinstance(spec, Sequence) and not isinstance(spec, str):
                return cls(name, tuple((float(p[0]), float(p[1])) for p in spec))
        except (TypeError, ValueError, IndexError, KeyError) as error:
            if isinstance(error, LayoutError):
                raise
            raise LayoutError(f"zone {name!r}: {spec!r} is not a list of [x, y] points") from None
        raise LayoutError(f"zone {name!r}: expected [x1, y1, x2, y2] or a list of [x, y] points, got {spec!r}")

    def contains(self, points: np.ndarray) -> np.ndarray:
        """Which normalised points (N, 2) lie in this zone."""
        return points_in_polygon(points, self.polygon)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "polygon": [list(point) for point in self.polygon]}

    def where(self) -> str:
        """Where the zone lies in the picture, as players say it: "bottom", "top", "left", "right" or "middle".

        >>> Zone.rectangle("3", 0, 0.15, 0.22, 0.85).where(), Zone.rectangle("2", 0, 0, 1, 0.5).where()
        ('left', 'top')
        """
        xs, ys = zip(*self.polygon, strict=True)
        dx, dy = (min(xs) + max(xs)) / 2 - 0.5, (min(ys) + max(ys)) / 2 - 0.5
        if max(abs(dx), abs(dy)) < 0.1:
            return "middle"
        if abs(dy) >= abs(dx):
            return "bottom" if dy > 0 else "top"
        return "right" if dx > 0 else "left"


_GRID = (np.arange(_SAMPLES) + 1) / (_SAMPLES + 1)  # interior probe positions along a side, 0..1


def _box_samples(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """A 5 x 5 grid of normalised points over each pixel box (N, 4): shape (N * 25, 2), box by box."""
    x1, y1, x2, y2 = (boxes[:, k, None] for k in range(4))
    xs = (x1 + (x2 - x1) * _GRID) / width  # (N, 5)
    ys = (y1 + (y2 - y1) * _GRID) / height
    grid_x = np.repeat(xs[:, None, :], _SAMPLES, axis=1)  # (N, 5 rows, 5 columns)
    grid_y = np.repeat(ys[:, :, None], _SAMPLES, axis=2)
    return np.stack([grid_x.ravel(), grid_y.ravel()], axis=1)


@dataclasses.dataclass(frozen=True)
class TableLayout:
    """The seats, the upcard zone, and the order the seats play in.

    Seats are named "1", "2", ...; ``order`` lists them in playing order (each player's left
    neighbour next). Empty, it is the seats' numeric order.
    """

    seats: tuple[Zone, ...]
    upcard: Zone | None = None
    ignored: tuple[Zone, ...] = ()
    """Zones whose cards belong to no one (the stock and discard pile): reported as unassigned."""
    order: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.seats:
            raise LayoutError("a layout needs at least one seat zone")
        names = [zone.name for zone in self.seats]
        expected = [str(n) for n in range(1, len(self.seats) + 1)]
        if sorted(names, key=lambda n: (len(n), n)) != expected:
            raise LayoutError(f"seat zones must be named {', '.join(expected)}; got {', '.join(names)}")
        if not self.order:
            object.__setattr__(self, "order", tuple(expected))
        elif sorted(self.order, key=lambda n: (len(n), n)) != expected:
            raise LayoutError(f"the playing order must name each seat once ({', '.join(expected)}); got {self.order}")

    @property
    def playing_order(self) -> tuple[Zone, ...]:
        """The seat zones in playing order: the first player's, then that player's left neighbour's, ...

        >>> [zone.name for zone in TableLayout.default(4).playing_order]
        ['1', '3', '2', '4']
        """
        by_name = {zone.name: zone for zone in self.seats}
        return tuple(by_name[name] for name in self.order)

    def seating(self, players: Sequence[str]) -> list[dict[str, str]]:
        """Which seat zone each player (listed in playing order) sits at, and where that is in the picture.

        >>> TableLayout.default(3).seating(["Ann", "Bob", "Cat"])[1]
        {'player': 'Bob', 'zone': '3', 'where': 'left'}

        :raises LayoutError: when the layout has fewer seats than players.
        """
        if len(players) > len(self.seats):
            raise LayoutError(f"the table layout has {len(self.seats)} seats, too few for {len(players)} players")
        return [
            {"player": player, "zone": zone.name, "where": zone.where()}
            for player, zone in zip(players, self.playing_order, strict=False)
        ]

    @classmethod
    def default(cls, players: int = 2) -> TableLayout:
        """The layout for 2, 3 or 4 players described in this module's docstring.

        >>> layout = TableLayout.default(2)
        >>> [zone.name for zone in layout.seats], layout.zone_of((0.7, 0.5)), layout.zone_of((0.4, 0.5))
        (['1', '2'], 'upcard', 'pile')

        :raises LayoutError: for another number of players.
        """
        pile = (Zone.rectangle(PILE, 0.25, 0.4, 0.58, 0.6),)
        if players == 2:
            halves = (Zone.rectangle("1", 0, 0.5, 1, 1), Zone.rectangle("2", 0, 0, 1, 0.5))
            return cls(halves, Zone.rectangle(UPCARD, 0.58, 0.36, 0.82, 0.64), pile)
        if players in (3, 4):
            left, top = SIDE_STRIP
            inner = ((left, 1 - top), (left, 0.5), (1 - left, 0.5), (1 - left, 1 - top))
            bottom: tuple[Point, ...] = ((0, 1 - top), *inner, (1, 1 - top), (1, 1), (0, 1))
            seats = (
                Zone("1", bottom),
                Zone("2", tuple((x, 1 - y) for x, y in reversed(bottom))),
                Zone.rectangle("3", 0, top, left, 1 - top),
                Zone.rectangle("4", 1 - left, top, 1, 1 - top),
            )
            order = ("1", "3", "2", "4")[:players]  # bottom, left, top, right: each player's left neighbour next
            # the upcard zone stops short of the right-hand player's strip
            return cls(seats[:players], Zone.rectangle(UPCARD, 0.58, 0.36, 1 - left, 0.64), pile, order)
        raise LayoutError(f"Oklahoma Gin is played by 2, 3 or 4 players, not {players}")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableLayout:
        """Read ``{"seats": {"1": ZONE, ...} | [{"name": "1", ...}, ...], "upcard": ZONE | null, "ignored": [ZONE],
        "order": ["1", "3", "2"]}`` (``order``: the seats in playing order; default their numeric order).

        A ZONE is ``[x1, y1, x2, y2]``, a list of ``[x, y]`` points or ``{"rect"|"polygon": ...}``.

        >>> TableLayout.from_dict({"seats": {"1": [0, 0.5, 1, 1], "2": [0, 0, 1, 0.5]}, "upcard": None}).upcard is None
        True

        :raises LayoutError: naming the zone at fault.
        """
        if not isinstance(data, Mapping) or "seats" not in data:
            raise LayoutError('a layout must be an object with "seats" (and optionally "upcard")')
        raw_seats = data["seats"]
        if isinstance(raw_seats, Mapping):
            items = [(str(name), spec) for name, spec in raw_seats.items()]
        elif isinstance(raw_seats, Sequence) and all(isinstance(s, Mapping) and "name" in s for s in raw_seats):
            items = [(str(spec["name"]), spec) for spec in raw_seats]
        else:
            raise LayoutError('"seats" must map seat names to zones, or list zones with a "name"')
        seats = tuple(Zone.from_spec(name, spec) for name, spec in sorted(items, key=lambda i: (len(i[0]), i[0])))
        upcard = data.get("upcard")
        ignored = data.get("ignored") or []
        if not isinstance(ignored, Sequence) or isinstance(ignored, str):
            raise LayoutError('"ignored" must be a list of zones')
        order = data.get("order") or []
        if not isinstance(order, Sequence) or isinstance(order, str):
            raise LayoutError('"order" must list the seat names in playing order, e.g. ["1", "3", "2"]')
        return cls(
            seats,
            None if upcard is None else Zone.from_spec(UPCARD, upcard),
            tuple(Zone.from_spec(PILE, spec) for spec in ignored),
            tuple(str(name) for name in order),
        )

    def to_dict(self) -> dict[str, Any]:
        """The form ``from_dict`` reads back."""
        return {
            "seats": {zone.name: [list(p) for p in zone.polygon] for zone in self.seats},
            "upcard": None if self.upcard is None else [list(p) for p in self.upcard.polygon],
            "ignored": [[list(p) for p in zone.polygon] for zone in self.ignored],
            "order": list(self.order),
        }

    def _lookup_order(self) -> tuple[Zone, ...]:
        return (*([self.upcard] if self.upcard else []), *self.ignored, *self.seats)

    def zones_of(self, points: np.ndarray) -> list[str | None]:
        """The zone of each normalised point (N, 2): the upcard zone first, then ignored zones, then seats."""
        names: list[str | None] = [None] * len(points)
        unplaced = np.ones(len(points), dtype=bool)
        for zone in self._lookup_order():
            if not unplaced.any():
                break
            hits = unplaced & zone.contains(points)
            for index in np.flatnonzero(hits):
                names[index] = zone.name
            unplaced &= ~hits
        return names

    def zone_of(self, point: Point) -> str | None:
        """The zone holding one normalised point (see ``zones_of``), or None."""
        return self.zones_of(np.array([point], dtype=float))[0]

    def assign(self, detections: Detections, max_cards: int | None = None) -> FrameReading:
        """Sort the detected cards into seats, the upcard zone and the rest, reporting what cannot be true.

        Conflicts: the detector's own (a card seen twice), a card whose box straddles two
        seats, a card found in two places, a hand with more than ``max_cards`` cards, and
        more than one card in the upcard zone.
        """
        width, height = detections.width, detections.height
        if width <= 0 or height <= 0:
            raise ValueError(f"detections need the frame size to be placed, got {width}x{height}")
        conflicts = list(detections.conflicts)
        seat_names = [zone.name for zone in self.seats]
        boxes = np.array([card.box for card in detections.cards], dtype=float).reshape(-1, 4)
        centres = np.column_stack([(boxes[:, 0] + boxes[:, 2]) / 2 / width, (boxes[:, 1] + boxes[:, 3]) / 2 / height])
        located = list(zip(detections.cards, self.zones_of(centres), strict=True))
        placed: dict[str | None, list[CardDetection]] = defaultdict(list)
        for card, where in _one_of_each(located, conflicts):
            placed[where].append(card)
        for name in seat_names:
            conflicts.extend(self._straddles(placed[name], name, width, height))
        unassigned = [card for where, cards in placed.items() if where not in (*seat_names, UPCARD) for card in cards]
        by_player = {int(name): tuple(sorted(placed[name], key=_left_to_right)) for name in seat_names}
        if max_cards is not None:
            for seat, hand in by_player.items():
                if len(hand) > max_cards:
                    conflicts.append(
                        Conflict(None, f"seat {seat} shows {len(hand)} cards; a hand holds at most {max_cards}")
                    )
        upcards = tuple(sorted(placed[UPCARD], key=lambda c: -c.confidence))
        if len(upcards) > 1:
            shown = ", ".join(str(c.card) for c in upcards)
            conflicts.append(Conflict(None, f"the upcard zone shows {len(upcards)} cards ({shown}); it holds one"))
        return FrameReading(
            by_player=by_player,
            upcard=upcards,
            unassigned=tuple(unassigned),
            conflicts=tuple(conflicts),
            width=width,
            height=height,
        )

    def _straddles(self, cards: Sequence[CardDetection], seat: str, width: int, height: int) -> list[Conflict]:
        """Cards of ``seat`` lying largely (``STRADDLE_SHARE``) in another seat too; all cards probed at once."""
        if not cards:
            return []
        samples = _box_samples(np.array([card.box for card in cards], dtype=float), width, height)
        shares = {
            zone.name: zone.contains(samples).reshape(len(cards), -1).mean(axis=1)
            for zone in self.seats
            if zone.name != seat
        }
        conflicts = []
        for index, card in enumerate(cards):
            others = [name for name, share in shares.items() if share[index] >= STRADDLE_SHARE]
            if others:
                conflicts.append(Conflict(card.card, f"{card.card} straddles seats {seat} and {' and '.join(others)}"))
        return conflicts


def _left_to_right(card: CardDetection) -> float:
    return card.box[0] + card.box[2]


def describe_zone(name: str | None) -> str:
    """Where a card lies, as a player reads it: "in seat 2", "in the upcard zone", "outside every seat".

    Each place says its own preposition, so a list of places reads "in seat 2 and in seat 1".
    """
    if name is None or name == PILE:
        return "outside every seat"
    return "in the upcard zone" if name == UPCARD else f"in seat {name}"


def _one_of_each(
    located: Sequence[tuple[CardDetection, str | None]], conflicts: list[Conflict]
) -> list[tuple[CardDetection, str | None]]:
    """Keep the most confident sighting of each card; further sightings are conflicts (one deck)."""
    sightings: dict[Card, list[tuple[CardDetection, str | None]]] = defaultdict(list)
    for detection, where in located:
        sightings[detection.card].append((detection, where))
    kept = []
    for card, seen in sightings.items():
        seen.sort(key=lambda item: -item[0].confidence)
        kept.append(seen[0])
        if len(seen) > 1:
            places = " and ".join(describe_zone(where) for _, where in seen)
            conflicts.append(Conflict(card, f"{card} is seen {places}; a deck has one"))
    return kept
