// Unit tests of the table page's state and its request sequencing (node --test, no browser).
import assert from "node:assert/strict";
import { test } from "node:test";

import { parseCard } from "../../web/static/js/cards.js";
import { PictureGesture, boxOrder, hitBox, nearestBox, placeLabels } from "../../web/static/js/table/overlay.js";
import { rovingStep, rovingStop } from "../../web/static/js/table/roving.js";
import { STALE, Sequencer, Store } from "../../web/static/js/table/sequence.js";
import {
  OUT,
  UPCARD,
  applyReading,
  autoKnocker,
  knockToScoreAgain,
  cardsAt,
  changeSaid,
  clashes,
  handStatus,
  handsPayload,
  holdsEdit,
  initialState,
  keptVersion,
  nextZoom,
  pinchedZoom,
  deleteCard,
  putCard,
  restoredAlready,
  roundConfirmed,
  roundScored,
  saidElsewhere,
  nearlySameRound,
  renamedInput,
  sameRound,
  setPlace,
  sheetChange,
  tableKey,
  typedRefused,
  typedUnread,
  undoneAlready,
  upcardOf,
  withNewerMatch,
  zoomLabel,
} from "../../web/static/js/table/state.js";

const ANN = "8C 9C 10C JC 9H 10H JH 2S 2D AC".split(" ");
const BOB = "QS QC QH 10S JS 3D 5H 7S AD 7D".split(" ");
const match = { id: 1, players: ["Ann", "Bob"], rounds: [], totals: { Ann: 0, Bob: 0 }, finished: false, target: 100, hand_size: 10 };
const seating = [{ player: "Ann", zone: "1", where: "bottom" }, { player: "Bob", zone: "2", where: "top" }];
const box = (i) => [i * 10, 0, i * 10 + 8, 20];
const detections = (cards, offset = 0) => cards.map((card, i) => ({ card, box: box(i + offset), confidence: 0.9 }));

function dealt() {
  let state = initialState(match, seating);
  state = setPlace(state, 0, ANN);
  state = setPlace(state, 1, BOB);
  return setPlace(state, UPCARD, ["KS"]);
}

const reading = (hands, upcard = "KS") => ({
  frame: { id: "f", width: 1280, height: 720, url: "" },
  stable: true,
  table: { hands: { Ann: detections(hands.Ann), Bob: detections(hands.Bob, 20) }, upcard: { card: upcard, box: box(40) }, out: [] },
});

test("a table's key ignores card order (issue 10, problem 2)", () => {
  const state = dealt();
  const shuffled = setPlace(setPlace(state, 0, [...ANN].reverse()), 1, ["7D", ...BOB.slice(0, 9)]);
  assert.equal(tableKey(shuffled), tableKey(state));
  assert.notEqual(tableKey(setPlace(state, UPCARD, ["QD"])), tableKey(state));
});

test("a confirmed round is not proposed again while its cards lie on the table, whatever their order", () => {
  let state = dealt();
  const arrangement = { proposed_knocker: "Ann", players: {} };
  state = { ...state, stable: true, arrangement: { key: tableKey(state), answer: arrangement } };
  assert.equal(autoKnocker(state), "Ann");
  state = { ...state, proposal: { knocker: "Ann", key: tableKey(state), body: { upcard: "KS", knocker: "Ann", hands: handsPayload(state) } } };
  state = { ...roundConfirmed(state, { ...match, rounds: [{}] }), cards: [] };
  // The camera reads the same table again, cards in another order (7D moved by a correction): no proposal.
  state = applyReading(state, reading({ Ann: [...ANN].reverse(), Bob: ["7D", ...BOB.slice(0, 9)] }));
  state = { ...state, arrangement: { key: tableKey(state), answer: arrangement } };
  assert.equal(autoKnocker(state), null);
  // A new deal (other cards) may be proposed again.
  const next = applyReading(state, reading({ Ann: "AS 2H 3H 4H 5C 6C 7C 8D 9D 10D".split(" "), Bob: "KC KD KH JD QD 4S 5S 6S 8S 9S".split(" ") }, "6D"));
  assert.equal(autoKnocker({ ...next, arrangement: { key: tableKey(next), answer: arrangement } }), "Ann");
});

test("a table is proposed by itself once: not again after it was dismissed with Not yet", () => {
  const state = dealt();
  const ready = { ...state, stable: true, arrangement: { key: tableKey(state), answer: { proposed_knocker: "Ann", players: {} } } };
  assert.equal(autoKnocker(ready), "Ann");
  assert.equal(autoKnocker({ ...ready, autoProposed: tableKey(state) }), null);
});

test("an arrangement for other cards proposes nothing", () => {
  const state = dealt();
  const stale = { ...state, stable: true, arrangement: { key: "other", answer: { proposed_knocker: "Ann", players: {} } } };
  assert.equal(autoKnocker(stale), null);
  assert.equal(autoKnocker({ ...stale, arrangement: { ...stale.arrangement, key: tableKey(state) }, match: { ...match, finished: true } }), null);
});

test("typing a card held elsewhere is a clash to ask about; out-of-play cards are not", () => {
  let state = dealt();
  state = putCard(state, { card: "4C", place: OUT, box: [1, 1, 5, 5] });
  const found = clashes(state, 0, ["7D", "4C", "KS"]).map((entry) => entry.card);
  assert.deepEqual(found, ["7D", "KS"]);
  const moved = setPlace(state, 0, [...ANN, "7D"]);
  assert.deepEqual(cardsAt(moved, 1).map((e) => e.card), BOB.filter((c) => c !== "7D"));
  assert.equal(cardsAt(moved, 0).length, 11);
});

test("one upcard: another card put there sends the old one out of play", () => {
  let state = dealt();
  state = putCard(state, { card: "QD", place: UPCARD, box: [0, 0, 4, 4] });
  assert.equal(upcardOf(state), "QD");
  assert.equal(state.cards.some((e) => e.card === "KS"), false, "a typed upcard without a box goes away");
  state = putCard(state, { card: "3C", place: UPCARD, box: [5, 5, 9, 9] });
  assert.equal(upcardOf(state), "3C");
  assert.deepEqual(cardsAt(state, OUT).map((e) => e.card), ["QD"], "a boxed upcard stays on the picture, out of play");
});

test("a changed card drops the proposal made for the cards before", () => {
  let state = dealt();
  state = { ...state, proposal: { knocker: "Ann", key: tableKey(state), body: {}, result: {} } };
  const same = setPlace(state, 0, [...ANN].reverse());
  assert.ok(same.proposal, "the same cards in another order keep it");
  const id = state.cards.find((e) => e.card === "9H").id;
  const changed = putCard(state, { id, card: "9S", place: 0 });
  assert.equal(changed.proposal, null);
  assert.equal(changed.pendingKnocker, "Ann", "the same knock is scored again for the corrected cards");
});

test("a card the camera read, corrected by hand, stays corrected in later readings of it lying there", () => {
  // A live probe: KS fixed to KH on the paused picture; Resume live read KS again, and the fix was gone without a word.
  const live = { ...initialState(match, seating), camera: { source: "browser", frozen: false, status: "", ended: false } };
  const read = applyReading(live, reading({ Ann: ANN, Bob: BOB }, "KS"));
  const upcard = () => read.cards.find((e) => e.card === "KS");
  const fixedUp = putCard(read, { id: upcard().id, card: "KH", place: UPCARD });
  const again = applyReading(fixedUp, reading({ Ann: ANN, Bob: BOB }, "KS"));
  assert.equal(upcardOf(again), "KH", "read as before: corrected as before");
  const phantom = read.cards.find((e) => e.card === "AD").id;
  const gone = applyReading(deleteCard(again, phantom), reading({ Ann: ANN, Bob: BOB }, "KS"));
  assert.ok(!gone.cards.some((e) => e.card === "AD"), "a card deleted stays deleted where it was read");
  const moved = reading({ Ann: ANN, Bob: BOB }, "KS");
  moved.table.upcard.box = [400, 300, 408, 320]; // another card read KS elsewhere: not the one corrected
  assert.equal(upcardOf(applyReading(again, moved)), "KS");
  const back = putCard(again, { id: again.cards.find((e) => e.card === "KH").id, card: "KS", place: UPCARD });
  assert.equal(upcardOf(applyReading(back, reading({ Ann: ANN, Bob: BOB }, "KS"))), "KS", "a fix undone is forgotten");
  assert.deepEqual(roundConfirmed(again, match).fixes, [], "a new deal keeps no fix");
});

test("a knock is scored again for cards the camera changed only once its reading is stable", () => {
  // A live probe: after a proposal, every camera change scored the knock again from half-changed pictures, and a
  // proposal read with a card wrong while the status said "Reading…" was confirmed.
  const live = { ...initialState(match, seating), camera: { source: "browser", frozen: false, status: "", ended: false } };
  const shown = applyReading(live, reading({ Ann: ANN, Bob: BOB }));
  const proposed = { ...shown, proposal: { knocker: "Ann", key: tableKey(shown), body: {}, result: {} } };
  const misread = [...BOB.slice(0, 9), "8D"];
  const moving = applyReading(proposed, { ...reading({ Ann: ANN, Bob: misread }), stable: false });
  assert.equal(moving.proposal, null);
  assert.equal(moving.pendingKnocker, "Ann", "the knock waits for the table");
  assert.equal(knockToScoreAgain(moving, proposed), null, "not scored from a picture still changing");
  const still = applyReading(moving, reading({ Ann: ANN, Bob: misread }));
  assert.equal(knockToScoreAgain(still, moving), "Ann", "scored again once the same cards read stable");
  assert.equal(knockToScoreAgain(still, still), null, "once");
  const frozen = { ...moving, camera: { ...moving.camera, frozen: true } };
  const corrected = putCard(frozen, { id: frozen.cards.find((e) => e.card === "8D").id, card: "7D", place: 1 });
  assert.equal(knockToScoreAgain(corrected, frozen), "Ann", "a correction by hand on a frozen picture: at once");
  const typed = dealt();
  const typedProposal = { ...typed, proposal: { knocker: "Ann", key: tableKey(typed), body: {}, result: {} } };
  const retyped = putCard(typedProposal, { id: typed.cards.find((e) => e.card === "9H").id, card: "9S", place: 0 });
  assert.equal(knockToScoreAgain(retyped, typedProposal), "Ann", "no camera: cards typed are settled");
  const covered = applyReading(still, reading({ Ann: ANN, Bob: misread.slice(3) })); // a hand over three of Bob's cards
  assert.equal(knockToScoreAgain(covered, still), null, "not scored while a hand holds fewer than dealt");
  const uncovered = applyReading(covered, reading({ Ann: ANN, Bob: misread }));
  assert.equal(knockToScoreAgain(uncovered, covered), "Ann", "scored again once every hand holds its cards");
});

test("a reading with the same cards keeps the ids (no redraw of the hands)", () => {
  const first = applyReading(initialState(match, seating), reading({ Ann: ANN, Bob: BOB }));
  const again = applyReading(first, reading({ Ann: ANN, Bob: BOB }));
  assert.deepEqual(again.cards.map((e) => e.id), first.cards.map((e) => e.id));
  assert.equal(cardsAt(first, 1).length, 10);
});

test("a card the camera reads in its place again, its box moved, keeps its id; a card moved or new gets a new one", () => {
  // A live camera's boxes move a pixel from frame to frame: each frame gave every card a new id, so every chip and box
  // was drawn anew, the box focused lost the focus, and a tap across a frame opened a missed card's editor.
  const first = applyReading({ ...initialState(match, seating), selected: null }, reading({ Ann: ANN, Bob: BOB }));
  const idOf = (state, card) => state.cards.find((entry) => entry.card === card).id;
  const nudged = reading({ Ann: ANN, Bob: [...BOB.slice(0, 9), "KD"] });
  nudged.table.hands.Ann = nudged.table.hands.Ann.map((d) => ({ ...d, box: d.box.map((v) => v + 1) }));
  nudged.table.hands.Bob.push({ card: "2S", box: box(30), confidence: 0.9 }); // Ann's 2S read in Bob's hand too
  const selected = { ...first, selected: idOf(first, "9H") };
  const next = applyReading(selected, nudged);
  assert.deepEqual(cardsAt(next, 0).map((e) => e.id), cardsAt(first, 0).map((e) => e.id), "Ann's cards, their boxes moved");
  assert.deepEqual(cardsAt(next, 0)[0].box, box(0).map((v) => v + 1), "the boxes follow the camera");
  assert.equal(idOf(next, "QS"), idOf(first, "QS"));
  assert.equal(next.selected, idOf(first, "9H"), "the card selected stays selected");
  const fresh = [idOf(next, "KD"), next.cards.filter((e) => e.card === "2S")[1].id];
  assert.ok(fresh.every((id) => !first.cards.some((e) => e.id === id)), "a new card, and a card read twice, new ids");
  assert.equal(new Set(next.cards.map((e) => e.id)).size, next.cards.length, "no two entries share an id");
});

test("wrong card counts are flagged as the server says", () => {
  let state = initialState({ ...match, players: ["Ann", "Bob", "Cat"] }, seating);
  state = setPlace(state, 0, ANN);
  const problem = "10 cards: Multi-player Oklahoma Gin deals 7 (a knocker holds 8 before the discard)";
  const answer = { players: { Ann: { problem, can_knock: false, deadwood_points: 5 }, Bob: { problem: "0 cards: deals 7" } } };
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  const status = handStatus(state, 0);
  assert.equal(status.wrongCount, true);
  assert.equal(status.canKnock, false);
  assert.equal(status.text, problem, "what is wrong, not a deadwood to score");
  assert.equal(status.whyNot, problem);
  assert.equal(handStatus(state, 1).wrongCount, false, "an empty hand is not flagged, nor may it knock");
});

test("two hands holding the knocker's extra card both say so, not that they can knock", () => {
  const three = { ...match, players: ["Ann", "Bob", "Cat"], hand_size: 7 };
  const cat = "2C 3C 4C 5D 6D 7D 8D".split(" ");
  let state = initialState(three, seating);
  state = setPlace(setPlace(setPlace(state, 0, ANN.slice(0, 8)), 1, BOB.slice(0, 8)), 2, cat);
  const answer = { knock_limit: 10, players: {
    Ann: { can_knock: true, deadwood_points: 4, discard: "2D", problem: null },
    Bob: { can_knock: true, deadwood_points: 10, discard: "7S", problem: null },
    Cat: { can_knock: false, deadwood_points: 26, problem: null },
  } };
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  const said = "only the knocker holds 8 (before the discard), the others 7";
  assert.deepEqual(handStatus(state, 0), { text: `8 cards, and so does Bob: ${said}`, wrongCount: true, canKnock: false, whyNot: `8 cards, and so does Bob: ${said}` });
  assert.equal(handStatus(state, 1).text, `8 cards, and so does Ann: ${said}`);
  assert.equal(handStatus(state, 2).text, "7 cards · deadwood 26 · over the knock limit 10", "a hand of the dealt size keeps its line");
  // Cat's hand an eighth card too: each of the three names the other two
  state = setPlace(state, 2, [...cat, "KH"]);
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  assert.equal(handStatus(state, 2).text, `8 cards, and so do Ann and Bob: ${said}`);
  // Bob's eighth card gone back: Ann is the knocker, her line as before
  state = setPlace(setPlace(state, 1, BOB.slice(0, 7)), 2, cat);
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  assert.equal(handStatus(state, 0).text, "8 cards · deadwood 4 · discards 2♦ · can knock");
  assert.equal(handStatus(state, 0).canKnock, true);
});

test("the knocker's line says the discard and deadwood the proposed knock is scored with", () => {
  let state = setPlace(setPlace(initialState(match, seating), 0, [...ANN, "6S"]), 1, BOB);
  // least deadwood: discard 6S (deadwood 1); scored: discard 2D, keeping 6S to block a layoff (deadwood 3)
  const answer = { knock_limit: 10, players: { Ann: { can_knock: true, deadwood_points: 1, discard: "6S" }, Bob: { deadwood_points: 40 } } };
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  assert.equal(handStatus(state, 0).text, "11 cards · deadwood 1 · discards 6♠ · can knock");
  const result = { knocker: "Ann", discard: "2D", players: { Ann: { deadwood_points: 3 }, Bob: { deadwood_points: 40 } } };
  state = { ...state, proposal: { knocker: "Ann", key: tableKey(state), body: {}, result } };
  assert.equal(handStatus(state, 0).text, "11 cards · deadwood 3 · discards 2♦ · can knock");
  assert.equal(handStatus(state, 1).text, "10 cards · deadwood 40 · over the knock limit 10");
});

test("a hand's line says why it may not knock, and a gin as gin", () => {
  let state = setPlace(setPlace(initialState(match, seating), 0, ANN), 1, BOB);
  const answer = { knock_limit: 4, players: { Ann: { can_knock: false, deadwood_points: 5 }, Bob: { can_knock: true, deadwood_points: 0 } } };
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  assert.equal(handStatus(state, 0).text, "10 cards · deadwood 5 · over the knock limit 4");
  assert.equal(handStatus(state, 1).text, "10 cards · deadwood 0 · can knock: gin");
  // an ace upcard where aces allow only gin: "over the knock limit 0" read as a slip
  const gin = { ...state, arrangement: { key: tableKey(state), answer: { ...answer, knock_limit: 0 } } };
  assert.equal(handStatus(gin, 0).text, "10 cards · deadwood 5 · only gin may knock");
});

test("text typed in a hand's box that names no card is said on the hand's line until the hand is set", () => {
  let state = setPlace(setPlace(initialState(match, seating), 0, ANN), 1, BOB);
  const answer = { knock_limit: 10, players: { Ann: { can_knock: true, deadwood_points: 5 } } };
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  const message = "Ann's hand: unknown card 'QZ'";
  const refused = typedRefused(state, 0, "QZ 10S", message);
  assert.deepEqual(handStatus(refused, 0), { text: `${message}: fix it in the box`, wrongCount: true, canKnock: false, whyNot: message });
  assert.equal(handStatus(refused, 1).wrongCount, false, "only the hand typed in");
  const fixed = setPlace(refused, 0, ANN);
  assert.deepEqual(fixed.refused, {});
  assert.equal(handStatus(fixed, 0).canKnock, true);
});

test("cards typed for a hand that wait for the question about a card held elsewhere are said so", () => {
  const state = setPlace(initialState(match, seating), 1, BOB);
  const asking = { ...state, notice: { text: "Q♠ is in Bob's hand. Move it to Ann's hand?", actions: [], typed: { place: 0, text: "QS 8C" } } };
  assert.deepEqual(handStatus(asking, 0), { text: "typed, not placed yet: tap Move or Keep in the question", wrongCount: false, canKnock: false, whyNot: "" });
  assert.equal(handStatus(asking, 1).text.startsWith("10 cards"), true, "only the hand typed in");
});

test("a hand's line once the match is won says so, not that it can knock", () => {
  let state = setPlace(initialState({ ...match, finished: true, winner: "Ann" }, seating), 1, BOB);
  const answer = { knock_limit: 10, players: { Bob: { can_knock: false, deadwood_points: 0 } } };
  state = { ...state, arrangement: { key: tableKey(state), answer } };
  assert.equal(handStatus(state, 1).text, "10 cards · deadwood 0 · the match is over");
  assert.equal(handStatus(state, 1).canKnock, false);
});

test("a hand typed but not read says so under its box until it is read", () => {
  let state = typedUnread(initialState(match, seating), 1, "2C 3C 4C");
  assert.equal(handStatus(state, 1).text, "typed, not read yet: press Enter in the box to read it");
  assert.equal(handStatus(state, 0).text, "0 cards", "only that box");
  state = setPlace(state, 1, ["2C", "3C", "4C"]);
  assert.equal(handStatus(state, 1).text, "3 cards");
});

test("the sequencer drops an answer older than the newest request of its kind (issue 10, problem 4)", async () => {
  const sequencer = new Sequencer();
  let release;
  const slow = sequencer.latest("propose", () => new Promise((resolve) => (release = resolve)));
  const fast = await sequencer.latest("propose", async () => "newer");
  release("older");
  assert.equal(fast, "newer");
  assert.equal(await slow, STALE);
  assert.equal(await sequencer.latest("arrange", async () => "other kind"), "other kind");
  const failing = sequencer.latest("frame", () => Promise.reject(new Error("late failure")));
  sequencer.cancel("frame");
  assert.equal(await failing, STALE, "a stale failure is dropped too");
});

test("the store renders once per change and never for no change", () => {
  const seen = [];
  const store = new Store({ n: 0 }, (state) => seen.push(state.n));
  store.update((s) => ({ n: s.n + 1 }));
  store.update((s) => s);
  assert.deepEqual(seen, [1]);
});

test("labels never overlap, and a box always gets a tap target of the minimum size", () => {
  const boxes = Array.from({ length: 10 }, (_, i) => [100 + i * 6, 100, 130 + i * 6, 160]); // a fan, 6 px apart
  const spots = placeLabels(boxes, boxes.map(() => 24), 14, { width: 640, height: 480 });
  const rects = spots.filter(Boolean).map((s) => [s.x, s.y, s.x + 24, s.y + 14]);
  for (const [i, a] of rects.entries()) {
    for (const b of rects.slice(i + 1)) assert.ok(a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] || b[3] <= a[1], "overlap");
  }
  assert.ok(rects.length >= 4);
  const [x1, y1, x2, y2] = hitBox([10, 10, 16, 50], 32);
  assert.deepEqual([x2 - x1, y2 - y1], [32, 40]);
});

test("a tap where fanned cards' tap targets overlap is the nearest box's, not the one drawn last", () => {
  const targets = [[100, 100, 106, 116], [110, 100, 116, 116], [120, 100, 126, 116]].map((box, id) => ({ id, box, hit: hitBox(box, 32) }));
  assert.equal(nearestBox({ x: 104, y: 120 }, targets), 0); // every target holds it: the first box is nearest
  assert.equal(nearestBox({ x: 108, y: 108 }, targets), 0); // between two boxes: the nearer
  assert.equal(nearestBox({ x: 112, y: 95 }, targets), 1); // above the middle one
  assert.equal(nearestBox({ x: 127, y: 108 }, targets), 2);
  assert.equal(nearestBox({ x: 200, y: 108 }, targets), null); // no target holds it
  const inside = [{ id: 7, box: [0, 0, 40, 40], hit: [0, 0, 40, 40] }, { id: 8, box: [30, 30, 34, 34], hit: [16, 16, 48, 48] }];
  assert.equal(nearestBox({ x: 32, y: 33 }, inside), 8); // in both boxes: the one whose centre is nearer
});

test("a hand's chips are one Tab stop: the arrow keys move along the row and stop at its ends", () => {
  assert.equal(rovingStep("ArrowRight", 0, 10), 1);
  assert.equal(rovingStep("ArrowDown", 3, 10), 4); // the row wraps on a phone: down is the next chip
  assert.equal(rovingStep("ArrowLeft", 3, 10), 2);
  assert.equal(rovingStep("ArrowUp", 0, 10), 0); // the row's ends: the focus stays
  assert.equal(rovingStep("ArrowRight", 9, 10), 9);
  assert.deepEqual([rovingStep("Home", 6, 10), rovingStep("End", 2, 10)], [0, 9]);
  assert.equal(rovingStep("Enter", 2, 10), null); // the chip's own button: it opens its card
  assert.equal(rovingStep("Delete", 2, 10), null);
});

test("a row drawn anew keeps its Tab stop on its card, or on the neighbour that took the place of a card gone", () => {
  assert.equal(rovingStop(["4", "7", "9"], { id: "7", at: 0 }), 1); // the card moved along the row: it keeps the stop
  assert.equal(rovingStop(["4", "9", "12"], { id: "7", at: 1 }), 1); // deleted: the chip after it, now in its place
  assert.equal(rovingStop(["4", "9"], { id: "12", at: 2 }), 1); // the last deleted: the one before it
  assert.equal(rovingStop(["4", "9"], null), 0); // a row never focused: its first chip
  assert.equal(rovingStop([], { id: "4", at: 0 }), -1);
});

test("the picture's boxes are crossed by hand with the arrow keys, as the chips list them: not as they were read", () => {
  const entry = (id, card, place, at = null) => ({ id, card, place, box: at === null ? null : box(at) });
  const cards = [entry(1, "KS", UPCARD, 0), entry(2, "QS", 1, 1), entry(3, "2C", OUT, 2), entry(4, "8C", 0, 3),
    entry(5, "9C", 1, 4), entry(6, "AC", 0), entry(7, "10C", 0, 5)]; // 6: typed, no box
  assert.deepEqual(boxOrder({ ...initialState(match, seating), cards }), ["4", "7", "2", "5", "1", "3"]);
});

test("a pinch zooms within the Zoom button's steps, and the button goes on from where the pinch left it", () => {
  assert.equal(pinchedZoom(1, 1.5), 1.5);
  assert.equal(pinchedZoom(2, 4), 3); // no further than the button's last step
  assert.equal(pinchedZoom(1.2, 0.5), 1); // nor below the whole picture
  assert.deepEqual([1, 1.5, 1.97, 2, 2.5, 2.97, 3].map(nextZoom), [2, 2, 3, 3, 3, 1, 1]);
  assert.deepEqual([1, 1.04, 1.55, 2, 3].map(zoomLabel), ["Zoom", "Zoom 1×", "Zoom 1.6×", "Zoom 2×", "Zoom 3×"]);
});

test("two fingers moved apart pinch about their midpoint, read once a frame; a pan's fingers moving in turn do not", () => {
  const acts = [];
  const gesture = new PictureGesture({ pan: (dx, dy) => acts.push(["pan", dx, dy]), pinch: (ratio, at) => acts.push(["pinch", ratio, at]) });
  const touch = (pointerId, x, y) => ({ pointerId, pointerType: "touch", isPrimary: pointerId === 1, clientX: x, clientY: y, button: 0, buttons: 1 });
  gesture.down(touch(1, 100, 100), { box: null, from: null });
  gesture.down(touch(2, 140, 100), { box: null, from: null });
  gesture.move(touch(1, 70, 100)); // a pan to the left: the spread jumps from 40 to 70 until the second finger moves
  gesture.move(touch(2, 110, 100));
  gesture.frame();
  assert.deepEqual(acts, [["pan", 15, 0], ["pan", 15, 0]], "a pan is no pinch");
  acts.length = 0;
  gesture.move(touch(1, 50, 100)); // apart: the spread from 40 to 80, about the midpoint 90
  gesture.move(touch(2, 130, 100));
  gesture.frame();
  gesture.frame(); // a frame with no move: no more
  gesture.move(touch(2, 210, 100)); // on apart, one finger held still: from 80 to 160
  gesture.frame();
  assert.deepEqual(acts, [["pan", 10, 0], ["pan", -10, 0], ["pinch", 2, { x: 90, y: 100 }], ["pan", -40, 0],
    ["pinch", 2, { x: 130, y: 100 }]]);
  acts.length = 0;
  gesture.move(touch(1, 45, 100)); // once pinching, it follows every change of the spread, however small
  gesture.frame();
  gesture.up(touch(2, 210, 100));
  gesture.move(touch(1, 10, 100)); // one finger left: neither
  gesture.frame();
  assert.deepEqual(acts, [["pan", 2.5, 0], ["pinch", 165 / 160, { x: 127.5, y: 100 }]]);
});

test("the card editor reads one card, in words too (typed hands are read by the server: /api/cards)", () => {
  assert.equal(parseCard("ace of spades"), "AS");
  assert.equal(parseCard("ace of swords"), null);
  assert.equal(parseCard("Q\u2665\uFE0F"), "QH"); // "Q♥️" from a phone's emoji keyboard
  assert.equal(parseCard("10\u2666\uFE0E"), "10D");
});

test("one deal is the same round however its cards are held, and another deal or a draw is not", () => {
  const stored = { upcard: "KS", knocker: "Ann", hands: { Ann: ["8C", "9C", "QC"], Bob: ["2D", "3D"] } };
  // the proposal's hands as the table read them: the laid-off QC beside Ann's meld, stored back with Bob
  const table = { upcard: "KS", hands: { Bob: ["3D", "2D", "QC"], Ann: ["9C", "8C"] } };
  assert.equal(sameRound(stored, table), true);
  assert.equal(sameRound(stored, { ...table, upcard: "KD" }), false);
  assert.equal(sameRound(stored, { upcard: "KS", hands: { Ann: ["8C", "9C", "QC"], Bob: ["2D", "4D"] } }), false);
  assert.equal(sameRound(stored, { draw: true }), false);
  assert.equal(sameRound({ draw: true }, { draw: true }), true);
  assert.equal(sameRound(undefined, table), false);
});

test("a deal a card apart from the stored one is nearly it; the same deal, the next deal or a draw is not", () => {
  const hands = { Ann: "7H 8H 2C 3C 4C QS QD QC AD 8S".split(" "), Bob: "AS 2S 3S 4H 5H 6H KC KD KH 9C".split(" ") };
  const stored = { upcard: "5S", knocker: "Bob", hands };
  const misread = { upcard: "5S", hands: { ...hands, Bob: [...hands.Bob.slice(0, 9), "10C"] } };  // 9C read 10C
  assert.deepEqual(nearlySameRound(stored, misread), { shared: 20, cards: 21 });
  assert.equal(nearlySameRound(stored, { upcard: "5S", hands }), null);  // the same deal: sameRound's to ask
  const next = { upcard: "JD", hands: { Ann: "7H 8H 2C 3C 5C 6C 9D 10D JS AH".split(" "), Bob: "KS 2D 3D 4D 6H 7C 8C 9H 10H JH".split(" ") } };
  assert.equal(nearlySameRound(stored, next), null);  // five cards in common: another deal
  assert.equal(nearlySameRound(stored, { draw: true }), null);
  assert.equal(nearlySameRound({ draw: true }, misread), null);
  assert.equal(nearlySameRound(undefined, misread), null);
});

test("a round's score is said as the page says it everywhere: who scored how much, or a draw", () => {
  const three = { players: ["Ann", "Bob", "Cat"] };
  assert.equal(roundScored(three, { draw: false, points: { Ann: 18, Bob: 0, Cat: 0 } }), "Ann +18");
  assert.equal(roundScored(three, { draw: false, points: { Ann: 0, Bob: 25, Cat: -10 } }), "Bob +25, Cat -10");
  assert.equal(roundScored(three, { draw: true, points: { Ann: 0, Bob: 0, Cat: 0 } }), "a draw, no points");
  assert.equal(roundScored(three, { draw: false, points: { Ann: 0, Bob: 0, Cat: 0 } }), "no points");
});

test("the version a change kept is the new one of its round, offered back only where the server allows it", () => {
  const older = { id: 1, number: 2, restore: "edit" };
  const before = { earlier_versions: [older] };
  const kept = { id: 2, number: 2, restore: "add" };
  assert.equal(keptVersion(before, { earlier_versions: [kept, older] }, 2), kept);
  assert.equal(keptVersion(before, { earlier_versions: [kept, older] }, 3), null); // not this round's
  assert.equal(keptVersion(before, { earlier_versions: [older] }, 2), null); // nothing new kept
  const refused = { ...kept, restore: null, why_not: "the match is over (Ann won), so no round can be added" };
  assert.equal(keptVersion(before, { earlier_versions: [refused, older] }, 2), null);
});

test("an answer older than the sheet shown never puts that sheet back (a late undo or edit reply)", () => {
  const shown = { ...initialState({ ...match, revision: 3 }, seating), error: "" };
  const late = { ...match, revision: 2, totals: { Ann: 0, Bob: 0 } };
  assert.equal(withNewerMatch(shown, late), shown);
  assert.equal(withNewerMatch(shown, { ...match, revision: 3 }), shown);
  const newer = { ...match, revision: 4 };
  assert.equal(withNewerMatch(shown, newer).match, newer);
  assert.equal(withNewerMatch(shown, { ...newer, id: 2 }), shown); // another match's answer
});

const knock = { upcard: "KS", knocker: "Ann", hands: { Ann: ANN, Bob: BOB }, knocker_melds: null, discard: null, layoffs: {} };
const sorted = (input) => Object.fromEntries(Object.entries(input).sort()); // as the page's first match has its keys

test("an undo refused as asked of an older sheet was done when that sheet shows the round undone, as it was", () => {
  const undone = { id: 7, number: 2, input: knock, replaced_by: "undone" };
  const now = { rounds: [{ input: { draw: true } }], earlier_versions: [undone] };
  assert.equal(undoneAlready(now, 2, { input: sorted(knock) }), true);
  assert.equal(undoneAlready(now, 2, { input: { draw: true } }), false); // another round 2 was undone
  assert.equal(undoneAlready({ ...now, rounds: [...now.rounds, { input: knock }] }, 2, { input: knock }), false); // back again
  assert.equal(undoneAlready({ ...now, earlier_versions: [{ ...undone, replaced_by: "edited" }] }, 2, { input: knock }), false);
  assert.equal(undoneAlready({ ...now, earlier_versions: [] }, 2, { input: knock }), false);
});

test("an edit refused as asked of an older sheet was done when its round holds what the dialog asks", () => {
  const typed = { upcard: "ks", knocker: "Ann", hands: { Ann: [...ANN].reverse().join(" "), Bob: BOB.join(", ").toLowerCase() } };
  assert.equal(holdsEdit(knock, typed), true);
  assert.equal(holdsEdit(knock, { ...typed, knocker: "Bob" }), false);
  assert.equal(holdsEdit(knock, { ...typed, upcard: "QD" }), false);
  assert.equal(holdsEdit(knock, { ...typed, hands: { ...typed.hands, Bob: BOB.slice(1).join(" ") } }), false);
  assert.equal(holdsEdit(knock, { ...typed, hands: { ...typed.hands, Bob: `queen of spades ${BOB.slice(1).join(" ")}` } }), false); // not known
  assert.equal(holdsEdit(knock, { ...typed, discard: "2S" }), false); // a lay-down it does not hold
  assert.equal(holdsEdit({ ...knock, discard: "2S" }, { ...typed, knocker_melds: null, discard: "2S", layoffs: {} }), true);
  assert.equal(holdsEdit({ draw: true }, { draw: true }), true);
  assert.equal(holdsEdit(knock, { draw: true }), false);
  assert.equal(holdsEdit(undefined, typed), false); // the round is gone
});

test("a version put back is there when its round holds it", () => {
  const version = { id: 3, number: 1, input: knock };
  assert.equal(restoredAlready({ rounds: [{ input: sorted(knock) }] }, version), true);
  assert.equal(restoredAlready({ rounds: [{ input: { draw: true } }] }, version), false);
  assert.equal(restoredAlready({ rounds: [] }, version), false);
});

test("text the server could not read stays for its box until that place is set", () => {
  let state = typedUnread(typedUnread(dealt(), 1, "QS QC QH"), UPCARD, "KD");
  assert.deepEqual(state.unread, { 1: "QS QC QH", [UPCARD]: "KD" });
  state = setPlace(state, 1, ["QS", "QC", "QH"]); // read at last
  assert.deepEqual(state.unread, { [UPCARD]: "KD" });
  assert.deepEqual(roundConfirmed(state, match).unread, {});
});

// ---------------------------------------------------------------- what changed on the sheet, said once

const DRAW = { draw: true };
const bobKnocks = { upcard: "KD", knocker: "Bob", hands: { Ann: ANN, Bob: BOB }, knocker_melds: null, discard: null, layoffs: {} };
const SCORES = new Map([[knock, { Ann: 18, Bob: 0 }], [bobKnocks, { Ann: 0, Bob: 51 }], [DRAW, { Ann: 0, Bob: 0 }]]);
const line = (number, input) => ({ number, input, draw: Boolean(input.draw), points: SCORES.get(input) });
/** A two-player match's sheet: rounds ([input, deal] each), and the earlier versions kept, newest first. */
const sheet = (rounds, earlier = []) => ({
  players: ["Ann", "Bob"],
  rounds: rounds.map(([input], index) => line(index + 1, input)),
  deals: rounds.map(([, deal]) => deal),
  earlier_versions: earlier,
});
const version = (id, number, input, replaced_by, deal) => ({ id, number, input, replaced_by, deal });
const news = (before, after) => {
  const change = sheetChange(before, after);
  return change && saidElsewhere(change, before, after);
};

test("a round entered, edited or undone on another device is said in the words of the page's own notices", () => {
  const one = sheet([[knock, 1]]);
  const two = sheet([[knock, 1], [bobKnocks, 2]]);
  assert.deepEqual(sheetChange(one, two), { how: "entered", number: 2 });
  assert.equal(changeSaid({ how: "entered", number: 2 }, one, two), "Round 2 is on the sheet: Bob +51.");
  assert.equal(news(one, two), "On another device: round 2 is on the sheet: Bob +51.");

  const edited = sheet([[DRAW, 1]], [version(1, 1, knock, "edited", 1)]);
  assert.deepEqual(sheetChange(one, edited), { how: "edited", number: 1 });
  assert.equal(news(one, edited), "On another device: round 1 changed on the sheet: now a draw, no points.");

  const undone = sheet([[knock, 1]], [version(2, 2, bobKnocks, "undone", 2)]);
  assert.deepEqual(sheetChange(two, undone), { how: "undone", number: 2 });
  assert.equal(news(two, undone), "On another device: round 2 undone (Bob +51)."); // what it scored, as it was
});

test("a change that wins the match, or takes a win back, says so", () => {
  const one = sheet([[knock, 1]]);
  const won = { ...sheet([[knock, 1], [bobKnocks, 2]]), finished: true, winner: "Bob" };
  assert.equal(changeSaid({ how: "entered", number: 2 }, one, won), "Round 2 is on the sheet: Bob +51. Bob wins the match.");
  assert.equal(news(one, won), "On another device: round 2 is on the sheet: Bob +51. Bob wins the match.");
  const drawn = sheet([[knock, 1], [DRAW, 2]], [version(1, 2, bobKnocks, "edited", 2)]);
  assert.equal(news(won, drawn),
    "On another device: round 2 changed on the sheet: now a draw, no points. The match is on again: nobody has won it.");
  assert.equal(changeSaid({ how: "entered", number: 2 }, one, sheet([[knock, 1], [bobKnocks, 2]])), "Round 2 is on the sheet: Bob +51.");
});

test("an earlier version put back or a round brought back is told from an edit or a round entered anew", () => {
  const edited = sheet([[DRAW, 1]], [version(1, 1, knock, "edited", 1)]);
  // the version, as the page's first match has it (its keys sorted), back in its round
  const putBack = sheet([[sorted(knock), 1]], [version(2, 1, DRAW, "edited", 1), ...edited.earlier_versions]);
  putBack.rounds[0].points = SCORES.get(knock);
  assert.deepEqual(sheetChange(edited, putBack), { how: "put back", number: 1 });
  assert.equal(news(edited, putBack), "On another device: round 1 put back: now Ann +18.");
  const otherEdit = sheet([[bobKnocks, 1]], [version(2, 1, DRAW, "edited", 1), ...edited.earlier_versions]);
  assert.deepEqual(sheetChange(edited, otherEdit), { how: "edited", number: 1 });

  const undone = sheet([[knock, 1]], [version(3, 2, bobKnocks, "undone", 2)]);
  const broughtBack = sheet([[knock, 1], [bobKnocks, 2]], undone.earlier_versions);
  assert.deepEqual(sheetChange(undone, broughtBack), { how: "brought back", number: 2 });
  assert.equal(news(undone, broughtBack), "On another device: round 2 brought back: Bob +51.");
  assert.equal(changeSaid({ how: "brought back", number: 2 }, undone, broughtBack), "Round 2 brought back: Bob +51.");
  // the same cards entered again are another deal (the server numbers it anew): entered, not brought back
  const enteredAgain = sheet([[knock, 1], [bobKnocks, 3]], undone.earlier_versions);
  assert.deepEqual(sheetChange(undone, enteredAgain), { how: "entered", number: 2 });
});

test("several changes between two refreshes are said by their net effect, and none where the rounds are as they were", () => {
  const one = sheet([[knock, 1]]);
  const three = sheet([[knock, 1], [bobKnocks, 2], [DRAW, 3]]);
  assert.deepEqual(sheetChange(one, three), { how: "several", numbers: [2, 3] });
  assert.equal(news(one, three), "On another device: the sheet changed (rounds 2 and 3).");
  assert.equal(news(three, sheet([[knock, 1]], [version(5, 3, DRAW, "undone", 3), version(4, 2, bobKnocks, "undone", 2)])),
    "On another device: the sheet changed (rounds 2 and 3).");
  const editedAndAdded = sheet([[DRAW, 1], [bobKnocks, 2], [DRAW, 3]], [version(1, 1, knock, "edited", 1)]);
  assert.equal(news(sheet([[knock, 1], [bobKnocks, 2]]), editedAndAdded), "On another device: the sheet changed (rounds 1 and 3).");
  assert.equal(changeSaid({ how: "several", numbers: [1, 2, 4] }, one, one), "The sheet changed (rounds 1, 2 and 4).");
  // round 2 undone and another deal entered as round 2: what the sheet shows now is round 2 changed
  const reentered = sheet([[knock, 1], [DRAW, 3]], [version(6, 2, bobKnocks, "undone", 2)]);
  assert.equal(news(sheet([[knock, 1], [bobKnocks, 2]]), reentered), "On another device: round 2 changed on the sheet: now a draw, no points.");
  // nothing to say: an edit that changed nothing (the revision moved on), a round undone and brought back
  assert.equal(sheetChange(one, sheet([[sorted(knock), 1]])), null);
  assert.equal(sheetChange(one, sheet([[knock, 1]], [version(7, 1, knock, "undone", 1)])), null);
});

// ---------------------------------------------------------------- a player renamed

const renamed = (sheetShown, names) => ({
  ...sheetShown,
  players: sheetShown.players.map((name) => names[name] ?? name),
  rounds: sheetShown.rounds.map((shown) => ({
    ...shown,
    input: renamedInput(shown.input, Object.entries(names)),
    points: Object.fromEntries(Object.entries(shown.points).map(([name, points]) => [names[name] ?? name, points])),
  })),
  earlier_versions: sheetShown.earlier_versions.map((kept) => ({ ...kept, input: renamedInput(kept.input, Object.entries(names)) })),
});

test("a round input renamed is keyed by the new name wherever it names the player", () => {
  const laid = { ...knock, layoffs: { Bob: [{ card: "QC", onto: ["8C", "9C", "10C", "JC"] }] } };
  const named = renamedInput(laid, [["Bob", "Bobby"]]);
  assert.deepEqual(Object.keys(named.hands), ["Ann", "Bobby"]);
  assert.deepEqual(named.layoffs, { Bobby: laid.layoffs.Bob });
  assert.equal(renamedInput({ ...knock, knocker: "Bob" }, [["Bob", "Bobby"]]).knocker, "Bobby");
  assert.deepEqual(renamedInput(DRAW, [["Bob", "Bobby"]]), DRAW);
});

test("a player renamed on another device is said so, not as every round changed", () => {
  const one = sheet([[knock, 1]], [version(1, 1, DRAW, "edited", 1)]);
  const anne = renamed(one, { Ann: "Anne" });
  assert.deepEqual(sheetChange(one, anne), { how: "renamed", renames: [["Ann", "Anne"]] });
  assert.equal(news(one, anne), "On another device: Ann is now called Anne.");
  // renamed and a round entered between two refreshes: both said
  const two = sheet([[knock, 1], [bobKnocks, 2]], one.earlier_versions);
  const both = renamed(two, { Ann: "Anne" });
  assert.deepEqual(sheetChange(one, both), { how: "entered", number: 2, renames: [["Ann", "Anne"]] });
  assert.equal(news(one, both), "On another device: Ann is now called Anne. Round 2 is on the sheet: Bob +51.");
});

test("a player renamed keeps the cards of their seat, and the knock proposed is scored again under the new name", () => {
  const state = dealt();
  const proposed = { ...state, match: { ...match, revision: 1 }, proposal: { knocker: "Ann", key: tableKey(state), body: {}, result: {} } };
  const anne = { ...match, revision: 2, players: ["Anne", "Bob"] };
  const now = withNewerMatch(proposed, anne);
  assert.equal(now.match, anne);
  assert.deepEqual(cardsAt(now, 0).map((entry) => entry.card), ANN);
  assert.deepEqual(handsPayload(now), { Anne: ANN, Bob: BOB });
  assert.equal(now.proposal, null);
  assert.notEqual(tableKey(now), tableKey(proposed)); // arranged again, for the new name
  assert.equal(knockToScoreAgain(now, proposed), "Anne");
  // a table dismissed with "Not yet" stays dismissed under the new name
  const dismissed = { ...proposed, proposal: null, autoProposed: tableKey(proposed) };
  const after = withNewerMatch(dismissed, anne);
  assert.equal(after.autoProposed, tableKey(after));
});
