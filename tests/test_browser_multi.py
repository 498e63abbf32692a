"""Playing 3- and 4-player matches, an agreed number of rounds, two phones and the camera at the table, in headless
Chromium at a phone's size: what such play found on the table page (a match ended by its agreed rounds said only "Ann
wins", a tie after them played on with nothing said, the camera's lay-down note named "seat 1", a change made on the
other phone showed up on the sheet without a word)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from browser_support import (
    BROWSER_TESTS,
    KNOCK_HANDS,
    ScaledDetector,
    camera_table,
    no_sideways_scroll,
    phone_page,
    small_tap_targets,
)

pytestmark = BROWSER_TESTS

ANN_KNOCKS = {"Ann": "7C 7D 7H 7S 8S 9S 2C", "Bob": "10S JS 4H 4D 4C KD 9D", "Cat": "QS 6S KH 3D 5H AD 6C"}
"""Under 5♣ Ann knocks with 2; Bob lays off 10♠ J♠ (19 left), Cat then Q♠ and 6♠ onto them (25 left): Ann +10,
Bob -17, Cat -23."""
ANN_GINS = {"Ann": "7C 7D 7H 2S 3S 4S 5S", "Bob": "4C 5C 6C KD 9H 2D 3H", "Cat": "QS QC QH 8D AD JD 10H"}
"""Ann goes gin (under K♠): Ann +25, Bob -2 x 24, Cat -2 x 29."""
KNOCK = KNOCK_HANDS  # two players: the knocker scores 18 under K♠, whichever of them holds the first hand


def phone(browser: Any, errors: list[str]) -> Any:
    return phone_page(browser, errors, accept_dialogs=False)


def new_match(page: Any, base: str, players: list[str], **options: Any) -> tuple[str, str]:
    """A match made through the API: (the table page's URL, the match's API URL)."""
    rules = "oklahoma-multi" if len(players) > 2 else "oklahoma"
    body = {"players": players, "rules": rules, "dealer": players[0], "options": options}
    created = page.request.post(f"{base}/api/matches", data=body)
    assert created.status == 201, created.text()
    match_id = created.json()["id"]
    return f"{base}/matches/{match_id}", f"{base}/api/matches/{match_id}"


def post_round(page: Any, api: str, body: dict[str, Any]) -> None:
    answer = page.request.post(f"{api}/rounds", data=body)
    assert answer.status == 201, answer.text()


def knock_body(hands: dict[str, str], upcard: str, knocker: str) -> dict[str, Any]:
    return {"upcard": upcard, "knocker": knocker, "hands": {name: cards.split() for name, cards in hands.items()}}


def lay_down(page: Any, hands: Sequence[str], upcard: str, knocker: int) -> None:
    """Each seat's cards and the upcard typed in their boxes (each left with Enter), then seat ``knocker``'s knock
    tapped once it may knock."""
    for seat, cards in enumerate(hands, start=1):
        page.fill(f"#hand-{seat}", cards)
        page.press(f"#hand-{seat}", "Enter")
    page.fill("#upcard-input", upcard)
    page.press("#upcard-input", "Enter")
    page.wait_for_function(f"() => !document.getElementById('knock-{knocker}').disabled", timeout=10_000)
    page.click(f"#knock-{knocker}")


def test_a_match_ended_by_its_agreed_rounds_says_so(base: str, browser: Any) -> None:
    """Three players agree on 3 rounds (draws do not count). After a knock, a draw and a gin, the third scored round
    (Bob undercut by Cat) ended the match with Ann at 35 of 100, and the page said only "Ann wins the match": now it
    says the agreed rounds are played."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url, api = new_match(page, base, ["Ann", "Bob", "Cat"], rounds_limit=3)
    post_round(page, api, knock_body(ANN_KNOCKS, "5C", "Ann"))
    post_round(page, api, {"draw": True})
    post_round(page, api, knock_body(ANN_GINS, "KS", "Ann"))
    page.goto(url)
    expect(page.locator("#match-over")).to_be_hidden()
    lay_down(page, ("9C 10C JC KD KH KS 2D", "4C 5C 6C 8D 8H 8S 3H", "QD QH QC 3S 4S 5S 2C"), "7D", knocker=2)
    expect(page.locator("#proposal .outcome")).to_contain_text("Cat undercuts Bob: Cat scores 20.")
    page.click("#confirm-round")
    # one wording, the sheet's, where the proposal was and on the sheet
    expect(page.locator("#match-over-text")).to_have_text("Ann wins the match after the agreed 3 rounds!")
    expect(page.locator("#sheet-body .winner-banner")).to_have_text("Ann wins the match after the agreed 3 rounds!")
    match = page.request.get(api).json()
    assert (match["rounds_scored"], match["totals"], match["winner"]) == (3, {"Ann": 35, "Bob": -66, "Cat": -61}, "Ann")
    no_sideways_scroll(page, "the match over")
    assert not errors, errors


def test_a_tie_at_the_top_after_the_agreed_rounds_says_the_match_plays_on(base: str, browser: Any) -> None:
    """After the agreed 2 rounds Ann and Bob had 18 each: the match plays on until one leads, but the page said
    nothing of it (the totals read "to 100 or 2 rounds" under 2 rounds played). Now the sheet and the totals bar say
    the lead is tied and the match plays on, and stop saying it once a round decides it."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url, api = new_match(page, base, ["Ann", "Bob"], rounds_limit=2)
    post_round(page, api, knock_body(KNOCK, "KS", "Ann"))
    swapped = {"Ann": KNOCK["Bob"], "Bob": KNOCK["Ann"]}
    post_round(page, api, knock_body(swapped, "KS", "Bob"))
    page.goto(url)
    tied = "The agreed 2 rounds are played, but the lead is tied: play on until one player leads."
    expect(page.locator("#sheet-body")).to_contain_text(tied)
    expect(page.locator("#totals-bar")).to_contain_text("to 100 or 2 rounds · tied: play on")
    expect(page.locator("#match-over")).to_be_hidden()
    no_sideways_scroll(page, "a tie after the agreed rounds")

    post_round(page, api, knock_body(KNOCK, "KS", "Ann"))  # round 3 decides it
    page.reload()
    expect(page.locator("#match-over-text")).to_have_text("Ann wins the match after the agreed 2 rounds!")
    expect(page.locator("#sheet-body")).not_to_contain_text("play on")
    expect(page.locator("#totals-bar")).not_to_contain_text("play on")
    assert not errors, errors


def test_the_cameras_lay_down_note_names_the_player_not_a_seat(tmp_path: Path) -> None:
    """The camera reads Ann's ten cards each apart from the next: the proposal's note said "seat 1 shows no group that
    is a meld" (or, with a rendered table's fan, "seat 1 lays 9H 10H JH 2S 2D AC together"), and nobody at the table
    is called seat 1. Now it names Ann."""
    from playwright.sync_api import expect

    from scorer.cards import parse_cards
    from scorer.vision.layout import TableLayout
    from scorer.vision.types import CardDetection

    width, height = 1280, 720
    ann, bob = parse_cards(KNOCK["Ann"]), parse_cards(KNOCK["Bob"])
    cards = [CardDetection(card, (60 + 88 * i, 540, 145 + 88 * i, 660), 0.95) for i, card in enumerate(ann)]
    cards += [CardDetection(card, (60 + 100 * i, 40, 145 + 100 * i, 160), 0.95) for i, card in enumerate(bob)]
    upcard_zone = TableLayout.default(2).upcard
    assert upcard_zone is not None
    xs, ys = zip(*upcard_zone.polygon, strict=True)
    cx, cy = sum(xs) / len(xs) * width, sum(ys) / len(ys) * height
    cards.append(CardDetection(parse_cards("KS")[0], (cx - 42, cy - 60, cx + 43, cy + 60), 0.95))
    detector = ScaledDetector(cards, width, height)
    with camera_table(tmp_path, detector) as (base, browser):
        errors: list[str] = []
        page = phone(browser, errors)
        url, _ = new_match(page, base, ["Ann", "Bob"])
        page.goto(url)
        page.click("#camera-start")
        expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 18", timeout=30_000)
        note = page.locator("#proposal-body p.hint", has_text="its melds are not read")
        expect(note).to_have_text("Ann shows no group that is a meld: its melds are not read.")  # each note a sentence
        expect(page.locator("#proposal-body")).not_to_contain_text("seat 1")
        browser.close()
    assert not errors, errors


def test_the_cameras_conflicts_and_notes_name_players_and_show_cards_as_cards(tmp_path: Path) -> None:
    """The camera's status said "7D straddles seats 2 and 1", and the lay-down note "Ann lays 8C 9C ... together",
    where the rest of the page shows cards as 7♦, 8♣. Now both name the players and show the cards as the page does,
    red suits in red; the answer's JSON keeps its codes."""
    from playwright.sync_api import expect

    from scorer.cards import parse_cards
    from scorer.vision.types import CardDetection

    ann, bob = parse_cards(KNOCK["Ann"]), parse_cards(KNOCK["Bob"])
    cards = [CardDetection(card, (60 + 48 * i, 540, 145 + 48 * i, 660), 0.95) for i, card in enumerate(ann)]  # a fan
    cards += [CardDetection(card, (60 + 100 * i, 40, 145 + 100 * i, 160), 0.95) for i, card in enumerate(bob[:-1])]
    cards.append(CardDetection(bob[-1], (1100, 290, 1185, 410), 0.95))  # Bob's 7D, reaching into Ann's half
    cards.append(CardDetection(parse_cards("KS")[0], (858, 300, 943, 420), 0.95))  # in the upcard zone
    detector = ScaledDetector(cards)
    with camera_table(tmp_path, detector) as (base, browser):
        errors: list[str] = []
        page = phone(browser, errors)
        url, _ = new_match(page, base, ["Ann", "Bob"])
        page.goto(url)
        answers: list[Any] = []
        page.on("response", lambda answer: "/live/frame" in answer.url and answers.append(answer))
        page.click("#camera-start")
        expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 18", timeout=30_000)
        status = page.locator("#camera-status")
        expect(status).to_contain_text("7♦ straddles Bob and Ann")
        expect(status.locator(".card-text.red")).to_have_text(["7♦"])
        note = page.locator("#proposal-body p.hint", has_text="a meld with other cards")
        expect(note).to_have_text(
            "Ann lays 8♣ 9♣ 10♣ J♣ 9♥ 10♥ J♥ 2♠ 2♦ A♣ together, a meld with other cards: its melds are not read."
        )
        expect(note.locator(".card-text.red")).to_have_text(["9♥", "10♥", "J♥", "2♦"])
        assert answers[-1].json()["table"]["conflicts"] == [{"card": "7D", "reason": "7D straddles Bob and Ann"}]
        browser.close()
    assert not errors, errors


LONG_NAMES = ["Alexandrina Montgomery", "Bartholomew Fairweather", "Christabel Worthington", "Maximilian Featherstone"]


def test_the_totals_bar_never_covers_the_sheets_last_line(base: str, browser: Any) -> None:
    """Four players with long names wrap the pinned totals bar (83 px tall and more at 390x844) past the room the page
    kept under its foot (81 px): scrolled to the bottom, the bar covered the sheet's last line. Now the page keeps
    room for the bar as tall as it is."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url, api = new_match(page, base, LONG_NAMES)
    for _ in range(3):
        post_round(page, api, {"draw": True})
    page.goto(url)
    expect(page.locator("#sheet-body table.rounds tbody tr")).to_have_count(3)
    expect(page.locator("#totals-bar")).to_contain_text(LONG_NAMES[3])
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
    page.evaluate("() => window.scrollTo(0, document.scrollingElement.scrollHeight)")
    bar, row, undo = page.evaluate(
        """() => ['#totals-bar', '#sheet-body tbody tr:last-child', '#undo-round']
            .map((selector) => document.querySelector(selector).getBoundingClientRect())
            .map((box) => ({top: box.top, bottom: box.bottom, height: box.height}))"""
    )
    assert bar["height"] > 81, f"the names wrap the bar to {bar['height']} px: no more than the room kept before"
    assert bar["bottom"] <= 844 + 0.5, bar
    assert row["bottom"] <= bar["top"] and undo["bottom"] <= bar["top"], (row, undo, bar)
    no_sideways_scroll(page, "four long names")
    assert not errors, errors


# ---------------------------------------------------------------- two phones at one table


def refresh(page: Any) -> None:
    """Fetch the match now, as the page does every 4 s and when it is shown again (no wait for its timer)."""
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")


def test_a_change_made_on_the_other_phone_is_said_here_in_the_pages_words(base: str, browser: Any) -> None:
    """Two phones at the table: a round entered, edited, put back, undone or brought back on one showed up on the
    other's sheet by its 4 s refresh without a word, and the players looking at that phone missed it. It is now said
    there, in the words the first phone uses, "On another device: ..."; the phone that made the change says it as its
    own, never as another device's."""
    from playwright.sync_api import expect

    errors: list[str] = []
    first, second = phone_page(browser, errors), phone(browser, errors)  # the first's "Undo round 2?" is answered yes
    url, api = new_match(first, base, ["Ann", "Bob"])
    post_round(first, api, knock_body(KNOCK, "KS", "Ann"))
    for page in (first, second):
        page.goto(url)
    here, there = first.locator("#notice span"), second.locator("#notice span")

    def said(own: str) -> None:
        expect(here).to_have_text(own)
        refresh(second)
        expect(there).to_have_text(f"On another device: {own[0].lower()}{own[1:]}")
        expect(second.locator("#notice button")).to_have_text(["OK"])
        refresh(first)  # its own change, found by its refresh too, is not said again
        expect(here).to_have_text(own)

    first.click("#record-draw")
    said("Round 2 is on the sheet: a draw, no points.")
    first.click('#sheet-body button[aria-label="Edit round 1"]')
    first.check("#round-draw")
    first.click('#round-editor button[value="save"]')
    said("Round 1 changed on the sheet: now a draw, no points.")
    first.click("#notice >> text=Undo the change")
    said("Round 1 put back: now Ann +18.")
    first.click("#undo-round")
    said("Round 2 undone (a draw, no points).")
    first.click("#notice >> text=Bring back round 2")
    said("Round 2 brought back: a draw, no points.")
    expect(second.locator("#totals-bar")).to_contain_text("Ann18", use_inner_text=False)
    no_sideways_scroll(second, "news from another device")
    assert not errors, errors


def round_2_offered(base: str, browser: Any, errors: list[str]) -> tuple[Any, Any, str]:
    """Two phones at one match: the first has just recorded round 2, a draw, after the API recorded round 1 (its
    notice offers "Undo round 2"). Answers the first phone, the other and the match's API URL."""
    page, other = phone_page(browser, errors), phone(browser, errors)
    url, api = new_match(page, base, ["Ann", "Bob"])
    post_round(page, api, knock_body(KNOCK, "KS", "Ann"))
    page.goto(url)
    page.click("#record-draw")
    return page, other, api


def test_news_from_the_other_phone_keeps_the_undo_just_offered_here(base: str, browser: Any) -> None:
    """This phone had just recorded round 2 and offered "Undo round 2" when the other phone edited round 1: its news
    would have taken the Undo away. The news now follows the offer, whose button stays; later news replaces the
    earlier news there, not the offer."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page, other, api = round_2_offered(base, browser, errors)
    offered = "Round 2 is on the sheet: a draw, no points."
    text, buttons = page.locator("#notice span"), page.locator("#notice button")
    expect(text).to_have_text(offered)

    revision = other.request.get(api).json()["revision"]
    assert other.request.put(f"{api}/rounds/1?revision={revision}", data={"draw": True}).status == 200
    refresh(page)
    expect(text).to_have_text(f"{offered} On another device: round 1 changed on the sheet: now a draw, no points.")
    expect(buttons).to_have_text(["Undo round 2", "OK"])
    no_sideways_scroll(page, "news after an offer")
    assert small_tap_targets(page, "#notice") == []

    match = other.request.get(api).json()
    (kept,) = [version for version in match["earlier_versions"] if version["restore"] == "edit"]
    put_back = other.request.post(f"{api}/earlier-versions/{kept['id']}/restore", data={"revision": match["revision"]})
    assert put_back.status == 200, put_back.text()
    refresh(page)
    expect(text).to_have_text(f"{offered} On another device: round 1 put back: now Ann +18.")
    expect(buttons).to_have_text(["Undo round 2", "OK"])

    page.click("#notice >> text=Undo round 2")
    expect(text).to_have_text("Round 2 undone (a draw, no points).")
    assert [line["draw"] for line in page.request.get(api).json()["rounds"]] == [False]
    assert not errors, errors


def test_news_from_the_other_phone_keeps_the_undo_of_a_knock_entered_here(base: str, browser: Any) -> None:
    """The Undo of a round entered here holds while the round is as entered, compared key by key: the refresh's JSON
    and a change's answer may order a knock's keys apart, and the Undo of an unchanged knock was dropped so."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page, other = phone_page(browser, errors), phone(browser, errors)
    url, api = new_match(page, base, ["Ann", "Bob"])
    post_round(page, api, knock_body(KNOCK, "KS", "Ann"))
    page.goto(url)
    gin = {"Ann": "AS 2S 3S 4D 4H 4C 7C 8C 9C 10C", "Bob": "JH QH KH 5D 6D 7D 6H 6C 6S 3D"}
    lay_down(page, (gin["Ann"], gin["Bob"]), "KD", knocker=1)
    page.click("#confirm-round")
    text, buttons = page.locator("#notice span"), page.locator("#notice button")
    expect(text).to_contain_text("Round 2 is on the sheet: Ann +", timeout=10_000)
    revision = other.request.get(api).json()["revision"]
    assert other.request.put(f"{api}/rounds/1?revision={revision}", data={"draw": True}).status == 200
    refresh(page)
    expect(text).to_contain_text("On another device: round 1 changed on the sheet: now a draw, no points.")
    expect(buttons).to_have_text(["Undo round 2", "OK"])
    assert not errors, errors


def test_an_undo_the_other_phone_made_impossible_is_no_longer_offered(base: str, browser: Any) -> None:
    """This phone offered "Undo round 2" when the other phone undid round 2 (a tap then did nothing without a word,
    then said the round was undone already), entered round 3 (a tap said round 2 was no longer the last), or edited
    round 2 (a tap undid the other phone's edit): the news is said, and the Undo that can no longer be made is not
    offered with it, nor its words ("Round 2 is on the sheet ... On another device: round 2 undone" said both)."""
    from playwright.sync_api import expect

    errors: list[str] = []
    for other_change in ("undo round 2", "enter round 3", "deal round 2 again", "edit round 2"):
        page, other, api = round_2_offered(base, browser, errors)
        offered = "Round 2 is on the sheet: a draw, no points."
        expect(page.locator("#notice span")).to_have_text(offered)
        revision = other.request.get(api).json()["revision"]
        if other_change in ("undo round 2", "deal round 2 again"):
            assert other.request.delete(f"{api}/rounds/2?revision={revision}").status == 200
        if other_change == "enter round 3":
            assert other.request.post(f"{api}/rounds", data={"draw": True}).status == 201
        elif other_change == "deal round 2 again":  # another deal as round 2: not this phone's to undo
            assert other.request.post(f"{api}/rounds", data=knock_body(KNOCK, "KS", "Ann")).status == 201
        elif other_change == "edit round 2":  # the same deal, entered otherwise there: not this phone's to undo
            edited = other.request.put(f"{api}/rounds/2?revision={revision}", data=knock_body(KNOCK, "KS", "Ann"))
            assert edited.status == 200, edited.text()
        refresh(page)
        said = {"undo round 2": "round 2 undone", "enter round 3": "round 3 is on the sheet"}.get(other_change, "")
        said = {"edit round 2": "round 2 changed on the sheet"}.get(other_change, said)
        expect(page.locator("#notice span")).to_contain_text(f"On another device: {said}")
        expect(page.locator("#notice span")).not_to_contain_text(offered)
        expect(page.locator("#notice button")).to_have_text(["OK"])
        assert len(page.request.get(api).json()["rounds"]) == {"undo round 2": 1, "enter round 3": 3}.get(
            other_change, 2
        )
        page.close()
        other.close()
    assert not errors, errors
    assert not errors, errors


DAN_GINS = {
    "Ann": "KD KC QH JD 9C 9D 8S",
    "Bob": "QD QC JC JS 10C 10D 9S",
    "Cat": "8C 8D 7C 7D 6C 6D 6H",
    "Dan": "AH 2H 3H 4H 5D 5C 5S",
}
"""Dan goes gin under K♠: Dan +25, Ann -132, Bob -78, Cat -12; four such rounds bring Dan to the 100."""


def test_a_match_ended_on_the_other_phone_takes_the_place_of_the_proposal_shown_here(base: str, browser: Any) -> None:
    """Four players, Dan at 75: this phone showed Ann's knock when the other phone confirmed Dan's fourth gin, which
    ended the match. By its refresh this phone went on showing the proposal, four players' chips a screen and a half
    tall, its Confirm greyed without a word, and the news and "Dan wins the match!" far below it out of sight. Now the
    proposal that can no longer be confirmed steps aside for the match's end, in view where the proposal was."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    players = ["Ann", "Bob", "Cat", "Dan"]
    url, api = new_match(page, base, players)
    for _ in range(3):
        post_round(page, api, knock_body(DAN_GINS, "KS", "Dan"))
    page.goto(url)
    lay_down(page, [ANN_KNOCKS.get(name, "2H 3H 8H 10H 8D JC QC") for name in players], "5C", knocker=1)
    expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 10.")

    post_round(page, api, knock_body(DAN_GINS, "KS", "Dan"))  # confirmed on the other phone: Dan reaches 100
    refresh(page)
    expect(page.locator("#notice span")).to_contain_text("On another device: round 4 is on the sheet")
    expect(page.locator("#proposal")).to_be_hidden()
    expect(page.locator("#match-over-text")).to_have_text("Dan wins the match!")
    expect(page.locator("#match-over")).to_be_in_viewport()
    no_sideways_scroll(page, "a match ended on the other phone")
    assert not errors, errors


def test_an_undercut_tied_says_why_the_tie_goes_to_its_winner(base: str, browser: Any) -> None:
    """Bob (the second seat) lays down with 3; Ann and Dan both hold 2, so the rules give the undercut to the player
    nearest Bob's left: Dan, the fourth seat, not Ann, the first. The proposal said only "Dan undercuts Bob: Dan scores
    20." beside Ann's "deadwood 2, 0 points", without a word why Ann, with as little, scores nothing. Now it says."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url, _ = new_match(page, base, ["Ann", "Bob", "Cat", "Dan"])
    page.goto(url)
    hands = ("5D 6D 7D 9C 9H 9S 2D", "AS 2S 3S 4C 4D 4H 3C", "5C 6C 7C 10S JC KC KS", "8C 8D 8S JH QH KH 2C")
    lay_down(page, hands, "3H", knocker=2)
    expect(page.locator("#proposal .outcome")).to_have_text(
        "Dan undercuts Bob: Dan scores 20. Ann has 2 too: the tie goes to the player nearest Bob's left."
        " Knock limit 3 (upcard 3♥)."
    )
    expect(page.locator("#proposal-body h3")).to_have_text(
        [
            "Ann: deadwood 2, 0 points",
            "Bob: deadwood 3, -1 points",
            "Cat: deadwood 40, -38 points",
            "Dan: deadwood 2, +20 points",
        ]
    )
    page.click("#cancel-proposal")
    page.click("#knock-1")  # Ann lays down herself: Dan alone holds as little, an undercut with no tie to explain
    expect(page.locator("#proposal .outcome")).to_have_text(
        "Dan undercuts Ann: Dan scores 20. Knock limit 3 (upcard 3♥)."
    )
    assert not errors, errors
