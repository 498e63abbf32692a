"""The table page's own camera when things go wrong, in headless Chromium with its fake camera: what a live-camera
probe found (session 44). Frames the server refused or never answered were silent (the page still said "Stable" and
posted 4 a second); a camera that ended posted black frames; a hidden tab kept posting; two tabs of one browser mixed
their cameras into one reading; one card was "1 cards"."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from browser_support import (
    BROWSER_TESTS,
    DESKTOP,
    MIN_TAP_PX,
    PHONE,
    ScaledDetector,
    camera_table,
    no_sideways_scroll,
    set_page_hidden,
)

from scorer.cards import Card, parse_cards
from scorer.vision.sharpness import BLURRED
from scorer.vision.types import CardDetection, Detections, FrameNotRead

pytestmark = BROWSER_TESTS

ONE_CARD = [CardDetection(Card.parse("2D"), (60, 520, 145, 640), 0.95)]  # in Ann's seat (the bottom)
STABLE = "Stable · 1 card"
FULL = "the server follows the cameras of 8 tables at once, and all are in use; try again in a minute or two"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    with camera_table(tmp_path, ScaledDetector(ONE_CARD)) as (base, browser):
        yield base, browser


def new_match(page: Any, base: str, players: tuple[str, ...] = ("Ann", "Bob")) -> str:
    rules = "oklahoma-multi" if len(players) > 2 else "oklahoma"
    created = page.request.post(
        f"{base}/api/matches", data={"players": list(players), "rules": rules, "dealer": players[-1]}
    )
    assert created.status == 201, created.text()
    return f"{base}/matches/{created.json()['id']}"


def camera_on(page: Any, url: str) -> list[str]:
    """The table at ``url`` with the camera on and its one card read as stable; returns the frames' URLs, as posted."""
    from playwright.sync_api import expect

    frames = live_frames(page, "request")
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    page.click("#camera-start")
    expect(page.locator("#camera-status")).to_have_text(STABLE, timeout=30_000)
    expect(page.locator("#chips-1 .chip")).to_have_count(1)
    return frames


def page_of(browser: Any, errors: list[str]) -> Any:
    page = browser.new_page(viewport=DESKTOP)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page


def frames_posted_while_waiting(page: Any, frames: list[str], ms: int) -> int:
    seen = len(frames)
    page.wait_for_timeout(ms)
    return len(frames) - seen


def live_frames(page: Any, event: str) -> list[str]:
    """A list the page fills with the URL of each live frame it sends, at the page's ``event``: "request" as it is
    posted, "requestfinished" as its answer comes (for ``wait_for_more``)."""
    frames: list[str] = []
    page.on(event, lambda request: frames.append(request.url) if "/live/frame" in request.url else None)
    return frames


def wait_for_more(page: Any, frames: list[str], count: int, what: str) -> None:
    """Wait until ``frames`` (a list of frame URLs a page event fills) holds ``count`` more, for up to 10 s (a loaded
    machine's frames come seconds apart); else fail saying ``what`` did not come."""
    seen = len(frames)
    for _ in range(40):
        if len(frames) >= seen + count:
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"{what}: {len(frames) - seen} of {count} in 10 s")


@pytest.mark.parametrize("failure", ["refused", "unreachable"])
def test_frames_not_read_say_why_wait_longer_and_recover(served: tuple[str, Any], failure: str) -> None:
    """A server refusing every frame (all its places taken) or not answering: the status kept "Stable · 21 cards" and
    frames went on at 4 a second. Now the status says the server's words, frames wait longer, and the camera goes on
    by itself once frames are answered again; the cards read stay on the table."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    if failure == "refused":
        page.route("**/live/frame*", lambda route: route.fulfill(status=503, json={"error": FULL}))
        said = FULL
    else:
        page.route("**/live/frame*", lambda route: route.abort())
        said = "the okgin server cannot be reached"
    status = page.locator("#camera-status")
    expect(status).to_contain_text(said, timeout=15_000)
    expect(status).not_to_contain_text("Stable")
    expect(status).not_to_contain_text("?.")  # the server's own "is it still running?" gets no second stop
    # waits of 1, 2 then 5 s between frames: at most 3 more in 4 s, where 4 a second made 16
    assert frames_posted_while_waiting(page, frames, 4000) <= 3
    expect(page.locator("#chips-1 .chip")).to_have_count(1)
    page.unroute("**/live/frame*")
    expect(status).to_have_text(STABLE, timeout=30_000)
    assert not errors, errors


def test_a_frame_never_answered_is_given_up_and_said(served: tuple[str, Any]) -> None:
    """A frame whose connection hangs (a phone's Wi-Fi dropped, a server wedged): the page waited for its answer for
    good, still saying "Stable" and proposing from the last reading, and sent no frame more. Now a frame not answered
    in 15 s is given up, said, and the camera goes on once frames are answered again."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    hung: list[Any] = []
    page.route("**/live/frame*", lambda route: hung.append(route))  # never answered
    status = page.locator("#camera-status")
    expect(status).to_have_text("Camera frames not read: the okgin server did not answer within 15 s. Trying again…",
                                timeout=25_000)  # fmt: skip
    expect(page.locator("#chips-1 .chip")).to_have_count(1)
    assert len(hung) >= 1
    page.unroute("**/live/frame*")  # the frames still waiting go on to the server
    expect(status).to_have_text(STABLE, timeout=30_000)
    assert len(frames) > len(hung)
    assert not errors, errors


def test_a_camera_that_ends_says_so_and_keeps_the_cards(served: tuple[str, Any]) -> None:
    """A camera unplugged (its track ends): the page posted black frames, said "Stable · 0 cards" and cleared the
    camera's cards. Now it stops posting, says how to start the camera again, and the cards stay on the table."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    page.evaluate(
        """() => { const track = document.getElementById('video').srcObject.getVideoTracks()[0];
            track.stop(); track.dispatchEvent(new Event('ended')); }"""
    )  # as an unplugged camera's track ends (stop() alone fires no event)
    status = page.locator("#camera-status")
    expect(status).to_contain_text("The camera stopped")
    expect(status).to_contain_text("Tap Start camera to start it again")
    expect(page.locator("#camera-start")).to_be_visible()
    expect(page.locator("#camera-stop")).to_be_hidden()
    assert frames_posted_while_waiting(page, frames, 1500) <= 1  # one may have been on its way
    expect(page.locator("#chips-1 .chip")).to_have_count(1)
    page.click("#camera-start")
    expect(status).to_have_text(STABLE, timeout=30_000)
    assert not errors, errors


def test_a_hidden_page_pauses_its_camera_and_goes_on_when_shown(served: tuple[str, Any]) -> None:
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    set_page_hidden(page, True)
    status = page.locator("#camera-status")
    expect(status).to_have_text("Camera paused while this page is hidden")
    assert frames_posted_while_waiting(page, frames, 1500) <= 1  # one may have been on its way
    set_page_hidden(page, False)
    expect(status).to_have_text(STABLE, timeout=30_000)
    assert not errors, errors


def test_two_tabs_of_one_browser_post_as_two_cameras(served: tuple[str, Any]) -> None:
    """Two tabs share the session cookie, and the server followed them as one table: two cameras on two matches
    mixed their readings. Each page now names its own camera with every frame (the server keeps them apart:
    ``test_web_live.test_each_page_of_one_browser_has_its_own_camera_reading``)."""
    base, browser = served
    errors: list[str] = []
    context = browser.new_context(viewport=DESKTOP)
    context.on("weberror", lambda error: errors.append(str(error.error)))
    first, second = context.new_page(), context.new_page()
    sent = [camera_on(page, new_match(page, base)) for page in (first, second)]
    ids = [{parse_qs(urlparse(url).query).get("camera", [""])[0] for url in frames} for frames in sent]
    assert all(len(one) == 1 and "" not in one for one in ids), ids  # one id per page, on every frame
    assert ids[0] != ids[1]
    assert not errors, errors


def test_a_card_corrected_on_the_paused_picture_stays_corrected_once_live_again(served: tuple[str, Any]) -> None:
    """The camera reads 2D where the card is 3D: fixed by hand on the paused picture, then Resume live, the next
    frame read 2D again and the fix was gone without a word (a round confirmed then scored the misread card)."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    page.click("#chips-1 .chip")  # pauses the picture and opens the card
    expect(page.locator("#card-editor")).to_be_visible()
    page.fill("#editor-text", "3D")
    page.click("#editor-save")
    expect(page.locator("#chips-1 .chip")).to_have_text("3♦")
    page.click("#resume-live")
    assert frames_posted_while_waiting(page, frames, 2_000) >= 2
    expect(page.locator("#chips-1 .chip")).to_have_text("3♦")
    expect(page.locator("#camera-status")).to_have_text(STABLE, timeout=10_000)
    assert not errors, errors


def test_delete_on_a_chip_pauses_the_live_picture_and_its_card_stays_deleted_once_live_again(
    served: tuple[str, Any],
) -> None:
    """Delete on a chip deletes its card as the editor's Delete does: the picture paused first (the editor pauses it as
    it opens), so the next frame does not read the card back before the player sees it gone, and the deletion kept once
    live again; the focus, with no chip left in the hand, on the hand's line."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    page.focus("#chips-1 .chip")
    page.keyboard.press("Delete")
    expect(page.locator("#chips-1 .chip")).to_have_count(0)
    expect(page.locator("#resume-live")).to_be_visible()  # paused
    expect(page.locator("#status-1")).to_be_focused()
    expect(page.locator("#card-editor")).to_be_hidden()
    page.click("#resume-live")
    assert frames_posted_while_waiting(page, frames, 2_000) >= 2
    expect(page.locator("#chips-1 .chip")).to_have_count(0)
    assert not errors, errors


def test_a_box_drawn_on_the_live_picture_stays_in_view_while_frames_come(served: tuple[str, Any]) -> None:
    """Dragging on the live picture to add a missed card: each frame's answer redrew the boxes and took the box being
    drawn away, so the player drew blind. It now stays, under the finger, until it is let go (the editor opens)."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    camera_on(page, new_match(page, base))
    answered = live_frames(page, "requestfinished")
    picture = page.locator("#overlay").bounding_box()
    assert picture is not None
    x, y = picture["x"] + picture["width"] * 0.6, picture["y"] + picture["height"] * 0.2  # no card there
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 40, y + 50, steps=4)
    ghost = page.locator("#overlay rect.ghost")
    expect(ghost).to_have_count(1)
    wait_for_more(page, answered, 2, "frames answered (and drawn) while the box was drawn")
    expect(ghost).to_have_count(1)
    page.mouse.move(x + 60, y + 80, steps=2)
    assert float(ghost.get_attribute("width") or 0) > 0
    page.mouse.up()
    expect(page.locator("#card-editor")).to_be_visible()
    expect(ghost).to_have_count(0)
    assert not errors, errors


def test_two_fingers_pan_the_zoomed_picture_on_a_phone(served: tuple[str, Any]) -> None:
    """Zoomed on a phone, the picture showed its top left corner only: it takes no touch gestures (one finger draws a
    missed card), so a swipe to reach the cards drew a box and asked for a card instead. Two fingers now pan it."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    camera_on(page, new_match(page, base))
    page.locator("#zoom").tap()
    expect(page.locator("#zoom")).to_have_text("Zoom 2×")
    scrolled = "() => document.querySelector('.stage-scroll').scrollLeft"
    furthest = "() => { const v = document.querySelector('.stage-scroll'); return v.scrollWidth - v.clientWidth; }"
    view = page.evaluate(furthest)
    page.wait_for_function(f"() => ({scrolled})() > 0", timeout=5_000)  # scrolled once the paused picture is drawn
    left = page.evaluate(scrolled)
    assert abs(left - view / 2) <= 1, "zoomed about the middle, not opened on the top left"
    picture = page.locator(".stage-scroll").bounding_box()
    assert picture is not None
    x, y = picture["x"] + picture["width"] * 0.6, picture["y"] + picture["height"] * 0.6
    touch = page.context.new_cdp_session(page)

    def fingers(kind: str, dx: float = 0) -> None:
        touch_fingers(touch, kind, [(x + dx, y), (x + 40 + dx, y)])

    fingers("touchStart")
    for step in range(1, 6):
        fingers("touchMove", -30 * step)  # to the left: the picture's right half comes into view
    touch_fingers(touch, "touchEnd", [])
    assert page.evaluate(scrolled) == min(left + 150, view)
    expect(page.locator("#zoom")).to_have_text("Zoom 2×")  # the fingers' spread kept: a pan, no pinch
    expect(page.locator("#card-editor")).to_be_hidden()  # no box drawn, no card asked for
    expect(page.locator("#overlay rect.ghost")).to_have_count(0)
    for kind, dx in (("touchStart", 0), ("touchMove", 30), ("touchMove", 60)):  # one finger still draws a box
        touch.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [{"x": x + dx, "y": y + dx, "id": 0}]})
    touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    expect(page.locator("#card-editor")).to_be_visible()
    assert not errors, errors


def touch_fingers(touch: Any, kind: str, points: list[tuple[float, float]]) -> None:
    """Chromium's touch screen (``touch``: a CDP session) sent ``kind`` ("touchStart", "touchMove", "touchEnd") with a
    finger at each of ``points`` (none for the end), the fingers numbered in order."""
    fingers = [{"x": x, "y": y, "id": number} for number, (x, y) in enumerate(points)]
    touch.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": fingers})


def test_two_fingers_pinch_the_picture_within_the_zoom_buttons_steps(served: tuple[str, Any]) -> None:
    """At 390x844 a pinch on the picture did nothing: only the Zoom button zoomed it (1, 2, 3, 1). Two fingers moved
    apart zoom it now, about the spot between them (it stays under them), no further than the button's 3x nor below
    the whole picture; the button says how far and goes on from there; one finger still draws a box."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    camera_on(page, new_match(page, base))
    picture = page.locator(".stage-scroll").bounding_box()
    assert picture is not None
    x, y = picture["x"] + picture["width"] * 0.4, picture["y"] + picture["height"] / 2  # room for 240 px apart
    spot = """([x, y]) => { const view = document.querySelector('.stage-scroll');
        const stage = document.getElementById('stage').getBoundingClientRect();
        return [(x - stage.left) / stage.width, (y - stage.top) / stage.height, stage.width / view.clientWidth]; }"""
    touch = page.context.new_cdp_session(page)

    def pinch(spreads: list[float]) -> None:
        """Two fingers about x, y, as far apart as each of ``spreads`` in turn, then lifted."""
        for step, spread in enumerate(spreads):
            touch_fingers(touch, "touchStart" if step == 0 else "touchMove", [(x - spread / 2, y), (x + spread / 2, y)])
        touch_fingers(touch, "touchEnd", [])

    under = page.evaluate(spot, [x, y])
    pinch([40, 50, 60, 70, 80])  # twice as far apart
    expect(page.locator("#zoom")).to_have_text("Zoom 2×")
    expect(page.locator("#zoom")).to_have_attribute("aria-pressed", "true")
    now = page.evaluate(spot, [x, y])
    assert now[2] == pytest.approx(2, abs=0.01), "the picture is twice the view's width"
    assert now[:2] == pytest.approx(under[:2], abs=0.01), "the spot between the fingers stays under them"
    no_sideways_scroll(page, "the picture pinched")
    page.locator("#zoom").tap()  # the button goes on from the pinch's 2x
    expect(page.locator("#zoom")).to_have_text("Zoom 3×")
    page.locator("#zoom").tap()
    expect(page.locator("#zoom")).to_have_text("Zoom")
    pinch([40, 100, 200, 240])  # far apart: the button's last step, no further
    expect(page.locator("#zoom")).to_have_text("Zoom 3×")
    assert page.evaluate(spot, [x, y])[2] == pytest.approx(3, abs=0.01)
    pinch([240, 30])  # together: the whole picture, no smaller
    expect(page.locator("#zoom")).to_have_text("Zoom")
    expect(page.locator("#zoom")).to_have_attribute("aria-pressed", "false")
    assert page.evaluate(spot, [x, y])[2] == pytest.approx(1, abs=0.01)
    expect(page.locator("#card-editor")).to_be_hidden()  # no box drawn, no card asked for
    expect(page.locator("#overlay rect.ghost")).to_have_count(0)
    for kind, dx in (("touchStart", 0), ("touchMove", 30), ("touchMove", 60)):  # one finger still draws a box
        touch_fingers(touch, kind, [(x + dx, y + dx / 2)])
    touch_fingers(touch, "touchEnd", [])
    expect(page.locator("#card-editor")).to_be_visible()
    assert not errors, errors


OPENED_CAMERAS = """(() => { window.openedCameras = [];
    const open = navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
    navigator.mediaDevices.getUserMedia = async (asked) => {
        const stream = await open(asked);
        window.openedCameras.push(stream);
        return stream; }; })()"""
LIVE_CAMERAS = "() => window.openedCameras.filter((s) => s.getVideoTracks()[0].readyState === 'live').length"


def test_a_camera_started_again_is_read_afresh(served: tuple[str, Any]) -> None:
    """Another camera chosen, or the camera stopped and started again, posted as the camera before: the server voted
    its first frames with the old camera's and called the old cards stable for a second. Each start now names a new
    camera (``test_web_live.test_a_page_switching_to_another_camera_is_read_afresh``: a new size does too)."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    page.click("#camera-stop")
    before = len(frames)
    page.click("#camera-start")
    expect(page.locator("#camera-status")).to_have_text(STABLE, timeout=30_000)
    ids = [parse_qs(urlparse(url).query)["camera"][0] for url in frames]
    assert len(set(ids[:before])) == 1 and len(set(ids[before:])) == 1, ids
    assert ids[0] != ids[-1]
    assert not errors, errors


STATUSES_SHOWN = """() => { const status = document.getElementById('camera-status');
    window.statusesShown = [];
    new MutationObserver(() => window.statusesShown.push(status.textContent))
        .observe(status, { childList: true, characterData: true, subtree: true }); }"""
"""Records each text the camera's status shows from now on in ``window.statusesShown`` (one shown for a moment too)."""


def test_a_page_that_cannot_draw_a_reading_says_so_as_a_page_error_and_the_camera_goes_on(
    served: tuple[str, Any],
) -> None:
    """The page drawing a frame's reading failed inside the frame loop: the error was said to the player as "Camera
    frames not read", the next frame waited 1, 2 then 5 s, and no page error was raised. It is a page error now, and
    the camera goes on."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    camera_on(page, new_match(page, base))
    answered = live_frames(page, "requestfinished")
    page.evaluate(STATUSES_SHOWN)
    page.evaluate(
        """() => { const revoke = URL.revokeObjectURL;  // the picture before, let go as a frame's reading is drawn
            URL.revokeObjectURL = (url) => {
                URL.revokeObjectURL = revoke;
                throw new Error('the page could not draw the reading'); }; }"""
    )
    wait_for_more(page, answered, 4, "frames answered once a reading could not be drawn")
    assert page.evaluate("() => URL.revokeObjectURL.name") == "revokeObjectURL", "no reading drawn since"
    assert errors == ["the page could not draw the reading"], errors
    shown = page.evaluate("() => window.statusesShown")
    assert not any("not read" in status for status in shown), shown
    expect(page.locator("#camera-status")).to_have_text(STABLE)


def test_a_frame_of_the_camera_before_answered_after_a_switch_is_never_drawn(served: tuple[str, Any]) -> None:
    """Another camera chosen while a frame of the one before awaited its answer: that answer, come after the switch,
    was drawn as the new camera's reading (and the new camera's frames waited for it). It is dropped now."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    frames = camera_on(page, new_match(page, base))
    answered = live_frames(page, "requestfinished")
    before = parse_qs(urlparse(frames[-1]).query)["camera"][0]
    held: list[Any] = []
    page.route("**/live/frame*", lambda route: held.append(route) if before in route.request.url else route.fallback())
    wait_for_more(page, held, 1, "frames of the camera before awaiting their answer")
    page.evaluate(STATUSES_SHOWN)
    page.dispatch_event("#camera-select", "change")  # the default camera chosen again: switched to afresh
    expect(page.locator("#camera-status")).not_to_have_text(STABLE)
    old_answer = held[0].fetch()
    held[0].fulfill(response=old_answer, json={**old_answer.json(), "unread": "the camera before"})
    wait_for_more(page, answered, 3, "frames answered after the switch")
    expect(page.locator("#camera-status")).to_have_text(STABLE, timeout=30_000)
    shown = page.evaluate("() => window.statusesShown")
    assert not any("the camera before" in status for status in shown), shown
    assert not errors, errors


def test_start_camera_tapped_twice_leaves_no_camera_on(served: tuple[str, Any]) -> None:
    """Start camera tapped twice before the browser opened the camera opened it twice, and the first stream was never
    stopped: after Stop camera the camera stayed on (its light lit) until the page closed."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    page.add_init_script(OPENED_CAMERAS)
    page.goto(new_match(page, base))
    page.wait_for_selector("body[data-ready=true]")
    page.evaluate("() => { const start = document.getElementById('camera-start'); start.click(); start.click(); }")
    expect(page.locator("#camera-status")).to_have_text(STABLE, timeout=30_000)
    assert page.evaluate("() => window.openedCameras.length") == 2
    assert page.evaluate(LIVE_CAMERAS) == 1
    page.click("#camera-stop")
    assert page.evaluate(LIVE_CAMERAS) == 0
    assert not errors, errors


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        ("NotAllowedError", "Camera unavailable: this page was not allowed to use the camera: allow it in the"),
        ("OverconstrainedError", "Camera unavailable: the camera chosen is not there any more (unplugged?)"),
    ],
)
def test_a_camera_that_will_not_start_says_why_and_turns_the_camera_off(
    served: tuple[str, Any], failure: str, said: str
) -> None:
    """Another camera picked from the list that is gone (unplugged) or refused: the camera on was stopped, yet the page
    kept its Stop button, a black picture with the last reading's boxes over it, "Stable" and the proposal, and said
    "Camera unavailable: . Type the cards instead." (the browser's message is empty). Now the camera is off, says why
    in words, the cards read staying; a camera gone is no longer the one chosen."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    camera_on(page, new_match(page, base))
    page.evaluate(
        """failure => {
            navigator.mediaDevices.getUserMedia = async () => { throw new DOMException('', failure); };
            const select = document.getElementById('camera-select');
            select.append(new Option('USB camera', 'unplugged-camera'));
            select.value = 'unplugged-camera';
            select.dispatchEvent(new Event('change')); }""",
        failure,
    )
    status = page.locator("#camera-status")
    expect(status).to_contain_text(said)
    expect(page.locator("#camera-stop")).to_be_hidden()
    expect(page.locator("#camera-start")).to_be_visible()
    expect(page.locator("#stage-wrap")).to_be_hidden()
    expect(page.locator("#chips-1 .chip")).to_have_count(1)
    if failure == "OverconstrainedError":
        expect(page.locator("#camera-select")).to_have_value("")  # Start camera again opens the default camera
    assert not errors, errors


class BumpedCamera(ScaledDetector):
    """``ScaledDetector`` whose live frames are declined as blurred while ``moving``."""

    moving = False

    def detect_live(self, image_bgr: Any) -> Detections:
        if self.moving:
            raise FrameNotRead(BLURRED)
        return self.detect(image_bgr)


def test_a_blurred_frame_says_so_and_keeps_the_cards(tmp_path: Path) -> None:
    """A camera bumped: its smeared frames are not read (``scorer.vision.sharpness``) and the page said nothing of it;
    now it says why, the cards read before staying, and goes on once frames are read again."""
    from playwright.sync_api import expect

    camera = BumpedCamera(ONE_CARD)
    with camera_table(tmp_path, camera) as (base, browser):
        errors: list[str] = []
        page = page_of(browser, errors)
        camera_on(page, new_match(page, base))
        camera.moving = True
        status = page.locator("#camera-status")
        expect(status).to_have_text(f"{STABLE} · Last frame not read: {BLURRED}")
        expect(page.locator("#chips-1 .chip")).to_have_count(1)
        camera.moving = False
        expect(status).to_have_text(STABLE)
        assert not errors, errors


def test_a_press_on_a_box_dragged_away_and_back_is_a_box_drawn_never_a_tap_as_well(served: tuple[str, Any]) -> None:
    """The picture's taps and its drawn boxes each followed the pointers on their own: a press on a box dragged away
    (drawing a box from there) and brought back before it lifted was a box drawn, too small to keep, and a tap as well,
    opening the card under it. One gesture now: once drawing, it is no tap (``PictureGesture``, tests/js)."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = page_of(browser, errors)
    camera_on(page, new_match(page, base))
    page.focus("#upcard-input")  # pauses the picture: its boxes stay where they are measured
    expect(page.locator("#camera-status")).to_contain_text("Paused")
    box = page.locator('#overlay g.box[data-card="2D"] rect.outline').bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 40, y + 30, steps=4)
    expect(page.locator("#overlay rect.ghost")).to_have_count(1)
    page.mouse.move(x + 4, y + 3, steps=4)
    page.mouse.up()
    page.wait_for_timeout(300)
    expect(page.locator("#card-editor")).to_be_hidden()
    expect(page.locator("#overlay rect.ghost")).to_have_count(0)
    page.mouse.click(x, y)  # a tap still opens its card
    expect(page.locator("#editor-title")).to_have_text("Correct 2♦")
    assert not errors, errors


class JitteryCamera(ScaledDetector):
    """``ScaledDetector`` whose boxes move 2 pixels to the right and back from frame to frame, as a real camera's do."""

    frames = 0

    def detect(self, image_bgr: Any) -> Detections:
        self.frames += 1
        shift = 2 * (self.frames % 2)
        found = super().detect(image_bgr)
        moved = tuple(replace(c, box=(c.box[0] + shift, c.box[1], c.box[2] + shift, c.box[3])) for c in found.cards)
        return replace(found, cards=moved)


@pytest.fixture
def jittery(tmp_path: Path) -> Iterator[tuple[str, Any]]:
    with camera_table(tmp_path, JitteryCamera(ONE_CARD)) as (base, browser):
        yield base, browser


WATCH_OVERLAY = """() => {
    const svg = document.getElementById('overlay');
    window.drawnBefore = [...svg.children];
    const changes = (window.overlayChanges = { added: 0, removed: 0, boxAt: new Set() });
    new MutationObserver((records) => records.forEach((record) => {
        changes.added += record.addedNodes.length;
        changes.removed += record.removedNodes.length;
        if (record.target.matches?.('g.box rect.outline')) changes.boxAt.add(record.target.getAttribute('x'));
    })).observe(svg, { childList: true, subtree: true, attributes: true, attributeFilter: ['x'] });
}"""
"""Tags the overlay's nodes as drawn now and counts the nodes added to or removed from it from now on, and the places
its card's box is drawn at."""
OVERLAY_CHANGES = """() => ({
    kept: window.drawnBefore.length > 0 && window.drawnBefore.every((node) => node.isConnected),
    added: window.overlayChanges.added,
    removed: window.overlayChanges.removed,
    boxAt: window.overlayChanges.boxAt.size,
})"""


def test_the_live_pictures_boxes_are_moved_in_place_never_drawn_anew(jittery: tuple[str, Any]) -> None:
    """Each frame drew every box, tap target and label over the live picture anew (a new id per card as the camera's
    boxes moved a pixel), costing a phone's page a redraw a few times a second, the box under the finger or the mouse
    losing its hover. The same cards now keep their nodes, moved to where the camera sees them."""
    base, browser = jittery
    errors: list[str] = []
    page = page_of(browser, errors)
    camera_on(page, new_match(page, base))
    answered = live_frames(page, "requestfinished")
    page.evaluate(WATCH_OVERLAY)
    wait_for_more(page, answered, 4, "frames answered")
    changes = page.evaluate(OVERLAY_CHANGES)
    assert changes == {"kept": True, "added": 0, "removed": 0, "boxAt": 2}, changes
    assert not errors, errors


def test_a_tap_on_a_box_across_a_live_frame_opens_its_card(jittery: tuple[str, Any]) -> None:
    """A finger down on a card's box as a frame came, its box moved a pixel: the tap, taken as the finger lifted, was of
    the card's id before the frame, gone with it, and opened "Add a missed card" where the card tapped was meant."""
    from playwright.sync_api import expect

    base, browser = jittery
    errors: list[str] = []
    page = page_of(browser, errors)
    camera_on(page, new_match(page, base))
    answered = live_frames(page, "requestfinished")
    box = page.locator('#overlay g.box[data-card="2D"] rect.outline').bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    wait_for_more(page, answered, 2, "frames answered while the finger was down")
    page.mouse.up()
    expect(page.locator("#editor-title")).to_have_text("Correct 2♦")
    assert not errors, errors


def sideways(cards: str, x: int, top: int) -> list[CardDetection]:
    """A side player's cards lying sideways, one under the next, from ``top`` down (a 1280 x 720 picture)."""
    found = parse_cards(cards)
    return [CardDetection(card, (x, top + 70 * i, x + 120, top + 70 * i + 65), 0.95) for i, card in enumerate(found)]


def in_a_row(cards: str, y: int) -> list[CardDetection]:
    """A player's cards side by side at height ``y``, from x = 300 on (a 1280 x 720 picture)."""
    found = parse_cards(cards)
    return [CardDetection(card, (300 + 90 * i, y, 385 + 90 * i, y + 120), 0.95) for i, card in enumerate(found)]


FOUR_HANDS = [
    *in_a_row("7C 7D 7H 7S 8S 9S 2C", 580),  # Ann, at the bottom
    *sideways("QS 6S KH 3D 5H AD JC", 10, 115),  # Bob, at the left
    *in_a_row("4C 5C 6C KD 9D 2D 3H", 10),  # Cat, at the top
    *sideways("AS 2H 3C 4S 5D 6H 8C", 1150, 115),  # Dan, at the right: A♠ in the picture's top right corner
]
COVERED_LABELS = """() => [...document.querySelectorAll('#overlay text.label')].filter((label) => {
        const r = label.getBoundingClientRect();
        const spots = [[r.left + 2, r.top + 2], [r.right - 2, r.top + 2], [r.left + 2, r.bottom - 2],
                       [r.right - 2, r.bottom - 2], [(r.left + r.right) / 2, (r.top + r.bottom) / 2]];
        return spots.some(([x, y]) => !document.elementFromPoint(x, y)?.closest('#overlay'));
    }).map((label) => label.textContent)"""
"""The labels on the picture that something else is drawn over at one of their corners or their middle."""
UNCOVERED_IN_VIEW = """(selector) => {
        const control = document.querySelector(selector);
        const r = control.getBoundingClientRect();
        const middle = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
        return r.top >= 0 && r.bottom <= innerHeight && middle === control;
    }"""
"""Whether the control is in the window, nothing drawn over its middle (a phone's pinned totals)."""


def four_players_on_camera(page: Any, base: str) -> None:
    page.goto(new_match(page, base, ("Ann", "Bob", "Cat", "Dan")))
    page.wait_for_selector("body[data-ready=true]")
    page.click("#camera-start")
    page.wait_for_function(
        f"() => document.querySelectorAll('#overlay g.box').length === {len(FOUR_HANDS)}", timeout=30_000
    )


def test_no_control_covers_a_cards_label_with_four_players(tmp_path: Path) -> None:
    """With four players at 390 px the Zoom button, drawn over the picture's top right corner, covered the labels of
    Dan's top cards (A♠, 2♥ at the right edge). It is above the picture now, at every width, in view when zoomed."""
    from playwright.sync_api import expect

    with camera_table(tmp_path, ScaledDetector(FOUR_HANDS)) as (base, browser):
        errors: list[str] = []
        for viewport in (PHONE, DESKTOP):
            page = browser.new_context(viewport=viewport, has_touch=viewport == PHONE).new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            four_players_on_camera(page, base)
            labels = page.locator("#overlay text.label")
            expect(labels.filter(has_text="A♠")).to_have_count(1)  # Dan's top card's label is drawn
            assert page.evaluate(COVERED_LABELS) == [], viewport
            page.locator("#zoom").click()
            expect(page.locator("#zoom")).to_have_text("Zoom 2×")
            assert page.evaluate(UNCOVERED_IN_VIEW, "#zoom"), "the picture grown by the zoom hid its button"
            page.context.close()
        assert not errors, errors


FOCUSED_CARD = "() => document.activeElement.dataset.card ?? `#${document.activeElement.id}`"
"""The card of the box or chip with the focus, else the focused element's id."""


def test_the_pictures_boxes_are_one_tab_stop_whose_focus_stays_on_its_card_as_frames_come(tmp_path: Path) -> None:
    """At 390x844 with four players on camera, each of the 28 boxes was a Tab stop of its own (29 Tab presses from Stop
    camera to Zoom), and the live camera's every frame drew them anew, the box focused with them: the focus was left
    on the page's body. The boxes are one stop now, the arrow keys crossing them by hand as the chips list them; the
    box focused stays focused (the same element) as frames come, Enter still opens its card, and its card deleted
    there leaves the focus on the box now in its place."""
    from playwright.sync_api import expect

    with camera_table(tmp_path, ScaledDetector(FOUR_HANDS)) as (base, browser):
        errors: list[str] = []
        page = browser.new_context(viewport=PHONE).new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        frames = live_frames(page, "request")
        four_players_on_camera(page, base)
        by_hand = page.eval_on_selector_all("#hands .chips .chip", "(chips) => chips.map((chip) => chip.dataset.card)")
        assert len(by_hand) == len(FOUR_HANDS)
        page.focus("#camera-stop")
        stops: list[str] = []
        while page.evaluate(FOCUSED_CARD) != "#zoom" and len(stops) < 40:
            page.keyboard.press("Tab")
            stops.append(page.evaluate(FOCUSED_CARD))
        assert stops == [by_hand[0], "#zoom"], stops  # one stop for the picture: its first box by hand
        expect(page.locator("#overlay")).to_have_role("toolbar")

        page.keyboard.press("Shift+Tab")
        crossed = [page.evaluate(FOCUSED_CARD)]
        for _ in by_hand[1:]:
            page.keyboard.press("ArrowRight")
            crossed.append(page.evaluate(FOCUSED_CARD))
        assert crossed == by_hand  # hand by hand, as the chips below list them
        page.keyboard.press("Home")
        page.keyboard.press("ArrowDown")
        expect(page.locator(f'#overlay g.box[data-card="{by_hand[1]}"]')).to_be_focused()
        page.evaluate("() => { window.focusedBox = document.activeElement; }")
        wait_for_more(page, frames, 3, "frames sent with a box focused")
        assert page.evaluate("() => document.activeElement === window.focusedBox && window.focusedBox.isConnected")
        page.keyboard.press("Tab")
        page.keyboard.press("Shift+Tab")  # back on the picture: on the box last focused there
        expect(page.locator(f'#overlay g.box[data-card="{by_hand[1]}"]')).to_be_focused()
        expect(page.locator('#overlay g.box[tabindex="0"]')).to_have_count(1)

        page.keyboard.press("Enter")  # its card in the editor, as before
        shown = page.locator("#chips-1 .chip").nth(1).inner_text()
        expect(page.locator("#editor-title")).to_have_text(f"Correct {shown}")
        page.click("#editor-delete")
        expect(page.locator("#card-editor")).to_be_hidden()
        expect(page.locator(f'#overlay g.box[data-card="{by_hand[1]}"]')).to_have_count(0)
        expect(page.locator(f'#overlay g.box[data-card="{by_hand[2]}"]')).to_be_focused()  # the box now in its place
        assert not errors, errors


SIDEWAYS_PHONE = {"width": PHONE["height"], "height": PHONE["width"]}
PICTURE_IN_VIEW = """() => {
    const view = document.querySelector('.stage-scroll').getBoundingClientRect();
    const svg = document.getElementById('overlay').getBoundingClientRect();
    const box = document.querySelector('#overlay g.box rect.outline').getBoundingClientRect();
    const hit = document.querySelector('#overlay rect.hit').getBoundingClientRect();
    const video = document.getElementById('video');
    return {
        whole: svg.top >= view.top - 0.5 && svg.bottom <= view.bottom + 0.5,
        boxInView: box.top >= view.top && box.bottom <= view.bottom && box.left >= view.left && box.right <= view.right,
        tapTarget: Math.min(hit.width, hit.height),
        shape: svg.width / svg.height,
        picture: video.videoWidth / video.videoHeight,
    };
}"""
"""Whether the picture is whole in its scroll box (one finger draws on it: it cannot be scrolled to what is hidden),
the card's box in view, its tap target's smaller side, and the shapes of what is drawn over and of the picture."""


def test_a_phone_turned_sideways_shows_the_whole_picture_with_full_size_tap_targets(served: tuple[str, Any]) -> None:
    """A phone turned sideways (844 x 390) showed the picture full width in a box 75% of the screen tall: its lower
    part, where the first player's cards lie, was cut off, and one finger on it draws, so it could not be scrolled
    into view. The picture now fits that height, as narrow as it makes it (the bars beside it scroll the page), its
    tap targets still 32 px."""
    from playwright.sync_api import expect

    base, browser = served
    errors: list[str] = []
    page = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    camera_on(page, new_match(page, base))
    for viewport in (SIDEWAYS_PHONE, PHONE):  # turned sideways, then back
        page.set_viewport_size(viewport)
        page.wait_for_timeout(500)  # the boxes drawn again for the new size
        shown = page.evaluate(PICTURE_IN_VIEW)
        assert shown["whole"] and shown["boxInView"], (viewport, shown)
        assert shown["tapTarget"] >= MIN_TAP_PX - 0.5, (viewport, shown)
        assert shown["shape"] == pytest.approx(shown["picture"], rel=0.02), "drawn over the picture, no bars beside"
        no_sideways_scroll(page, f"the camera at {viewport}")
    page.focus("#upcard-input")  # paused: the box stays where it is measured
    box = page.locator("#overlay g.box rect.outline").bounding_box()
    assert box is not None
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("#editor-title")).to_have_text("Correct 2♦")
    assert not errors, errors
