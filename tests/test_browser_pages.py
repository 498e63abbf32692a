"""The pages as players meet them on a phone or a touch laptop: the score sheet's round numbers on a narrow sheet, names
written right to left beside the scores they go with, a won match's final score in a phone's first screen, each round's
deadwood on a phone's sheet page, the rules agreed on a printed sheet, the links over a sheet as tap targets."""

from __future__ import annotations

from typing import Any

from browser_support import BROWSER_TESTS, DESKTOP, PHONE, no_sideways_scroll, phone_page

pytestmark = BROWSER_TESTS

FOUR = ["Ann", "Bob", "Cat", "Dan"]
FOUR_HANDS = ["2C 3C 4C 5D 6D 7D AS", "2H 3H 4H 5S 6S 7S QC", "8S 9S 10S JD QD KD AH", "5C 6C 7C 9D 10D JH QH"]
TWO_HANDS = ["8C 9C 10C JC 9H 10H JH 2S 2D AC", "QS QC QH 10S JS 3D 5H 7S AD 7D"]  # the first knocks and scores 18
NOOR = "نور"  # "Noor": a name written right to left

ROW_NUMBER_LINES = """() => [...document.querySelectorAll('#sheet-body tbody th[scope=row]')].map((th) => {
    const range = document.createRange();
    range.selectNodeContents(th);
    return [th.textContent.trim(), new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
})"""

PLACES = """([scope, ...texts]) => {
    // where pieces of text under scope are drawn, each [text, n]: its nth occurrence (from 0): [[left, top], ...]
    const walker = document.createTreeWalker(document.querySelector(scope), NodeFilter.SHOW_TEXT);
    const found = texts.map(() => null);
    const seen = texts.map(() => 0);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        texts.forEach(([text, nth], index) => {
            for (let at = node.data.indexOf(text); at >= 0 && !found[index]; at = node.data.indexOf(text, at + 1)) {
                if (seen[index]++ < nth) continue;
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + text.length);
                const box = range.getBoundingClientRect();
                found[index] = [Math.round(box.left), Math.round(box.top)];
            }
        });
    }
    return found;
}"""


def new_match(page: Any, base: str, players: list[str], **options: Any) -> int:
    rules = "oklahoma" if len(players) == 2 else "oklahoma-multi"
    body = {"players": players, "rules": rules, "dealer": players[1], "options": options}
    created = page.request.post(f"{base}/api/matches", data=body)
    assert created.status == 201, created.text()
    match_id: int = created.json()["id"]
    return match_id


def play(page: Any, base: str, match_id: int, players: list[str], rounds: int = 1) -> None:
    hands = dict(zip(players, TWO_HANDS if len(players) == 2 else FOUR_HANDS, strict=False))
    deal = {"upcard": "KS" if len(players) == 2 else "9C", "knocker": players[0], "hands": hands}
    for _ in range(rounds):
        played = page.request.post(f"{base}/api/matches/{match_id}/rounds", data=deal)
        assert played.status == 201, played.text()


def test_a_phones_sheet_keeps_each_round_number_on_one_line(base: str, browser: Any) -> None:
    # four players' sheet at 390 px wrote round 10 as "1" over "0": its number's column was broken anywhere, as names
    errors: list[str] = []
    page = phone_page(browser, errors)
    match_id = new_match(page, base, FOUR, target=1000)
    play(page, base, match_id, FOUR, 11)
    for where in (f"/matches/{match_id}/sheet", f"/matches/{match_id}"):
        page.goto(base + where)
        page.locator("#sheet-body tbody th[scope=row]").first.wait_for()
        assert page.evaluate(ROW_NUMBER_LINES) == [[str(number), 1] for number in range(1, 12)], where
        no_sideways_scroll(page, where)
    assert not errors, errors


def test_a_name_written_right_to_left_stays_before_its_score(base: str, browser: Any) -> None:
    # "نور 1 – 0 Ann" was drawn "0 – 1 نور Ann" (the numbers after a right-to-left name were read with it), and the
    # banner's "Bonuses: نور +100" as "Bonuses: 100+ نور": a name is set apart from the text around it
    page = browser.new_page(viewport=DESKTOP)
    won = new_match(page, base, [NOOR, "Ann"], target=30, game_bonus=100)
    play(page, base, won, [NOOR, "Ann"], 2)
    page.goto(f"{base}/players?player={NOOR}")  # named first in each pair
    name, score = page.evaluate(PLACES, [".head-to-head li", [NOOR, 0], ["1 – 0", 0]])
    assert name[1] == score[1] and name[0] < score[0], f"{NOOR} at {name}, the score at {score}"
    page.goto(f"{base}/matches/{won}/sheet")
    banner = page.locator(".winner-banner")
    assert "Bonuses: نور +100." in banner.inner_text()
    bonus_name, bonus = page.evaluate(PLACES, [".winner-banner", [NOOR, 1], ["+100", 0]])  # after "Bonuses:"
    assert bonus_name[1] == bonus[1] and bonus_name[0] < bonus[0], f"{NOOR} at {bonus_name}, +100 at {bonus}"
    page.goto(f"{base}/matches/{won}")  # the table page says the banner again where the proposal was
    page.locator("#match-over-text").get_by_text("+100").wait_for()
    said_name, said = page.evaluate(PLACES, ["#match-over-text", [NOOR, 1], ["+100", 0]])
    assert said_name[1] == said[1] and said_name[0] < said[0], f"{NOOR} at {said_name}, +100 at {said}"
    # two such names in a list keep their seats' order: the first named first
    both = new_match(page, base, [NOOR, "سارة"])
    page.set_viewport_size(PHONE)
    page.goto(base)
    first, second = page.evaluate(PLACES, [f'a[href="/matches/{both}"]', [NOOR, 0], ["سارة", 0]])
    assert first[1] == second[1] and first[0] < second[0], f"{NOOR} at {first}, سارة at {second}"


def test_a_won_matchs_final_score_is_its_totals_in_a_phones_first_screen(base: str, browser: Any) -> None:
    # a won match of two long names with bonuses: on a phone the banner's prose in the winner's large type filled the
    # first screen and put every total under it, and those totals were the rounds' (36) while the pinned bar, over the
    # same sheet on the table page, showed the final score (186): two scores of one player on one screen
    errors: list[str] = []
    page = phone_page(browser, errors)
    players = ["Maximiliana Rodríguez-Fitzgerald", "Bartholomew Oyelaran-Castellanos"]
    match_id = new_match(page, base, players, target=30, box_bonus=25, game_bonus=100)
    play(page, base, match_id, players, 2)
    page.goto(f"{base}/matches/{match_id}/sheet")
    unseen = page.evaluate(
        """() => [...document.querySelectorAll('.winner-banner, .total-points')]
            .filter((node) => node.getBoundingClientRect().bottom > window.innerHeight)
            .map((node) => node.textContent.trim().slice(0, 30))"""
    )
    assert unseen == [], f"under the first screen: {unseen}"
    no_sideways_scroll(page, "the sheet of a won match")
    page.goto(f"{base}/matches/{match_id}")
    page.locator("#totals-bar strong").first.wait_for()
    bar = page.locator("#totals-bar strong").all_inner_texts()
    assert page.locator("#sheet-body .total-points").all_inner_texts() == bar == ["186", "0"]
    assert not errors, errors


DEADWOOD_LINES = """() => [...document.querySelectorAll('#sheet-body tbody td .hint')].map((hint) => {
    const text = [...hint.childNodes]
        .find((node) => node.nodeType === Node.TEXT_NODE && node.data.includes('deadwood'));
    const range = document.createRange();
    range.setStart(text, text.data.indexOf('deadwood'));
    range.setEnd(text, text.data.indexOf('deadwood') + 'deadwood'.length);
    return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
})"""
"""How many lines the word "deadwood" of each round's hint takes on the sheet."""


def test_a_phones_sheet_page_says_why_each_round_of_two_players_scored(base: str, browser: Any) -> None:
    # each hand's deadwood and layoffs were hidden from every narrow sheet, the sheet page's too: a phone could not
    # look up why a round scored what it did anywhere. The table page's sheet stays short.
    errors: list[str] = []
    page = phone_page(browser, errors)
    match_id = new_match(page, base, ["Ann", "Bob"], target=1000)
    play(page, base, match_id, ["Ann", "Bob"], 2)
    shown = """() => [...document.querySelectorAll('#sheet-body tbody td .hint')]
        .filter((hint) => hint.checkVisibility()).map((hint) => hint.textContent.replace(/\\s+/g, ' ').trim())"""
    page.goto(f"{base}/matches/{match_id}/sheet")
    assert page.evaluate(shown) == ["deadwood 5", "deadwood 23, laid off Q♣ Q♥"] * 2
    assert page.evaluate(DEADWOOD_LINES) == [1] * 4, "'deadwood' broken over lines"  # short names' columns broke it
    no_sideways_scroll(page, "the sheet page")
    page.goto(f"{base}/matches/{match_id}")
    page.locator("#sheet-body tbody tr").first.wait_for()
    assert page.evaluate(shown) == []
    assert not errors, errors


def test_a_printed_sheet_holds_the_rules_agreed(base: str, browser: Any) -> None:
    # the options agreed at the start (a gin's 25, the bonuses at the end) were folded away on paper, under
    # "Rules: Oklahoma Gin": a sheet kept printed could not say why its rounds scored what they did
    page = browser.new_page(viewport={"width": 794, "height": 1123})  # an A4 page at 96 px an inch
    page.emulate_media(media="print")
    match_id = new_match(page, base, ["Ann", "Bob"], box_bonus=25)
    for where in (f"/matches/{match_id}/sheet", f"/matches/{match_id}"):
        page.goto(base + where)
        printed = page.evaluate(
            "() => [...document.querySelectorAll('.rules-terms li')].filter((li) => li.checkVisibility())"
            ".map((li) => li.textContent)"
        )
        assert "at the end, 25 for each round won" in printed, f"{where}: {printed}"


def test_the_links_over_a_laptops_sheet_are_tap_targets(base: str, browser: Any) -> None:
    # a touch laptop's Table, Sheet, CSV and JSON links (and the players page's Matches) were 25 px high
    from browser_support import small_tap_targets

    page = browser.new_page(viewport=DESKTOP)
    match_id = new_match(page, base, ["Ann", "Bob"])
    for where in (f"/matches/{match_id}/sheet", "/players"):
        page.goto(base + where)
        assert small_tap_targets(page) == [], where
