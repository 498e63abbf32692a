"""Every page, in every state a player meets it, checked with axe-core (WCAG 2.1 A and AA) at a phone's size
(390x844) and a laptop's (1366x768): no serious or critical violation. And the table played with the keyboard
alone: the set-up form filled, a round typed, knocked and confirmed with Tab, Enter and Space.

axe-core is an npm devDependency (``npm ci``), injected into the pages by the test; the app never serves it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_support import BROWSER_TESTS, DESKTOP, PHONE, live_server
from browser_support import KNOCK_HANDS as KNOCK

AXE = Path(__file__).resolve().parents[1] / "node_modules" / "axe-core" / "axe.min.js"

pytestmark = [
    *BROWSER_TESTS,
    pytest.mark.skipif(not AXE.exists(), reason="needs axe-core from npm: run `npm ci` (node_modules/axe-core)"),
]

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = {"serious", "critical"}


def axe_violations(page: Any) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.1 A/AA violations on the page as it is now: [{id, impact, help, targets, summary}].

    axe cannot measure text over a gradient (it leaves it "incomplete"), and the felt behind every page is one: the
    felt is made flat here, in its lightest colour (the worst case for the page's light text), so that the contrast
    of all the text on it is measured.
    """
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
        page.add_style_tag(content="body { background: var(--felt-light) !important; }")
    found: list[dict[str, Any]] = page.evaluate(
        """(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})
            .then((results) => results.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                targets: v.nodes.map((n) => n.target.join(' ')), summary: v.nodes[0]?.failureSummary ?? ''})))""",
        WCAG_TAGS,
    )
    return found


def report(problems: dict[str, list[dict[str, Any]]]) -> str:
    lines = []
    for state, violations in problems.items():
        for v in violations:
            lines.append(f"{state}: {v['id']} ({v['impact']}) x{len(v['targets'])}: {v['help']}")
            lines.extend(f"    {target}" for target in v["targets"][:8])
            lines.append("    " + v["summary"].replace("\n", "\n    "))
    return "\n".join(lines)


def new_match(page: Any, base: str, **extra: Any) -> int:
    created = page.request.post(f"{base}/api/matches", data={"players": ["Ann", "Bob"], "dealer": "Bob", **extra})
    assert created.status == 201, created.text()
    match_id: int = created.json()["id"]
    return match_id


def add_round(page: Any, base: str, match_id: int) -> None:
    hands = {name: cards.split() for name, cards in KNOCK.items()}
    body = {"upcard": "KS", "knocker": "Ann", "hands": hands}
    answer = page.request.post(f"{base}/api/matches/{match_id}/rounds", data=body)
    assert answer.status == 201, answer.text()


def deal(page: Any) -> None:
    """Both hands and the upcard typed in; Ann holds an 11th card (K♦), so the proposal shows her discard too."""
    for seat, cards in enumerate((KNOCK["Ann"] + " KD", KNOCK["Bob"]), start=1):
        page.fill(f"#hand-{seat}", cards)
        page.press(f"#hand-{seat}", "Enter")
    page.fill("#upcard-input", "KS")
    page.press("#upcard-input", "Enter")
    page.locator("#chips-2 .chip").nth(9).wait_for()
    page.locator("#chips-1 .chip").nth(10).wait_for()


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_no_serious_or_critical_axe_violations_on_any_page(tmp_path: Path, browser: Any, size: dict) -> None:
    from playwright.sync_api import expect

    from web import create_app

    problems: dict[str, list[dict[str, Any]]] = {}
    checked: list[str] = []

    def check(state: str) -> None:
        checked.append(state)
        violations = [v for v in axe_violations(page) if v["impact"] in BLOCKING]
        if violations:
            problems[state] = violations

    app = create_app({"DATA_DIR": str(tmp_path / "data"), "PIN": "4829"})
    with live_server(app) as base:
        # The page's CSP refuses inline scripts (add_script_tag inlines axe): the test's context alone bypasses it.
        page = browser.new_context(viewport=size, bypass_csp=True).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: dialog.accept())

        page.goto(f"{base}/pin")
        check("pin")
        page.goto(f"{base}/matches/99999")
        check("error 404")

        page.goto(base)
        check("setup, no matches")
        page.fill("#player-1", "Ann")
        page.fill("#player-2", "ann")
        page.click("text=Start the match")
        expect(page.locator(".error-text")).to_contain_text("must differ")
        check("setup with an error")

        match_id = new_match(page, base)
        page.goto(f"{base}/matches/{match_id}")
        page.locator("#knock-1").wait_for(state="attached")
        check("table, no rounds")
        # three buttons read "Pick": each is named for what it picks, for a screen reader's list of buttons
        for name in ("Pick the upcard", "Pick Ann's cards", "Pick Bob's cards"):
            expect(page.get_by_role("button", name=name, exact=True)).to_have_count(1)

        add_round(page, base, match_id)
        page.reload()
        deal(page)
        # each card's chip says whose hand it lies in: a list of the buttons read "A♣: correct it" alike in every hand
        for name in ("A♣ in Ann's hand (typed): correct it", "A♦ in Bob's hand (typed): correct it"):
            expect(page.get_by_role("button", name=name, exact=True)).to_have_count(1)
        page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)
        page.click("#knock-1")
        expect(page.locator("#proposal .outcome")).to_contain_text("Ann scores 18. Ann discards K♦.")
        page.locator("#proposal details").evaluate("(details) => { details.open = true; }")  # regrouping the melds
        check("table with a round, a proposal shown")

        page.locator("#chips-1 .chip").first.click()
        expect(page.locator("#card-editor")).to_be_visible()
        check("table, card editor open")
        page.keyboard.press("Escape")
        expect(page.locator("#card-editor")).to_be_hidden()

        page.click('[data-pick="1"]')
        expect(page.locator("#card-grid")).to_be_visible()
        check("table, 52-card grid open")
        page.keyboard.press("Escape")
        expect(page.locator("#card-grid")).to_be_hidden()

        page.click('button[aria-label="Edit round 1"]')
        expect(page.locator("#round-editor")).to_be_visible()
        check("table, round editor open")
        page.keyboard.press("Escape")

        # round 1 edited into a draw, round 2 undone: what they held is folded under the sheet's rows, to put back
        add_round(page, base, match_id)
        revision = page.request.get(f"{base}/api/matches/{match_id}").json()["revision"]
        edited = page.request.put(f"{base}/api/matches/{match_id}/rounds/1?revision={revision}", data={"draw": True})
        page.request.delete(f"{base}/api/matches/{match_id}/rounds/2?revision={edited.json()['revision']}")
        page.reload()
        expect(page.locator("#sheet-body details[data-versions]")).to_have_count(2)
        page.locator("#sheet-body details[data-versions] summary").evaluate_all(
            "(all) => all.forEach((s) => s.click())"
        )
        check("table, earlier versions of rounds shown")

        page.goto(f"{base}/matches/{match_id}/sheet")
        check("sheet")

        won = new_match(page, base, options={"target": 30, "game_bonus": 100})
        for _ in range(2):
            add_round(page, base, won)
        page.goto(f"{base}/matches/{won}")
        expect(page.locator("#match-over")).to_be_visible()
        check("table, match won")
        page.goto(f"{base}/matches/{won}/sheet")
        check("sheet, match won")

        page.goto(base)
        check("setup, with matches to resume and finished")
        page.goto(f"{base}/players")
        check("players' records")
        page.close()

    assert len(checked) == 15
    assert not problems, "axe-core found serious or critical WCAG 2.1 A/AA violations:\n" + report(problems)
    assert not errors, errors


def new_table(browser: Any, base: str, viewport: dict) -> tuple[Any, list[str]]:
    """A page of ``viewport`` at the table of a new match of Ann and Bob (Bob deals), its hands' boxes drawn, and
    the list its script errors go to."""
    page = browser.new_page(viewport=viewport)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{base}/matches/{new_match(page, base)}")
    page.locator("#knock-1").wait_for(state="attached")
    return page, errors


def focused(page: Any) -> str:
    """The focused element, as `tag#id.class 'text' [aria-label]`."""
    where: str = page.evaluate(
        """() => { const a = document.activeElement;
            return `${a.tagName.toLowerCase()}#${a.id}.${a.className} '${(a.textContent || '').trim().slice(0, 20)}'`
                + ` [${a.getAttribute('aria-label') ?? ''}]`; }"""
    )
    return where


def said_by(page: Any, selector: str) -> list[str]:
    """How a screen reader comes to read the element: "focus" where it has the keyboard's focus, "live" where the
    nearest live region around it (aria-live, or an alert's or status's role) is not off. A message said both ways is
    read twice."""
    ways: list[str] = page.locator(selector).evaluate(
        """(line) => {
            const ways = line === document.activeElement ? ["focus"] : [];
            const implied = { alert: "assertive", status: "polite", log: "polite" };
            for (let node = line; node; node = node.parentElement) {
                const live = node.getAttribute("aria-live") ?? implied[node.getAttribute("role")];
                if (live) return live === "off" ? ways : [...ways, "live"];
            }
            return ways;
        }"""
    )
    return ways


def focus_in_view(page: Any) -> bool:
    """Whether the focused element lies within the window, from top to bottom (a keyboard's player sees it), to the
    pixel (scrolled to the top, its top may lie a fraction of one above the window's), and above a phone's pinned
    totals bar, which covers the window's foot."""
    seen: bool = page.evaluate(
        "() => { const box = document.activeElement.getBoundingClientRect();"
        " const bar = document.getElementById('totals-bar');"
        " const fixed = bar && getComputedStyle(bar).position === 'fixed';"
        " const foot = fixed ? bar.getBoundingClientRect().top : innerHeight;"
        " return box.top > -1 && box.bottom < foot + 1; }"
    )
    return seen


def tab_to(page: Any, selector: str, key: str = "Tab", most: int = 80) -> None:
    """Press Tab (or ``key``) until the focused element matches ``selector``."""
    for _ in range(most):
        page.keyboard.press(key)
        if page.evaluate("(selector) => document.activeElement.matches(selector)", selector):
            return
    raise AssertionError(f"{key} never reached {selector}; the focus is on {focused(page)}")


def arrow_to_chip(page: Any, seat: int, card: str) -> None:
    """Shift+Tab to hand ``seat``'s chips (one Tab stop), then the arrow keys along them to ``card``'s chip."""
    tab_to(page, f"#chips-{seat} .chip", key="Shift+Tab")
    page.keyboard.press("Home")
    if not page.evaluate("(card) => document.activeElement.dataset.card === card", card):
        tab_to(page, f'#chips-{seat} .chip[data-card="{card}"]', key="ArrowRight", most=12)


def test_a_match_set_up_and_a_round_played_with_the_keyboard_alone(tmp_path: Path, browser: Any) -> None:
    """Tab, Space, Enter and typing only: the set-up form filled in, a round typed, a card corrected, the knock and
    the confirmation, a past round edited. Before, the focus was lost (left on nothing, so the next Tab started over
    from the top of the page) whenever the chip or the sheet's button that had it was drawn anew: on closing the
    card editor opened from a chip, when the table's answer recoloured the chips, and when the sheet was redrawn
    after a round was edited."""
    from playwright.sync_api import expect

    from web import create_app

    with live_server(create_app({"DATA_DIR": str(tmp_path / "data")})) as base:
        page = browser.new_page(viewport=DESKTOP)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(base)

        tab_to(page, "#player-1")
        page.keyboard.type("Ann")
        page.keyboard.press("Tab")
        page.keyboard.type("Bob")
        tab_to(page, "#target")
        page.keyboard.press("Control+A")
        page.keyboard.type("50")
        tab_to(page, "input[name=ace_upcard_gin_only]")
        page.keyboard.press("Space")
        tab_to(page, "#dealer")
        page.keyboard.press("ArrowDown")  # the first player deals
        tab_to(page, "button[type=submit]")
        page.keyboard.press("Enter")
        page.wait_for_url("**/matches/*")
        match = page.evaluate("fetch(location.pathname.replace('/matches/', '/api/matches/')).then((r) => r.json())")
        assert (match["players"], match["rules"]["target"], match["first_dealer"]) == (["Ann", "Bob"], 50, "Ann")
        assert match["rules"]["ace_upcard_gin_only"] is True

        page.locator("#knock-1").wait_for(state="attached")
        tab_to(page, "#upcard-input")
        page.keyboard.type("KS")
        page.keyboard.press("Enter")
        for seat, name in enumerate(("Ann", "Bob"), start=1):
            tab_to(page, f"#hand-{seat}")
            page.keyboard.type(KNOCK[name].replace("AC", "AH"))
            page.keyboard.press("Enter")
        page.locator("#chips-2 .chip").nth(9).wait_for()

        # Ann's A♥ was the A♣: corrected in the card editor, opened from its chip.
        arrow_to_chip(page, 1, "AH")
        page.keyboard.press("Enter")
        expect(page.locator("#card-editor")).to_be_visible()
        page.keyboard.type("AC")  # the editor's box has the focus, its text selected
        page.keyboard.press("Enter")  # Save
        expect(page.locator("#card-editor")).to_be_hidden()
        expect(page.locator('#chips-1 .chip[data-card="AC"]')).to_be_focused()
        page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)
        expect(page.locator('#chips-1 .chip[data-card="AC"]')).to_be_focused()  # recoloured, still focused

        tab_to(page, "#knock-1")
        page.keyboard.press("Space")
        expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 18")
        expect(page.locator("#confirm-round")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: Ann +18.")
        expect(page.locator("#sheet-body .total-points").first).to_have_text("18")

        edit = page.locator('button[aria-label="Edit round 1"]')
        tab_to(page, 'button[aria-label="Edit round 1"]')
        page.keyboard.press("Enter")
        expect(page.locator("#round-editor")).to_be_visible()
        page.keyboard.press("Escape")
        expect(page.locator("#round-editor")).to_be_hidden()
        expect(edit).to_be_focused()
        page.keyboard.press("Enter")
        tab_to(page, "#round-draw")
        page.keyboard.press("Space")  # round 1 was a draw after all
        tab_to(page, "#round-save")
        page.keyboard.press("Enter")
        expect(page.locator("#round-editor")).to_be_hidden()
        expect(page.locator("#sheet-body tbody")).to_contain_text("Draw")
        expect(edit).to_be_focused()  # the sheet drawn anew: its Edit button keeps the focus
        page.close()
    assert not errors, errors


def test_the_focus_follows_every_action_at_the_table(base: str, browser: Any) -> None:
    """Before: Enter in the upcard's box or the last hand's, Confirm round, Record a draw, Not yet, and a notice's
    Undo or OK each left the focus on the page's body; any render (a resize, a camera frame) drew the proposal anew,
    read its live region out again, closed the regrouping and dropped the focus in it; and a card chosen there could
    not be moved with the keyboard (a row is no button)."""
    from playwright.sync_api import expect

    page, errors = new_table(browser, base, DESKTOP)

    tab_to(page, "#upcard-input")
    page.keyboard.type("KS")
    page.keyboard.press("Enter")
    expect(page.locator("#knock-limit")).to_be_focused()  # the line saying the knock limit; Tab goes on to the hands
    tab_to(page, "#hand-1")
    page.keyboard.type(KNOCK["Ann"] + " KD")
    page.keyboard.press("Enter")
    page.keyboard.type(KNOCK["Bob"])
    page.keyboard.press("Enter")
    expect(page.locator("#status-2")).to_be_focused()  # Bob's line: a second Enter presses nothing
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)

    tab_to(page, "#knock-1", key="Shift+Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#confirm-round")).to_be_focused()
    page.evaluate("""() => { window.proposalDrawn = 0;
        new MutationObserver(() => { window.proposalDrawn += 1; })
            .observe(document.getElementById('proposal-body'), {childList: true}); }""")
    tab_to(page, "#proposal summary", key="Shift+Tab")
    page.keyboard.press("Enter")  # the regrouping opened
    page.set_viewport_size({"width": 1300, "height": 768})  # a render, as a camera frame makes
    page.wait_for_timeout(300)
    assert page.evaluate("window.proposalDrawn") == 0, "the proposal was drawn again, unchanged"
    expect(page.locator("#proposal details")).to_have_attribute("open", "")
    expect(page.locator("#proposal summary")).to_be_focused()

    tab_to(page, '#proposal .chip-button[data-key="card AC"]')
    page.keyboard.press("Space")  # A♣ chosen, then moved to the first meld with its button
    tab_to(page, '#proposal [data-key="row 0"]')
    expect(page.locator('#proposal [data-key="row 0"]')).to_have_text("Move A♣ here")
    page.keyboard.press("Enter")
    expect(page.locator("#proposal .regroup-row").first).to_contain_text("A♣")
    expect(page.locator('#proposal .chip-button[data-key="card AC"]')).to_be_focused()

    tab_to(page, "#cancel-proposal")
    page.keyboard.press("Enter")  # Not yet
    expect(page.locator("#status-1")).to_be_focused()  # the knocker's line; Tab goes on to the knock
    page.keyboard.press("Tab")
    expect(page.locator("#knock-1")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#confirm-round")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: Ann +18.")
    expect(page.locator("#notice")).to_be_focused()
    page.keyboard.press("Enter")  # on the notice itself: nothing is pressed
    tab_to(page, "#notice button")
    expect(page.locator("#notice button").first).to_have_text("Undo round 1")
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("Round 1 undone")
    expect(page.locator("#notice")).to_be_focused()
    tab_to(page, "#notice button:last-child")
    page.keyboard.press("Enter")  # OK
    expect(page.locator("#notice")).to_be_hidden()
    expect(page.locator("#knock-limit")).to_be_focused()

    tab_to(page, "#record-draw")
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("a draw")
    expect(page.locator("#notice")).to_be_focused()
    assert page.locator("#sheet-body [data-edit-round]").count() == 1
    page.close()
    assert not errors, errors


def test_the_card_grid_is_one_tab_stop_its_arrow_keys_moving_between_the_cards(base: str, browser: Any) -> None:
    """The 52-card grid took 52 Tab presses to cross to its Done: it is one Tab stop now, entered on the hand's first
    card, its arrow keys moving between the cards as they lie (Up and Down a row of the grid as wrapped)."""
    from playwright.sync_api import expect

    page, errors = new_table(browser, base, PHONE)
    page.fill("#hand-1", KNOCK["Ann"])
    page.press("#hand-1", "Enter")
    page.locator("#chips-1 .chip").nth(9).wait_for()
    page.focus('[data-pick="1"]')
    page.keyboard.press("Enter")
    cards = page.locator("#grid-cards button")
    expect(cards.nth(0)).to_be_focused()  # A♣: the first of Ann's cards in the grid
    expect(cards.nth(0)).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("ArrowRight")
    expect(cards.nth(1)).to_be_focused()
    columns = page.evaluate(
        "() => { const all = [...document.querySelectorAll('#grid-cards button')];"
        " return all.filter((b) => b.offsetTop === all[0].offsetTop).length; }"
    )
    assert 1 < columns < 52
    page.keyboard.press("ArrowDown")
    expect(cards.nth(1 + columns)).to_be_focused()
    page.keyboard.press("Space")
    expect(cards.nth(1 + columns)).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("End")
    expect(cards.nth(51)).to_be_focused()
    page.keyboard.press("ArrowRight")  # the grid's edge: the focus stays
    expect(cards.nth(51)).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#grid-done")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#chips-1 .chip")).to_have_count(11)
    assert not errors, errors


def test_a_confirm_refused_puts_the_focus_on_the_error_that_says_why(base: str, browser: Any) -> None:
    """Confirm pressed, the server refusing the round: the focus, taken from the button while it saved, was meant for
    the error line, which could not take it (no tabindex), and was left on the page's body."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport=DESKTOP)
    created = page.request.post(f"{base}/api/matches", data={"players": ["Ann", "Bob"], "dealer": "Bob"})
    page.goto(f"{base}/matches/{created.json()['id']}")
    deal(page)
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)
    page.click("#knock-1")
    expect(page.locator("#proposal .outcome")).to_contain_text("Ann scores 18")
    page.route("**/rounds", lambda route: route.fulfill(status=503, json={"error": "the database is locked"}))
    page.focus("#confirm-round")
    page.keyboard.press("Enter")
    expect(page.locator("#table-error")).to_contain_text("the database is locked")
    expect(page.locator("#table-error")).to_be_focused()
    assert said_by(page, "#table-error") == ["focus"]  # read from the focus alone, not by a live region too


def test_each_message_is_said_once_by_the_focus_or_by_its_live_region(base: str, browser: Any) -> None:
    """The notice was an alert and was also focused (after Confirm, or its own Undo): a screen reader read it twice.
    Now a message the focus goes on to is read from there, and one left where it appears (the focus kept on the button
    pressed) by its live region. The sheet, drawn again after each change, was a live region too: its every row and
    total was read after the notice that says what changed."""
    from playwright.sync_api import expect

    page, errors = new_table(browser, base, DESKTOP)
    deal(page)
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)

    page.focus("#clear-hands")
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("Table cleared")
    expect(page.locator("#clear-hands")).to_be_focused()
    assert said_by(page, "#notice") == ["live"]
    page.locator("#notice button", has_text="Undo").focus()
    page.keyboard.press("Enter")  # the cards back, the notice gone
    expect(page.locator("#chips-1 .chip")).to_have_count(11)

    page.route("**/api/score", lambda route: route.fulfill(status=503, json={"error": "the server is busy"}))
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)
    page.focus("#knock-1")
    page.keyboard.press("Enter")
    expect(page.locator("#table-error")).to_contain_text("the server is busy")
    expect(page.locator("#knock-1")).to_be_focused()
    assert said_by(page, "#table-error") == ["live"]
    page.unroute("**/api/score")

    page.keyboard.press("Enter")
    expect(page.locator("#confirm-round")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: Ann +18.")
    expect(page.locator("#notice")).to_be_focused()
    assert said_by(page, "#notice") == ["focus"]
    # the sheet drawn again with its new round is no live region: its every row and total was read after the notice
    expect(page.locator("#sheet-body table.rounds tbody tr")).to_have_count(1)
    assert said_by(page, "#sheet-body table.rounds") == []
    page.locator("#notice button", has_text="Undo round 1").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("Round 1 undone")
    expect(page.locator("#notice")).to_be_focused()
    assert said_by(page, "#notice") == ["focus"]
    page.close()
    assert not errors, errors


def test_a_round_played_with_the_keyboard_alone_at_a_phones_size(base: str, browser: Any) -> None:
    """At 390x844: the last hand's line, focused from its box, lay below the screen's edge once its cards came; a card
    deleted in the card editor left the focus on the page's body, as did the sheet's Undo of its only round (so the
    next Tab started over from the top of the page). Two hands holding the knocker's extra card both said "can
    knock"."""
    from playwright.sync_api import expect

    page, errors = new_table(browser, base, PHONE)

    tab_to(page, "#upcard-input")
    page.keyboard.type("KS")
    page.keyboard.press("Enter")
    tab_to(page, "#hand-1")
    page.keyboard.type(KNOCK["Ann"] + " KD")
    page.keyboard.press("Enter")
    page.keyboard.type(KNOCK["Bob"] + " 4H")  # a card too many: Bob's 4♥ is still to be taken back
    page.keyboard.press("Enter")
    expect(page.locator("#status-2")).to_contain_text(
        "11 cards, and so does Ann: only the knocker holds 11 (before the discard), the others 10"
    )
    expect(page.locator("#status-2")).to_be_focused()
    assert focus_in_view(page), "Bob's line, focused, is out of view"
    expect(page.locator("#knock-1")).to_be_disabled()

    arrow_to_chip(page, 2, "4H")
    page.keyboard.press("Enter")
    expect(page.locator("#card-editor")).to_be_visible()
    tab_to(page, "#editor-delete")
    page.keyboard.press("Enter")
    expect(page.locator("#card-editor")).to_be_hidden()
    expect(page.locator("#chips-2 .chip").last).to_be_focused()  # the deleted card's neighbour (it was the last)

    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)
    tab_to(page, "#knock-1", key="Shift+Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#confirm-round")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: Ann +18.")
    expect(page.locator("#notice")).to_be_focused()

    tab_to(page, "#sheet-body [data-undo-round]")
    assert focus_in_view(page), "the sheet's Undo, focused, is under the totals bar"
    page.keyboard.press("Enter")  # the sheet's only round: its Undo goes with it
    expect(page.locator("#notice")).to_contain_text("Round 1 undone")
    expect(page.locator("#notice")).to_be_focused()
    assert said_by(page, "#notice") == ["focus"]
    assert focus_in_view(page)
    page.keyboard.press("Tab")
    expect(page.locator("#notice button").first).to_have_text("Bring back round 1")
    expect(page.locator("#notice button").first).to_be_focused()
    page.close()
    assert not errors, errors


def test_each_hands_chips_are_one_tab_stop_its_arrow_keys_moving_between_them(base: str, browser: Any) -> None:
    """At 390x844, every card's chip was a Tab stop of its own: 21 Tab presses crossed two hands' chips to the
    buttons below them. A hand's chips are one stop now (a toolbar named for the hand), entered on the chip last
    focused there, the arrow keys moving along them; a chip deleted in the editor it opens leaves the focus on its
    neighbour."""
    from playwright.sync_api import expect

    page, errors = new_table(browser, base, PHONE)
    deal(page)
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)
    page.focus("#hand-1")
    stops = []
    while not page.evaluate("() => document.activeElement.id === 'record-draw'") and len(stops) < 40:
        page.keyboard.press("Tab")
        stops.append(focused(page))
    chip_stops = [stop for stop in stops if stop.startswith("button#.chip")]
    assert len(chip_stops) == 2, stops  # one per hand
    assert len(stops) <= 8, stops

    chips = page.locator("#chips-2 .chip")
    expect(page.locator("#chips-2")).to_have_role("toolbar")
    expect(page.locator("#chips-2")).to_have_accessible_name("Bob's cards: tap one to correct it")
    tab_to(page, "#chips-2 .chip", key="Shift+Tab")
    expect(chips.first).to_be_focused()
    expect(chips.first).to_have_accessible_name("Q♠ in Bob's hand (typed): correct it")  # whose hand, said with it
    page.keyboard.press("ArrowRight")
    expect(chips.nth(1)).to_be_focused()
    page.keyboard.press("End")
    expect(chips.last).to_be_focused()
    page.keyboard.press("ArrowRight")  # the row's end: the focus stays
    expect(chips.last).to_be_focused()
    page.keyboard.press("Home")
    page.keyboard.press("ArrowDown")  # the row wraps on a phone: down is the next chip too
    page.keyboard.press("ArrowRight")
    expect(chips.nth(2)).to_be_focused()
    third, shown = chips.nth(2).get_attribute("data-card"), chips.nth(2).inner_text()
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")  # back into the row: on the chip last focused there
    expect(chips.nth(2)).to_be_focused()
    assert page.locator('#chips-2 .chip[tabindex="0"]').count() == 1

    page.keyboard.press("Enter")  # the chip's button: its card in the editor, as before
    expect(page.locator("#editor-title")).to_have_text(f"Correct {shown}")
    tab_to(page, "#editor-delete")
    page.keyboard.press("Enter")
    expect(page.locator("#card-editor")).to_be_hidden()
    expect(chips).to_have_count(9)
    expect(page.locator(f'#chips-2 .chip[data-card="{third}"]')).to_have_count(0)
    expect(chips.nth(2)).to_be_focused()  # the neighbour now in its place, not the page's body nor the first chip
    expect(chips.nth(2)).to_have_attribute("tabindex", "0")
    page.close()
    assert not errors, errors


def test_delete_or_backspace_on_a_chip_deletes_its_card_the_focus_going_on_to_its_neighbour(
    base: str, browser: Any
) -> None:
    """At 390x844, Delete and Backspace on a focused chip did nothing: a card read wrongly, or twice, took Enter, a Tab
    to the editor's Delete and Enter. Either key deletes the chip's card now, as the editor's Delete does, and the
    focus goes on to the chip now in its place (the one before, where it was the last), the hand's box without it."""
    from playwright.sync_api import expect

    page, errors = new_table(browser, base, PHONE)
    deal(page)
    chips = page.locator("#chips-2 .chip")
    arrow_to_chip(page, 2, chips.nth(3).get_attribute("data-card") or "")
    gone, after = chips.nth(3).get_attribute("data-card"), chips.nth(4).get_attribute("data-card")
    page.keyboard.press("Delete")
    expect(chips).to_have_count(9)
    expect(page.locator(f'#chips-2 .chip[data-card="{gone}"]')).to_have_count(0)
    expect(chips.nth(3)).to_be_focused()  # its neighbour, now in its place
    expect(chips.nth(3)).to_have_attribute("data-card", after or "")
    assert gone not in page.input_value("#hand-2").split()

    page.keyboard.press("End")
    last, before = chips.last.get_attribute("data-card"), chips.nth(7).get_attribute("data-card")
    page.keyboard.press("Backspace")
    expect(chips).to_have_count(8)
    expect(page.locator(f'#chips-2 .chip[data-card="{last}"]')).to_have_count(0)
    expect(chips.last).to_be_focused()  # the last deleted: the one before it
    expect(chips.last).to_have_attribute("data-card", before or "")
    expect(chips.last).to_have_attribute("tabindex", "0")
    expect(page.locator("#card-editor")).to_be_hidden()
    page.close()
    assert not errors, errors


def test_the_question_about_a_card_in_another_hand_takes_the_focus_and_escape_dismisses_it(
    base: str, browser: Any
) -> None:
    """At 390x844, a card typed that another hand holds asked "Move it?" above the hands, 15 Shift+Tabs from the box
    typed in. The question takes the focus now (its Move one Tab on), and Escape closes it unanswered: the cards stay
    where they are, what was typed stays in its box, and the focus goes back to where it was (as it does once the
    question is answered)."""
    from playwright.sync_api import expect

    page, errors = new_table(browser, base, PHONE)
    page.fill("#hand-2", KNOCK["Bob"])
    page.press("#hand-2", "Enter")
    page.locator("#chips-2 .chip").nth(9).wait_for()
    typed = KNOCK["Ann"].replace("AC", "QS")  # Bob's queen of spades
    page.focus("#hand-1")
    page.keyboard.type(typed)
    page.keyboard.press("Enter")  # the focus goes on to Bob's box as the cards are read
    notice = page.locator("#notice")
    expect(notice).to_contain_text("Q♠ is in Bob's hand. Move it to Ann's hand?")
    expect(notice).to_be_focused()
    assert said_by(page, "#notice") == ["focus"]  # read once, from the focus
    assert focus_in_view(page)
    page.keyboard.press("Tab")
    expect(notice.get_by_role("button", name="Move")).to_be_focused()  # answered at once
    page.keyboard.press("Escape")
    expect(notice).to_be_hidden()
    expect(page.locator("#hand-2")).to_be_focused()  # where the player was
    expect(page.locator("#chips-1 .chip")).to_have_count(0)
    expect(page.locator("#chips-2 .chip")).to_have_count(10)
    assert sorted(page.input_value("#hand-1").split()) == sorted(typed.split())  # the typing kept in its box

    page.focus("#hand-1")
    page.keyboard.press("Enter")  # read again: asked again
    expect(notice).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Move
    expect(notice).to_be_hidden()
    expect(page.locator("#hand-2")).to_be_focused()
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    expect(page.locator("#chips-2 .chip")).to_have_count(9)
    page.close()
    assert not errors, errors
