"""Every page at a phone's size (390x844) and a laptop's (1366x768): nothing scrolls sideways, tap targets
are at least 32 px, the totals stay in view, and a screenshot of each is kept to look at (issue 10, problem 5).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    BROWSER_TESTS,
    DESKTOP,
    PHONE,
    full_page_shot,
    live_server,
    no_sideways_scroll,
    screenshot_dir,
)
from browser_support import small_tap_targets as small_targets

from web.fields import MAX_NAME_LENGTH

pytestmark = BROWSER_TESTS

NAMES = ["Ann", "Bob", "Cat", "Dan"]
HANDS = {
    2: {"Ann": "8C 9C 10C JC 9H 10H JH 2S 2D AC", "Bob": "QS QC QH 10S JS 3D 5H 7S AD 7D"},
    3: {"Ann": "2C 3C 4C 5D 6D 7D AS", "Bob": "2H 3H 4H 5S 6S 7S QC", "Cat": "8S 9S 10S JD QD KD AH"},
    4: {"Ann": "2C 3C 4C 5D 6D 7D AS", "Bob": "2H 3H 4H 5S 6S 7S QC", "Cat": "8S 9S 10S JD QD KD AH",
        "Dan": "5C 6C 7C 9D 10D JH QH"},
}  # fmt: skip
UPCARD = {2: "KS", 3: "9C", 4: "9C"}
ROUND_ROWS = "#sheet-body table.rounds tbody tr:has(th[scope=row])"  # rounds only, not the "No rounds yet." row


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    from web import create_app

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "PIN": "4829"})
    with live_server(app) as url:
        yield url


def new_match(page: Any, base: str, players: int, names: list[str] = NAMES, **extra: Any) -> int:
    rules = "oklahoma" if players == 2 else "oklahoma-multi"
    body = {"players": names[:players], "rules": rules, "dealer": names[0], **extra}
    created = page.request.post(f"{base}/api/matches", data=body)
    assert created.status == 201, created.text()
    match_id: int = created.json()["id"]
    return match_id


def type_table(page: Any, players: int) -> None:
    for index, cards in enumerate(HANDS[players].values(), start=1):  # seat by seat, whatever the names
        page.fill(f"#hand-{index}", cards)
        page.press(f"#hand-{index}", "Enter")
    page.fill("#upcard-input", UPCARD[players])
    page.press("#upcard-input", "Enter")
    page.locator("#knock-1").wait_for(state="attached")
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)


def sheet_fits(page: Any, what: str) -> None:
    """Every column of the score sheet is in view: its table needs no scrolling inside its box either."""
    from playwright.sync_api import expect

    expect(page.locator("table.rounds"), f"{what}: no score sheet on {page.url}").to_be_attached()
    widths = page.evaluate(
        "() => [document.querySelector('table.rounds')].map((t) => [t.scrollWidth, t.parentElement.clientWidth])[0]"
    )
    assert widths[0] <= widths[1], f"{what}: the sheet is {widths[0]} px wide in {widths[1]} px"


def sized_page(browser: Any, size: dict, tmp_path: Path) -> tuple[Any, list[str], str, Path]:
    """A page at ``size``, the script errors it raises, its size's name and where its screenshots go."""
    page = browser.new_page(viewport=size)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors, "phone" if size == PHONE else "desktop", screenshot_dir(tmp_path)


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_every_page_fits_the_screen(base: str, browser: Any, size: dict, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page, errors, label, shots = sized_page(browser, size, tmp_path)

    def check(what: str) -> None:
        no_sideways_scroll(page, f"{label} {what}")
        full_page_shot(page, shots / f"{label}-{what}.png")
        if size == PHONE:
            assert small_targets(page) == [], f"{what}: tap targets under 32 px"

    page.goto(base)
    check("setup")
    page.fill("#player-1", "Ann")
    page.fill("#player-2", "ann")
    page.click("text=Start the match")
    expect(page.locator(".error-text")).to_contain_text("must differ")
    check("setup-error")

    for players in (2, 3, 4):
        match_id = new_match(page, base, players)
        page.goto(f"{base}/matches/{match_id}")
        type_table(page, players)
        page.click("#knock-1")
        expect(page.locator("#proposal")).to_be_visible()
        check(f"table-{players}-players")
        if size == PHONE:
            bar = page.locator("#totals-bar")
            expect(bar).to_be_visible()
            box = bar.bounding_box()
            assert box is not None and box["y"] + box["height"] <= size["height"] + 1, "totals pinned in view"
        page.click("#confirm-round")
        expect(page.locator(ROUND_ROWS)).to_have_count(1)  # saved before the page is left
        if size == PHONE:
            edit = page.locator('button[aria-label="Edit round 1"]')
            edit.scroll_into_view_if_needed()
            edit_box = edit.bounding_box()
            assert edit_box is not None and edit_box["x"] + edit_box["width"] <= size["width"], "Edit is reachable"
        sheet_fits(page, f"{label} table {players} players")
        sheet_page = page.goto(f"{base}/matches/{match_id}/sheet")
        assert sheet_page is not None and sheet_page.ok, f"sheet: {sheet_page and sheet_page.status} {page.url}"
        page.click("details.rules-terms summary")  # the rules in words, open
        expect(page.locator("details.rules-terms li").first).to_be_visible()
        check(f"sheet-{players}-players")
        sheet_fits(page, f"{label} sheet {players} players")

    page.goto(f"{base}/players")
    expect(page.locator("table.records tbody tr")).to_have_count(4)
    check("players")

    # four long one-word names: the sheet's columns wrap them, not the sheet (it was 520 px in 345)
    long = ["Maximilianaxx", "Bartholomewxx", "Christabellax", "Wolfeschlegel"]
    body = {"players": long, "rules": "oklahoma-multi", "dealer": long[0]}
    long_match = page.request.post(f"{base}/api/matches", data=body).json()["id"]
    hands = dict(zip(long, HANDS[4].values(), strict=True))
    played = page.request.post(
        f"{base}/api/matches/{long_match}/rounds", data={"upcard": UPCARD[4], "knocker": long[0], "hands": hands}
    )
    assert played.status == 201, played.text()
    for where in (f"/matches/{long_match}", f"/matches/{long_match}/sheet"):
        page.goto(base + where)
        expect(page.locator(ROUND_ROWS)).to_have_count(1)
        sheet_fits(page, f"{label} {where} with long names")
        check(f"long-names-{where.count('/')}")

    page.goto(f"{base}/matches/{match_id}")
    page.click('[data-pick="1"]')
    expect(page.locator("#card-grid")).to_be_visible()
    grid = page.evaluate(
        "() => [document.getElementById('grid-cards').scrollWidth, document.getElementById('grid-cards').clientWidth]"
    )
    assert grid[0] <= grid[1], f"the 52-card grid scrolls sideways: {grid}"
    check("card-grid")
    if size == PHONE:
        assert small_targets(page, "#card-grid") == []
    page.keyboard.press("Escape")

    page.goto(f"{base}/matches/99999")
    check("error")
    other = browser.new_page(viewport=size, extra_http_headers={"X-Forwarded-For": "10.0.0.9"})
    other.goto(f"{base}/")
    page.close()
    assert not errors, errors


LONGEST = [
    (stem * MAX_NAME_LENGTH)[:MAX_NAME_LENGTH]
    for stem in ("Wolfeschlegelsteinhausenbergerdorffvoralternwarengewissenhaft", "1234567890", "W", "Mm")
]
"""Names as long as a name may be, each one word (letters, digits, the widest letter): nowhere to break a line."""

STICKING_OUT = """() => {
    const out = [];
    const named = (node, why) => out.push(`${node.tagName}#${node.id}.${node.className}: ${why}`);
    for (const node of document.querySelectorAll('#totals-bar > *')) {  // pinned: past an edge is out of reach
        const box = node.getBoundingClientRect();
        if (box.width && (box.left < -0.5 || box.right > innerWidth + 0.5)) named(node, `${box.left}..${box.right}`);
    }
    for (const node of document.querySelectorAll('body *')) {  // a word wider than its box, a dialog's sideways scroll
        const style = getComputedStyle(node);
        const clips = style.overflowX !== 'visible' && node.tagName !== 'DIALOG';  // cut on purpose (an ellipsis)
        if (node.clientWidth && !clips && node.scrollWidth > node.clientWidth + 1 && node.checkVisibility()
            && !node.closest('.visually-hidden, .table-scroll, .stage-scroll')) {
            named(node, `${node.scrollWidth} px of content in ${node.clientWidth}`);
        }
    }
    return out;
}"""


def long_names_fit(page: Any, what: str, shots: Path) -> None:
    """Nothing to scroll sideways, no name sticking out of its box or the pinned totals, tap targets kept."""
    no_sideways_scroll(page, what)
    full_page_shot(page, shots / f"{what}.png")
    assert page.evaluate(STICKING_OUT) == [], f"{what}: sticks out"
    if page.viewport_size == PHONE:
        assert small_targets(page) == [], f"{what}: tap targets under 32 px"


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_longest_one_word_names_fit(base: str, browser: Any, size: dict, tmp_path: Path) -> None:
    """A one-word name of 26 characters or more made the table and the sheet scroll sideways at 390 px (616 px at
    40), cut the pinned totals at the left edge, and widened the knock buttons, the winner's banner and the match
    list: every page and dialog that shows a name, for two to four such names, up to a won match."""
    from playwright.sync_api import expect

    page, errors, label, shots = sized_page(browser, size, tmp_path)

    def check(what: str) -> None:
        long_names_fit(page, f"{label}-longest-{what}", shots)

    page.goto(base)
    for index, name in enumerate(LONGEST, start=1):
        page.fill(f"#player-{index}", name)
    page.fill("#player-2", LONGEST[0].lower())
    check("setup")  # the first dealer's choices name them
    page.click("text=Start the match")
    expect(page.locator(".error-text")).to_contain_text("must differ")
    check("setup-error")

    options = {"target": 10, "game_bonus": 100}  # one round wins: the banner names the winner and the bonuses
    for players in (2, 3, 4):
        match_id = new_match(page, base, players, LONGEST, options=options)
        page.goto(f"{base}/matches/{match_id}")
        type_table(page, players)
        check(f"table-{players}-players")  # "… knocked" on each hand
        if players == 4:  # the dialogs: four names say all that two or three do
            page.locator("#chips-1 .chip").first.click()
            expect(page.locator("#card-editor")).to_be_visible()
            check("card-editor")  # "Belongs to" names the hands
            page.keyboard.press("Escape")
            expect(page.locator("#card-editor")).to_be_hidden()
            page.click('[data-pick="3"]')
            expect(page.locator("#card-grid")).to_be_visible()
            check("card-grid")  # "Pick …'s cards"
            page.keyboard.press("Escape")
            expect(page.locator("#card-grid")).to_be_hidden()
        page.click("#knock-1")
        expect(page.locator("#proposal")).to_be_visible()
        page.locator("#proposal details").evaluate("(details) => { details.open = true; }")  # regroup …'s melds
        check(f"proposal-{players}-players")
        page.click("#confirm-round")
        expect(page.locator("#match-over")).to_be_visible()
        expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet")
        expect(page.locator("#sheet-body .winner-banner")).to_contain_text("wins the match! Bonuses:")
        check(f"won-{players}-players")  # the winner's line, the notice, the totals, the sheet's banner
        sheet_fits(page, f"{label} table, {players} longest names")
        if players == 4:
            page.click('button[aria-label="Edit round 1"]')
            expect(page.locator("#round-editor")).to_be_visible()
            check("round-editor")  # the knocker's choices, "…'s cards"
            page.keyboard.press("Escape")
            expect(page.locator("#round-editor")).to_be_hidden()
        page.goto(f"{base}/matches/{match_id}/sheet")
        check(f"sheet-{players}-players")
        sheet_fits(page, f"{label} sheet, {players} longest names")

    # unfinished, listed under Resume: two rounds, the second undone ("… knocked, up 9♣" among its earlier versions)
    unfinished = new_match(page, base, 4, LONGEST)
    deal = {"upcard": UPCARD[4], "knocker": LONGEST[2], "hands": dict(zip(LONGEST, HANDS[4].values(), strict=True))}
    for _ in range(2):
        played = page.request.post(f"{base}/api/matches/{unfinished}/rounds", data=deal)
        assert played.status == 201, played.text()
    undone = page.request.delete(f"{base}/api/matches/{unfinished}/rounds/2")
    assert undone.ok, undone.text()
    page.goto(f"{base}/matches/{unfinished}")
    page.locator("#sheet-body details.versions").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")
    expect(page.locator("#sheet-body .version-what")).to_contain_text(f"{LONGEST[2]} knocked")
    check("undone-round")
    # opened from its file, whose totals are not the rescored ones: the start page says both, naming the players
    saved = json.loads(page.request.get(f"{base}/matches/{unfinished}/export.json").body())
    saved["totals"] = {name: total + 1 for name, total in saved["totals"].items()}
    page.goto(base)
    upload = {"name": "okgin-match.json", "mimeType": "application/json", "buffer": json.dumps(saved).encode()}
    page.set_input_files("#match-file", upload)
    page.click("text=Open the match")
    expect(page.locator("#main .status[role=status]").first).to_contain_text("were scored again")
    expect(page.locator(".winner-tag")).to_have_count(3)
    check("matches")  # Resume, History, and what the import said
    page.goto(f"{base}/players")
    check("players")
    page.close()
    assert not errors, errors


ORDINARY = ["Christopher", "Bartholomew", "Maximilian", "Alexandra"]


@pytest.mark.parametrize("width", [640, 768, 850])
def test_four_ordinary_names_fit_a_tablets_sheet(base: str, browser: Any, width: int) -> None:
    """Four ordinary names made the sheet scroll inside its box in windows 640 to 800 px wide (its wide layout, with
    the dealer's column, was kept for any sheet over 560 px): its narrow layout now starts wider the more players.
    No name is broken where the columns fit."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    match_id = new_match(page, base, 4, ORDINARY)
    deal = {"upcard": UPCARD[4], "knocker": ORDINARY[0], "hands": dict(zip(ORDINARY, HANDS[4].values(), strict=True))}
    for _ in range(3):
        assert page.request.post(f"{base}/api/matches/{match_id}/rounds", data=deal).status == 201
    for where in ("", "/sheet"):
        page.goto(f"{base}/matches/{match_id}{where}")
        sheet_fits(page, f"{width} px, 4 ordinary names, {where or 'table'}")
        lines = page.evaluate(
            """() => [...document.querySelectorAll('table.rounds thead .col-name')].map((name) => {
                const text = document.createRange();
                text.selectNodeContents(name);
                return text.getClientRects().length;  // a box per line
            })"""
        )
        assert lines == [1, 1, 1, 1], f"{width} px {where or 'table'}: names broken over lines {lines}"


def test_a_long_name_on_a_phones_sheet_is_shortened_not_broken_apart(base: str, browser: Any) -> None:
    """At 390 px a name too long for its column was broken between letters over three lines (Barth / olome / w):
    it now ends in "…" on one line, whole in its text and its title; a name of two words wraps at its space."""
    page = browser.new_page(viewport=PHONE)
    names = ["Bartholomew", "Ann Smith", "Maximiliana", "Jo"]
    match_id = new_match(page, base, 4, names)
    page.goto(f"{base}/matches/{match_id}")
    sheet_fits(page, "390 px, long names")
    shown = page.evaluate(
        """() => [...document.querySelectorAll('table.rounds thead .col-name')].map((name) => {
            const text = document.createRange();
            text.selectNodeContents(name);
            const lines = new Set([...text.getClientRects()].map((box) => Math.round(box.top)));  // "…" is a box too
            return [name.textContent, name.title, lines.size, name.scrollWidth > name.clientWidth];
        })"""
    )
    assert [name for name, *_ in shown] == [title for _, title, *_ in shown] == names
    lines = {name: (count, shortened) for name, _, count, shortened in shown}
    assert lines["Bartholomew"] == lines["Maximiliana"] == (1, True), shown
    assert lines["Ann Smith"][0] == 2 and lines["Jo"] == (1, False), shown


def test_the_pin_page_fits_a_phone(tmp_path: Path, browser: Any) -> None:
    """Another machine is asked for the PIN: that page too fits a phone."""
    from web import create_app

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "PIN": "4829"})
    with live_server(app) as url:
        page = browser.new_page(viewport=PHONE)
        page.goto(f"{url}/pin")
        no_sideways_scroll(page, "phone pin")
        assert small_targets(page) == []
        full_page_shot(page, screenshot_dir(tmp_path) / "phone-pin.png")


def test_the_set_up_form_shows_the_chosen_scorings_own_points(base: str, browser: Any) -> None:
    """Multi-player scoring ignores the two-player undercut bonus: the form shows, and sends, the points of the rule
    set chosen, switched with the third player's name as the rule set is."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport=PHONE)
    page.goto(base)
    expect(page.locator("#undercut_bonus")).to_be_visible()
    expect(page.locator("#penalty_knock_points")).to_be_hidden()
    page.fill("#player-1", "Ann")
    page.fill("#player-2", "Bob")
    page.fill("#player-3", "Cat")
    page.press("#player-3", "Tab")  # a third name: the multi-player rules, and their points
    expect(page.locator("#preset")).to_have_value("oklahoma-multi")
    expect(page.locator("#undercut_bonus")).to_be_hidden()
    expect(page.locator("#penalty_undercut_points")).to_be_visible()
    page.fill("#penalty_undercut_points", "25")
    page.click("text=Start the match")
    page.wait_for_url("**/matches/*")
    rules = page.request.get(page.url.replace("/matches/", "/api/matches/")).json()["rules"]
    assert (rules["preset"], rules["penalty_undercut_points"], rules["undercut_bonus"]) == ("oklahoma-multi", 25, 10)


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_match_to_resume_is_a_tap_from_the_top_of_a_phones_start_page(base: str, browser: Any, size: dict) -> None:
    """On a phone the Resume list came after the whole set-up form, some 2,000 px down: a button at the top now goes
    to it while there is a match to resume (beside the form on a laptop, it needs none)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport=size)
    page.goto(base)
    expect(page.locator(".resume-jump")).to_have_count(0)  # nothing to resume
    new_match(page, base, 2)
    page.goto(base)
    jump = page.locator(".resume-jump a")
    if size == DESKTOP:
        expect(jump).to_be_hidden()
        return
    expect(jump).to_contain_text("Resume a match (1 unfinished)")
    assert page.evaluate("() => document.getElementById('resume-title').getBoundingClientRect().top") > size["height"]
    jump.click()
    expect(page.locator(".match-list a.match-link").first).to_be_in_viewport()


def test_a_four_player_sheet_prints_with_every_column(base: str, browser: Any) -> None:
    """A printed page is under 800 px wide, where a four-player sheet's narrow layout began: the print lost its
    dealer column and deadwood details. Printed, a sheet keeps them whatever its players."""
    page = browser.new_page(viewport={"width": 720, "height": 1000})
    match_id = new_match(page, base, 4, ORDINARY)
    deal = {"upcard": UPCARD[4], "knocker": ORDINARY[0], "hands": dict(zip(ORDINARY, HANDS[4].values(), strict=True))}
    assert page.request.post(f"{base}/api/matches/{match_id}/rounds", data=deal).status == 201
    page.emulate_media(media="print")
    page.goto(f"{base}/matches/{match_id}/sheet")
    shown = page.evaluate(
        """() => [document.querySelector('table.rounds td:nth-child(2)'), document.querySelector('table.rounds .hint')]
            .map((node) => getComputedStyle(node).display)"""
    )
    assert shown == ["table-cell", "block"], shown


def test_a_printed_sheet_writes_every_round_in_black(base: str, browser: Any) -> None:
    """On paper the screen's gold gin rows, pale undercut rows and grey draws were faint: printed, every cell of
    the sheet is black."""
    page = browser.new_page(viewport={"width": 720, "height": 1000})
    match_id = new_match(page, base, 4, ORDINARY)
    deal = {"upcard": UPCARD[4], "knocker": ORDINARY[0], "hands": dict(zip(ORDINARY, HANDS[4].values(), strict=True))}
    assert page.request.post(f"{base}/api/matches/{match_id}/rounds", data=deal).status == 201
    assert page.request.post(f"{base}/api/matches/{match_id}/rounds", data={"draw": True}).status == 201
    page.emulate_media(media="print")
    page.goto(f"{base}/matches/{match_id}/sheet")
    colours = page.evaluate(
        "() => [...document.querySelectorAll('table.rounds tbody td')].map((td) => getComputedStyle(td).color)"
    )
    assert colours and set(colours) == {"rgb(0, 0, 0)"}, colours
