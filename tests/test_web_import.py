"""Opening a match file: what a match's JSON link saved comes back as a new match, scored again, with nothing lost."""

from __future__ import annotations

import html
import io
import json
from typing import Any

import web_fixtures
from flask.testing import FlaskClient
from test_web_pages import form_token
from web_fixtures import ANN, BOB, ROUND, new_match

from web.round_history import MAX_EARLIER_VERSIONS

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector
GIN = {  # Bob goes gin: 25 + Ann's 66
    "upcard": "KS",
    "knocker": "Bob",
    "hands": {"Bob": "AS 2S 3S 4D 4H 4C 7C 8C 9C 10C", "Ann": "4S 5S KD QD JH 9H 8H 2H 2D 6C"},
}
KEPT = ("players", "rules", "goal", "first_dealer", "rounds", "totals", "winner", "finished", "final_totals")


def exported(client: FlaskClient, match_id: int) -> dict[str, Any]:
    answer = client.get(f"/matches/{match_id}/export.json")
    assert answer.status_code == 200
    return json.loads(answer.get_data())


def match_count(client: FlaskClient) -> int:
    return len(client.get("/api/matches").json["matches"])


def played_match(client: FlaskClient, first: dict[str, Any] = ROUND) -> int:
    """Ann and Bob: a knock (``first``), a draw, a round edited (kept as an earlier version), one undone, then Bob's
    gins."""
    match_id = new_match(client)
    for body in (first, {"draw": True}, ROUND):
        assert client.post(f"/api/matches/{match_id}/rounds", json=body).status_code == 201
    assert client.put(f"/api/matches/{match_id}/rounds/3", json={"draw": True}).status_code == 200
    assert client.delete(f"/api/matches/{match_id}/rounds/3").status_code == 200
    for body in (GIN, GIN):
        assert client.post(f"/api/matches/{match_id}/rounds", json=body).status_code == 201
    return match_id


def test_an_exported_match_comes_back_whole(client: FlaskClient) -> None:
    original = exported(client, played_match(client))
    assert original["winner"] == "Bob" and len(original["earlier_versions"]) == 2
    answer = client.post("/api/matches/import", json=original)
    assert answer.status_code == 201, answer.json
    assert answer.json["notes"] == []
    copy = exported(client, answer.json["id"])
    assert copy["id"] != original["id"]
    assert {key: copy[key] for key in KEPT} == {key: original[key] for key in KEPT}
    drop = ("id", "restore", "why_not")
    assert [{k: v for k, v in version.items() if k not in drop} for version in copy["earlier_versions"]] == [
        {k: v for k, v in version.items() if k not in drop} for version in original["earlier_versions"]
    ]
    listed = {summary["id"]: summary for summary in client.get("/api/matches").json["matches"]}
    assert listed[copy["id"]]["winner"] == "Bob" and listed[copy["id"]]["finished_at"]


def test_an_imported_match_goes_on_like_any_other(client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    client.put(f"/api/matches/{match_id}/rounds/1", json={"draw": True})
    copy = client.post("/api/matches/import", json=exported(client, match_id)).json["id"]
    match = client.get(f"/api/matches/{copy}").json
    version = match["earlier_versions"][0]
    assert version["restore"] == "edit"
    put_back = client.post(f"/api/matches/{copy}/earlier-versions/{version['id']}/restore", json={"revision": 0})
    assert put_back.status_code == 200 and put_back.json["totals"] == {"Ann": 18, "Bob": 0}
    assert client.post(f"/api/matches/{copy}/rounds", json=GIN).json["match"]["totals"] == {"Ann": 18, "Bob": 91}


def test_a_copy_keeps_the_deals_and_what_each_version_can_be_put_back_over(client: FlaskClient) -> None:
    """played_match's round 3 was edited, undone and dealt again: its edit's earlier version is not put over the new
    deal, in the copy as in the original (the file carries each round's deal and each version's)."""
    original = exported(client, played_match(client))
    assert original["deals"] == [1, 2, 4, 5]
    assert [(v["number"], v["deal"]) for v in original["earlier_versions"]] == [(3, 3), (3, 3)]
    copy = exported(client, client.post("/api/matches/import", json=original).json["id"])
    assert copy["deals"] == [1, 2, 4, 5]
    assert [(v["deal"], v["restore"], v["why_not"]) for v in copy["earlier_versions"]] == [
        (v["deal"], v["restore"], v["why_not"]) for v in original["earlier_versions"]
    ]
    assert "round 3 was undone and entered again" in copy["earlier_versions"][1]["why_not"]


def test_a_file_saved_before_deals_were_told_apart_is_read_as_before(client: FlaskClient) -> None:
    """Without deals, each round and version is the deal numbered as its round (as an upgraded database reads its
    rows): an edit's earlier version goes back into its round."""
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    client.post(f"/api/matches/{match_id}/rounds", json=GIN)
    client.put(f"/api/matches/{match_id}/rounds/2", json={"draw": True})
    old = exported(client, match_id)
    del old["origin"], old["deals"]
    for version in old["earlier_versions"]:
        del version["deal"]
    answer = client.post("/api/matches/import", json=old)
    assert answer.status_code == 201, answer.json
    copy = client.get(f"/api/matches/{answer.json['id']}").json
    assert copy["deals"] == [1, 2]
    (version,) = copy["earlier_versions"]
    assert (version["deal"], version["restore"]) == (2, "edit")
    added = client.post(f"/api/matches/{copy['id']}/rounds", json=ROUND).json["match"]
    assert added["deals"][2] == 3


def test_a_file_of_okgins_first_release_opens(client: FlaskClient) -> None:
    """okgin's first release wrote each round as the sheet showed it, with no ``input``: its upcard, knocker and hands
    (or ``"draw": true``) beside its result. Such a file was refused ('entry 1 of the file's rounds has no "input"');
    what it shows was entered is read as the round's input. The keys below are those that release wrote."""
    shown = {"winner": "Ann", "outcome": "knock", "knock_limit": 10, "points": {"Ann": 18, "Bob": 0}, "players": {}}
    first = {"number": 1, "dealer": "Bob", "draw": False, "totals": {"Ann": 18, "Bob": 0}, **shown}
    first |= {"upcard": ROUND["upcard"], "knocker": "Ann", "hands": {"Ann": ANN.split(), "Bob": BOB.split()}}
    draw = {"number": 2, "dealer": "Ann", "draw": True, "totals": {"Ann": 18, "Bob": 0}}
    draw |= {"points": {"Ann": 0, "Bob": 0}, "outcome": "draw"}
    gin = {"number": 3, "dealer": "Bob", "draw": False, "totals": {"Ann": 18, "Bob": 91}, **shown}
    gin |= {"upcard": GIN["upcard"], "knocker": "Bob", "hands": {n: h.split() for n, h in GIN["hands"].items()}}
    old = {
        "id": 1,
        "created_at": "2026-11-29T21:30:00+00:00",
        "players": ["Ann", "Bob"],
        "rules": {"preset": "oklahoma", "knock_limit": "upcard", "gin_bonus": 25, "target": 100, "rounds_limit": None},
        "first_dealer": "Bob",
        "dealer": "Ann",
        "rounds": [first, draw, gin],
        "totals": {"Ann": 18, "Bob": 91},
        "winner": None,
        "finished": False,
        "bonuses": {},
        "target": 100,
    }
    answer = client.post("/api/matches/import", json=old)
    assert answer.status_code == 201 and answer.json["notes"] == [], answer.json
    copy = client.get(f"/api/matches/{answer.json['id']}").json
    assert copy["totals"] == {"Ann": 18, "Bob": 91} and copy["deals"] == [1, 2, 3]
    entered_here = new_match(client)
    for body in (ROUND, {"draw": True}, GIN):
        assert client.post(f"/api/matches/{entered_here}/rounds", json=body).status_code == 201
    assert [line["input"] for line in copy["rounds"]] == [
        line["input"] for line in exported(client, entered_here)["rounds"]
    ]


def test_a_round_removed_or_added_by_hand_opens_saying_so(client: FlaskClient) -> None:
    """A round taken out of a file (or copied in) by hand, its deal left in "deals", was refused naming the deals
    ("the file's deals must list one deal id per round (3), got [1, 2, 4, 5]"), which its editor never saw on the
    sheet. The rounds the file holds now make the match, read as a file without deals, and the import says so."""
    good = exported(client, played_match(client))
    assert good["deals"] == [1, 2, 4, 5] and good["totals"] == {"Ann": 18, "Bob": 182}
    said = "the file lists 4 deals for its {} rounds (a round removed or added by hand?)"
    for rounds, totals in (
        ([good["rounds"][0], *good["rounds"][2:]], {"Ann": 18, "Bob": 182}),  # the draw taken out
        (good["rounds"][:3], {"Ann": 18, "Bob": 91}),  # the last round taken out
        ([*good["rounds"][:2], good["rounds"][0], *good["rounds"][2:]], {"Ann": 36, "Bob": 182}),  # Ann's knock again
    ):
        answer = client.post("/api/matches/import", json={**good, "rounds": rounds})
        assert answer.status_code == 201, answer.json
        assert said.format(len(rounds)) in answer.json["notes"][-1]
        copy = client.get(f"/api/matches/{answer.json['id']}").json
        assert copy["totals"] == totals and copy["deals"] == list(range(1, len(rounds) + 1))
        assert [version["input"] for version in copy["earlier_versions"]] == [
            version["input"] for version in good["earlier_versions"]
        ]


def test_a_three_player_match_comes_back(client: FlaskClient) -> None:
    match_id = new_match(client, players=["Ann", "Bob", "Cat"], rules="oklahoma-multi", dealer="Cat")
    hands = {"Ann": "3C 4C 5C 6H 6S 6D 2H", "Bob": "KH KS QD JD 9S 8S 7H", "Cat": "AS AD 2S 9C 9D 10H QC"}
    body = {"upcard": "KD", "knocker": "Ann", "hands": hands}
    assert client.post(f"/api/matches/{match_id}/rounds", json=body).status_code == 201
    original = exported(client, match_id)
    copy = exported(client, client.post("/api/matches/import", json=original).json["id"])
    assert {key: copy[key] for key in KEPT} == {key: original[key] for key in KEPT}


def test_the_files_totals_never_score_a_round(client: FlaskClient) -> None:
    original = exported(client, played_match(client))
    original["totals"] = {"Ann": 500, "Bob": 0}
    original["rounds"][0]["points"] = {"Ann": 500, "Bob": 0}
    answer = client.post("/api/matches/import", json=original)
    assert answer.status_code == 201
    assert answer.json["notes"] == [
        "the file's totals (Ann 500, Bob 0) were scored again by these rules: Ann 18, Bob 182"
    ]
    assert client.get(f"/api/matches/{answer.json['id']}").json["totals"] == {"Ann": 18, "Bob": 182}


def test_the_files_totals_are_told_apart_by_the_players_totals_only(client: FlaskClient) -> None:
    """A key of no player's among the file's totals made a note that said the same totals twice."""
    original = exported(client, played_match(client))
    original["totals"] = {**original["totals"], "Zed": 7}
    assert client.post("/api/matches/import", json=original).json["notes"] == []
    original["totals"] = {"Ann": 18}  # Bob's left out: that differs
    assert client.post("/api/matches/import", json=original).json["notes"] == [
        "the file's totals (Ann 18; none for Bob) were scored again by these rules: Ann 18, Bob 182"
    ]


def test_a_player_renamed_in_the_rounds_but_not_in_the_totals_is_said_so(client: FlaskClient) -> None:
    """Ann renamed Anna everywhere but in the file's totals: the note said "Anna null", a total the file never gave."""
    renamed = json.loads(json.dumps(exported(client, played_match(client))).replace('"Ann"', '"Anna"'))
    renamed["totals"] = {"Ann": 18, "Bob": 182}
    answer = client.post("/api/matches/import", json=renamed)
    assert (answer.status_code, answer.json["notes"]) == (
        201,
        [
            "the file's totals (Bob 182; none for Anna; 'Ann' 18, of no player) were scored again by these rules:"
            " Anna 18, Bob 182"
        ],
    )


def test_a_file_that_is_not_a_match_is_refused_naming_why_and_nothing_is_stored(client: FlaskClient) -> None:
    good = exported(client, played_match(client))
    before = match_count(client)
    cases: list[tuple[Any, str]] = [
        ({"players": ["Ann", "Bob"]}, "it has no 'rules', 'first_dealer', 'rounds'"),
        ({**good, "players": ["Ann", "Ann"]}, "player names must differ"),
        ({**good, "players": ["Ann", "B\u0000b"]}, "printable text"),
        ({**good, "rules": {"preset": "oklahoma", "gin_bonus": -5}}, "the file's rules or players"),
        ({**good, "rules": "oklahoma"}, "rules must be an object"),
        ({**good, "first_dealer": "Zed"}, "first dealer must be one of Ann, Bob"),
        ({**good, "rounds": "all of them"}, "rounds must be a list"),
        ({**good, "rounds": [{"points": 3}]}, 'entry 1 of the file\'s rounds has no "input"'),
        ({**good, "rounds": [{"input": {"upcard": "ZZ"}}]}, "entry 1 of the file's rounds"),
        ({**good, "rounds": [{"input": {"draw": True}}] * 1001}, "more than 1000"),
        ({**good, "rounds": [good["rounds"][0], {"input": {**ROUND, "upcard": "AS"}}]}, "round 2 of the file does"),
        (
            {**good, "rounds": [*good["rounds"], {"input": ROUND}]},
            "round 5 of the file does not score: the match was won by Bob in round 4",
        ),
        ({**good, "deals": "1 2 4 5"}, "the file's deals must list one deal id per round"),
        ({**good, "deals": [1, 2, 0, 5]}, "the file's deal for round 3 is no deal id (1 to 4503599627370496): 0"),
        ({**good, "deals": [1, 2, 2**52 + 1, 5]}, "the file's deal for round 3 is no deal id"),
        ({**good, "deals": [1, 2, True, 5]}, "the file's deal for round 3 is no deal id"),
        (
            {**good, "earlier_versions": [{**good["earlier_versions"][0], "deal": "3"}]},
            "entry 1 of the file's earlier_versions is no deal id",
        ),
        (
            {**good, "earlier_versions": [{**good["earlier_versions"][0], "deal": 1}]},
            "the file names deal 1 as round 1's and as round 3's",
        ),
        ({**good, "origin": {"id": 1}}, 'the file\'s origin must be {"id": a match id, "created_at": a time}'),
        ({**good, "earlier_versions": [{"input": {"draw": True}, "number": 0}]}, "has no round number"),
        ({**good, "earlier_versions": [{"input": {"draw": True}, "number": 1}]}, "was replaced by null"),
        (  # the sheet shows when a version was replaced, in the players' clock: "Invalid Date" from a word
            {**good, "earlier_versions": [{**good["earlier_versions"][0], "replaced_at": "yesterday"}]},
            "entry 1 of the file's earlier_versions has no time: 'yesterday'",
        ),
    ]
    for body, why in cases:
        answer = client.post("/api/matches/import", json=body)
        assert answer.status_code == 400, (why, answer.json)
        assert why in answer.json["error"], (why, answer.json["error"])
    assert match_count(client) == before


def test_a_file_of_more_versions_than_a_match_keeps_opens_with_its_newest(client: FlaskClient) -> None:
    """A match saved before matches kept a bounded number of earlier versions may hold more than 1,000, and its file
    was refused: it opens, its scores whole, with the newest ``MAX_EARLIER_VERSIONS`` (the file lists the newest
    first), saying how many older ones were left out; those are only counted, never read."""
    good = exported(client, played_match(client))
    newest, oldest = good["earlier_versions"]
    left_out = [oldest, {"input": "never read"}]
    body = {**good, "earlier_versions": [newest] * MAX_EARLIER_VERSIONS + left_out}
    answer = client.post("/api/matches/import", json=body)
    assert answer.status_code == 201, answer.json
    assert answer.json["notes"] == [
        "the file keeps 1,002 earlier versions and a match keeps its newest 1,000: the 2 oldest were left out (the"
        " file still holds them)"
    ]
    copy = exported(client, answer.json["id"])
    assert copy["totals"] == good["totals"] and copy["rounds"] == good["rounds"]
    assert [version["input"] for version in copy["earlier_versions"]] == [newest["input"]] * MAX_EARLIER_VERSIONS


def test_a_versions_time_is_kept_in_utc_as_the_sheet_prints_it(client: FlaskClient) -> None:
    """The sheet prints a version's time as stored, saying UTC, and a browser reads only some of the times Python
    does: a file's "14:02 at UTC+5" was printed as 14:02 UTC, a compact ISO time as NaN-NaN-NaN."""
    good = exported(client, played_match(client))
    first = good["earlier_versions"][0]
    given = {
        "2026-12-05T14:02:00+05:00": "2026-12-05T09:02:00+00:00",
        "20261205T140200Z": "2026-12-05T14:02:00+00:00",
        "2026-12-05T14:02:00.5": "2026-12-05T14:02:00+00:00",  # no offset: UTC, as okgin writes times
    }
    for written, kept in given.items():
        body = {**good, "earlier_versions": [{**first, "replaced_at": written}]}
        copy = client.post("/api/matches/import", json=body).json["id"]
        assert exported(client, copy)["earlier_versions"][0]["replaced_at"] == kept, written
        assert f'<time datetime="{kept}">{kept[:16].replace("T", " ")} UTC</time>' in client.get(
            f"/matches/{copy}/sheet-body?actions=1"
        ).get_data(as_text=True)
    for beyond in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"):  # no year of UTC's
        body = {**good, "earlier_versions": [{**first, "replaced_at": beyond}]}
        answer = client.post("/api/matches/import", json=body)
        assert answer.status_code == 400 and "has no time" in answer.json["error"], beyond


def test_a_first_dealer_who_is_not_a_player_is_refused_in_one_sentence(client: FlaskClient) -> None:
    """The refusal read "the file's rules or players: the file's first dealer must be ...": the dealer's own check was
    caught again as the rules' refusal."""
    good = exported(client, played_match(client))
    answer = client.post("/api/matches/import", json={**good, "first_dealer": "Zed"})
    assert answer.status_code == 400
    assert answer.json["error"] == "the file's first dealer must be one of Ann, Bob; got 'Zed'"


def test_the_start_page_opens_a_match_file(client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    data = client.get(f"/matches/{match_id}/export.json").get_data()
    page = client.get("/").get_data(as_text=True)
    assert 'enctype="multipart/form-data"' in page and 'name="file"' in page
    token = form_token(client)
    answer = client.post(
        "/matches/import",
        data={"csrf_token": token, "file": (io.BytesIO(data), "okgin-match-1.json")},
        content_type="multipart/form-data",
    )
    assert answer.status_code == 303 and answer.location.endswith(f"/matches/{match_id + 1}")
    tampered = json.loads(data) | {"totals": {"Ann": 1, "Bob": 2}}
    noted = client.post(
        "/matches/import",
        data={"csrf_token": token, "file": (io.BytesIO(json.dumps(tampered).encode()), "m.json")},
        content_type="multipart/form-data",
    )
    assert noted.status_code == 200
    assert "Opened as" in noted.get_data(as_text=True) and "were scored again" in noted.get_data(as_text=True)


def test_a_match_file_sent_twice_makes_one_match(client: FlaskClient) -> None:
    match_id = new_match(client)
    data = client.get(f"/matches/{match_id}/export.json").get_data()
    form = {"csrf_token": form_token(client), "once": "a-key-of-one-form-0"}
    answers = [
        client.post(
            "/matches/import", data={**form, "file": (io.BytesIO(data), "m.json")}, content_type="multipart/form-data"
        )
        for _ in range(2)
    ]
    assert [answer.status_code for answer in answers] == [303, 303] and answers[0].location == answers[1].location
    assert match_count(client) == 2


def test_the_start_page_says_why_a_file_cannot_be_opened(client: FlaskClient) -> None:
    token = form_token(client)
    for content, why in (
        (b"\xff\xfe not text", "the file is not valid JSON: it is not UTF-8 text"),
        (b'{"players": ', "the file is not valid JSON"),
        (b"[" * 5000 + b"]" * 5000, "nests deeper than 32 levels"),
        (b"[1, 2]", "a match file is a JSON object"),
        (b"\xef\xbb\xbfround,dealer,upcard\r\n1,Bob,KS\r\n", "m.json is a match's CSV, for spreadsheets: okgin opens"),
    ):
        answer = client.post(
            "/matches/import",
            data={"csrf_token": token, "file": (io.BytesIO(content), "m.json")},
            content_type="multipart/form-data",
        )
        page = html.unescape(answer.get_data(as_text=True))
        assert answer.status_code == 400 and why in page, why
        # said at the top, where the page opens, not at the foot by the form (a phone's screens below)
        said, form = page.index("The match file was not opened: "), page.index('id="match-file"')
        assert said < page.index('id="setup-form"') < form
    missing = client.post("/matches/import", data={"csrf_token": token}, content_type="multipart/form-data")
    assert missing.status_code == 400 and "choose a match file" in missing.get_data(as_text=True)
    no_token = client.post(
        "/matches/import", data={"file": (io.BytesIO(b"{}"), "m.json")}, content_type="multipart/form-data"
    )
    assert no_token.status_code in (400, 403)
    assert match_count(client) == 0


def test_a_file_of_players_told_apart_by_case_only_when_it_was_saved_still_opens(client: FlaskClient) -> None:
    """New matches tell players apart as the records do ("Ann Lee" and "Ann  Lee", or Zoë written two Unicode ways,
    are one player), but a file saved before that rule, holding two such players, must still open (review)."""
    data = exported(client, new_match(client))
    data["players"], data["first_dealer"] = ["Zo\u00eb", "Zoe\u0308"], "Zoe\u0308"
    answer = client.post("/api/matches/import", json=data)
    assert answer.status_code == 201, answer.json
    assert client.get(f"/api/matches/{answer.json['id']}").json["players"] == ["Zo\u00eb", "Zoe\u0308"]
    refused = client.post("/api/matches", json={"players": ["Zo\u00eb", "Zoe\u0308"]})
    assert refused.status_code == 400 and "must differ" in refused.json["error"]


def test_a_name_that_is_not_text_is_refused_and_never_stored(client: FlaskClient) -> None:
    """A hand named with a lone surrogate ("Zed\\ud800", which JSON carries) was echoed raw into messages: a file whose
    earlier version held one opened (201), and its table answered 500 for good (the version's why_not, which an HTML
    page cannot send); the start page's form answered 500 for such a hand. Both now refuse the file, naming the hand."""
    good = exported(client, played_match(client))
    before = match_count(client)
    stranger = "Zed\ud800"
    version = {**good["earlier_versions"][0], "input": {**ROUND, "hands": {**ROUND["hands"], stranger: "KC"}}}
    knock = good["rounds"][0]["input"]
    for body in (
        {**good, "earlier_versions": [version]},
        {**good, "rounds": [{"input": {**knock, "hands": {**knock["hands"], stranger: ["ZZ"]}}}]},
        {**good, "rounds": [{"input": {**knock, "layoffs": {stranger: []}}}]},
        {**good, "rounds": [{"input": {**knock, "knocker": stranger}}]},
    ):
        data = json.dumps(body).encode()  # ASCII: the surrogate written \ud800, as JSON may
        answer = client.post("/api/matches/import", data=data, content_type="application/json")
        assert answer.status_code == 400 and "'Zed\\ud800', which holds a lone surrogate" in answer.json["error"]
        page = client.post(
            "/matches/import",
            data={"csrf_token": form_token(client), "file": (io.BytesIO(data), "m.json")},
            content_type="multipart/form-data",
        )
        text = html.unescape(page.get_data(as_text=True))
        assert page.status_code == 400 and "The match file was not opened: " in text
        assert "'Zed\\ud800', which holds a lone surrogate" in text
    assert match_count(client) == before
