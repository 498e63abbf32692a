"""The score sheet's player columns on a phone, in headless Chromium: a short name stays whole beside a long round."""

from __future__ import annotations

from typing import Any

from browser_support import BROWSER_TESTS, no_sideways_scroll, phone_page

pytestmark = BROWSER_TESTS

PLAYERS = ["Ann", "Bob", "Cy"]
UNDERCUT = {  # Cy knocks with 9 under 10♦, Ann holds 8: "Cy · undercut by Ann · up 10♦", the sheet's longest line
    "upcard": "10D",
    "knocker": "Cy",
    "hands": {"Ann": "QC QD QS 2D 3D 4D 8H", "Bob": "AH 2C 2S KH KD 10S 3C", "Cy": "4S 5S 6S 7C 7D 7H 9H"},
}

NAME_LINES = """() => [...document.querySelectorAll('#sheet-body table.rounds thead th')].slice(3, -1).map((th) => {
    const range = document.createRange();
    range.selectNodeContents(th);
    return [th.textContent.trim(), new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
})"""


def test_three_short_names_stay_whole_beside_a_long_round(base: str, browser: Any) -> None:
    # a phone's sheet once wrapped "Ann" as "An" and "n": the round's column took the room, the names broke anywhere
    errors: list[str] = []
    page = phone_page(browser, errors)
    created = page.request.post(
        f"{base}/api/matches", data={"players": PLAYERS, "rules": "oklahoma-multi", "dealer": "Bob"}
    )
    assert created.status == 201, created.text()
    match_id = created.json()["id"]
    played = page.request.post(f"{base}/api/matches/{match_id}/rounds", data=UNDERCUT)
    assert played.status == 201, played.text()
    page.goto(f"{base}/matches/{match_id}")
    page.locator("#sheet-body tbody tr").first.wait_for()
    assert page.evaluate(NAME_LINES) == [[name, 1] for name in PLAYERS]
    no_sideways_scroll(page, "the table page")
    assert not errors
