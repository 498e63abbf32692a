"""Playing a match at the table as players do, in headless Chromium at a phone's size: what a whole match of
play found on the table page (two phones on one match, a double tap on Undo, a reload while typing a hand, a
doubled round, the round editor's tap targets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    BROWSER_TESTS,
    PHONE,
    ScaledDetector,
    camera_table,
    no_sideways_scroll,
    small_tap_targets,
)
from browser_support import KNOCK_HANDS as KNOCK
from browser_support import (
    phone_page as phone,
)

pytestmark = BROWSER_TESTS

BOB_KNOCKS = {"Ann": "AS AH 9S 9D 4D JC QC 8H 6S 3S", "Bob": "2C 3C 4C 6D 7D 8D KH KS KC AD"}  # Bob 1, Ann 52: Bob +51
TOTALS = "#sheet-body .total-points"


def new_match(page: Any, base: str) -> str:
    created = page.request.post(f"{base}/api/matches", data={"players": ["Ann", "Bob"], "dealer": "Bob"})
    assert created.status == 201, created.text()
    return f"{base}/matches/{created.json()['id']}"


def stored(page: Any) -> Any:
    return page.evaluate("fetch(location.pathname.replace('/matches/', '/api/matches/')).then((r) => r.json())")


def type_hand(page: Any, seat: int, cards: str) -> None:
    """Type one hand in its box, left with Enter, and wait for its chips."""
    from playwright.sync_api import expect

    page.fill(f"#hand-{seat}", cards)
    page.press(f"#hand-{seat}", "Enter")
    expect(page.locator(f"#chips-{seat} .chip")).to_have_count(len(cards.split()))


def deal(page: Any, hands: dict[str, str], upcard: str) -> None:
    """Type both hands and the upcard, as a player does on a phone (each box left with Enter)."""
    for seat, name in enumerate(("Ann", "Bob"), start=1):
        page.fill(f"#hand-{seat}", hands[name])
        page.press(f"#hand-{seat}", "Enter")
    page.fill("#upcard-input", upcard)
    page.press("#upcard-input", "Enter")
    for seat, name in enumerate(("Ann", "Bob"), start=1):
        page.locator(f"#chips-{seat} .chip").nth(len(hands[name].split()) - 1).wait_for()
    page.locator('#hands[aria-busy="false"]').wait_for()  # their deadwood said: the lines grow no more


def knock(page: Any, seat: int, outcome: str) -> None:
    from playwright.sync_api import expect

    page.wait_for_function(f"() => !document.getElementById('knock-{seat}').disabled", timeout=10_000)
    page.click(f"#knock-{seat}")
    expect(page.locator("#proposal .outcome")).to_contain_text(outcome, timeout=10_000)


def knocked_and_confirmed(page: Any, base: str) -> Any:
    """``page`` on a new match whose round 1 it has just confirmed: Ann knocks under K♠ and scores 18."""
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    page.click("#confirm-round")
    return page


def test_a_round_confirmed_on_a_phone_that_missed_the_last_one_is_not_dropped(base: str, browser: Any) -> None:
    """Two phones on one match. The first records round 1 (Bob +51); the second, still showing no rounds, confirms
    the next deal (Ann +18). Its confirm posts round number 1, which is taken: before, the page took the 409 for its
    own round already stored, said "Round 1 was already on the sheet" and threw Ann's round away. Now a different
    round recorded meanwhile is said as such, the proposal stays, and confirming again adds it as round 2."""
    from playwright.sync_api import expect

    errors: list[str] = []
    first, second = phone(browser, errors), phone(browser, errors)
    url = new_match(first, base)
    first.goto(url)
    second.goto(url)
    deal(second, KNOCK, "KS")
    knock(second, 1, "Ann knocks: Ann scores 18")

    deal(first, BOB_KNOCKS, "KD")
    knock(first, 2, "Bob knocks: Bob scores 51")
    first.click("#confirm-round")
    expect(first.locator(TOTALS).nth(1)).to_have_text("51")

    second.click("#confirm-round")
    # The second phone may have fetched round 1 already (it looks now and then), else its confirm is refused: either
    # way Ann's round is not lost, and (refused) it is confirmed once more.
    expect(second.locator(TOTALS).nth(1)).to_have_text("51", timeout=10_000)
    second.wait_for_function(
        """() => document.getElementById('proposal').hidden
            || /not saved/.test(document.getElementById('notice').textContent)""",
        timeout=10_000,
    )
    if second.locator("#proposal").is_visible():
        expect(second.locator("#notice")).to_contain_text("Round 1 was recorded on another device meanwhile")
        expect(second.locator("#notice")).to_contain_text(
            "if this is the next one, confirm it again to add it as round 2"
        )
        second.click("#confirm-round")
    expect(second.locator(TOTALS).first).to_have_text("18", timeout=10_000)
    match = stored(second)
    assert [line["points"] for line in match["rounds"]] == [{"Ann": 0, "Bob": 51}, {"Ann": 18, "Bob": 0}]
    assert not errors, errors


def test_a_second_phone_shows_the_rounds_recorded_on_the_first(base: str, browser: Any) -> None:
    """The second phone at the table reads the running score: before, it kept showing the totals it loaded with
    until it was reloaded; now it fetches the match now and then and shows a round recorded elsewhere."""
    from playwright.sync_api import expect

    errors: list[str] = []
    first, second = phone(browser, errors), phone(browser, errors)
    url = new_match(first, base)
    first.goto(url)
    second.goto(url)
    expect(second.locator("#sheet-body tbody")).to_contain_text("No rounds yet.")
    deal(first, KNOCK, "KS")
    knock(first, 1, "Ann knocks: Ann scores 18")
    first.click("#confirm-round")
    expect(first.locator(TOTALS).first).to_have_text("18")
    expect(second.locator(TOTALS).first).to_have_text("18", timeout=15_000)
    expect(second.locator("#totals-bar")).to_contain_text("Ann18", use_inner_text=False, timeout=5_000)
    second.click("#record-draw")  # and what it records next is round 2, stored once
    expect(second.locator("#sheet-body tbody")).to_contain_text("Draw")
    assert [line["draw"] for line in stored(second)["rounds"]] == [False, True]
    assert not errors, errors


def test_a_second_tap_of_record_a_draw_after_the_first_was_stored_asks_first(base: str, browser: Any) -> None:
    """ "Record a draw" tapped twice, the second tap once the first draw was stored, recorded two draws (a round
    too many, and an undone draw listed for ever after Undo). A draw after a draw is now asked first, as the same
    deal confirmed again is."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors, accept_dialogs=False)
    page.goto(new_match(page, base))
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()  # the second tap was a slip

    page.on("dialog", answer)
    page.click("#record-draw")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet")
    page.click("#record-draw")
    expect(page.locator("#record-draw")).to_be_enabled()
    assert asked == ["Round 1 on the sheet is a draw already. Record another draw as round 2?"]
    assert [line["draw"] for line in stored(page)["rounds"]] == [True]
    page.remove_listener("dialog", answer)
    page.on("dialog", lambda dialog: dialog.accept())  # two draws in a row do happen
    page.click("#record-draw")
    expect(page.locator("#sheet-body tbody tr:has(th[scope=row])")).to_have_count(2)
    assert [line["draw"] for line in stored(page)["rounds"]] == [True, True]
    assert not errors, errors


IN_VIEW = """(selector) => {
    const box = document.querySelector(selector).getBoundingClientRect();
    const bar = document.getElementById('totals-bar').getBoundingClientRect();
    return [Math.round(box.top), Math.round(box.bottom), Math.round(Math.min(innerHeight, bar.top))];
}"""
"""A part of the page's top and bottom, and where the view ends above the pinned totals bar."""

TAP_AT_THE_TOP = """(selector) => {
    const button = document.querySelector(selector);
    window.scrollTo(0, scrollY + button.getBoundingClientRect().top - 8);
    button.click();
}"""
"""Tap the button at the top of the view, as a player coming up from the sheet does."""


def in_view(page: Any, selector: str) -> None:
    top, bottom, end = page.evaluate(IN_VIEW, selector)
    assert top >= 0 and bottom <= end, f"{selector} is drawn at {top}..{bottom}, the view ends at {end}"


def test_what_a_tap_shows_is_brought_into_view(base: str, browser: Any) -> None:
    """At 390 px a knock tapped far down the page drew its proposal a screen above, and an undo's refusal or a
    notice appeared out of sight, the player seeing nothing happen (a first-time user's probe): each is now brought
    into view, clear of the pinned totals bar."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    bottom = "() => window.scrollTo(0, document.documentElement.scrollHeight)"
    page.wait_for_function("() => !document.getElementById('knock-1').disabled")
    page.evaluate(TAP_AT_THE_TOP, "#knock-1")
    expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 18")
    assert page.evaluate("() => document.getElementById('proposal').offsetHeight") > PHONE["height"] - 100
    in_view(page, "#proposal h2")  # a proposal taller than the screen shows its top: the result
    in_view(page, "#proposal .outcome")  # Confirm a short scroll further
    page.click("#confirm-round")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet")
    page.evaluate(bottom)
    page.click("#record-draw")
    expect(page.locator("#notice")).to_contain_text("Round 2 is on the sheet")
    in_view(page, "#notice")  # with its Undo
    page.fill("#hand-2", KNOCK["Bob"].rsplit(" ", 1)[0])  # Bob holds 9 cards
    page.press("#hand-2", "Enter")
    page.fill("#hand-1", KNOCK["Ann"])
    page.press("#hand-1", "Enter")
    page.fill("#upcard-input", "KS")
    page.press("#upcard-input", "Enter")
    page.wait_for_function("() => !document.getElementById('knock-1').disabled")
    page.evaluate(TAP_AT_THE_TOP, "#knock-1")
    page.wait_for_function("() => document.getElementById('table-error').textContent !== ''")
    in_view(page, "#table-error")
    assert not errors, errors


def test_a_round_confirmed_on_one_phone_closes_its_proposal_on_the_other(base: str, browser: Any) -> None:
    """Both phones showed the same proposed knock; once the first confirmed it, the second still offered Confirm
    (a tap there was refused as already stored). Now the second sees the round on the sheet and its proposal closes."""
    from playwright.sync_api import expect

    errors: list[str] = []
    first, second = phone(browser, errors), phone(browser, errors)
    url = new_match(first, base)
    for page in (first, second):
        page.goto(url)
        deal(page, KNOCK, "KS")
        knock(page, 1, "Ann knocks: Ann scores 18")
    first.click("#confirm-round")
    expect(second.locator("#notice")).to_contain_text(
        "On another device: round 1 is on the sheet: Ann +18. Round 1 was this table's deal: its cards are cleared.",
        timeout=15_000,
    )
    expect(second.locator("#proposal")).to_be_hidden()
    expect(second.locator(TOTALS).first).to_have_text("18")
    assert len(stored(second)["rounds"]) == 1
    assert not errors, errors


def phones_the_second_saying_no(browser: Any) -> tuple[Any, Any, list[str], list[str]]:
    """Two phones at one table, the second answering no to every question: the phones, the questions the second was
    asked and the page errors of both."""
    errors: list[str] = []
    asked: list[str] = []
    first, second = phone(browser, errors), browser.new_context(viewport=PHONE).new_page()
    second.on("pageerror", lambda error: errors.append(str(error)))

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    second.on("dialog", answer)
    return first, second, asked, errors


def test_a_deal_confirmed_on_one_phone_is_not_stored_again_from_the_other(base: str, browser: Any) -> None:
    """Both phones hold the same deal, the second with no proposal open, when the first confirms it. The refresh
    moved the second on to round 2 with the deal's cards still on its table (and kept over a reload), and its
    knock and Confirm stored the deal again as round 2. Now the second clears its table and says why; its cards do
    not come back on a reload; and the deal the sheet's last round holds is added again only when the player says
    so (here they say no)."""
    from playwright.sync_api import expect

    first, second, asked, errors = phones_the_second_saying_no(browser)
    url = new_match(first, base)
    for page in (first, second):
        page.goto(url)
        deal(page, KNOCK, "KS")
    knock(first, 1, "Ann knocks: Ann scores 18")
    first.click("#confirm-round")
    expect(second.locator("#notice")).to_contain_text(
        "On another device: round 1 is on the sheet: Ann +18. Round 1 was this table's deal: its cards are cleared.",
        timeout=15_000,
    )
    expect(second.locator("#chips-1 .chip")).to_have_count(0)
    second.reload()
    expect(second.locator(TOTALS).first).to_have_text("18")
    expect(second.locator("#chips-1 .chip")).to_have_count(0)
    deal(second, KNOCK, "KS")  # the same deal typed again, and knocked
    knock(second, 1, "Ann knocks: Ann scores 18")
    second.click("#confirm-round")
    expect(second.locator("#proposal")).to_be_visible()
    assert asked == ["Round 1 on the sheet already holds this deal. Add it again as round 2?"]
    assert len(stored(second)["rounds"]) == 1
    assert not errors, errors


def test_a_deal_stored_from_another_phone_with_a_card_read_otherwise_is_asked_about(base: str, browser: Any) -> None:
    """Both phones hold one deal, the second with Bob's 9C read as 10C. The first confirms; the second, told so by its
    refresh, kept its proposal, and its Confirm stored the deal again as round 2 without a question (its points
    counted twice: the first-time user probe, session 47). Now it is asked first (here they say no)."""
    from playwright.sync_api import expect

    first, second, asked, errors = phones_the_second_saying_no(browser)
    url = new_match(first, base)
    misread = {**KNOCK, "Bob": KNOCK["Bob"].replace("7D", "8D")}
    for page, hands in ((first, KNOCK), (second, misread)):
        page.goto(url)
        deal(page, hands, "KS")
        knock(page, 1, "Ann knocks")
    first.click("#confirm-round")
    expect(second.locator("#notice")).to_contain_text("On another device: round 1 is on the sheet", timeout=15_000)
    second.click("#confirm-round")
    expect(second.locator("#proposal")).to_be_visible()
    assert asked == [
        "Round 1 on the sheet holds nearly this deal (20 of its 21 cards, the upcard counted). Add this as round 2?"
    ]
    assert len(stored(second)["rounds"]) == 1
    assert not errors, errors


def test_a_round_found_stored_already_is_not_announced_as_the_last_one(base: str, browser: Any) -> None:
    """A phone whose refresh could not reach the server confirms round 1, which another device had stored, and
    round 2 after it. The 409 is taken as round 1 stored already, but the page announced the match's last round,
    "Round 2 is on the sheet: Bob +51", with an Undo that deleted a round this phone never entered."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url = new_match(page, base)
    page.goto(url)
    api = url.replace("/matches/", "/api/matches/")
    page.route(api, lambda route: route.abort())  # the refresh cannot get through
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    for hands, upcard, knocker in ((KNOCK, "KS", "Ann"), (BOB_KNOCKS, "KD", "Bob")):
        body = {"upcard": upcard, "knocker": knocker, "hands": {name: cards.split() for name, cards in hands.items()}}
        assert page.request.post(f"{api}/rounds", data=body).status == 201
    page.unroute(api)
    page.click("#confirm-round")
    expect(page.locator("#notice")).to_contain_text("Round 1 was already on the sheet; it was not added twice.")
    expect(page.locator("#notice")).not_to_contain_text("Undo")
    assert [line["points"] for line in stored(page)["rounds"]] == [{"Ann": 18, "Bob": 0}, {"Ann": 0, "Bob": 51}]
    assert not errors, errors


def test_a_double_tap_on_undo_undoes_one_round_and_says_nothing_went_wrong(base: str, browser: Any) -> None:
    """A double tap on "Undo round 2" undid one round (the revision saw to that), but the second tap's refusal
    stayed on the page in red ("match 1 has changed since revision 3 ..."): now the second tap does nothing."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    expect(page.locator(TOTALS).first).to_have_text("18")
    page.click("#record-draw")
    expect(page.locator("#undo-round")).to_have_text("Undo round 2")

    page.locator("#undo-round").dblclick()
    expect(page.locator("#undo-round")).to_have_text("Undo round 1")
    page.wait_for_timeout(1_000)  # the second tap's answer, had one been sent
    expect(page.locator("#table-error")).to_have_text("")
    assert len(stored(page)["rounds"]) == 1
    expect(page.locator(TOTALS).first).to_have_text("18")
    assert not errors, errors


def test_a_second_tap_landing_on_the_next_undo_after_the_answer_undoes_nothing_more(base: str, browser: Any) -> None:
    """The sheet drawn after an undo has its next Undo where the last one was: a second tap arriving just after the
    first one's answer (a slow double tap, a click sent twice) undid the round before too. Now it is refused with a
    word, and the same tap a moment later undoes it."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    page.click("#record-draw")
    expect(page.locator("#undo-round")).to_have_text("Undo round 2")

    page.click("#undo-round")
    expect(page.locator("#undo-round")).to_have_text("Undo round 1")
    page.click("#undo-round")
    expect(page.locator("#table-error")).to_contain_text(
        "Round 2 was just undone: to undo round 1 too, tap Undo round 1"
    )
    assert len(stored(page)["rounds"]) == 1
    expect(page.locator(TOTALS).first).to_have_text("18")

    page.wait_for_timeout(1_100)
    page.click("#undo-round")
    expect(page.locator("#sheet-body tbody")).to_contain_text("No rounds yet.")
    assert stored(page)["rounds"] == []
    assert not errors, errors


def test_a_mistyped_card_is_said_under_its_hand_and_the_box_keeps_what_was_typed(base: str, browser: Any) -> None:
    """A word that is no card, typed in a hand's box, was said at the top of the table (a screen away on a phone,
    and not brought into view while typing), and the box went back to the cards read before: what was typed was lost.
    Now the hand's line says it, the box keeps the text to be fixed, and the hand may not knock until it is."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    expect(page.locator("#knock-1")).to_be_enabled()
    mistyped = KNOCK["Ann"].replace("JH", "JZ")
    page.fill("#hand-1", mistyped)
    page.press("#hand-1", "Enter")
    expect(page.locator("#status-1")).to_contain_text("unknown card 'JZ': expected rank")
    expect(page.locator("#status-1")).to_contain_text("fix it in the box")
    expect(page.locator("#hand-1")).to_have_value(mistyped)
    expect(page.locator("#table-error")).to_have_text("")
    expect(page.locator("#knock-1")).to_be_disabled()
    no_sideways_scroll(page, "a hand's line saying a card was mistyped")

    page.fill("#hand-1", KNOCK["Ann"])
    page.press("#hand-1", "Enter")
    expect(page.locator("#status-1")).not_to_contain_text("unknown card")
    knock(page, 1, "Ann knocks: Ann scores 18")
    assert not errors, errors


def test_confirm_with_a_mistyped_card_in_a_box_confirms_nothing(base: str, browser: Any) -> None:
    """Bob's 7♦ fixed as "7Z" and Confirm tapped: the box said "unknown card '7Z'", and the round proposed before was
    stored all the same, with the 7♦ the players meant to change. Nothing is confirmed now while a box holds text
    that names no card; fixed, the knock is scored again and confirmed."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    page.fill("#hand-2", KNOCK["Bob"].replace("7D", "7Z"))
    page.click("#confirm-round")
    expect(page.locator("#status-2")).to_contain_text("unknown card '7Z'")
    expect(page.locator("#table-error")).to_contain_text("The round was not confirmed")
    page.click("#confirm-round")  # tapped again, the box unchanged
    page.wait_for_timeout(300)
    assert stored(page)["rounds"] == []
    page.fill("#hand-2", KNOCK["Bob"].replace("7D", "6D"))
    page.press("#hand-2", "Enter")
    expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 17")
    page.click("#confirm-round")
    expect(page.locator(TOTALS).first).to_have_text("17")
    assert not errors, errors


def test_a_mistyped_upcard_is_said_beside_its_box_which_keeps_what_was_typed(base: str, browser: Any) -> None:
    """A word that is no card typed as the upcard emptied its box, and the error ("the cards: unknown card 'ZZ'")
    was said under the hands, a screen away on a phone; so was "KS QS". Now the upcard's line says it, as a hand's
    line does, and the box keeps the text to be fixed."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    for typed, said in (("ZZ", "unknown card 'ZZ': expected rank"), ("KS QS", "there is one upcard: write one card")):
        page.fill("#upcard-input", typed)
        page.press("#upcard-input", "Enter")
        expect(page.locator("#knock-limit")).to_contain_text(said)
        expect(page.locator("#knock-limit")).to_contain_text("fix it in the box")
        expect(page.locator("#upcard-input")).to_have_value(typed)
        expect(page.locator("#table-error")).to_have_text("")
    assert small_tap_targets(page) == []
    no_sideways_scroll(page, "the upcard's line saying a card was mistyped")
    page.fill("#upcard-input", "KS")
    page.press("#upcard-input", "Enter")
    expect(page.locator("#knock-limit")).to_have_text("Knock with 10 or less")
    knock(page, 1, "Ann knocks: Ann scores 18")
    assert not errors, errors


def test_cards_typed_for_a_hand_stay_in_its_box_while_the_page_asks_to_move_one(base: str, browser: Any) -> None:
    """Ten cards typed for Ann, one of them in Bob's hand: while the page asked whether to move it, Ann's box went
    back to what it held before (nothing), as if the typing were lost. The box keeps the cards typed, its line
    says they wait for the answer, and Move places them."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    type_hand(page, 2, KNOCK["Bob"])
    typed = KNOCK["Ann"].replace("AC", "QS")  # Bob's queen of spades
    page.fill("#hand-1", typed)
    page.press("#hand-1", "Enter")
    expect(page.locator("#notice")).to_contain_text("is in Bob's hand. Move it to Ann's hand?")
    expect(page.locator("#hand-1")).to_have_value(typed)
    expect(page.locator("#status-1")).to_have_text("typed, not placed yet: tap Move or Keep in the question")
    page.locator("#notice").get_by_role("button", name="Move").click()
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    expect(page.locator("#chips-2 .chip")).to_have_count(9)
    expect(page.locator("#status-1")).to_contain_text("10 cards")
    assert sorted(page.input_value("#hand-1").split()) == sorted(typed.split())
    assert not errors, errors


def test_hands_typed_in_are_still_there_after_a_reload(base: str, browser: Any) -> None:
    """Twenty cards typed on a phone were gone after a reload (or the phone dropping the tab in the background);
    now they stay until the round is confirmed, and go once it is."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    page.reload()
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    expect(page.locator("#chips-2 .chip")).to_have_count(10)
    expect(page.locator("#upcard-input")).to_have_value("KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    page.click("#confirm-round")
    expect(page.locator(TOTALS).first).to_have_text("18")
    page.reload()
    expect(page.locator(TOTALS).first).to_have_text("18")
    expect(page.locator("#chips-1 .chip")).to_have_count(0)
    expect(page.locator("#upcard-input")).to_have_value("")
    assert not errors, errors


def test_a_doubled_round_says_why_its_score_is_doubled(base: str, browser: Any) -> None:
    """With "spade upcard doubles", a knock under K♠ proposed "Ann scores 36" beside deadwoods 5 and 23, and
    nothing said why: the proposal now says the round is doubled."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    body = {"players": ["Ann", "Bob"], "dealer": "Bob", "options": {"spade_doubles": True}}
    created = page.request.post(f"{base}/api/matches", data=body)
    page.goto(f"{base}/matches/{created.json()['id']}")
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 36")
    expect(page.locator("#proposal .outcome")).to_contain_text("Doubled: the upcard is a spade.")
    assert not errors, errors


def test_the_totals_bar_of_a_won_match_holds_its_bonuses_and_says_what_ends_it(base: str, browser: Any) -> None:
    """The pinned totals bar showed 36 for a winner whose sheet read 136 with the game bonus, and "to 30" for a
    match that ends over 30: it now shows the totals as the sheet does, and the match's goal in words."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    options = {"target": 30, "target_rule": ">", "game_bonus": 100}
    created = page.request.post(
        f"{base}/api/matches", data={"players": ["Ann", "Bob"], "dealer": "Bob", "options": options}
    )
    match_id = created.json()["id"]
    page.goto(f"{base}/matches/{match_id}")
    expect(page.locator("#totals-bar")).to_contain_text("over 30")
    hands = {name: cards.split() for name, cards in KNOCK.items()}
    for _ in range(2):
        answer = page.request.post(
            f"{base}/api/matches/{match_id}/rounds", data={"upcard": "KS", "knocker": "Ann", "hands": hands}
        )
        assert answer.status == 201, answer.text()
    page.reload()
    expect(page.locator("#totals-bar")).to_contain_text("Ann136", use_inner_text=False)
    expect(page.locator("#sheet-body")).to_contain_text("+100 bonuses: 136")
    assert not errors, errors


def test_a_confirmed_round_says_where_it_went_and_can_be_undone_there(base: str, browser: Any) -> None:
    """After Confirm the proposal closed and nothing near it said the round was stored: on a phone the sheet is a
    scroll away. The page now says "Round 1 is on the sheet: Ann +18." where the proposal was, with its Undo."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: Ann +18.")
    page.click("#notice >> text=Undo round 1")
    expect(page.locator("#sheet-body tbody")).to_contain_text("No rounds yet.")
    expect(page.locator("#notice")).to_contain_text("Round 1 undone (Ann +18).")
    page.click("#record-draw")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: a draw, no points.")
    assert [line["draw"] for line in stored(page)["rounds"]] == [True]
    assert not errors, errors


def edit_round_1_into_a_draw(page: Any) -> None:
    """The mistake: round 1, Ann's 18, edited into a draw from the sheet."""
    from playwright.sync_api import expect

    expect(page.locator(TOTALS).first).to_have_text("18")
    page.click('button[aria-label="Edit round 1"]')
    page.check("#round-draw")
    page.click('#round-editor button[value="save"]')
    expect(page.locator(TOTALS).first).to_have_text("0")


def test_a_round_saved_unchanged_changes_nothing_and_says_so(base: str, browser: Any) -> None:
    """A round opened in the editor and saved as it was said "Round 1 changed": the notice says nothing changed, and
    no earlier version is kept (the save is still sent: the sheet shown may be behind the server's)."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    expect(page.locator(TOTALS).first).to_have_text("18")
    page.click('button[aria-label="Edit round 1"]')
    page.click('#round-editor button[value="save"]')
    expect(page.locator("#notice")).to_contain_text("Round 1 already holds this: nothing changed.")
    expect(page.locator("#round-editor")).to_be_hidden()
    assert stored(page)["earlier_versions"] == []
    assert not errors, errors


def test_an_edit_made_by_mistake_is_undone_from_its_notice(base: str, browser: Any) -> None:
    """A round edited into a draw by mistake lost its cards: the stored round is a draw, and only typing the hands
    again brought it back. The notice of the change now puts back what the round held."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    edit_round_1_into_a_draw(page)
    expect(page.locator("#notice")).to_contain_text("Round 1 changed on the sheet: now a draw, no points.")
    page.click("#notice >> text=Undo the change")
    expect(page.locator(TOTALS).first).to_have_text("18")
    expect(page.locator("#notice")).to_contain_text("Round 1 put back: now Ann +18.")
    (line,) = stored(page)["rounds"]
    assert (line["draw"], line["points"], line["input"]["hands"]["Bob"][:3]) == (
        False,
        {"Ann": 18, "Bob": 0},
        ["QS", "QC", "QH"],
    )
    assert not errors, errors


def test_an_edit_or_an_undo_made_by_mistake_is_put_back_from_the_sheet_after_a_reload(base: str, browser: Any) -> None:
    """Only the notice of a change could put back what a round held: once it was gone (a reload, another notice,
    another device), a round edited into a draw or undone by mistake had to be typed again. The server now keeps
    every round's earlier versions, and the sheet lists them, folded away, with a button that puts one back."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    edit_round_1_into_a_draw(page)
    page.reload()
    versions = page.locator('#sheet-body details[data-versions="1"]')
    expect(versions.locator("summary")).to_have_text("Earlier versions of round 1 (1)")
    expect(versions.locator("li")).to_contain_text("Bob: Q♠ Q♣ Q♥ 10♠ J♠ 3♦ 5♥ 7♠ A♦ 7♦")
    versions.locator("summary").click()
    no_sideways_scroll(page, "the sheet with a round's earlier versions open")
    assert small_tap_targets(page, "#sheet-body") == []
    assert versions.locator("summary").bounding_box()["height"] >= 32
    page.click('#sheet-body button[aria-label="Put back round 1: Ann knocked, up KS"]')
    expect(page.locator(TOTALS).first).to_have_text("18")
    expect(versions).to_have_attribute("open", "")  # the list stays open, now with the draw it replaced only
    expect(versions.locator("summary")).to_have_text("Earlier versions of round 1 (1)")
    expect(versions.locator("li")).to_contain_text("Draw (no knock)")
    assert [line["draw"] for line in stored(page)["rounds"]] == [False]

    page.click("#undo-round")  # "Undo round 1?" is answered yes
    expect(page.locator("#sheet-body tbody")).to_contain_text("No rounds yet.")
    page.reload()
    undone = page.locator('#sheet-body details[data-versions="1"]')
    expect(undone.locator("summary")).to_have_text("Undone round 1 (2)")  # the knock, kept twice, is listed once
    undone.locator("summary").click()
    undone.get_by_role("button", name="Bring back round 1: Ann knocked, up KS").first.click()
    expect(page.locator(TOTALS).first).to_have_text("18")
    expect(versions.locator("summary")).to_have_text("Earlier versions of round 1 (1)")  # the draw, as before
    (line,) = stored(page)["rounds"]
    assert (line["points"], line["input"]["hands"]["Bob"][:3]) == ({"Ann": 18, "Bob": 0}, ["QS", "QC", "QH"])
    assert not errors, errors


def test_a_version_put_back_from_the_sheet_says_what_changed_and_can_be_undone(base: str, browser: Any) -> None:
    """The sheet's "Put back" and "Bring back" changed the round and only closed the notice: nothing near the table
    said what the round scores now, or offered to undo it. They are now said as the page's other changes are, with
    the way back: the earlier version the server kept in turn, or the Undo of a round brought back."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    edit_round_1_into_a_draw(page)
    notice = page.locator("#notice")
    notice.get_by_role("button", name="OK").click()
    versions = page.locator('#sheet-body details[data-versions="1"]')
    versions.locator("summary").click()
    page.click('#sheet-body button[aria-label="Put back round 1: Ann knocked, up KS"]')
    expect(notice.locator("span")).to_have_text("Round 1 put back: now Ann +18.")
    expect(notice.get_by_role("button")).to_have_text(["Undo the change", "OK"])
    no_sideways_scroll(page, "the notice of a version put back")
    assert small_tap_targets(page, "#notice") == []
    notice.get_by_role("button", name="Undo the change").click()
    expect(notice).to_contain_text("Round 1 put back: now a draw, no points.")
    expect(page.locator(TOTALS).first).to_have_text("0")

    page.click("#undo-round")  # "Undo round 1?" is answered yes
    expect(notice).to_contain_text("Round 1 undone (a draw, no points).")
    notice.get_by_role("button", name="OK").click()
    expect(versions.locator("summary")).to_have_text("Undone round 1 (2)")  # still open, as the players left it
    versions.get_by_role("button", name="Bring back round 1: Ann knocked, up KS").click()
    expect(notice.locator("span")).to_have_text("Round 1 brought back: Ann +18.")
    expect(notice.get_by_role("button")).to_have_text(["Undo round 1", "OK"])
    expect(page.locator(TOTALS).first).to_have_text("18")
    notice.get_by_role("button", name="Undo round 1").click()
    expect(notice).to_contain_text("Round 1 undone (Ann +18).")
    assert stored(page)["rounds"] == []
    assert not errors, errors


def test_a_version_put_back_from_the_keyboard_keeps_the_focus_in_its_list(base: str, browser: Any) -> None:
    """Put back from the keyboard redrew the sheet without the button that had the focus: the focus fell to the top
    of the page, and the next Tab started over from the skip link. It now stays on the list the version was in."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    edit_round_1_into_a_draw(page)
    versions = page.locator('#sheet-body details[data-versions="1"]')
    versions.locator("summary").click()
    page.focus('#sheet-body button[aria-label="Put back round 1: Ann knocked, up KS"]')
    page.keyboard.press("Enter")
    expect(versions.locator("summary")).to_have_text("Earlier versions of round 1 (1)")
    expect(versions.locator("summary")).to_be_focused()
    expect(versions).to_have_attribute("open", "")
    assert not errors, errors


def test_an_edit_from_the_sheet_says_what_the_round_now_scores(base: str, browser: Any) -> None:
    """A first-time player edited round 1 from the sheet and read only "Round 1 changed on the sheet.": the notice
    now says what the round scores since, as the page words a round's result ("Round 1 is on the sheet: Ann +18.")."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    page.click('button[aria-label="Edit round 1"]')
    page.fill("#round-upcard", "KD")
    page.select_option("#round-knocker", "Bob")
    page.fill("#round-hand-0", BOB_KNOCKS["Ann"])
    page.fill("#round-hand-1", BOB_KNOCKS["Bob"])
    page.click('#round-editor button[value="save"]')
    expect(page.locator("#notice")).to_contain_text("Round 1 changed on the sheet: now Bob +51.")
    expect(page.locator(TOTALS).nth(1)).to_have_text("51")
    page.click("#notice >> text=Undo the change")
    expect(page.locator(TOTALS).first).to_have_text("18")
    assert not errors, errors


def test_an_undo_from_the_sheet_says_so_and_brings_the_round_back(base: str, browser: Any) -> None:
    """Undo on the sheet took round 1 away without a word where the players look (on a phone the sheet is a scroll
    away from the table): the notice now says which round was undone and what it scored, and brings it back."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    page.locator("#notice >> text=OK").click()
    page.click("#undo-round")  # "Undo round 1?" is answered yes
    expect(page.locator("#sheet-body tbody")).to_contain_text("No rounds yet.")
    expect(page.locator("#notice")).to_contain_text("Round 1 undone (Ann +18).")
    no_sideways_scroll(page, "the notice of an undo")
    assert small_tap_targets(page, "#notice") == []
    page.click("#notice >> text=Bring back round 1")
    expect(page.locator(TOTALS).first).to_have_text("18")
    expect(page.locator("#notice")).to_contain_text("Round 1 brought back: Ann +18.")
    (line,) = stored(page)["rounds"]
    assert (line["points"], line["input"]["hands"]["Bob"][:3]) == ({"Ann": 18, "Bob": 0}, ["QS", "QC", "QH"])
    assert not errors, errors


def test_a_round_brought_back_is_no_longer_offered_as_an_earlier_version(base: str, browser: Any) -> None:
    """An undone round brought back from the sheet stayed listed under it, "Earlier versions of round 1 (1)", as
    "Kept for the record: round 1 holds this now.": an alternative that is none. What a round holds now is its row;
    the list shows only what it could hold instead, and goes when there is nothing. The keyboard's focus, on the
    button that brought the round back, goes to the round's Edit."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    page.click("#undo-round")
    versions = page.locator('#sheet-body details[data-versions="1"]')
    expect(versions.locator("summary")).to_have_text("Undone round 1 (1)")
    versions.locator("summary").click()
    page.focus('#sheet-body button[aria-label="Bring back round 1: Ann knocked, up KS"]')
    page.keyboard.press("Enter")
    expect(page.locator(TOTALS).first).to_have_text("18")
    expect(versions).to_have_count(0)
    expect(page.locator("#sheet-body")).not_to_contain_text("holds this now")
    expect(page.locator('#sheet-body button[aria-label="Edit round 1"]')).to_be_focused()
    assert not errors, errors


def test_a_match_opened_from_a_file_says_it_is_a_copy(base: str, browser: Any) -> None:
    """A match file with nothing to report opened straight onto its table, which looked like the match itself: the
    players could not tell they were entering rounds in a copy. The table now says so when they arrive, once."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    expect(page.locator(TOTALS).first).to_have_text("18")
    saved = page.request.get(page.url + "/export.json").body()
    page.goto(base)
    page.set_input_files("#match-file", {"name": "okgin-match-1.json", "mimeType": "application/json", "buffer": saved})
    page.click("text=Open the match")
    page.wait_for_url(f"{base}/matches/2")
    expect(page.locator("#notice")).to_contain_text(
        "Opened from okgin-match-1.json: a copy of the match, kept here as match #2."
    )
    expect(page.locator(TOTALS).first).to_have_text("18")
    no_sideways_scroll(page, "a match opened from a file")
    page.reload()
    expect(page.locator(TOTALS).first).to_have_text("18")
    page.wait_for_function("() => document.body.dataset.ready === 'true'")
    expect(page.locator("#notice")).to_be_hidden()  # said once, on arrival
    assert not errors, errors


def test_the_round_editor_fits_a_finger(base: str, browser: Any) -> None:
    """The round editor's "This round was a draw" box was 31 px tall on a phone: every tap target there is 32 px."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    page.click("#record-draw")
    page.click('button[aria-label="Edit round 1"]')
    expect(page.locator("#round-editor")).to_be_visible()
    assert small_tap_targets(page, "#round-editor") == []
    assert not errors, errors


def measured(box: Any) -> dict[str, float]:
    """A live box's bounding box: one redrawn between being found and measured measures as nothing, so again."""
    for _ in range(50):
        if (where := box.bounding_box()) is not None:
            return dict(where)
        box.page.wait_for_timeout(100)
    raise AssertionError(f"{box} never measured")


def test_a_card_lifted_from_a_proposed_knock_is_no_error_and_the_knock_comes_back_with_it(
    base: str, browser: Any
) -> None:
    """A card picked up after the proposal showed scored the knock again for the short hand and put the server's 400
    in red, "Ann holds 9 cards; ..." (the camera probe, session 47): the hand's line says it, and the knock is
    proposed again once the card is back."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    page.fill("#hand-1", KNOCK["Ann"].rsplit(" ", 1)[0])  # AC lifted
    page.press("#hand-1", "Enter")
    expect(page.locator("#proposal")).to_be_hidden()
    expect(page.locator("#status-1")).to_contain_text("9 cards")
    page.wait_for_timeout(500)  # the knock scored again meanwhile, quietly
    expect(page.locator("#table-error")).to_have_text("")
    page.fill("#hand-1", KNOCK["Ann"])
    page.press("#hand-1", "Enter")
    expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 18", timeout=10_000)
    assert not errors, errors


def anns_row() -> list[Any]:
    """Ann's hand in a row along the picture's foot, as the detector reads it."""
    from scorer.cards import parse_cards
    from scorer.vision.types import CardDetection

    return [
        CardDetection(card, (60 + 95 * i, 520, 145 + 95 * i, 640), 0.95)
        for i, card in enumerate(parse_cards(KNOCK["Ann"]))
    ]


def camera_on(browser: Any, base: str, errors: list[str]) -> tuple[Any, Any]:
    """A phone on a new match with its camera started: the page, and the 2D's box on the picture once drawn."""
    from playwright.sync_api import expect

    page = phone(browser, errors)
    page.goto(new_match(page, base))
    page.click("#camera-start")
    box = page.locator('#overlay g.box[data-card="2D"] rect.outline')
    expect(box).to_have_count(1, timeout=20_000)
    return page, box


def test_a_drag_started_on_a_cards_box_draws_a_missed_card(tmp_path: Path) -> None:
    """In a fan a missed card's strip lies within its neighbour's box, and a drag started there drew nothing, without
    a word (the camera probe, session 47): a press on a box that moves further than a tap draws from where it went
    down; a tap still opens the box's card."""
    from playwright.sync_api import expect

    with camera_table(tmp_path, ScaledDetector(anns_row())) as (base, browser):
        errors: list[str] = []
        page, box = camera_on(browser, base, errors)
        where = measured(box)
        x, y = where["x"] + where["width"] / 2, where["y"] + where["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 30, y + 20, steps=4)
        page.mouse.move(x + 60, y + 50, steps=4)
        page.mouse.up()
        expect(page.locator("#card-editor")).to_be_visible()
        expect(page.locator("#editor-title")).to_have_text("Add a missed card")
        assert not errors, errors


def test_a_finger_held_on_a_box_of_the_live_camera_opens_its_card(tmp_path: Path) -> None:
    """A tap on a card's box while the camera runs: the boxes are drawn anew with each frame (four a second), and a
    box replaced under the finger before it lifted got no click, so a finger held a moment (250 ms) opened nothing.
    Now the box the finger went down on opens, and a quick click still opens it once; on a touch screen the click
    that follows the tap is the tap's, not a press in the editor it opened."""
    from playwright.sync_api import expect

    with camera_table(tmp_path, ScaledDetector(anns_row())) as (base, browser):
        errors: list[str] = []
        page, box = camera_on(browser, base, errors)

        def following() -> None:  # two frames answered: the live picture follows the camera (its boxes kept)
            for _ in range(2):
                page.wait_for_event("requestfinished", lambda request: "/live/frame" in request.url, timeout=10_000)

        following()
        for _ in range(3):
            where = measured(box)
            page.mouse.move(where["x"] + where["width"] / 2, where["y"] + where["height"] / 2)
            page.mouse.down()
            page.wait_for_timeout(250)
            page.mouse.up()
            expect(page.locator("#card-editor")).to_be_visible()
            expect(page.locator("#editor-title")).to_have_text("Correct 2♦")
            page.keyboard.press("Escape")
            page.click("#resume-live")
            following()
        box.click()  # a mouse's click opens the editor, once
        expect(page.locator("#card-editor")).to_be_visible()
        page.locator("#card-editor button[value=cancel]").click()
        expect(page.locator("#card-editor")).to_be_hidden()

        # A finger on a touch screen: the click the browser sends after the tap once landed in the editor the tap
        # had just opened (a rank there turned 2D into 5D, or Save saved it).
        touch = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
        touch.on("pageerror", lambda error: errors.append(str(error)))
        touch.goto(page.url)
        touch.click("#camera-start")
        for card in ("2D", "AC", "JC", "10H"):
            target = touch.locator(f'#overlay g.box[data-card="{card}"] rect.outline')
            expect(target).to_be_visible(timeout=20_000)
            where = measured(target)
            touch.touchscreen.tap(where["x"] + where["width"] / 2, where["y"] + where["height"] / 2)
            expect(touch.locator("#card-editor")).to_be_visible()
            touch.wait_for_timeout(300)  # the click that follows a tap comes within this
            expect(touch.locator("#editor-text")).to_have_value(card)
            touch.keyboard.press("Escape")
            expect(touch.locator("#card-editor")).to_be_hidden()
            touch.click("#resume-live")
        browser.close()
    assert not errors, errors


def test_the_round_editor_shows_each_hand_whole_on_a_phone(base: str, browser: Any) -> None:
    """The Edit round dialog put a 10-card hand in a one-line box: at 390 px its last cards were out of sight."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    page.click('button[aria-label="Edit round 1"]')
    hand = page.locator("#round-hand-0")
    expect(hand).to_have_value(KNOCK["Ann"])
    seen = hand.evaluate("(box) => [box.scrollWidth, box.clientWidth, box.scrollHeight, box.clientHeight]")
    assert seen[0] <= seen[1] and seen[2] <= seen[3], f"the hand's box scrolls: {seen}"
    hand.fill("8C 9C 10C JC\n9H 10H JH 2S 2D AC")  # a line break between cards reads as a space
    page.click('#round-editor button[value="save"]')
    expect(page.locator(TOTALS).first).to_have_text("18")
    assert not errors, errors


# ---------------------------------------------------------------- a flaky network: lost, late and hung answers


def knock_body(hands: dict[str, str], upcard: str, knocker: str) -> dict[str, Any]:
    return {"upcard": upcard, "knocker": knocker, "hands": {name: cards.split() for name, cards in hands.items()}}


def two_rounds(page: Any, base: str) -> str:
    """A new match holding round 1 (Ann +18) and round 2 (Bob +51), entered on another device; its page's URL."""
    url = new_match(page, base)
    api = url.replace("/matches/", "/api/matches/")
    for number, body in enumerate((knock_body(KNOCK, "KS", "Ann"), knock_body(BOB_KNOCKS, "KD", "Bob")), start=1):
        assert page.request.post(f"{api}/rounds", data={"number": number, **body}).status == 201
    return url


def answer_lost(page: Any, pattern: str, method: str) -> None:
    """The next ``method`` request to ``pattern`` reaches the server, which does it, but its answer is lost."""
    lost: list[str] = []

    def lose(route: Any) -> None:
        if route.request.method != method or lost:
            route.continue_()
            return
        lost.append(route.request.url)
        route.fetch()
        route.abort("connectionreset")

    page.route(pattern, lose)


def until(page: Any, done: Any) -> None:
    """Wait (a bounded while, not a timed assertion) until ``done()``, the server's side of a held request."""
    for _ in range(100):
        if done():
            return
        page.wait_for_timeout(100)
    raise AssertionError("the server never got the request")


def test_a_round_confirmed_after_the_sheet_changed_elsewhere_waits_to_be_confirmed(base: str, browser: Any) -> None:
    """A round posted after the sheet changed (here another device made round 1 a draw while this phone could not
    fetch the match) was added all the same: a "Confirm round" arriving after its round was undone did the same,
    and brought the round back. A round is now asked of the sheet as the page shows it: refused, the page says the
    sheet changed, keeps the proposal, and the next Confirm adds it."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    expect(page.locator(TOTALS).first).to_have_text("18")
    api = page.url.replace("/matches/", "/api/matches/")
    page.route(api, lambda route: route.abort())  # this phone's refresh cannot get through
    assert page.request.put(f"{api}/rounds/1?revision=1", data={"draw": True}).status == 200  # another device
    page.locator("#notice >> text=OK").click()
    deal(page, BOB_KNOCKS, "KD")
    knock(page, 2, "Bob knocks: Bob scores 51")
    page.click("#confirm-round")
    expect(page.locator("#notice")).to_contain_text(
        "The score sheet changed meanwhile (see the sheet), so this round was not saved. Check it and confirm it"
        " again to add it as round 2."
    )
    expect(page.locator(TOTALS).first).to_have_text("0")  # the sheet as it is now: round 1 a draw
    expect(page.locator("#proposal")).to_be_visible()
    assert [line["draw"] for line in page.request.get(api).json()["rounds"]] == [True]
    page.click("#confirm-round")
    expect(page.locator("#notice")).to_contain_text("Round 2 is on the sheet: Bob +51.")
    assert [line["draw"] for line in page.request.get(api).json()["rounds"]] == [True, False]
    # and on one phone, a round undone and entered again is stored: the page asks it of the sheet after its undo
    page.click("#notice >> text=Undo round 2")
    expect(page.locator("#notice")).to_contain_text("Round 2 undone (Bob +51).")
    page.click("#record-draw")
    expect(page.locator("#notice")).to_contain_text("Round 2 is on the sheet: a draw, no points.")
    assert [line["draw"] for line in page.request.get(api).json()["rounds"]] == [True, True]
    assert not errors, errors


@pytest.mark.parametrize("change", ["undo", "edit"])
def test_a_late_answer_to_an_undo_or_edit_never_shows_an_older_sheet(base: str, browser: Any, change: str) -> None:
    """An undo's (or edit's) answer held on the way while another device entered a round, which this phone's
    refresh showed: the late answer put the older sheet back, and the totals bar read Bob 0 under a sheet of Bob 51
    until the next refresh. An answer older than the sheet shown is no longer shown."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url = new_match(page, base)
    api = url.replace("/matches/", "/api/matches/")
    assert page.request.post(f"{api}/rounds", data={"number": 1, **knock_body(KNOCK, "KS", "Ann")}).status == 201
    page.goto(url)
    method = {"undo": "DELETE", "edit": "PUT"}[change]
    held: list[Any] = []
    page.route(
        f"{api}/rounds/1**",
        lambda route: held.append((route, route.fetch())) if route.request.method == method else route.continue_(),
    )
    if change == "undo":
        page.click("#sheet-body [data-undo-round]")  # "Undo round 1?" is answered yes
        until(page, lambda: stored(page)["rounds"] == [])
        entered = {"number": 1, **knock_body(BOB_KNOCKS, "KD", "Bob")}  # another device enters round 1 again
    else:
        page.click('#sheet-body button[aria-label="Edit round 1"]')
        page.check("#round-draw")
        page.click('#round-editor button[value="save"]')
        until(page, lambda: stored(page)["rounds"][0]["draw"])
        entered = {"number": 2, **knock_body(BOB_KNOCKS, "KD", "Bob")}  # another device enters round 2
    assert page.request.post(f"{api}/rounds", data=entered).status == 201
    expect(page.locator("#totals-bar")).to_contain_text("Bob51", use_inner_text=False, timeout=15_000)  # the refresh
    # shown, not said: it cannot tell this phone's change, on its way, from the other device's (the answer says it)
    assert "another device" not in page.locator("#notice").text_content()
    route, answer = held.pop()
    route.fulfill(response=answer)
    said = {"undo": "Round 1 undone (Ann +18).", "edit": "Round 1 changed on the sheet: now a draw, no points."}
    expect(page.locator("#notice")).to_contain_text(said[change])
    # read once, as the answer was shown (a retried expect would wait for the next refresh to mend it)
    assert page.locator("#totals-bar").text_content().replace(" ", "").startswith("Ann0Bob51")
    assert not errors, errors


def test_an_undo_or_edit_tapped_again_after_its_answer_was_lost_says_it_was_done(base: str, browser: Any) -> None:
    """Undo and Edit were made, but their answers lost: tapped again, each was refused as asked of an older sheet
    and said "... so it was not done; ... repeat it if still wanted", though it was (and the Edit dialog, keeping its
    revision, said so again at every Save). The page now sees the sheet already holds the change and says so."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url = two_rounds(page, base)
    page.goto(url)
    answer_lost(page, "**/api/matches/*/rounds/*", "DELETE")
    page.click("#undo-round")  # "Undo round 2?" is answered yes
    expect(page.locator("#table-error")).to_contain_text("cannot be reached")
    page.click("#undo-round")
    expect(page.locator("#notice")).to_contain_text("Round 2 undone (Bob +51).")
    expect(page.locator("#table-error")).to_have_text("")
    assert len(stored(page)["rounds"]) == 1

    answer_lost(page, "**/api/matches/*/rounds/*", "PUT")
    page.click('#sheet-body button[aria-label="Edit round 1"]')
    page.check("#round-draw")
    page.click('#round-editor button[value="save"]')
    expect(page.locator("#round-error")).to_contain_text("cannot be reached")
    page.click('#round-editor button[value="save"]')
    expect(page.locator("#round-editor")).to_be_hidden()
    expect(page.locator("#notice")).to_contain_text("Round 1 already holds this.")
    expect(page.locator(TOTALS).first).to_have_text("0")
    assert [line["draw"] for line in stored(page)["rounds"]] == [True]
    assert not errors, errors


def refresh(page: Any) -> None:
    """Fetch the match now, as the page does every 4 s and when it is shown again (no wait for its timer)."""
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")


@pytest.mark.parametrize("change", ["undo", "put back"])
def test_a_change_whose_answer_was_lost_is_said_as_this_phones_not_another_devices(
    base: str, browser: Any, change: str
) -> None:
    """An undo (or a version put back) made, its answer lost: the refresh that found it made would say it as another
    device's ("On another device: round 2 undone"), though it was this phone's. It is said as this phone's, with its
    way back, as a round confirmed here whose answer was lost is."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url = two_rounds(page, base)
    api = url.replace("/matches/", "/api/matches/")
    if change == "put back":
        assert page.request.put(f"{api}/rounds/2?revision=2", data={"draw": True}).status == 200
    page.goto(url)
    if change == "undo":
        answer_lost(page, "**/api/matches/*/rounds/*", "DELETE")
        page.click("#undo-round")  # "Undo round 2?" is answered yes
        said, back = "Round 2 undone (Bob +51).", "Bring back round 2"
    else:
        answer_lost(page, "**/api/matches/*/earlier-versions/*/restore", "POST")
        page.locator('#sheet-body details[data-versions="2"] > summary').click()
        page.click('#sheet-body button[aria-label="Put back round 2: Bob knocked, up KD"]')
        said, back = "Round 2 put back: now Bob +51.", "Undo the change"
    expect(page.locator("#table-error")).to_contain_text("cannot be reached")
    refresh(page)
    notice = page.locator("#notice")
    expect(notice).to_contain_text(f"{said} It was done from here; the server's answer was lost on the way.")
    expect(notice).not_to_contain_text("another device")
    expect(notice.get_by_role("button", name=back)).to_be_visible()
    expect(page.locator("#table-error")).to_have_text("")
    assert not errors, errors


def test_an_edit_refused_as_the_sheet_changed_is_made_when_saved_again(base: str, browser: Any) -> None:
    """The Edit dialog kept the revision it was opened with: once another device changed the sheet, every Save was
    refused ("repeat it if still wanted") until the dialog was closed and opened again. Refused, the dialog now says
    the sheet changed and asks of the sheet as it is now, so Save again makes the change."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url = two_rounds(page, base)
    api = url.replace("/matches/", "/api/matches/")
    page.goto(url)
    page.click('#sheet-body button[aria-label="Edit round 1"]')
    other = knock_body(KNOCK, "QD", "Ann")  # another device: the upcard was Q♦
    assert page.request.put(f"{api}/rounds/1?revision=2", data=other).status == 200
    page.check("#round-draw")
    page.click('#round-editor button[value="save"]')
    expect(page.locator("#round-error")).to_contain_text(
        "The score sheet changed meanwhile (see the sheet), so this change was not saved: Save again"
    )
    assert stored(page)["rounds"][0]["input"]["upcard"] == "QD"
    page.click('#round-editor button[value="save"]')
    expect(page.locator("#round-editor")).to_be_hidden()
    expect(page.locator("#notice")).to_contain_text("Round 1 changed on the sheet: now a draw, no points.")
    assert [line["draw"] for line in stored(page)["rounds"]] == [True, False]
    assert not errors, errors


def test_a_round_whose_answer_was_lost_is_said_saved_from_here(base: str, browser: Any) -> None:
    """Confirm's answer lost on the way, the refresh found the round on the sheet and said "Round 1 was confirmed
    on another device", though it was this phone's. It is said as this phone's round, with its Undo."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    answer_lost(page, "**/api/matches/*/rounds", "POST")
    page.click("#confirm-round")
    expect(page.locator("#table-error")).to_contain_text("cannot be reached")
    expect(page.locator("#notice")).to_contain_text(
        "Round 1 is on the sheet: Ann +18. It was saved from here; the server's answer was lost on the way.",
        timeout=15_000,  # the refresh
    )
    expect(page.locator("#notice")).to_contain_text("Undo round 1")
    expect(page.locator("#table-error")).to_have_text("")
    expect(page.locator("#proposal")).to_be_hidden()
    expect(page.locator("#chips-1 .chip")).to_have_count(0)
    assert len(stored(page)["rounds"]) == 1
    assert not errors, errors


def test_a_save_or_undo_that_never_answers_is_given_up_and_can_be_tapped_again(base: str, browser: Any) -> None:
    """A Confirm whose connection hung showed "Saving…", disabled, for as long as it hung, and a hung undo ignored
    every further Undo tap without a word. A change not answered in 15 s is given up, said so, and tapped again."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.clock.install()  # the page's 15 s pass at once (fast_forward)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    hung: list[Any] = []

    def hang_first(route: Any) -> None:
        if route.request.method in ("POST", "DELETE") and len(hung) < {"POST": 1, "DELETE": 2}[route.request.method]:
            hung.append(route)  # never answered
        else:
            route.continue_()

    page.route("**/api/matches/*/rounds**", hang_first)
    page.click("#confirm-round")
    expect(page.locator("#confirm-round")).to_have_text("Saving…")
    page.clock.fast_forward(15_000)
    expect(page.locator("#table-error")).to_contain_text(
        "the okgin server did not answer within 15 s; tapping again is safe"
    )
    expect(page.locator("#confirm-round")).to_be_enabled()
    page.click("#confirm-round")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: Ann +18.")

    page.click("#notice >> text=Undo round 1")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet")  # still: the undo hangs
    page.click("#undo-round")
    expect(page.locator("#table-error")).to_have_text("Round 1 is being undone: waiting for the server's answer.")
    page.clock.fast_forward(15_000)
    expect(page.locator("#table-error")).to_contain_text("did not answer within 15 s")
    page.click("#undo-round")
    expect(page.locator("#notice")).to_contain_text("Round 1 undone (Ann +18).")
    assert stored(page)["rounds"] == []
    assert not errors, errors


def test_a_hand_typed_while_the_server_cannot_be_reached_stays_to_be_read_again(base: str, browser: Any) -> None:
    """With the server out of reach, a hand typed and left with Enter was wiped from its box (the box shows the
    cards placed, and none were): the player had to type it again. It stays in its box, over a reload too, and
    Enter there reads it once the server is back."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    type_hand(page, 1, KNOCK["Ann"])
    page.route("**/api/cards", lambda route: route.abort())
    page.fill("#hand-2", KNOCK["Bob"])
    page.press("#hand-2", "Enter")
    # said under the box until it is read (the error line above is the table's, cleared by its next reading)
    expect(page.locator("#status-2")).to_have_text("typed, not read yet: press Enter in the box to read it")
    expect(page.locator("#hand-2")).to_have_value(KNOCK["Bob"])
    page.reload()
    expect(page.locator("#hand-2")).to_have_value(KNOCK["Bob"])
    expect(page.locator("#status-2")).to_contain_text("not read yet")
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    page.unroute("**/api/cards")
    page.focus("#hand-2")
    page.press("#hand-2", "Enter")
    expect(page.locator("#chips-2 .chip")).to_have_count(10)
    expect(page.locator("#status-2")).to_contain_text("10 cards")
    no_sideways_scroll(page, "a hand read again")
    assert not errors, errors


def test_a_double_tap_on_save_round_edits_once_and_keeps_the_way_back(base: str, browser: Any) -> None:
    """Save round tapped twice while the first save was on its way sent the edit twice: the second, refused as asked
    of an older sheet that now held the edit, replaced the notice of the change ("Round 1 changed on the sheet: now a
    draw", with Undo the change) by "Round 1 already holds this.", as if nothing had changed, and the way back was
    gone. The second tap now waits for the first's answer."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = knocked_and_confirmed(phone(browser, errors), base)
    expect(page.locator(TOTALS).first).to_have_text("18")
    puts: list[str] = []

    def slow(route: Any) -> None:
        if route.request.method == "PUT":
            puts.append(route.request.url)
            page.wait_for_timeout(400)  # both taps land before the first answer
        route.continue_()

    page.route("**/api/matches/*/rounds/*", slow)
    page.click('button[aria-label="Edit round 1"]')
    page.check("#round-draw")
    page.dblclick('#round-editor button[value="save"]')
    expect(page.locator(TOTALS).first).to_have_text("0")
    expect(page.locator("#notice")).to_contain_text("Round 1 changed on the sheet: now a draw, no points.")
    expect(page.locator("#notice")).to_contain_text("Undo the change")
    expect(page.locator("#round-editor")).to_be_hidden()
    assert len(puts) == 1, puts
    assert not errors, errors


def test_a_card_fixed_in_its_box_just_before_confirm_is_the_card_confirmed(base: str, browser: Any) -> None:
    """A card fixed in a hand's box (7♦ for 6♦) and Confirm round tapped straight away: leaving the box sends the
    cards to be read, and Confirm stored the round proposed for the cards before (Ann +18, Bob's 7♦), while the box
    showed 6♦. The reading answered after the round was stored then put Bob's old hand on the next deal's table and
    took away the notice of the round and its Undo. Confirm now waits for the cards typed: changed, the knock is scored
    again for them and confirmed once seen (Ann +17)."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    page.route("**/api/cards", lambda route: (page.wait_for_timeout(300), route.continue_()))
    page.fill("#hand-2", "QS QC QH 10S JS 3D 5H 7S AD 6D")
    page.click("#confirm-round")  # leaves Bob's box: its cards are read as Confirm is tapped
    expect(page.locator("#proposal .outcome")).to_contain_text("Ann knocks: Ann scores 17")
    expect(page.locator("#notice")).to_contain_text("not confirmed")
    assert stored(page)["rounds"] == []
    page.click("#confirm-round")
    expect(page.locator("#notice")).to_contain_text("Round 1 is on the sheet: Ann +17.")
    expect(page.locator(TOTALS).first).to_have_text("17")
    page.wait_for_timeout(500)  # any reading still on its way has come
    expect(page.locator("#chips-2 .chip")).to_have_count(0)
    (line,) = stored(page)["rounds"]
    assert line["input"]["hands"]["Bob"][-1] == "6D", line["input"]
    assert not errors, errors


def test_a_round_undone_on_another_device_while_its_editor_is_open_is_said_gone(base: str, browser: Any) -> None:
    """Round 2 open in the editor here while another device undid it: Save said "the score sheet changed meanwhile
    ... Save again to make it on the sheet as it is now", and Save again answered "match 1 has no round 2 (it has
    1)". The editor now says the round is no longer on the sheet, and where it can be brought back."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    url = two_rounds(page, base)
    page.goto(url)
    page.click('button[aria-label="Edit round 2"]')
    page.check("#round-draw")
    api = url.replace("/matches/", "/api/matches/")
    assert page.request.delete(f"{api}/rounds/2?revision={stored(page)['revision']}").ok
    for _ in range(2):  # refused as asked of the older sheet; then asked again of the sheet it now shows
        page.click("#round-save")
        expect(page.locator("#round-error")).to_contain_text("Round 2 is no longer on the sheet")
        expect(page.locator("#round-error")).to_contain_text("Undone round 2")
        expect(page.locator("#round-error")).not_to_contain_text("Save again")
    assert len(stored(page)["rounds"]) == 1
    assert not errors, errors


def test_a_sheet_whose_fetch_failed_is_fetched_again(base: str, browser: Any) -> None:
    """The round confirmed, the sheet drawn anew is fetched: that fetch lost (the phone's Wi-Fi gone a moment), the
    sheet went on saying "No rounds yet." and Ann 0 under the totals bar's Ann 18, with no Undo or Edit, until the next
    change of the match. It is now fetched again until it comes."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    lost: list[str] = []

    def lose_first(route: Any) -> None:
        if lost:
            route.continue_()
        else:
            lost.append(route.request.url)
            route.abort("connectionreset")

    page.route("**/sheet-body*", lose_first)
    page.click("#confirm-round")
    expect(page.locator("#totals-bar")).to_contain_text("Ann18")
    expect(page.locator(TOTALS).first).to_have_text("18", timeout=10_000)
    expect(page.locator("#undo-round")).to_have_text("Undo round 1")
    assert lost
    assert not errors, errors


def test_a_confirm_that_cannot_reach_the_server_says_so_where_it_is_seen(base: str, browser: Any) -> None:
    """Confirm round tapped with the phone's Wi-Fi gone: the error was written under the hands, a screen below the
    proposal on a phone, and the tap seemed to do nothing. The error is now brought into view, as an undo's is."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    knock(page, 1, "Ann knocks: Ann scores 18")
    page.context.set_offline(True)
    page.click("#confirm-round")
    expect(page.locator("#table-error")).to_contain_text("cannot be reached")
    page.wait_for_timeout(300)  # a smooth scroll, where there is one, has ended
    in_view(page, "#table-error")
    page.context.set_offline(False)
    page.click("#confirm-round")
    expect(page.locator(TOTALS).first).to_have_text("18")
    expect(page.locator("#table-error")).to_have_text("")
    assert not errors, errors


def bob_retyped_slowly(page: Any, base: str) -> Any:
    """``page`` on a new match dealt KNOCK (upcard KS), Bob's 7D typed over as 6D in his box (not left yet), the cards
    typed answered 0.3 s late: a tap anywhere else now leaves the box with its reading on the way."""
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    page.route("**/api/cards", lambda route: (page.wait_for_timeout(300), route.continue_()))
    page.fill("#hand-2", KNOCK["Bob"].replace("7D", "6D"))
    return page


def test_a_hand_typed_just_before_clear_the_table_does_not_come_back(base: str, browser: Any) -> None:
    """A hand typed and Clear the table tapped at once: leaving the box sent the cards to be read, and the answer,
    come after the table was cleared, put Bob's hand back on it and took away the notice's Undo. Clear now waits for
    the cards typed, and clears them too."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = bob_retyped_slowly(phone(browser, errors), base)
    page.click("#clear-hands")
    expect(page.locator("#notice")).to_contain_text("Table cleared (21 cards).")
    page.wait_for_timeout(600)  # any reading still on its way has come
    expect(page.locator(".chips .chip")).to_have_count(0)
    expect(page.locator("#notice")).to_contain_text("Undo")
    page.click("#notice >> text=Undo")
    expect(page.locator("#chips-2 .chip").last).to_have_text("6♦")
    assert not errors, errors


def test_the_buttons_below_the_hands_stay_put_while_the_table_is_scored_again(base: str, browser: Any) -> None:
    """A card changed: until the table's answer came each hand's line lost its deadwood words and the knock limit its
    line, and the page jumped up under a finger, then down again (a tap whose press and release land on different
    things taps nothing). The lines keep their size until the answer comes."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(new_match(page, base))
    deal(page, KNOCK, "KS")
    # where the button lies on the page, not in the window: the line focused by Enter is brought into view, a scroll
    on_page = "(node) => { const box = node.getBoundingClientRect(); return [box.left + scrollX, box.top + scrollY]; }"
    where = page.locator("#clear-hands").evaluate(on_page)
    page.route("**/api/arrange", lambda route: (page.wait_for_timeout(1500), route.continue_()))
    page.fill("#hand-2", KNOCK["Bob"].replace("7D", "6D"))
    page.press("#hand-2", "Enter")
    expect(page.locator("#chips-2 .chip").last).to_have_text("6♦")
    expect(page.locator("#hands")).to_have_attribute("aria-busy", "true")
    expect(page.locator("#status-2")).not_to_contain_text("deadwood")  # no figure for the cards it no longer holds
    assert page.locator("#clear-hands").evaluate(on_page) == where
    expect(page.locator("#hands")).to_have_attribute("aria-busy", "false", timeout=10_000)
    expect(page.locator("#status-2")).to_contain_text("deadwood")
    page.unroute_all(behavior="ignoreErrors")
    assert not errors, errors


def test_pick_tapped_just_after_typing_opens_the_grid_on_the_cards_typed(base: str, browser: Any) -> None:
    """Leaving the box for its Pick sent the cards typed to be read; the grid opened at once, on the hand before them,
    and Done put that hand back."""
    from playwright.sync_api import expect

    errors: list[str] = []
    page = bob_retyped_slowly(phone(browser, errors), base)
    page.click('[data-pick="2"]')
    expect(page.locator("#card-grid")).to_be_visible()
    expect(page.locator('#card-grid [data-card="6D"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator('#card-grid [data-card="7D"]')).to_have_attribute("aria-pressed", "false")
    assert not errors, errors
