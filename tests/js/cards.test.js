// Unit tests of how the page finds cards in the server's words (node --test, no browser).
import assert from "node:assert/strict";
import { test } from "node:test";

import { cardParts } from "../../web/static/js/cards.js";

test("card codes in a note or conflict are found, to be shown as cards (9♥), and the words around them kept", () => {
  assert.deepEqual(cardParts("2H straddles Bob and Cat", ["Bob", "Cat"]), [{ card: "2H" }, " straddles Bob and Cat"]);
  assert.deepEqual(cardParts("Ann lays 9H 10H JH 2S together, a meld with other cards", ["Ann"]), [
    "Ann lays ", { card: "9H" }, " ", { card: "10H" }, " ", { card: "JH" }, " ", { card: "2S" },
    " together, a meld with other cards",
  ]);
  assert.deepEqual(cardParts("Stable · 14 cards · QS is seen in front of Bob", ["Bob"]),
    ["Stable · 14 cards · ", { card: "QS" }, " is seen in front of Bob"]);
});

test("what is not a card stays text: words, numbers, codes inside a word, and players named like cards", () => {
  for (const text of ["Ann shows 10 cards, Bob 11", "ASAP", "KDs", "1H 11H 10X", "Zoë9H", ""]) {
    assert.deepEqual(cardParts(text, ["Ann", "Bob"]), text ? [text] : [], text);
  }
  assert.deepEqual(cardParts("JD lays 5S; Mary 9H shows 9H", ["JD", "Mary 9H"]),
    ["JD lays ", { card: "5S" }, "; Mary 9H shows ", { card: "9H" }]);
});
