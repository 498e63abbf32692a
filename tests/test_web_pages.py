"""The pages: set-up form, resume and history, the table page, the score sheet and its exports."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import pytest
import web_fixtures
from click.testing import CliRunner
from flask.testing import FlaskClient
from web_fixtures import ROUND, new_match

from scorer.cli import main

app, client, detector = web_fixtures.app, web_fixtures.client, web_fixtures.detector
WEB = Path(__file__).resolve().parents[1] / "web"


def form_token(client: FlaskClient) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/").get_data(as_text=True))
    assert found
    return found.group(1)


SETUP = {
    "player": ["Ann", "Bob", "", ""],
    "preset": "oklahoma",
    "gin_bonus": "20",
    "undercut_bonus": "15",
    "target": "150",
    "target_rule": ">",
    "spade_doubles": "on",
    "box_bonus": "25",
    "game_bonus": "100",
    "rounds_limit": "12",
    "dealer": "2",
}
"""A filled set-up form: every kind of field set away from its default."""


def test_set_up_form_creates_a_match_with_its_options(client: FlaskClient) -> None:
    answer = client.post("/matches", data={"csrf_token": form_token(client), **SETUP})
    assert answer.status_code == 303
    state = client.get("/api/matches/1").json
    assert state["dealer"] == "Bob"
    rules = state["rules"]
    assert (rules["gin_bonus"], rules["undercut_bonus"], rules["target"], rules["target_rule"]) == (20, 15, 150, ">")
    assert (rules["spade_doubles"], rules["ace_upcard_gin_only"], rules["box_bonus"]) == (True, False, 25)
    assert (rules["rounds_limit"], state["goal"]) == (12, "over 150 or 12 rounds")
    assert "over 150 or 12 rounds" in client.get("/matches/1/sheet").get_data(as_text=True)


def test_the_sheet_says_the_rules_agreed_at_the_start(client: FlaskClient) -> None:
    """No page said what a match's options were once it had started: a gin scoring 20 rather than 25, or a spade
    upcard doubling a round, surprised the player who had not set the match up. Each sheet lists them in words."""
    assert client.post("/matches", data={"csrf_token": form_token(client), **SETUP}).status_code == 303
    for url in ("/matches/1/sheet", "/matches/1"):
        page = client.get(url).get_data(as_text=True)
        terms = re.search(r'<details class="rules-terms">(.*?)</details>', page, re.S)
        assert terms, url
        words = re.sub(r"<[^>]+>", " ", html.unescape(terms.group(1)))
        for said in (
            "Rules: Oklahoma Gin",
            "gin: 20 + the other's deadwood",
            "undercut (a tie too): 15",
            "a spade upcard doubles the round",
            "25 for each round won",
            "100 to the winner",
            "the match: over 150 or 12 rounds",
        ):
            assert said in words, (url, said, words)
        assert "only gin" not in words and "doubles when no one else" not in words


def test_the_set_up_form_sets_the_multi_player_scorings_own_points(client: FlaskClient) -> None:
    """The form offered the two-player undercut bonus only, which multi-player scoring ignores: a player changed it
    for nothing. Each scoring's own points are on the form now, a multi-player match's scored with them."""
    penalty = {"penalty_knock_points": "15", "penalty_undercut_points": "30", "penalty_gin_multiplier": "3"}
    form = {**SETUP, "player": ["Ann", "Bob", "Cat", ""], "preset": "oklahoma-multi", "dealer": "1", **penalty}
    del form["undercut_bonus"]  # the page sends the chosen scoring's fields only (setup.js)
    assert client.post("/matches", data={"csrf_token": form_token(client), **form}).status_code == 303
    rules = client.get("/api/matches/1").json["rules"]
    assert {name: rules[name] for name in penalty} == {name: int(value) for name, value in penalty.items()}
    page = client.get("/").get_data(as_text=True)
    assert 'data-scoring="penalty"' in page and 'id="penalty_knock_points"' in page
    assert '<option value="oklahoma-multi" data-scoring="penalty"' in page


def test_the_set_up_form_sent_twice_makes_one_match(client: FlaskClient) -> None:
    """A double tap on "Start the match", or a browser sending the form again, made a second match."""
    page = client.get("/").get_data(as_text=True)
    keys = re.findall(r'name="once" value="([^"]+)"', page)
    assert len(keys) == 2 and keys[0] != keys[1]  # the set-up form's and the match file's: one each
    form = {"csrf_token": form_token(client), **SETUP, "once": keys[0]}
    first, again = client.post("/matches", data=form), client.post("/matches", data=form)
    assert first.status_code == again.status_code == 303 and first.location == again.location
    assert client.post("/matches", data={**form, "once": "another-key-0123456"}).location != first.location
    without = {key: value for key, value in form.items() if key != "once"}
    assert client.post("/matches", data=without).location != client.post("/matches", data=without).location
    assert len(client.get("/api/matches").json["matches"]) == 4


def test_an_agreed_number_of_rounds_ends_the_match_and_draws_do_not_count(client: FlaskClient) -> None:
    """The rules page's "after an agreed number of rounds", offered on the set-up form (blank: no limit)."""
    answer = client.post(
        "/matches", data={"csrf_token": form_token(client), "player": ["Ann", "Bob"], "rounds_limit": "2"}
    )
    assert answer.status_code == 303
    for body in (ROUND, {"draw": True}, ROUND):
        client.post("/api/matches/1/rounds", json=body)
    state = client.get("/api/matches/1").json
    assert (state["rounds_scored"], state["winner"], state["goal"]) == (2, "Ann", "to 100 or 2 rounds")
    plain = client.post(
        "/matches", data={"csrf_token": form_token(client), "player": ["Ann", "Bob"], "rounds_limit": ""}
    )
    assert plain.status_code == 303 and client.get("/api/matches/2").json["rules"]["rounds_limit"] is None


def test_set_up_form_errors_are_shown_on_the_form(client: FlaskClient) -> None:
    answer = client.post("/matches", data={"csrf_token": form_token(client), "player": ["Ann", "", "", ""]})
    assert answer.status_code == 400
    page = answer.get_data(as_text=True)
    assert "a match needs 2 to 4 players, got 1" in page and 'value="Ann"' in page
    bad_number = client.post(
        "/matches", data={"csrf_token": form_token(client), "player": ["Ann", "Bob"], "target": "lots"}
    )
    assert bad_number.status_code == 400 and "Target score must be a whole number" in bad_number.get_data(as_text=True)


def test_the_other_scorings_points_keep_their_values_after_an_error(client: FlaskClient) -> None:
    # the page sends only the chosen scoring's points (setup.js disables the others'): after an error the multi-player
    # points came back blank, and a switch to Multi-player Oklahoma Gin showed empty boxes where 10, 20 and 2 had been
    two = {key: value for key, value in SETUP.items() if not key.startswith("penalty_")} | {"player": ["Ann", "ann"]}
    page = client.post("/matches", data={"csrf_token": form_token(client), **two}).get_data(as_text=True)
    assert "player names must differ" in page
    for field, value in (("penalty_knock_points", 10), ("penalty_undercut_points", 20), ("penalty_gin_multiplier", 2)):
        assert re.search(rf'name="{field}" [^>]*value="{value}"', page), field
    multi = SETUP | {"player": ["Ann", "ann", "Cy", ""], "preset": "oklahoma-multi", "penalty_knock_points": "12"}
    del multi["undercut_bonus"]
    page = client.post("/matches", data={"csrf_token": form_token(client), **multi}).get_data(as_text=True)
    assert re.search(r'name="undercut_bonus" [^>]*value="10"', page) and 'value="12"' in page
    blank = client.post("/matches", data={"csrf_token": form_token(client), **two, "target": ""})
    assert re.search(r'name="target" [^>]*value=""', blank.get_data(as_text=True))  # a box the player emptied stays so


def test_a_page_without_links_of_its_own_has_no_empty_navigation(client: FlaskClient) -> None:
    # the start and error pages each had a "Match" navigation landmark with nothing in it, which a screen reader lists
    match_id = new_match(client)
    for path in ("/", "/matches/999"):
        assert "<nav" not in client.get(path).get_data(as_text=True), path
    for path in (f"/matches/{match_id}", f"/matches/{match_id}/sheet"):
        page = client.get(path).get_data(as_text=True)
        assert re.search(r'<nav aria-label="Match"><a href="/matches/\d+">Table</a>', page), path


def test_a_pin_given_too_often_says_the_wait_over_the_pin_form(tmp_path: Path) -> None:
    # past three wrong PINs the PIN page became the error page, its one button "Back to the matches" (the PIN page
    # again, without the page the player was going to): the wait is said over the form, which still goes there
    from web import create_app

    remote = create_app({"TESTING": True, "DATA_DIR": str(tmp_path), "PIN": "4321"}).test_client()
    remote.environ_base["REMOTE_ADDR"] = "192.168.1.20"
    form = remote.get("/pin?next=/players").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token
    answers = [remote.post("/pin?next=/players", data={"csrf_token": token.group(1), "pin": "1111"}) for _ in range(4)]
    assert [answer.status_code for answer in answers] == [401, 401, 401, 429]
    page = answers[-1].get_data(as_text=True)
    assert "Too many wrong PINs; try again in 2 s." in page and "That PIN is not right" not in page
    assert 'action="/pin?next=/players"' in page and 'id="pin"' in page


def test_index_lists_unfinished_matches_to_resume_and_the_history(client: FlaskClient) -> None:
    open_match = new_match(client)
    won = new_match(client, options={"target": 10})
    client.post(f"/api/matches/{won}/rounds", json=ROUND)
    page = client.get("/").get_data(as_text=True)
    resume, history = page.split('id="resume-title"')[1].split("History")
    assert f'/matches/{open_match}"' in resume and f"/matches/{won}/sheet" in history
    assert '<span class="winner-tag">Ann</span>' in history and "\U0001f3c6" not in page  # no emoji font needed


def won_match(client: FlaskClient) -> int:
    match_id = new_match(client, options={"target": 10})
    assert client.post(f"/api/matches/{match_id}/rounds", json=ROUND).status_code == 201
    return match_id


def listed_ids(html: str) -> tuple[list[int], list[int]]:
    """The ids the start page lists to resume, and in its history."""
    resume, history = html.split('id="resume-title"')[1].split("History")
    return [int(i) for i in re.findall(r"#(\d+) · ", resume)], [int(i) for i in re.findall(r"#(\d+) · ", history)]


def test_an_unfinished_match_stays_on_the_resume_list_however_many_matches_follow_it(client: FlaskClient) -> None:
    """The start page listed the 100 newest matches, finished or not: one unfinished match followed by 100 finished
    ones could no longer be resumed from it ("No unfinished matches."), nor found in GET /api/matches. Each list now
    has its own page, 50 matches long, and older ones a link away."""
    unfinished = new_match(client)
    finished = [won_match(client) for _ in range(101)]
    resume, history = listed_ids(client.get("/").get_data(as_text=True))
    assert resume == [unfinished] and history == finished[::-1][:50]
    pages = [history]
    page = client.get("/").get_data(as_text=True)
    while (older := re.search(r'href="([^"]+)">Older finished matches<', page)) is not None:
        url = older.group(1).replace("&amp;", "&")
        page = client.get(url).get_data(as_text=True)
        assert "Newest matches" in page and listed_ids(page)[0] == [unfinished]
        pages.append(listed_ids(page)[1])
    assert [len(ids) for ids in pages] == [50, 50, 1] and [i for ids in pages for i in ids] == finished[::-1]
    answer = client.get("/api/matches?finished=false").json
    assert [m["id"] for m in answer["matches"]] == [unfinished] and answer["older"] is None
    seen, next_page = [], "/api/matches?limit=40"
    while next_page:
        answer = client.get(next_page).json
        seen += [m["id"] for m in answer["matches"]]
        next_page = answer["older"]
    assert seen == [*finished[::-1], unfinished]


def test_more_unfinished_matches_than_a_page_are_a_link_away(client: FlaskClient) -> None:
    unfinished = [new_match(client) for _ in range(51)]
    page = client.get("/").get_data(as_text=True)
    assert listed_ids(page)[0] == unfinished[::-1][:50] and "No finished matches yet." in page
    older = re.search(r'href="([^"]+)">Older unfinished matches<', page)
    assert older is not None
    page = client.get(older.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert listed_ids(page)[0] == [unfinished[0]] and "Older unfinished" not in page and "Newest matches" in page


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("before=0", "before must be a match id"),
        ("before=x", "before must be a whole number"),
        ("limit=101", "limit must be 1 to 100"),
        ("finished=yes", "finished must be true or false"),
    ],
)
def test_a_bad_page_of_the_match_list_is_named(client: FlaskClient, query: str, error: str) -> None:
    answer = client.get(f"/api/matches?{query}")
    assert answer.status_code == 400 and error in answer.json["error"], answer.json
    if query.startswith("before"):
        page = client.get(f"/?{query}")
        assert page.status_code == 400 and error in page.get_data(as_text=True)


def test_the_match_lists_count_rounds_scored_and_draws_apart(client: FlaskClient) -> None:
    """A match of 2 rounds and a draw was listed as "3 rounds", where its sheet and JSON say 2 rounds scored."""
    played = new_match(client)
    for body in (ROUND, {"draw": True}, ROUND):
        client.post(f"/api/matches/{played}/rounds", json=body)
    fresh = new_match(client)
    won = new_match(client, options={"target": 10})
    for body in ({"draw": True}, {"draw": True}, ROUND):
        client.post(f"/api/matches/{won}/rounds", json=body)
    assert client.get(f"/api/matches/{played}").json["rounds_scored"] == 2
    resume, history = client.get("/").get_data(as_text=True).split('id="resume-title"')[1].split("History")
    lines = {int(m[1]): m[2] for m in re.finditer(r"<span class=\"hint\">#(\d+) · ([^<]*)</span>", resume + history)}
    assert "· 2 rounds · 1 draw ·" in lines[played] and "· 0 rounds ·" in lines[fresh], lines
    assert lines[won].startswith("1 round · 2 draws ·"), lines
    listed = {m["id"]: m for m in client.get("/api/matches").json["matches"]}
    assert (listed[played]["rounds"], listed[played]["draws"]) == (3, 1)


def test_the_table_page_carries_the_match_and_works_without_a_camera(client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    data = re.search(r'<script type="application/json" id="table-data">(.*?)</script>', page, re.S)
    assert data and json.loads(data.group(1))["match"]["totals"] == {"Ann": 18, "Bob": 0}
    assert 'id="upcard-input"' in page and 'id="camera-start"' in page and "js/table.js" in page
    assert "Table camera" not in page  # no --camera: no server camera button


def test_names_are_escaped_everywhere(client: FlaskClient) -> None:
    answer = client.post("/api/matches", json={"players": ["<b>Ann</b>", "Bob"], "dealer": "Bob"})
    page = client.get(f"/matches/{answer.json['id']}").get_data(as_text=True)
    assert "<b>Ann</b>" not in page and "&lt;b&gt;Ann&lt;/b&gt;" in page


def test_the_sheet_shows_rounds_totals_and_the_winner(client: FlaskClient) -> None:
    match_id = new_match(client, options={"target": 30})
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    client.post(f"/api/matches/{match_id}/rounds", json={"draw": True})
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    page = client.get(f"/matches/{match_id}/sheet").get_data(as_text=True)
    assert "Ann wins the match!" in page
    assert '<progress max="30" value="36"' in page
    assert '<span class="name">Ann</span> · knock · up <span class="card-text black">K♠</span>' in page
    assert ">Draw (no knock)<" in page
    assert '<span class="hint">deadwood 5</span>' in page and ">dw " not in page  # a word, not an abbreviation


def test_csv_export_has_one_row_per_round(client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    client.post(f"/api/matches/{match_id}/rounds", json={"draw": True})
    answer = client.get(f"/matches/{match_id}/export.csv")
    assert answer.mimetype == "text/csv" and "attachment" in answer.headers["Content-Disposition"]
    assert answer.data.startswith("\ufeffround,".encode())  # the byte-order mark Excel needs to read UTF-8
    rows = list(csv.DictReader(io.StringIO(answer.data.decode("utf-8-sig"))))
    assert [row["outcome"] for row in rows] == ["knock", "draw"]
    assert (rows[0]["Ann points"], rows[0]["Bob deadwood"], rows[1]["Ann total"]) == ("18", "23", "18")


def test_csv_export_of_a_won_match_ends_on_its_final_score(client: FlaskClient) -> None:
    """The CSV gave the bonuses but not the score the match ended on: the players added them up by hand."""
    match_id = new_match(client, options={"target": 30, "box_bonus": 25, "game_bonus": 100})
    for _ in range(2):
        client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    rows = list(csv.DictReader(io.StringIO(client.get(f"/matches/{match_id}/export.csv").data.decode("utf-8-sig"))))
    assert [row["round"] for row in rows] == ["1", "2", "bonuses", "final"]
    final = rows[-1]
    sheet = client.get(f"/api/matches/{match_id}").json
    assert final["winner"] == sheet["winner"] == "Ann"
    assert (final["Ann total"], final["Bob total"]) == (str(sheet["final_totals"]["Ann"]), "0")
    assert int(final["Ann total"]) == int(rows[1]["Ann total"]) + int(rows[2]["Ann points"]) == 36 + 50 + 100


def test_a_won_match_with_bonuses_says_its_final_score(client: FlaskClient) -> None:
    """The sheet showed the totals before the bonuses ("36" and "+150 bonuses") while the pinned bar showed the
    score with them (186): the winner's line now says the final score."""
    match_id = new_match(client, options={"target": 30, "box_bonus": 25, "game_bonus": 100})
    for _ in range(2):
        client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    final = client.get(f"/api/matches/{match_id}").json["final_totals"]
    page = client.get(f"/matches/{match_id}/sheet").get_data(as_text=True)
    assert f"Final score: Ann {final['Ann']}, Bob {final['Bob']}." in re.sub(r"</?bdi>", "", page)
    plain = new_match(client, options={"target": 10})
    client.post(f"/api/matches/{plain}/rounds", json=ROUND)
    assert "Final score" not in client.get(f"/matches/{plain}/sheet").get_data(as_text=True)  # no bonuses: as shown


def test_json_export_is_the_match_state(client: FlaskClient) -> None:
    match_id = new_match(client)
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    exported = json.loads(client.get(f"/matches/{match_id}/export.json").get_data(as_text=True))
    assert exported == client.get(f"/api/matches/{match_id}").json


def test_unknown_match_page_is_a_friendly_404(client: FlaskClient) -> None:
    answer = client.get("/matches/77/sheet")
    assert answer.status_code == 404 and "no match with id 77" in answer.get_data(as_text=True)


def test_static_assets_are_local_and_served(client: FlaskClient) -> None:
    for name in ("css/app.css", "js/table.js", "js/api.js", "js/cards.js", "js/camera.js", "js/sheet.js"):
        assert client.get(f"/static/{name}").status_code == 200, name
    for template in (WEB / "templates").glob("*.html"):
        assert not re.search(r'(src|href)="(https?:)?//', template.read_text()), f"{template.name} loads off-site"
    assert "@media print" in (WEB / "static" / "css" / "app.css").read_text()


def test_serve_refuses_a_short_pin() -> None:
    result = CliRunner().invoke(main, ["serve", "--pin", "12"])
    assert result.exit_code == 2 and "at least 4 characters" in result.output


def test_serve_reports_an_unusable_database(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    result = CliRunner().invoke(main, ["serve", "--db", str(tmp_path / "f" / "x.db"), "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and "cannot open the database" in result.output


def test_serve_players_layout_must_be_2_to_4() -> None:
    result = CliRunner().invoke(main, ["serve", "--players-layout", "7"])
    assert result.exit_code == 2 and "2 to 4 players" in result.output


def test_players_layout_reads_a_layout_file(tmp_path: Path) -> None:
    from scorer.vision.layout import TableLayout
    from web.cli import _players_layout

    path = tmp_path / "layout.json"
    path.write_text(json.dumps(TableLayout.default(3).to_dict()))
    players, layout = _players_layout(str(path))
    assert players == 3 and layout == TableLayout.default(3).to_dict()
    assert _players_layout("4") == (4, None)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    result = CliRunner().invoke(main, ["serve", "--players-layout", str(broken)])
    assert result.exit_code == 2 and "cannot read the layout" in result.output


def test_csv_export_defuses_formula_names(client: FlaskClient) -> None:
    answer = client.post("/api/matches", json={"players": ["=HYPERLINK(1)", "Bob"], "dealer": "Bob"})
    exported = client.get(f"/matches/{answer.json['id']}/export.csv").get_data(as_text=True)
    assert "'=HYPERLINK(1) deadwood" in exported and ",=HYPERLINK" not in exported


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target": "--5"}, "Target score must be a whole number, got &#39;--5&#39;"),
        ({"target": "²"}, "Target score must be a whole number"),
        ({"box_bonus": "9" * 5000}, "Box bonus per round won must be a whole number"),
        (
            {"penalty_undercut_points": "5000"},
            "was not started: Undercut points must be a whole number 0-1000, not 5000",
        ),
        ({"penalty_knock_points": "5000"}, "was not started: Knock points must be a whole number 0-1000, not 5000"),
        ({"dealer": "²"}, "choose the first dealer from the players"),
        ({"dealer": "4"}, "choose the first dealer from the players"),
        ({"player": ["Ann", "ann", "", ""]}, "player names must differ"),
        ({"player": ["A\x00n", "Bob", "", ""]}, "holds a control character"),
        ({"preset": "oklahoma"}, "Oklahoma Gin is for 2 players, not 3: choose Multi-player Oklahoma Gin"),
    ],
)
def test_set_up_errors_name_the_field_and_keep_every_value(client: FlaskClient, change: dict, message: str) -> None:
    three = SETUP | {"player": ["Ann", "Bob", "Cy", ""], "preset": "oklahoma-multi"}
    answer = client.post("/matches", data={"csrf_token": form_token(client), **three, **change})
    assert answer.status_code == 400
    page = answer.get_data(as_text=True)
    assert message in page
    sent = three | change
    for name in sent["player"][:2]:
        assert f'value="{name}"' in page or "\x00" in name
    if "preset" not in change:
        assert '<option value="oklahoma-multi" data-scoring="penalty" selected>' in page
    assert '<option value="20" selected>' in page and 'value="15"' in page and 'name="spade_doubles" checked' in page
    assert '<option value="&gt;" selected>' in page and 'value="100"' in page
    assert client.get("/api/matches").json["matches"] == []


def test_the_sheet_body_is_the_one_drawing_of_the_sheet(client: FlaskClient) -> None:
    match_id = new_match(client, options={"target": 30, "game_bonus": 50})
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    undercut = {"Ann": ROUND["hands"]["Ann"], "Bob": "QS QC QH 10S JS 3D 2H 7S 7C 7D"}
    assert client.post(f"/api/matches/{match_id}/rounds", json=ROUND | {"hands": undercut}).status_code == 201
    client.post(f"/api/matches/{match_id}/rounds", json=ROUND)
    body = client.get(f"/matches/{match_id}/sheet-body?actions=1").get_data(as_text=True)
    assert "Ann wins the match! Bonuses: Ann +50." in re.sub(r"</?bdi>", "", body)
    undercut = '<span class="name">Ann</span> · undercut by <span class="name">Bob</span> · up'
    assert f'{undercut} <span class="card-text black">K♠</span>' in body
    assert 'data-edit-round="3"' in body and 'data-undo-round="3"' in body
    plain = client.get(f"/matches/{match_id}/sheet-body").get_data(as_text=True)
    assert "data-edit-round" not in plain and "Undo" not in plain
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    assert 'data-edit-round="1"' in page  # the table page starts with the same body, with its actions
    assert not (WEB / "static" / "js" / "sheet.js").read_text().count('createElement("tr"')


def test_players_records_count_matches_won_of_those_finished(client: FlaskClient) -> None:
    """A rematch (a match not played yet) made the records say Ann won "1 of 2" where head to head said 1 – 0."""
    finished = new_match(client, options={"target": 10})
    assert client.post(f"/api/matches/{finished}/rounds", json=ROUND).status_code == 201
    assert client.get(f"/api/matches/{finished}").json["winner"] == "Ann"
    new_match(client)
    page = client.get("/players").get_data(as_text=True)
    ann = re.search(r'<th scope="row"><a [^>]*>Ann</a></th>\s*<td>(.*?)</td>', page, re.S)
    assert ann and " ".join(re.sub(r"<[^>]+>", "", ann.group(1)).split()) == "1 of 1"
    assert 'title="Matches won of matches finished"' in page and "1 finished match together" in page
