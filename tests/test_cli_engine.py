"""``okgin solve`` and ``okgin score``: output forms, exit status 2 with one line for bad input."""

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from scorer.cli import main

ANN = "8C 9C 10C JC 9H 10H JH 2S 2D AC"
BOB = "QS QC QH 10S JS 3D 5H 7S AD 7D"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_solve_json() -> None:
    code, out, _ = run("solve", "--json", "AS", "2S", "3S", "KD")
    assert code == 0
    assert json.loads(out) == {"melds": [["AS", "2S", "3S"]], "deadwood": ["KD"], "deadwood_points": 10}


def test_solve_takes_one_quoted_string_too() -> None:
    assert run("solve", "--json", "AS 2S 3S KD") == run("solve", "--json", "AS", "2S", "3S", "KD")


def test_solve_takes_card_words_among_the_arguments() -> None:
    """The README and the error message offer 'ace of spades'; a quoted argument in words is one card."""
    assert run("solve", "--json", "ace of spades", "2S", "3S", "king of diamonds") == run(
        "solve", "--json", "AS 2S 3S KD"
    )


def test_solve_eleven_cards_prints_the_best_discard() -> None:
    code, out, _ = run("solve", "--json", "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S KD")
    assert (code, json.loads(out)["discard"], json.loads(out)["deadwood_points"]) == (0, "KD", 0)
    code, out, _ = run("solve", "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S KD")
    assert "discard:  KD" in out


def test_solve_text_and_alternatives() -> None:
    code, out, _ = run("solve", "--all", "3C 3D 3H 4C 4D 4H 5C 5D 5H")
    assert code == 0
    assert out.splitlines() == [
        "melds:    3C 4C 5C | 3D 4D 5D | 3H 4H 5H",
        "deadwood: none = 0",
        "also:     melds 3C 3D 3H | 4C 4D 4H | 5C 5D 5H; deadwood none = 0",
    ]
    alternatives = json.loads(run("solve", "--all", "--json", "3C 3D 3H 4C 4D 4H 5C 5D 5H")[1])["alternatives"]
    assert len(alternatives) == 1


def test_score_json_keys() -> None:
    code, out, _ = run("score", "--upcard", "KS", "--knocker", ANN, "--opponent", BOB, "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["outcome"], data["knock_limit"], data["points"]) == ("knock", 10, {"knocker": 18, "opponent": 0})
    assert data["knocker"] == data["winner"] == "knocker"
    assert data["players"]["knocker"] == {
        "melds": [["8C", "9C", "10C", "JC"], ["9H", "10H", "JH"]],
        "layoffs": [],
        "deadwood": ["AC", "2D", "2S"],
        "deadwood_points": 5,
    }
    assert data["players"]["opponent"]["layoffs"][0] == {"card": "QC", "onto": ["8C", "9C", "10C", "JC"]}
    assert data["players"]["opponent"]["deadwood_points"] == 23


def test_score_text() -> None:
    code, out, _ = run("score", "--upcard", "KS", "--knocker", ANN, "--opponent", BOB)
    assert code == 0
    assert out.splitlines()[-1] == "knock: knocker scores 18"
    assert "layoffs QC onto 8C 9C 10C JC, QH onto 9H 10H JH" in out


def test_score_with_blank_layoffs_scores_no_layoff() -> None:
    """``--layoffs ""`` was read as layoffs not given, so the engine laid off QC and QH for Bob: blank is none, as
    "none" is."""
    for blank in ("", "none", " "):
        code, out, _ = run("score", "--upcard", "KS", "--knocker", ANN, "--opponent", BOB, "--layoffs", blank)
        assert code == 0, (blank, out)
        assert "layoffs" not in out and out.splitlines()[-1] == "knock: knocker scores 38", (blank, out)


def test_score_options() -> None:
    gin = ["--knocker", "AS 2S 3S 4D 4H 4C 7C 8C 9C 10C", "--opponent", "JH QH KH 5D 6D 7D 6H 6C 6S 3D"]
    assert json.loads(run("score", "--upcard", "KD", *gin, "--json", "--gin-bonus", "20")[1])["points"]["knocker"] == 23
    undercut = ["--knocker", ANN, "--opponent", "QS QC QH 10S JS 3D 2H 7S 7C 7D", "--undercut-bonus", "25", "--json"]
    assert json.loads(run("score", "--upcard", "KD", *undercut)[1])["points"]["opponent"] == 25
    code, out, _ = run("score", "--upcard", "2D", "--knocker", ANN, "--opponent", BOB, "--rules", "gin-rummy", "--json")
    assert (code, json.loads(out)["knock_limit"]) == (0, 10)
    melds = "9C 9D 9H | 9S 10S JS QS"
    code, out, _ = run(
        "score", "--upcard", "KD", "--knocker", "9C 9D 9H 9S 10S JS QS 2C 3D AH",
        "--opponent", "8S KS 2H 3H 4H 5H 6C 6D 6H 5C", "--knocker-melds", melds, "--json",
    )  # fmt: skip
    assert json.loads(out)["outcome"] == "undercut"


SIX_D = ["score", "--upcard", "6D", "--knocker", "AC 4C 4D 4H 2S 3S 4S JS QS KS"]
SIX_D += ["--opponent", "KC AD KD AH KH AS 5S 6S 9S 10S"]
NINE_H = ["score", "--upcard", "9H", "--knocker", "Ann: 2C 7C 7D 7H 7S 8S 9S"]
NINE_H += ["--opponent", "Bob: 4C 5C 5D 5S 10S JS QS", "--opponent", "Cat: 6D 6H JH QH KH 6S KS"]


def test_score_text_gives_every_players_points_under_penalty_scoring_two_players_too() -> None:
    """A loser's minus under penalty scoring is part of the score: "knocker scores 10" left it out."""
    code, out, _ = run("score", "--rules", "oklahoma-multi", "--upcard", "KS", "--knocker", ANN, "--opponent", BOB)
    assert (code, out.splitlines()[-1]) == (0, "knock: knocker +10, opponent -18")
    code, out, _ = run(*NINE_H, "--knock-points", "15", "--gin-multiplier", "3", "--json")
    assert code == 0 and json.loads(out)["points"]["Ann"] == 15
    code, _, err = run(*NINE_H, "--undercut-bonus", "15")
    assert (code, err.strip()) == (
        2,
        "okgin: --undercut-bonus counts in standard scoring only; --rules oklahoma-multi (taken for 3-4 players) uses"
        " penalty scoring (its undercut: --undercut-points)",
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--rules", "oklahoma-multi", "--undercut-bonus", "50"],
         "--undercut-bonus counts in standard scoring only; --rules oklahoma-multi uses penalty scoring "
         "(its undercut: --undercut-points)"),
        (["--undercut-points", "5"],
         "--undercut-points counts in penalty scoring only; --rules oklahoma uses standard scoring "
         "(its undercut: --undercut-bonus)"),
        (["--knock-points", "5"],
         "--knock-points counts in penalty scoring only; --rules oklahoma uses standard scoring"),
    ],
)  # fmt: skip
def test_score_refuses_an_option_its_scoring_would_ignore(args: list[str], said: str) -> None:
    code, out, err = run("score", "--upcard", "KS", "--knocker", ANN, "--opponent", BOB, *args)
    assert (code, out, err.strip()) == (2, "", f"okgin: {said}")


def test_score_says_when_the_knockers_melds_decide_and_scores_them_as_laid() -> None:
    code, out, _ = run(*SIX_D)
    assert code == 0
    assert out.splitlines()[3:] == [
        "undercut: opponent scores 11",
        "the score depends on the knocker's melds; laid otherwise:",
        "  if knocker lays 4C 4D 4H 4S | JS QS KS (deadwood 6): knock: knocker scores 5",
        "say how it was laid with --knocker-melds, --discard and --layoffs to score it as laid",
    ]
    code, out, _ = run(*SIX_D, "--knocker-melds", "JS QS KS | 4C 4D 4H 4S")
    assert out.splitlines()[1:] == [
        "knocker:  melds JS QS KS | 4C 4D 4H 4S; deadwood AC 2S 3S = 6",
        "opponent: melds KC KD KH | AD AH AS; layoffs 10S onto JS QS KS, 9S onto 10S JS QS KS; deadwood 5S 6S = 11",
        "knock: knocker scores 5",
    ]


def test_score_json_lists_the_alternatives() -> None:
    data = json.loads(run(*SIX_D, "--json")[1])
    assert data["depends_on"] == ["knocker_melds"] and data["given"]["knocker_melds"] is None
    (alternative,) = data["alternatives"]
    assert alternative["knocker_melds"] == [["4C", "4D", "4H", "4S"], ["JS", "QS", "KS"]]
    assert (alternative["outcome"], alternative["points"]) == ("knock", {"knocker": 5, "opponent": 0})
    laid = json.loads(run(*SIX_D, "--json", "--knocker-melds", "4C 4D 4H 4S | JS QS KS")[1])
    assert (laid["points"], laid["alternatives"], laid["laydown"]["knocker_melds"]) == (
        {"knocker": 5, "opponent": 0},
        [],
        alternative["knocker_melds"],
    )


def test_score_three_players_with_layoffs_as_made() -> None:
    code, out, _ = run(*NINE_H)
    assert code == 0
    assert out.splitlines()[4:6] == [
        "knock: Ann +10, Bob -2, Cat -8",
        "the score depends on Bob's layoffs; laid otherwise:",
    ]
    assert out.splitlines()[6].endswith(": undercut: Cat +20, Ann -2, Bob -4")
    code, out, _ = run(*NINE_H, "--layoffs", "Bob: 10S JS QS onto 7S 8S 9S; Cat: KS onto 7S 8S 9S")
    assert out.splitlines()[2:] == [
        "Bob: melds 5C 5D 5S; layoffs 10S onto 7S 8S 9S, JS onto 7S 8S 9S 10S, QS onto 7S 8S 9S 10S JS;"
        " deadwood 4C = 4",
        "Cat: melds 6D 6H 6S | JH QH KH; layoffs KS onto 7S 8S 9S 10S JS QS; deadwood none = 0",
        "undercut: Cat +20, Ann -2, Bob -4",
    ]
    assert run(*NINE_H, "--layoffs", "Bob: none")[1].splitlines()[-1] == "knock: Ann +10, Bob -2, Cat -8"


def test_score_the_discard_as_made() -> None:
    dan = ["score", "--upcard", "8H", "--knocker", "Dan: 3C 5C 6C 7C 8C 9C 3D 2S", "--opponent"]
    dan += ["Eve: 10C 2D 9H 10H JH QH KH", "--opponent", "Fay: 8D AH 2H 3H 4S 5S 6S"]
    dan += ["--opponent", "Gus: KS KD QS JD 4D 6D 10S"]
    out = run(*dan)[1].splitlines()
    assert (out[1], out[6]) == ("Dan discards 9C", "undercut: Fay +20, Dan +0, Eve -4, Gus -52")
    assert (
        out[8]
        == "  if Dan lays 5C 6C 7C 8C 9C (deadwood 5); Dan discards 3C: undercut: Eve +20, Dan -3, Fay -6, Gus -58"
    )
    out = run(*dan, "--discard", "3C")[1].splitlines()
    assert (out[1], out[-1]) == ("Dan discards 3C", "undercut: Eve +20, Dan -3, Fay -6, Gus -58")


SCORE = ["score", "--upcard", "KS", "--knocker", ANN, "--opponent"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score", "--upcard", "3S", "--knocker", ANN, "--opponent", BOB], "over the knock limit 3 set by upcard 3S"),
        ([*SCORE, "QS XX"], "unknown card 'XX'"),
        (["score", "--upcard", "ZZ", "--knocker", ANN, "--opponent", BOB], "unknown card 'ZZ'"),
        ([*SCORE, BOB.replace("QH", "JC")], "JC is in both knocker's and opponent's hands"),
        ([*SCORE, BOB, "--gin-bonus", "-5"], "gin_bonus must be a whole number"),
        ([*SCORE, BOB, "--knocker-melds", "AS 2S"], "AS 2S is not a meld"),
        ([*SCORE, BOB, "--layoffs", "QC onto 8C 9C"], "8C 9C is not a meld"),
        ([*SCORE, BOB, "--layoffs", "QC 8C 9C 10C JC"], "cannot read layoff 'QC 8C 9C 10C JC'"),
        ([*SCORE, BOB, "--layoffs", "KC onto 8C 9C 10C JC"], "opponent lays off KC, which is not in opponent's hand"),
        ([*SCORE, BOB, "--discard", "KD"], "knocker's discard KD is given with 10 cards"),
        ([*SCORE, BOB, "--opponent", "Bob: 4C 5C"], "Multi-player Oklahoma Gin needs 7"),
        ([*SCORE, "knocker: " + BOB], "two players are called 'knocker'"),
        ([*SCORE, BOB, "--discard", "3X"], "--discard: unknown card '3X'"),
        ([*SCORE, "2C", "--opponent", "3C", "--opponent", "4C", "--opponent", "5C"], "for 2 to 4 players, not 5"),
        ([*SCORE, "2C", *[arg for card in ["3C", "4C", "5C", "6C"] for arg in ("--opponent", card)]], "not 6"),
        (["solve", "AS", "AS"], "AS more than once"),
        (["solve", "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS"], "at most 11 cards"),
    ],
)
def test_bad_input_exits_2_with_one_line_on_stderr(args: list[str], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and message in err
    assert "Traceback" not in err


def test_the_installed_command_starts_fast_without_heavy_imports() -> None:
    script = (
        "import sys\nfrom scorer.cli import main\n"
        "try:\n    main(['solve', 'AS', '2S', '3S'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('torch', 'cv2', 'flask', 'ultralytics', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"
