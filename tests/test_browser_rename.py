"""A player renamed at the table, in headless Chromium at a phone's size: a name mistyped at set-up ("Anm") is fixed
on the sheet, the hands and the totals, the cards typed staying in their boxes, and another phone on the match shows
the new name on its next refresh."""

from __future__ import annotations

from typing import Any

from browser_support import BROWSER_TESTS, no_sideways_scroll, small_tap_targets
from browser_support import KNOCK_HANDS as KNOCK
from browser_support import phone_page as phone

pytestmark = BROWSER_TESTS

TYPO = {"Anm": KNOCK["Ann"], "Bob": KNOCK["Bob"]}


def anm_and_bob(page: Any, base: str) -> str:
    """A match of Anm (a typo) and Bob whose round 1 Anm won (+18); its table's address."""
    created = page.request.post(f"{base}/api/matches", data={"players": ["Anm", "Bob"], "dealer": "Bob"})
    assert created.status == 201, created.text()
    url = f"{base}/api/matches/{created.json()['id']}"
    played = page.request.post(f"{url}/rounds", data={"upcard": "KS", "knocker": "Anm", "hands": TYPO})
    assert played.status == 201, played.text()
    return f"{base}/matches/{created.json()['id']}"


def typed_hands(page: Any) -> None:
    """Both hands typed in their boxes, each left with Enter, their chips drawn."""
    from playwright.sync_api import expect

    for seat, cards in enumerate(KNOCK.values(), start=1):
        page.fill(f"#hand-{seat}", cards)
        page.press(f"#hand-{seat}", "Enter")
        expect(page.locator(f"#chips-{seat} .chip")).to_have_count(10)


def rename(page: Any, seat: int, name: str) -> None:
    """Rename the player in ``seat`` from the table's button and dialog."""
    from playwright.sync_api import expect

    page.click("#rename-player")
    expect(page.locator("#rename-dialog")).to_be_visible()
    page.select_option("#rename-seat", str(seat))
    page.fill("#rename-name", name)
    page.click("#rename-save")


def shows_anne(page: Any) -> None:
    """The page names Anne everywhere it named Anm: the title, her hand (its cards kept), the sheet and the totals."""
    from playwright.sync_api import expect

    expect(page.locator("#hand-title-1")).to_contain_text("Anne", timeout=10_000)  # and where the seat is
    expect(page.locator("#table-title")).to_have_text("Anne vs Bob")
    expect(page.locator("#knock-1")).to_have_text("Anne knocked")
    expect(page.locator("#chips-1 .chip")).to_have_count(10)
    expect(page.locator("#hand-1")).to_have_value(KNOCK["Ann"])
    expect(page.locator("#sheet-body thead")).to_contain_text("Anne")
    expect(page.locator("#sheet-body")).not_to_contain_text("Anm")
    expect(page.locator("#hands")).not_to_contain_text("Anm")
    expect(page.locator("#totals-bar")).to_contain_text("Anne18", use_inner_text=False)


def test_a_name_mistyped_at_set_up_is_fixed_on_the_sheet_and_the_hands_keep_their_cards(
    base: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(anm_and_bob(page, base))
    typed_hands(page)
    page.click("#rename-player")
    expect(page.locator("#rename-name")).to_have_value("Anm")  # the name to fix, not typed again
    assert small_tap_targets(page, "#rename-dialog") == []
    no_sideways_scroll(page, "the rename dialog")
    page.click("#rename-dialog button[value=cancel]")
    rename(page, 1, "Anne")
    expect(page.locator("#rename-dialog")).to_be_hidden()
    expect(page.locator("#notice")).to_contain_text("Anm is now called Anne.")
    shows_anne(page)
    no_sideways_scroll(page, "a table whose player was renamed")
    assert small_tap_targets(page, ".table-page .layout > .live .actions") == []
    page.fill("#upcard-input", "KS")
    page.press("#upcard-input", "Enter")
    page.wait_for_function("() => !document.getElementById('knock-1').disabled", timeout=10_000)
    page.click("#knock-1")  # under her new name
    expect(page.locator("#proposal .outcome")).to_contain_text("Anne knocks: Anne scores 18", timeout=10_000)
    page.click("#confirm-round")
    expect(page.locator("#totals-bar")).to_contain_text("Anne36", use_inner_text=False, timeout=10_000)
    assert not errors, errors


def test_a_name_another_player_has_is_refused_in_the_dialog(base: str, browser: Any) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(anm_and_bob(page, base))
    rename(page, 1, "bob")
    expect(page.locator("#rename-error")).to_contain_text("'bob' is Bob's name already")
    expect(page.locator("#rename-dialog")).to_be_visible()
    expect(page.locator("#hand-title-1")).to_contain_text("Anm")
    assert not errors, errors


def test_another_phone_shows_the_new_name_on_its_next_refresh_its_typed_hands_kept(base: str, browser: Any) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    first, second = phone(browser, errors), phone(browser, errors)
    url = anm_and_bob(first, base)
    first.goto(url)
    second.goto(url)
    for page in (first, second):
        typed_hands(page)
    rename(first, 1, "Anne")
    shows_anne(first)
    expect(second.locator("#notice")).to_contain_text("On another device: Anm is now called Anne.", timeout=15_000)
    shows_anne(second)
    assert not errors, errors


def test_a_rename_made_by_mistake_is_undone_from_its_notice(base: str, browser: Any) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    page = phone(browser, errors)
    page.goto(anm_and_bob(page, base))
    rename(page, 2, "Rob")
    expect(page.locator("#hand-title-2")).to_contain_text("Rob")
    page.click("#notice button:has-text('Undo the change')")
    expect(page.locator("#notice")).to_contain_text("Rob is now called Bob.")
    expect(page.locator("#hand-title-2")).to_contain_text("Bob")
    expect(page.locator("#sheet-body thead")).to_contain_text("Bob")
    assert page.evaluate("fetch('/api/matches/1').then((r) => r.json())")["players"] == ["Anm", "Bob"]
    assert not errors, errors


def test_a_rename_asked_of_a_sheet_changed_meanwhile_is_not_made_until_asked_again(base: str, browser: Any) -> None:
    from playwright.sync_api import expect

    errors: list[str] = []
    first, second = phone(browser, errors), phone(browser, errors)
    url = anm_and_bob(first, base)
    first.goto(url)
    second.goto(url)
    second.click("#rename-player")
    second.fill("#rename-name", "Anne")
    first.click("#record-draw")  # meanwhile, on another phone
    expect(first.locator("#sheet-body tbody")).to_contain_text("Draw")
    second.click("#rename-save")
    expect(second.locator("#rename-error")).to_contain_text("The score sheet changed meanwhile")
    expect(second.locator("#hand-title-1")).to_contain_text("Anm")
    second.click("#rename-save")  # asked again, of the sheet as it is now
    expect(second.locator("#rename-dialog")).to_be_hidden()
    shows = second.evaluate("fetch('/api/matches/1').then((r) => r.json())")
    assert shows["players"] == ["Anne", "Bob"] and len(shows["rounds"]) == 2
    assert not errors, errors
