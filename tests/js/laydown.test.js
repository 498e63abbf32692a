// Unit tests of what the table page sends about the lay-down (node --test, no browser).
import assert from "node:assert/strict";
import { test } from "node:test";

import { describeLayDown, givenLayDown, groupsFor } from "../../web/static/js/laydown.js";
import { applyReading, changedCards, initialState, readingCards, roundConfirmed } from "../../web/static/js/table/state.js";

const GROUPS = {
  Ann: [{ cards: ["JS", "QS", "KS"], box: [0, 0, 90, 84] }, { cards: ["AC"], box: [120, 0, 180, 84] }],
  Bob: [{ cards: ["2H", "5D"], box: [0, 300, 75, 384] }],
};

test("the camera's groups are sent while they hold exactly the hands' cards", () => {
  const hands = { Ann: ["AC", "KS", "QS", "JS"], Bob: ["5D", "2H"] };
  assert.deepEqual(groupsFor(GROUPS, hands), { Ann: [["JS", "QS", "KS"], ["AC"]], Bob: [["2H", "5D"]] });
  assert.equal(groupsFor(GROUPS, { ...hands, Bob: ["5D", "2C"] }), null, "a card corrected by hand: hands are sent");
  assert.equal(groupsFor(null, hands), null);
});

test("a player named __proto__ or constructor keeps their groups and cards (names are own keys, never the prototype)", () => {
  // as the page has them: the hands made with Object.fromEntries, the server's answer parsed from JSON
  const hands = Object.fromEntries([["__proto__", ["AS", "2S", "3S"]], ["constructor", []], ["Bob", ["KH"]]]);
  const groups = JSON.parse('{"__proto__": [{"cards": ["AS", "2S", "3S"]}], "Bob": [{"cards": ["KH"]}]}');
  const laid = groupsFor(groups, hands);
  assert.deepEqual(Object.keys(laid), ["__proto__", "constructor", "Bob"], "no player dropped");
  assert.equal(JSON.stringify(laid), '{"__proto__":[["AS","2S","3S"]],"constructor":[],"Bob":[["KH"]]}');
  assert.equal(groupsFor(JSON.parse('{"Bob": [{"cards": ["KH"]}]}'), hands), null, "their cards in no group");
  const match = { id: 1, players: ["__proto__", "Bob"], rounds: [], finished: false };
  const table = JSON.parse('{"hands": {"Bob": [{"card": "KH", "box": [0, 0, 1, 1]}]}, "upcard": null, "out": []}');
  assert.deepEqual(readingCards(initialState(match, []), table).map((entry) => entry.card), ["KH"]);
});

test("a reading keeps its groups; a change of cards or a confirmed round forgets what was said to be laid", () => {
  const match = { id: 1, players: ["Ann", "Bob"], rounds: [], finished: false };
  const table = { hands: { Ann: [], Bob: [] }, upcard: null, out: [], groups: GROUPS };
  let state = applyReading(initialState(match, []), { frame: { id: "f", width: 10, height: 10 }, stable: true, table });
  assert.deepEqual(state.groups, GROUPS);
  state = { ...state, laydown: { knocker_melds: [["JS", "QS", "KS"]] }, proposal: { key: "other", knocker: "Ann" } };
  assert.equal(changedCards(state).laydown, null);
  assert.equal(roundConfirmed({ ...state, proposal: null }, match).laydown, null);
});

test("a round's lay-down as given is found in its input, and said in words for the round editor", () => {
  const input = { upcard: "9H", knocker: "Ann", hands: {}, knocker_melds: null, discard: null, layoffs: {} };
  assert.equal(givenLayDown(input), null, "nothing given: the engine chose");
  assert.equal(givenLayDown({ upcard: "9H", knocker: "Ann", hands: {} }), null, "stored before lay-downs");
  const laid = { ...input, discard: "2C", layoffs: { Bob: [{ card: "10S", onto: ["7S", "8S", "9S"] }], Cat: [] } };
  assert.deepEqual(givenLayDown(laid), { knocker_melds: null, discard: "2C", layoffs: laid.layoffs });
  assert.equal(describeLayDown(givenLayDown(laid)), "discard 2♣; Bob lays off 10♠; Cat lays off nothing");
});
