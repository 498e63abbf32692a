"""The table page as players use it, in headless Chromium: one test per problem of issue 10.

1 a round is stored once however often Confirm is pressed; 2 a confirmed round is not proposed again;
3 seats in playing order with 3-4 players; 4 no stale proposal is shown or posted; 6 correcting on a
phone (chips tied to boxes, zoom, 32 px hit areas, labels apart); 7 no silent surprises.
(Problem 5, the phone layout, is ``test_page_sizes.py``.)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    BROWSER_TESTS,
    DESKTOP,
    FAKE_CAMERA,
    MIN_TAP_PX,
    PHONE,
    ScaledDetector,
    launch,
    live_server,
    screenshot_dir,
    set_page_hidden,
)
from test_seating import BOTTOM, LEFT, RIGHT, TOP, UPCARD, cards_at

from scorer.cards import parse_cards
from scorer.vision.types import CardDetection

pytestmark = BROWSER_TESTS

ANN = "8C 9C 10C JC 9H 10H JH 2S 2D AC"
BOB = "QS QC QH 10S JS 3D 5H 7S AD 7D"


@pytest.fixture
def app(tmp_path: Path) -> Any:
    from web import create_app

    return create_app({"DATA_DIR": str(tmp_path / "data"), "DETECTOR": ScaledDetector()})


@pytest.fixture
def base(app: Any) -> Iterator[str]:
    with live_server(app) as url:
        yield url


@pytest.fixture
def playwright() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as running:
        yield running


@pytest.fixture
def browser(playwright: Any) -> Iterator[Any]:
    chromium = launch(playwright, FAKE_CAMERA)
    yield chromium
    chromium.close()


def new_match(page: Any, base: str, players: list[str] | None = None, **extra: Any) -> int:
    players = players or ["Ann", "Bob"]
    rules = "oklahoma" if len(players) == 2 else "oklahoma-multi"
    created = page.request.post(
        f"{base}/api/matches", data={"players": players, "rules": rules, "dealer": players[-1], **extra}
    )
    assert created.status == 201, created.text()
    match_id: int = created.json()["id"]
    return match_id


def open_table(browser: Any, base: str, match_id: int, size: dict = DESKTOP) -> Any:
    page = browser.new_page(viewport=size)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(f"{base}/matches/{match_id}")
    page.wait_for_selector("body[data-ready=true]")
    return page


def type_hand(page: Any, seat: int | str, cards: str) -> None:
    target = "#upcard-input" if seat == "upcard" else f"#hand-{seat}"
    page.fill(target, cards)
    page.press(target, "Enter")


def type_round(page: Any, ann: str = ANN, bob: str = BOB, upcard: str = "KS") -> None:
    type_hand(page, 1, ann)
    type_hand(page, 2, bob)
    type_hand(page, "upcard", upcard)
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)


def rounds_stored(page: Any, base: str, match_id: int) -> int:
    count: int = len(page.request.get(f"{base}/api/matches/{match_id}").json()["rounds"])
    return count


def delay_route(page: Any, pattern: str, seconds: float, only_first: bool = False) -> list[str]:
    """Hold requests matching ``pattern`` for ``seconds`` (a slow phone network); returns the bodies seen."""
    seen: list[str] = []

    def slow(route: Any) -> None:
        seen.append(route.request.post_data or "")
        if not only_first or len(seen) == 1:
            time.sleep(seconds)
        route.continue_()

    page.route(pattern, slow)
    return seen


# ---------------------------------------------------------------- 1: exactly once


def test_confirm_pressed_twice_on_a_slow_network_stores_one_round(browser: Any, base: str) -> None:
    from playwright.sync_api import expect

    page = open_table(browser, base, match_id := new_match(browser.new_page(), base))
    type_round(page)
    page.click("#knock-1")
    expect(page.locator("#proposal")).to_contain_text("Ann knocks: Ann scores 18")
    posts = delay_route(page, "**/rounds", 0.25)
    page.evaluate(
        """() => { const b = document.getElementById('confirm-round'); b.click(); setTimeout(() => b.click(), 150);
                   setTimeout(() => b.click(), 20); }"""
    )
    expect(page.locator("#confirm-round")).to_be_disabled()
    expect(page.locator("#sheet-body .total-points").first).to_have_text("18", timeout=10_000)
    page.wait_for_timeout(600)
    assert rounds_stored(page, base, match_id) == 1 and len(posts) == 1
    assert '"number":1' in posts[0].replace(" ", "")
    assert not page.errors, page.errors


def test_two_tables_confirming_the_same_round_store_it_once(browser: Any, base: str) -> None:
    """Two phones at one table both confirm round 1 through a slow network: the server keeps one (409)."""
    from playwright.sync_api import expect

    probe = browser.new_page()
    probe_id = new_match(probe, base)
    answers = [
        probe.request.post(f"{base}/api/matches/{probe_id}/rounds", data={"draw": True, "number": 1}).status
        for _ in "12"
    ]
    if answers[1] == 201:
        pytest.skip('the server does not check "number" yet (the server side of issue 10, problem 1)')
    match_id = new_match(browser.new_page(), base)
    pages = [open_table(browser, base, match_id) for _ in range(2)]
    for page in pages:
        type_round(page)
        page.click("#knock-1")
        expect(page.locator("#proposal")).to_contain_text("Ann scores 18")
        delay_route(page, "**/rounds", 0.25)
    pages[0].evaluate("() => document.getElementById('confirm-round').click()")
    pages[1].evaluate("() => document.getElementById('confirm-round').click()")
    for page in pages:
        expect(page.locator("#sheet-body .total-points").first).to_have_text("18", timeout=10_000)
    assert rounds_stored(pages[0], base, match_id) == 1
    expect(pages[1].locator("#notice")).to_contain_text("already on the sheet")


# ---------------------------------------------------------------- 2: a confirmed round stays confirmed


@contextlib.contextmanager
def camera_on_the_stand_in_table(playwright: Any, tmp_path: Path) -> Iterator[tuple[Any, str, int]]:
    """A new match's table page with its camera started on a fake webcam filming the stand-in table (Ann's knock
    and Bob's hand, ``test_browser.stand_in_scene``): (page, base URL, match id)."""
    from browser_support import write_y4m
    from test_browser import stand_in_scene

    from web import create_app

    scene, cards = stand_in_scene()
    video = tmp_path / "table.y4m"
    write_y4m(video, [(scene, 15)])
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "DETECTOR": ScaledDetector(cards)})
    browser = launch(playwright, [*FAKE_CAMERA, f"--use-file-for-fake-video-capture={video}"])
    try:
        with live_server(app) as base:
            match_id = new_match(browser.new_page(), base)
            page = open_table(browser, base, match_id)
            page.click("#camera-start")
            yield page, base, match_id
    finally:
        browser.close()


def test_a_confirmed_round_is_not_proposed_again_after_resume_live(playwright: Any, tmp_path: Path) -> None:
    """The camera still sees the confirmed round's cards (a card corrected, so in another order): no proposal."""
    from playwright.sync_api import expect

    with camera_on_the_stand_in_table(playwright, tmp_path) as (page, base, match_id):
        # The stable table proposes Ann's knock by itself.
        expect(page.locator("#proposal")).to_contain_text("Ann knocks: Ann scores 18", timeout=20_000)
        # Correct as players do: delete Bob's 7D, then type it back into his hand (now the last card).
        page.locator('#chips-2 .chip[data-card="7D"]').click()
        page.click("#editor-delete")
        expect(page.locator('#chips-2 .chip[data-card="7D"]')).to_have_count(0)
        type_hand(page, 2, BOB.replace("7D", "").strip() + " 7D")
        expect(page.locator("#proposal")).to_be_visible(timeout=10_000)  # the same knock, scored again
        expect(page.locator("#proposal")).to_contain_text("Ann knocks: Ann scores 18")
        page.click("#confirm-round")
        expect(page.locator("#sheet-body .total-points").first).to_have_text("18", timeout=10_000)
        expect(page.locator("#resume-live")).to_be_hidden()  # confirming resumed the camera
        page.wait_for_timeout(3000)  # the camera reads the same table many times
        expect(page.locator("#chips-2 .chip")).to_have_count(10)
        expect(page.locator("#proposal")).to_be_hidden()
        assert rounds_stored(page, base, match_id) == 1
        assert not page.errors, page.errors


def test_a_chip_stays_the_same_button_while_the_camera_reads_the_same_cards(playwright: Any, tmp_path: Path) -> None:
    """Each frame the camera reads used to draw every chip anew: a tap spanning a frame (down on one button, up on
    its replacement) was lost, as it was once in CI on a busy machine. Unchanged chips are now left as they are."""
    from playwright.sync_api import expect

    with camera_on_the_stand_in_table(playwright, tmp_path) as (page, _, _):
        expect(page.locator("#proposal")).to_contain_text("Ann knocks", timeout=20_000)  # the table is steady
        chip = '#chips-2 .chip[data-card="7D"]'
        page.evaluate(f"document.querySelector('{chip}').dataset.seen = 'yes'")
        frames = page.evaluate("() => window.performance.getEntriesByType('resource').length")
        page.wait_for_function(
            f"() => window.performance.getEntriesByType('resource').length >= {frames} + 3", timeout=20_000
        )  # three more requests (frames read) since
        expect(page.locator(chip)).to_have_attribute("data-seen", "yes")
        page.locator(chip).click()
        expect(page.locator("#editor-delete")).to_be_visible()
        assert not page.errors, page.errors


# ---------------------------------------------------------------- 3: seats in playing order


@pytest.mark.parametrize("players", [["Ann", "Bob", "Cat"], ["Ann", "Bob", "Cat", "Dan"]], ids=["3", "4"])
def test_each_player_gets_the_cards_of_their_seat(browser: Any, tmp_path: Path, players: list[str]) -> None:
    """Bottom, left, top, right is the playing order: Bob (second) sits at the left, Cat at the top."""
    from playwright.sync_api import expect

    from web import create_app

    detector = ScaledDetector(cards_at(BOTTOM, TOP, LEFT, RIGHT, UPCARD))
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "DETECTOR": detector})
    with live_server(app) as base:
        page = open_table(browser, base, new_match(browser.new_page(), base, players))
        page.click("#camera-start")
        seats = {"Ann": BOTTOM, "Bob": LEFT, "Cat": TOP, "Dan": RIGHT}
        for index, name in enumerate(players, start=1):
            wait_for_chips(page, f"#chips-{index}", seats[name][0].split())
        expect(page.locator("#hand-title-2")).to_contain_text("left of the picture")
        expect(page.locator("#hand-title-2 .seat-where")).to_be_visible()  # said while there is a picture
        expect(page.locator("#upcard-input")).to_have_value("9C")
        if len(players) == 3:
            wait_for_chips(page, "#out-chips", RIGHT[0].split())  # nobody sits at the right
        # Ann knocks (deadwood 1, limit 9): the proposal scores Bob (her left), then Cat.
        page.click("#knock-1")
        expect(page.locator("#proposal")).to_be_visible(timeout=10_000)
        names = page.locator("#proposal .result-player h3").all_inner_texts()
        assert [text.split(":")[0] for text in names] == players


def wait_for_chips(page: Any, selector: str, cards: list[str]) -> None:
    page.wait_for_function(
        """([selector, expected]) => JSON.stringify([...document.querySelectorAll(`${selector} .chip`)]
            .map((chip) => chip.dataset.card).sort()) === JSON.stringify(expected)""",
        arg=[selector, sorted(cards)],
        timeout=15_000,
    )


# ---------------------------------------------------------------- 4: no stale proposal


def test_a_late_proposal_for_cards_since_changed_is_never_shown_or_posted(browser: Any, base: str) -> None:
    from playwright.sync_api import expect

    match_id = new_match(browser.new_page(), base)
    page = open_table(browser, base, match_id)
    type_round(page)
    delay_route(page, "**/api/score", 1.5, only_first=True)
    page.click("#knock-1")  # asked for the table with Bob's 7D: Ann would score 18 ...
    type_hand(page, 2, BOB.replace("7D", "KD"))  # ... but Bob's 7D was a KD: Ann scores 21
    page.click("#knock-1")
    expect(page.locator("#proposal")).to_contain_text("Ann scores 21", timeout=10_000)
    page.wait_for_timeout(2000)  # the first, slow answer arrives now
    expect(page.locator("#proposal")).to_contain_text("Ann scores 21")
    page.click("#confirm-round")
    expect(page.locator("#sheet-body .total-points").first).to_have_text("21", timeout=10_000)
    stored = page.request.get(f"{base}/api/matches/{match_id}").json()["rounds"][0]
    assert "KD" in stored["input"]["hands"]["Bob"] and stored["points"]["Ann"] == 21


def test_a_proposal_takes_the_focus_to_confirm_unless_a_box_is_being_typed_in(browser: Any, base: str) -> None:
    """A late answer used to take the focus to Confirm from a hand's box: the Enter ending the box stored the round."""
    from playwright.sync_api import expect

    match_id = new_match(browser.new_page(), base)
    page = open_table(browser, base, match_id)
    type_round(page)
    page.click("#knock-1")
    expect(page.locator("#confirm-round")).to_be_focused()  # nothing typed: Enter confirms what is shown
    page.click("#cancel-proposal")
    delay_route(page, "**/api/score", 1.5)
    page.click("#knock-1")
    page.focus("#hand-2")  # the player starts correcting Bob's hand while the answer is on its way
    page.wait_for_function("() => document.getElementById('proposal').textContent.includes('Ann scores')")
    assert page.evaluate("() => document.activeElement.id") == "hand-2"
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)
    assert rounds_stored(page, base, match_id) == 0


# ---------------------------------------------------------------- 6: correcting on a phone


FAN = "AH 2H 3H 4H 6H 7H 8H 9H 10H JH"


def test_correcting_a_fanned_hand_on_a_phone(browser: Any, tmp_path: Path) -> None:
    """Boxes 6 px apart: chips open the right card and light its box, taps land on 32 px targets, labels never
    overlap, and the frozen picture zooms."""
    from playwright.sync_api import expect

    from web import create_app

    # A fanned hand: each card's box is its index corner, 14 px wide every 16 px (4 px on a phone's screen).
    fan = [CardDetection(card, (400 + 16 * i, 560, 414 + 16 * i, 600), 0.9) for i, card in enumerate(parse_cards(FAN))]
    top = [CardDetection(card, (300 + 60 * i, 40, 350 + 60 * i, 120), 0.9) for i, card in enumerate(parse_cards(BOB))]
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "DETECTOR": ScaledDetector([*fan, *top])})
    with live_server(app) as base:
        page = open_table(browser, base, new_match(browser.new_page(), base), size=PHONE)
        page.click("#camera-start")
        wait_for_chips(page, "#chips-1", FAN.split())
        page.screenshot(path=str(screenshot_dir(tmp_path) / "phone-camera-fan.png"), full_page=True)
        hits = page.evaluate(
            "() => [...document.querySelectorAll('#overlay rect.hit')].map((r) => r.getBoundingClientRect())"
        )
        assert hits and all(h["width"] >= MIN_TAP_PX - 0.5 and h["height"] >= MIN_TAP_PX - 0.5 for h in hits)
        labels = page.evaluate(
            "() => [...document.querySelectorAll('#overlay text.label')].map((t) => t.getBoundingClientRect())"
        )
        assert labels
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                apart = (
                    a["right"] <= b["left"] + 0.5
                    or b["right"] <= a["left"] + 0.5
                    or a["bottom"] <= b["top"] + 0.5
                    or b["bottom"] <= a["top"] + 0.5
                )
                assert apart, (a, b)

        page.locator('#chips-1 .chip[data-card="6H"]').click()
        expect(page.locator("#card-editor")).to_be_visible()
        expect(page.locator("#editor-title")).to_have_text("Correct 6♥")
        expect(page.locator('#overlay g.box.selected[data-card="6H"]')).to_have_count(1)
        page.click("text=Cancel")
        expect(page.locator("#overlay g.box.selected")).to_have_count(0)

        width = page.evaluate("() => document.getElementById('stage').getBoundingClientRect().width")
        page.click("#zoom")
        expect(page.locator("#resume-live")).to_be_visible()  # zooming froze the picture
        zoomed = page.evaluate("() => document.getElementById('stage').getBoundingClientRect().width")
        assert zoomed == pytest.approx(2 * width, rel=0.02)
        page.screenshot(path=str(screenshot_dir(tmp_path) / "phone-camera-zoomed.png"))
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth"), "zoom scrolls its own box"
        page.click("#zoom")
        page.click("#zoom")  # back to 1x

        # Ann's fan is gin: her proposal shows, and the picture stays in view while players read it.
        type_hand(page, "upcard", "KS")
        page.click("#knock-1")
        expect(page.locator("#proposal")).to_contain_text("Ann goes gin")
        page.locator("#confirm-round").scroll_into_view_if_needed()
        stage = page.locator("#stage-wrap").bounding_box()
        assert stage is not None and stage["y"] >= -1 and stage["y"] + stage["height"] <= PHONE["height"]
        page.screenshot(path=str(screenshot_dir(tmp_path) / "phone-camera-proposal.png"))
        # Zoomed while the proposal is shown, the picture is as wide as the zoom: it scrolls in its capped height
        # (it was drawn in that height, as small as unzoomed, beside a wide black band).
        page.click("#zoom")
        drawn = page.evaluate(
            """() => { const still = document.getElementById('still'), style = getComputedStyle(still);
                const box = still.getBoundingClientRect(), ratio = still.naturalWidth / still.naturalHeight;
                const shown = style.objectFit === 'contain' ? Math.min(box.width, box.height * ratio) : box.width;
                return [shown, still.closest('.stage-scroll').clientWidth]; }"""
        )
        assert drawn[0] == pytest.approx(2 * drawn[1], rel=0.05), drawn
        assert not page.errors, page.errors


# ---------------------------------------------------------------- 7: no silent surprises


def test_the_question_a_typed_card_waits_for_is_brought_into_view(browser: Any, base: str) -> None:
    """At 390 px, a card of another hand typed in the last hand's box and Enter: the box emptied, the count stayed
    and the question ("... Move it to Zoë's hand?") sat a screen above, unseen (the keyboard was up: no scroll)."""
    from playwright.sync_api import expect

    page = open_table(browser, base, new_match(browser.new_page(), base), size=PHONE)
    type_hand(page, 1, ANN)
    page.locator("#hand-2").scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, 400)")
    page.fill("#hand-2", "7D " + ANN.split()[0])  # Ann's first card
    page.press("#hand-2", "Enter")
    expect(page.locator("#notice")).to_contain_text("is in Ann's hand. Move it to Bob's hand?")
    expect(page.locator("#notice")).to_be_in_viewport()


def test_confirm_is_in_view_with_a_proposal_taller_than_the_screen(browser: Any, base: str) -> None:
    """At 390 px a knock's proposal is shown from its top (its result); its Confirm was under the pinned totals bar
    (two players) or off the screen (three): the buttons stay in view, over the bar, while the proposal is."""
    from playwright.sync_api import expect

    page = open_table(browser, base, new_match(browser.new_page(), base), size=PHONE)
    type_round(page)
    page.click("#knock-1")
    expect(page.locator("#proposal")).to_be_visible()
    page.wait_for_timeout(300)  # the proposal brought into view
    for scrolled in (0, 150):
        page.evaluate(f"window.scrollBy(0, {scrolled})")
        confirm = page.locator("#confirm-round").bounding_box()
        bar = page.locator(".totals-bar").bounding_box()
        assert confirm is not None and bar is not None
        assert confirm["y"] >= 0 and confirm["y"] + confirm["height"] <= bar["y"] + 1, (confirm, bar)
    page.click("#confirm-round")  # a tap there reaches it
    expect(page.locator("#sheet-body")).to_contain_text("Ann")
    expect(page.locator("#proposal")).to_be_hidden()


def test_moving_a_card_out_of_another_hand_asks_first(browser: Any, base: str) -> None:
    from playwright.sync_api import expect

    page = open_table(browser, base, new_match(browser.new_page(), base))
    type_round(page)
    type_hand(page, 1, ANN + " 7D")  # 7D is Bob's
    expect(page.locator("#notice")).to_contain_text("7♦ is in Bob's hand. Move it to Ann's hand?")
    expect(page.locator("#chips-2 .chip")).to_have_count(10)
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    # the other answer was "OK", which dropped every card typed: now it keeps the card where it is, the rest typed
    expect(page.locator("#notice button")).to_have_text(["Move", "Keep it there"])
    page.click('#notice button:text-is("Keep it there")')
    expect(page.locator("#notice")).to_be_hidden()
    expect(page.locator("#chips-2 .chip")).to_have_count(10)
    expect(page.locator("#hand-1")).to_have_value(ANN)
    type_hand(page, 1, ANN + " 7D")
    page.click('#notice button:text-is("Move")')
    expect(page.locator("#chips-1 .chip")).to_have_count(11)
    expect(page.locator("#status-2")).to_have_class("status wrong-count")  # Bob is short now, in red
    expect(page.locator("#status-2")).to_contain_text("9 cards: Oklahoma Gin deals 10")
    expect(page.locator("#knock-2")).to_be_disabled()
    # 11 cards: the page says which card Ann discards.
    expect(page.locator("#status-1")).to_contain_text("discards 7♦")  # as the chips write it
    # The same through the card editor: saving asks before moving the upcard.
    page.locator('#chips-1 .chip[data-card="AC"]').click()
    page.fill("#editor-text", "KS")
    page.click("#editor-save")
    expect(page.locator("#editor-error")).to_contain_text("K♠ is in the upcard. Save again to move it")
    page.click("text=Cancel")


def test_clearing_the_table_can_be_undone(browser: Any, base: str) -> None:
    from playwright.sync_api import expect

    page = open_table(browser, base, new_match(browser.new_page(), base))
    type_round(page)
    page.click("#clear-hands")
    expect(page.locator("#chips-1 .chip")).to_have_count(0)
    expect(page.locator("#notice")).to_contain_text("Table cleared (21 cards)")
    page.click('#notice button:text-is("Undo")')
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    expect(page.locator("#upcard-input")).to_have_value("KS")


def test_wrong_hand_sizes_never_say_can_knock(browser: Any, base: str) -> None:
    from playwright.sync_api import expect

    page = open_table(browser, base, new_match(browser.new_page(), base, ["Ann", "Bob", "Cat"]))
    type_hand(page, "upcard", "KS")
    type_hand(page, 1, ANN)  # ten cards in a seven-card game
    expect(page.locator("#status-1")).to_contain_text("10 cards: Multi-player Oklahoma Gin deals 7")
    expect(page.locator("#status-1")).to_have_class("status wrong-count")
    expect(page.locator("#status-1")).not_to_contain_text("can knock")
    expect(page.locator("#status-2")).to_have_text("0 cards")  # an empty hand: no deadwood, no knock
    expect(page.locator("#knock-1")).to_be_disabled()
    expect(page.locator("#knock-2")).to_be_disabled()


def test_a_won_match_offers_rematch_and_proposes_nothing(browser: Any, base: str) -> None:
    from playwright.sync_api import expect

    match_id = new_match(browser.new_page(), base, options={"target": 10})
    page = open_table(browser, base, match_id)
    type_round(page)
    page.click("#knock-1")
    page.click("#confirm-round")
    expect(page.locator("#match-over")).to_contain_text("Ann wins the match!")
    expect(page.locator("#match-over svg.trophy")).to_have_count(1)
    assert "\U0001f3c6" not in page.inner_text("body"), "no emoji that needs a font"
    type_hand(page, 1, ANN)
    type_hand(page, 2, BOB)
    type_hand(page, "upcard", "KS")
    page.wait_for_timeout(500)
    expect(page.locator("#knock-1")).to_be_disabled()
    expect(page.locator("#status-1")).to_have_text("10 cards · deadwood 5 · the match is over")  # why it is grey
    expect(page.locator("#proposal")).to_be_hidden()
    expect(page.locator("#record-draw")).to_be_disabled()
    page.dblclick("#rematch")  # tapped twice, and on another phone too: one rematch
    page.wait_for_url(lambda url: not url.endswith(f"/matches/{match_id}"))
    other = open_table(browser, base, match_id)
    other.click("#rematch")
    other.wait_for_url(page.url)
    assert len(page.request.get(f"{base}/api/matches").json()["matches"]) == 2
    expect(page.locator("h1")).to_have_text("Ann vs Bob")
    expect(page.locator("#sheet-body")).to_contain_text("No rounds yet.")
    expect(page.locator("#match-over")).to_be_hidden()
    # the new table looks just like the old one: it says it is the rematch (once: a reload says nothing)
    rematch = f"Rematch: a new score sheet (match #{match_id} stays under History). Ann deals first."
    expect(page.locator("#notice")).to_contain_text(rematch)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#notice")).to_be_hidden()


def grey_video(path: Path, frames: int) -> Path:
    """A plain grey MJPEG video of ``frames`` frames at 15 a second: a server camera's source."""
    import cv2
    import numpy as np

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15, (320, 180))
    for _ in range(frames):
        writer.write(np.full((180, 320, 3), 90, np.uint8))
    writer.release()
    return path


@contextlib.contextmanager
def following_the_table_camera(browser: Any, app: Any, base: str, video: Path) -> Iterator[tuple[Any, list[float]]]:
    """A table page following a server camera playing ``video``, and the times it asked for the camera's reading."""
    from web.live import attach_camera

    camera = attach_camera(app, str(video))
    try:
        page = open_table(browser, base, new_match(browser.new_page(), base))
        polls: list[float] = []
        page.on("request", lambda r: polls.append(time.monotonic()) if "/live/camera/reading" in r.url else None)
        page.click("#server-camera")
        yield page, polls
    finally:
        camera.stop()


def test_an_ended_table_camera_is_reported_once(browser: Any, app: Any, base: str, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    with following_the_table_camera(browser, app, base, grey_video(tmp_path / "short.avi", 8)) as (page, polls):
        expect(page.locator("#camera-status")).to_contain_text("has ended", timeout=15_000)
        seen = len(polls)
        page.wait_for_timeout(2000)
        assert len(polls) == seen, "the page stopped asking once the camera had ended"
        set_page_hidden(page, True)
        set_page_hidden(page, False)  # shown again: it still says why it ended, and asks nothing
        expect(page.locator("#camera-status")).to_contain_text("has ended")
        page.wait_for_timeout(1000)
        assert len(polls) == seen


def test_a_reading_the_page_cannot_draw_is_a_page_error_and_the_table_camera_followed_on(
    browser: Any, app: Any, base: str, tmp_path: Path
) -> None:
    """The server camera's reading was drawn inside the poll's failures: a page that could not draw one showed its
    error as the camera's status and asked again 1, 2, then 5 s later, and raised no page error."""
    from playwright.sync_api import expect

    with following_the_table_camera(browser, app, base, grey_video(tmp_path / "long.avi", 900)) as (page, polls):
        expect(page.locator("#still")).to_have_attribute("src", "/live/camera.mjpg")
        asked_then: list[int] = []  # how many readings the page had asked for when it got the one it cannot draw

        def answer_once(route: Any) -> None:
            if asked_then:
                route.fallback()
                return
            asked_then.append(len(polls))
            route.fulfill(json={"width": 320, "height": 180, "stable": True, "table": {}})  # no hands to draw

        page.route("**/live/camera/reading*", answer_once)
        for _ in range(40):  # up to 10 s on a loaded machine
            if asked_then and len(polls) >= asked_then[0] + 3:
                break
            page.wait_for_timeout(250)
        assert asked_then and len(polls) >= asked_then[0] + 3, "the page followed the camera on"
        assert len(page.errors) == 1 and "undefined" in page.errors[0], page.errors
        expect(page.locator("#camera-status")).not_to_contain_text("undefined")


def test_a_hidden_page_stops_following_the_table_camera_and_goes_on_when_shown(
    browser: Any, app: Any, base: str, tmp_path: Path
) -> None:
    """A hidden page polled the server camera's reading three times a second and kept a viewer's place on its
    stream, which nobody saw (the browser's own camera already paused)."""
    from playwright.sync_api import expect

    with following_the_table_camera(browser, app, base, grey_video(tmp_path / "long.avi", 900)) as (page, polls):
        still = page.locator("#still")
        expect(still).to_have_attribute("src", "/live/camera.mjpg")
        page.wait_for_timeout(1000)
        assert polls, "the page follows the table camera's reading"
        set_page_hidden(page, True)
        status = page.locator("#camera-status")
        expect(status).to_have_text("Camera paused while this page is hidden")
        expect(still).not_to_have_attribute("src", "/live/camera.mjpg")  # its stream closed: a viewer's place freed
        seen = len(polls)
        page.wait_for_timeout(1500)
        assert len(polls) - seen <= 1, "a hidden page stopped polling (one may have been on its way)"
        set_page_hidden(page, False)
        expect(still).to_have_attribute("src", "/live/camera.mjpg")
        expect(status).not_to_contain_text("paused")
        page.wait_for_timeout(1000)
        assert len(polls) - seen >= 2, "shown again, the page follows the camera again"


def test_the_sheet_that_comes_with_the_page_is_used_not_fetched_again(browser: Any, base: str) -> None:
    """The table page fetched its score sheet once more as it opened, though the page holds it (a long match's sheet
    is hundreds of KB): the sheet drawn with the page is used, its buttons working, until the match changes."""
    from playwright.sync_api import expect

    match_id = new_match(browser.new_page(), base)
    setup = browser.new_page()
    deal = {"upcard": "KS", "knocker": "Ann", "hands": {"Ann": ANN, "Bob": BOB}}
    for _ in range(2):
        assert setup.request.post(f"{base}/api/matches/{match_id}/rounds", data=deal).status == 201
    assert setup.request.delete(f"{base}/api/matches/{match_id}/rounds/2").ok  # an earlier version, with its time
    page = browser.new_page(viewport=DESKTOP)
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url) if "/sheet-body" in r.url else None)
    page.goto(f"{base}/matches/{match_id}")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_timeout(500)
    assert fetched == []
    time = page.locator("#sheet-body time[datetime]").first
    expect(time).not_to_contain_text("T")  # in the players' clock, not the server's ISO form
    page.click('button[aria-label="Edit round 1"]')
    expect(page.locator("#round-editor")).to_be_visible()
    page.keyboard.press("Escape")
    # no "Undo round 1?" to answer first (a dialog nobody answers is dismissed): the notice brings the round back
    page.click("[data-undo-round]")
    expect(page.locator("#sheet-body")).to_contain_text("No rounds yet.")
    expect(page.locator("#notice")).to_contain_text("Round 1 undone (Ann +18).")
    expect(page.locator("#notice button").first).to_have_text("Bring back round 1")
    assert len(fetched) == 1  # the match changed: its sheet is fetched


def test_enter_in_a_hands_box_goes_on_to_the_next_hands_box(browser: Any, base: str) -> None:
    """Enter left the box, so a phone's keyboard closed after every hand typed: it goes on to the next hand's box
    (the hand typed is read as the box is left), and from the last hand's box it leaves."""
    from playwright.sync_api import expect

    page = open_table(browser, base, new_match(browser.new_page(), base), size=PHONE)
    expect(page.locator("#hand-title-1 .seat-where")).to_be_hidden()  # "bottom of the picture": with no picture
    page.fill("#hand-1", ANN)
    page.press("#hand-1", "Enter")
    expect(page.locator("#hand-2")).to_be_focused()
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    page.keyboard.type(BOB)
    page.keyboard.press("Enter")
    expect(page.locator("#chips-2 .chip")).to_have_count(10)
    expect(page.locator("#hand-2")).not_to_be_focused()
