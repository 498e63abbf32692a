"""Stabilising: flicker does not flip the reading, relabels need a majority, stability needs time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from conftest import detection, row_of

from scorer.vision.boxes import iou
from scorer.vision.stabilise import Stabiliser, StableReading
from scorer.vision.types import Conflict, FrameReading

HAND = row_of("AS 2S 3S", y=650)


def reading(seat_1: list, upcard: list | None = None, conflicts: Sequence[Conflict] = ()) -> FrameReading:
    return FrameReading({1: tuple(seat_1), 2: ()}, tuple(upcard or ()), (), tuple(conflicts), 1280, 720)


def feed(stabiliser: Stabiliser, frames: list[FrameReading], fps: float = 10.0) -> list[StableReading]:
    return [stabiliser.update(frame, index / fps) for index, frame in enumerate(frames)]


def seat(result: StableReading, number: int = 1) -> list[str]:
    return [str(card.card) for card in result.reading.by_player[number]]


def test_a_card_appears_after_a_majority_of_the_window() -> None:
    results = feed(Stabiliser(window=5), [reading(HAND)] * 5)
    assert [len(r.reading.by_player[1]) for r in results] == [0, 0, 3, 3, 3]


def test_a_flickering_card_does_not_flip_the_result() -> None:
    # 3S is missed every other frame: it must stay present throughout once in
    frames = [reading(HAND if i % 2 == 0 else HAND[:2]) for i in range(20)]
    results = feed(Stabiliser(window=7), frames)
    assert all(seat(r) == ["AS", "2S", "3S"] for r in results[6:])


def test_a_rare_false_card_never_appears() -> None:
    ghost = detection("KH", (900, 650))
    frames = [reading([*HAND, ghost] if i % 4 == 0 else HAND) for i in range(20)]
    assert all("KH" not in seat(r) for r in feed(Stabiliser(window=7), frames))


def test_a_removed_card_leaves_after_the_hysteresis() -> None:
    results = feed(Stabiliser(window=6), [reading(HAND)] * 6 + [reading(HAND[:2])] * 6)
    present = ["3S" in seat(r) for r in results]
    # enters at the 4th frame; after removal it lingers while seen in at least 2 of the last 6 frames
    assert present == [False] * 3 + [True] * 7 + [False] * 2


def test_a_relabel_needs_a_clear_majority() -> None:
    as_qh = detection("QH", (400, 650))
    as_qd = detection("QD", (400, 650))  # same spot, another label
    stabiliser = Stabiliser(window=7)
    feed(stabiliser, [reading([as_qh])] * 7)
    results = [stabiliser.update(reading([as_qd if i % 2 else as_qh]), 1 + i / 10) for i in range(8)]
    assert all(seat(r) == ["QH"] for r in results), "alternating labels must not switch"
    results = [stabiliser.update(reading([as_qd]), 2 + i / 10) for i in range(7)]
    assert seat(results[-1]) == ["QD"]
    assert all(len(r.reading.by_player[1]) == 1 for r in results), "never both labels at once"


def test_a_card_moving_to_the_upcard_zone_is_in_one_place() -> None:
    card = detection("7H", (880, 360))
    stabiliser = Stabiliser(window=5)
    feed(stabiliser, [reading([card])] * 5)
    results = [stabiliser.update(reading([], upcard=[card]), 1 + i / 10) for i in range(5)]
    for result in results:
        places = len(result.reading.by_player[1]) + len(result.reading.upcard)
        assert places == 1
    assert [str(c.card) for c in results[-1].reading.upcard] == ["7H"]


def test_stable_once_unchanged_for_the_settle_time() -> None:
    stabiliser = Stabiliser(window=3, settle_seconds=1.0)
    times = [0.0, 0.1, 0.2, 0.5, 1.0, 1.1, 1.3]
    results = [stabiliser.update(reading(HAND), t) for t in times]
    # the hand becomes present at t=0.1 (2 of 3 frames), so it is stable from t=1.1
    assert [r.stable for r in results] == [False, False, False, False, False, True, True]
    assert results[-1].changed_at == 0.1


def test_conflicts_are_kept_only_when_persistent() -> None:
    odd = Conflict(None, "the upcard zone shows 2 cards")
    frames = [reading(HAND, conflicts=[odd] if i in (2, 9) else []) for i in range(12)]
    assert all(r.reading.conflicts == () for r in feed(Stabiliser(window=5), frames))
    results = feed(Stabiliser(window=5), [reading(HAND, conflicts=[odd])] * 5)
    assert results[-1].reading.conflicts == (odd,)


def test_a_replayed_stream_starts_afresh() -> None:
    stabiliser = Stabiliser(window=3)
    feed(stabiliser, [reading(HAND)] * 3)
    assert stabiliser.update(reading([]), 0.0).reading.by_player[1] == ()


def test_json_form() -> None:
    result = feed(Stabiliser(window=1, settle_seconds=0), [reading(HAND, upcard=[detection("7H", (880, 360))])])[0]
    data = result.to_dict()
    assert [c["card"] for c in data["zones"]["1"]] == ["AS", "2S", "3S"]
    assert data["zones"]["upcard"][0]["card"] == "7H" and data["stable"] is True
    assert data == {**result.reading.to_dict(), "stable": True, "changed_at": 0.0}


@pytest.mark.parametrize(("window", "settle"), [(0, 1.0), (3, -1.0)])
def test_bad_settings_are_refused(window: int, settle: float) -> None:
    with pytest.raises(ValueError):
        Stabiliser(window=window, settle_seconds=settle)


def test_iou() -> None:
    assert iou((0, 0, 10, 10), (0, 0, 10, 10)) == 1.0
    assert iou((0, 0, 10, 10), (20, 20, 30, 30)) == 0.0


def test_a_frame_after_a_pause_starts_afresh() -> None:
    # the camera stopped (switched, the page hidden) for ten minutes, then shows another table: the old cards were
    # called stable at once and for four frames, then mixed with the new ones
    stabiliser = Stabiliser(window=7)
    feed(stabiliser, [reading(HAND)] * 10, fps=5)
    other = row_of("KH QH JH", y=650)
    results = [stabiliser.update(reading(other), 600 + i / 5) for i in range(8)]
    assert all(not r.stable for r in results)
    assert all(set(seat(r)) <= {"KH", "QH", "JH"} for r in results)
    assert seat(results[-1]) == ["KH", "QH", "JH"]


def test_a_slow_but_steady_camera_is_no_pause() -> None:
    # a server reading a frame every 12 s (more than a pause): the frames are voted over as ever, never started afresh
    stabiliser = Stabiliser(window=3, settle_seconds=1)
    results = [stabiliser.update(reading(HAND), 12.0 * i) for i in range(6)]
    assert seat(results[-1]) == ["AS", "2S", "3S"] and results[-1].stable


def test_one_frame_read_slowly_is_no_pause() -> None:
    # a busy laptop took 3 s over one frame: the table's cards stay, not emptied until the window fills again
    stabiliser = Stabiliser(window=7)
    feed(stabiliser, [reading(HAND)] * 10, fps=5)
    after = stabiliser.update(reading(HAND), 2 + 3)
    assert seat(after) == ["AS", "2S", "3S"] and after.stable


def test_a_frame_of_another_size_starts_afresh() -> None:
    # another camera (another resolution): boxes in the old picture's pixels are no places in the new one
    stabiliser = Stabiliser(window=7)
    feed(stabiliser, [reading(HAND)] * 10, fps=5)
    other = row_of("KH QH JH", y=400)
    small = [FrameReading({1: other, 2: ()}, (), (), (), 640, 480) for _ in range(8)]
    results = [stabiliser.update(frame, 2 + i / 5) for i, frame in enumerate(small)]
    assert all(not r.stable and set(seat(r)) <= {"KH", "QH", "JH"} for r in results)
    assert seat(results[-1]) == ["KH", "QH", "JH"]


def test_frames_added_at_once_are_taken_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two frames of one table added at once mixed their steps: while the first was voting, the second was added and
    forgot the first's cards, and the first answered a card voted present that it no longer held (a ``KeyError``, a
    500 from ``/live/frame``). The second now waits for the first (the first's vote is made slow to let it in)."""
    import threading

    stabiliser = Stabiliser(window=1, settle_seconds=0)
    voting, second_added = threading.Event(), threading.Event()
    vote = stabiliser._vote

    def slow_vote(counts: Counter) -> set:
        if threading.current_thread().name == "first":
            voting.set()
            second_added.wait(0.5)  # the second frame, were it let in, is added meanwhile
        return vote(counts)

    monkeypatch.setattr(stabiliser, "_vote", slow_vote)
    answers: dict[str, StableReading | Exception] = {}

    def add(frame: FrameReading, timestamp: float) -> None:
        name = threading.current_thread().name
        try:
            answers[name] = stabiliser.update(frame, timestamp)
        except Exception as error:  # what went wrong in the thread, asserted on below
            answers[name] = error
        finally:
            if name == "second":
                second_added.set()

    first = threading.Thread(target=add, args=(reading(HAND), 0.0), name="first")
    first.start()
    assert voting.wait(5)
    second = threading.Thread(target=add, args=(reading([]), 0.1), name="second")
    second.start()
    first.join(5)
    second.join(5)
    first_answer, second_answer = answers["first"], answers["second"]
    assert isinstance(first_answer, StableReading) and seat(first_answer) == ["AS", "2S", "3S"], first_answer
    assert isinstance(second_answer, StableReading) and seat(second_answer) == [], second_answer
