// The table page's one state and the pure changes made to it. No DOM and no network here, so node's test
// runner checks them (tests/js/). Every change goes through `Store.update`, which renders once afterwards.
//
// A card on the table: {id, card: "QH", place, box: [x1, y1, x2, y2] | null, detected: "QD" | null}, where
// `place` is a player's index (in playing order), "upcard" or "out" (stock, discards, seats nobody sits at).

import { parseCard, pretty } from "../cards.js";
import { byName } from "../names.js";

export const UPCARD = "upcard";
export const OUT = "out";

/** The state of a fresh page for `match` (GET /api/matches/<id>) and `seating` (the layout's seats). */
export function initialState(match, seating) {
  return {
    match,
    seating, // [{player, zone, where}] in playing order: zone = the camera picture's seat zone
    cards: [],
    nextId: 1,
    frame: null, // {id, width, height, url}: the picture the boxes belong to
    camera: { source: null, frozen: false, status: "", ended: false, hidden: false },
    stable: false,
    corrected: false, // the current frame's cards were corrected by hand
    fixes: [], // {from, to, place, box}: a card the camera read, corrected by hand, kept so over later readings (`fixed`)
    arrangement: null, // {key, answer}: /api/arrange for the cards under `key`
    proposal: null, // {knocker, key, body, result}: /api/score for the cards under `key`
    laydown: null, // what the players say they laid, for this table: {knocker_melds?, discard?, layoffs?}
    groups: null, // the camera's groups by player: [{cards, box}] (a laid meld lies as one group)
    pendingKnocker: null, // a shown proposal's knocker, while corrections change the cards: scored again
    saving: false, // a round is being posted: Confirm stays disabled
    confirmed: null, // cards of the round just confirmed (auto-proposals wait for a new deal)
    autoProposed: null, // the table (key) last proposed by itself or dismissed with "Not yet": not again
    selected: null, // id of the card whose box and chip are highlighted
    zoom: 1, // the picture's width in the view's (`ZOOMS`: the Zoom button's steps; a pinch goes between them)
    error: "",
    notice: null, // {text, actions: [{label, action}], typed?: {place, text}, question?, dismiss?}: a warning, an undo
    // offer, or a question about cards typed for a hand (`typed`: its box shows them while it waits; `dismiss`: Escape)
    unread: {}, // place -> text typed in its box that the server could not read yet: the box keeps it
    refused: {}, // hand (or the upcard) -> {text, message}: text typed in its box that names no cards; the box keeps it to be fixed
  };
}

/** The Zoom button's steps through the picture's zoom; a pinch zooms anywhere from the first to the last. */
export const ZOOMS = [1, 2, 3];
const ZOOM_STEP_NEAR = 0.05; // a pinch left this near a step is at it: the button's next tap goes on to the one after

/** The zoom after `zoom` pinched by `ratio` (the fingers' spread now over their spread before), within `ZOOMS`. */
export const pinchedZoom = (zoom, ratio) => Math.min(Math.max(zoom * ratio, ZOOMS[0]), ZOOMS.at(-1));

/** The Zoom button's next step from `zoom` (a pinch's too): the step above it, and from the last back to 1. */
export const nextZoom = (zoom) => ZOOMS.find((step) => step > zoom + ZOOM_STEP_NEAR) ?? ZOOMS[0];

/** The Zoom button's words at `zoom`: "Zoom" unzoomed, else how far it is zoomed, to a tenth ("Zoom 2×", "Zoom 1.6×"). */
export const zoomLabel = (zoom) => (zoom === ZOOMS[0] ? "Zoom" : `Zoom ${Math.round(zoom * 10) / 10}×`);

export const players = (state) => state.match.players;
export const placeName = (state, place) =>
  place === UPCARD ? "the upcard" : place === OUT ? "the cards out of play" : `${players(state)[place]}'s hand`;
export const cardsAt = (state, place) => state.cards.filter((entry) => entry.place === place);
export const upcardOf = (state) => cardsAt(state, UPCARD)[0]?.card ?? null;
export const findCard = (state, card) => state.cards.find((entry) => entry.card === card) ?? null;

/** The hands by player name, as /api/arrange, /api/score and the rounds API take them. */
export function handsPayload(state) {
  return Object.fromEntries(players(state).map((name, index) => [name, cardsAt(state, index).map((e) => e.card)]));
}

/**
 * The table as a key that ignores card order: two tables with the same cards in each place, for the same players, are
 * equal. A player renamed makes another table: what was asked of it by name (its arrangement, a knock) is asked again.
 */
export function tableKey(state) {
  const hands = players(state).map((_, index) => cardsAt(state, index).map((e) => e.card).sort());
  return JSON.stringify([upcardOf(state), hands, players(state)]);
}

/** The cards the camera's reading puts on the table (the server's "table" answer: it decided every place). */
export function readingCards(state, table) {
  const names = players(state);
  const entries = [];
  const add = (detection, place) =>
    entries.push({ card: detection.card, place, box: detection.box, detected: detection.card });
  names.forEach((name, index) => (byName(table.hands, name) ?? []).forEach((d) => add(d, index)));
  if (table.upcard) add(table.upcard, UPCARD);
  (table.out ?? []).forEach((d) => add(d, OUT));
  return entries;
}

/** Whether two card lists put the same cards in the same places with boxes within `tolerance` pixels. */
export function sameCards(a, b, tolerance = 2) {
  if (a.length !== b.length) return false;
  const byCard = new Map(a.map((entry) => [entry.card, entry]));
  return b.every((entry) => {
    const other = byCard.get(entry.card);
    if (!other || other.place !== entry.place) return false;
    if (!other.box || !entry.box) return other.box === entry.box;
    return other.box.every((v, k) => Math.abs(v - entry.box[k]) <= tolerance);
  });
}

/** New ids for entries that lack one. */
export function withIds(state, entries) {
  let nextId = state.nextId;
  const cards = entries.map((entry) => ({ box: null, detected: null, ...entry, id: entry.id ?? nextId++ }));
  return { ...state, cards, nextId };
}

/** There is one upcard: another card put there sends the old one out of play (or away, if it has no box). */
function vacateUpcard(cards, except) {
  return cards
    .filter((entry) => !(entry.place === UPCARD && entry.card !== except && !entry.box))
    .map((entry) => (entry.place === UPCARD && entry.card !== except ? { ...entry, place: OUT } : entry));
}

/**
 * The cards of `typed` that lie somewhere other than `place` (another hand or the upcard): moving them
 * there leaves that hand short, so the page asks first. Cards out of play move without asking.
 */
export function clashes(state, place, typed) {
  return typed
    .map((card) => findCard(state, card))
    .filter((entry) => entry && entry.place !== place && entry.place !== OUT);
}

/**
 * Text typed in `place`'s box that the server could not read (it could not be reached): the box goes on showing it,
 * rather than the cards placed there (none were), so Enter in it reads it once the server is back. Gone when the
 * place is set (`setPlace`) or the round confirmed.
 */
export function typedUnread(state, place, text) {
  return { ...state, unread: { ...state.unread, [place]: text } };
}

/**
 * Text typed in hand `place`'s box that the server refused (`message`: the word that is no card): the box goes on
 * showing it to be fixed, and the hand's line says what is wrong, under the box, where the player looks (not at the
 * top of the table, a screen away on a phone). Gone when the place is set (`setPlace`) or the round confirmed.
 */
export function typedRefused(state, place, text, message) {
  return { ...state, refused: { ...state.refused, [place]: { text, message } } };
}

/** The state without text typed in `place`'s box that was not read or named no card (`typedUnread`, `typedRefused`). */
export function typedSettled(state, place) {
  const without = (byPlace) => Object.fromEntries(Object.entries(byPlace ?? {}).filter(([kept]) => kept !== String(place)));
  return { ...state, unread: without(state.unread), refused: without(state.refused) };
}

/**
 * `place` now holds exactly `typed` (a hand's cards, or [] / [card] for the upcard). Cards taken from
 * elsewhere move; cards no longer there go out of play when the camera saw them, else away.
 */
export function setPlace(state, place, typed) {
  const { unread, refused } = typedSettled(state, place);
  let cards = state.cards
    .filter((entry) => !(entry.place === place && !typed.includes(entry.card) && !entry.box))
    .map((entry) => (entry.place === place && !typed.includes(entry.card) ? { ...entry, place: OUT } : entry));
  if (place === UPCARD) cards = vacateUpcard(cards, typed[0]);
  let next = { ...state, cards, unread, refused };
  const fresh = [];
  for (const card of typed) {
    const existing = next.cards.find((entry) => entry.card === card);
    if (existing) next.cards = next.cards.map((entry) => (entry === existing ? { ...entry, place } : entry));
    else fresh.push({ card, place });
  }
  next = withIds(next, [...next.cards, ...fresh]);
  return changedCards(next, { byHand: true });
}

/**
 * Put one card (an existing entry by id, or a new one with `box`) at `place` as `card`. A card lies on the
 * table once: another entry showing the same card (a misread box, or the card typed elsewhere) gives way.
 */
export function putCard(state, { id = null, card, place, box = null }) {
  const noted = remembered(state, state.cards.find((entry) => entry.id === id), { to: card, place });
  let cards = noted.cards.filter((entry) => entry.id === id || entry.card !== card);
  if (place === UPCARD) cards = vacateUpcard(cards, card);
  cards = id === null
    ? [...cards, { card, place, box, detected: null }]
    : cards.map((entry) => (entry.id === id ? { ...entry, card, place } : entry));
  return changedCards(withIds(noted, cards), { byHand: true });
}

export function deleteCard(state, id) {
  const noted = remembered(state, state.cards.find((entry) => entry.id === id), { to: null, place: null });
  return changedCards({ ...noted, cards: noted.cards.filter((entry) => entry.id !== id) }, { byHand: true });
}

/** How much two boxes overlap: their intersection over their union (0 to 1). */
function overlapShare(a, b) {
  const across = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const down = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const area = (box) => (box[2] - box[0]) * (box[3] - box[1]);
  const shared = across * down;
  return shared ? shared / (area(a) + area(b) - shared) : 0;
}

/** A fix and a reading's card are of one card lying still: the camera read the same there, the box barely moved. */
const SAME_PLACE = 0.5;
const readThere = (fix, detected, box) => fix.from === detected && overlapShare(fix.box, box) >= SAME_PLACE;

/**
 * The state remembering that the camera's card `read` was corrected by hand (`to`: the card it is, in `place`; null:
 * no card, deleted): the camera reads it wrong again on the next frames, and resuming the live picture (or the reading
 * of a still table) put the misread card back over the correction, without a word.
 */
function remembered(state, read, { to, place }) {
  if (!read?.box || !read.detected) return state;
  const others = (state.fixes ?? []).filter((fix) => !readThere(fix, read.detected, read.box));
  const fix = { from: read.detected, to, place, box: read.box };
  // put back as the camera reads it, where it lies, the card needs no fix (an earlier one is forgotten)
  return { ...state, fixes: to === read.detected && place === read.place ? others : [...others, fix] };
}

/**
 * A reading's cards with the corrections made by hand (`fixes`) over them: a card read where one was corrected, as it
 * was read then, is the card it was corrected to (or none, deleted), unless that card lies elsewhere in the reading.
 */
function fixed(entries, fixes) {
  if (!fixes?.length) return entries;
  const read = new Set(entries.map((entry) => entry.card));
  return entries.flatMap((entry) => {
    const fix = entry.box ? fixes.find((kept) => readThere(kept, entry.detected, entry.box)) : null;
    if (!fix) return [entry];
    if (fix.to === null) return [];
    return read.has(fix.to) ? [entry] : [{ ...entry, card: fix.to, place: fix.place }];
  });
}

/**
 * After any change of cards: the proposal for other cards is gone (its knocker is kept, to score the same
 * knock again for the cards now on the table), and a correction by hand marks the frame.
 */
export function changedCards(state, { byHand = false } = {}) {
  const key = tableKey(state);
  const kept = state.proposal?.key === key;
  return {
    ...state,
    proposal: kept ? state.proposal : null,
    laydown: kept ? state.laydown : null,
    pendingKnocker: state.proposal && !kept ? state.proposal.knocker : state.pendingKnocker,
    corrected: state.corrected || (byHand && state.frame !== null),
    selected: state.cards.some((entry) => entry.id === state.selected) ? state.selected : null,
  };
}

/**
 * `entries` (a reading's cards) with the ids of the cards `cards` held in the same places, new ids for the rest: a
 * camera's boxes move a pixel or two from frame to frame, and a new id for every card drew each chip and box anew, so
 * the box focused lost the focus, and a tap across a frame opened "Add a missed card" (the id it went down on was gone).
 */
function keepIds(cards, entries) {
  const held = new Map(cards.map((entry) => [`${entry.place} ${entry.card}`, entry.id]));
  return entries.map((entry) => {
    const where = `${entry.place} ${entry.card}`;
    const id = held.get(where);
    held.delete(where); // a card read twice: its second entry is another card
    return id === undefined ? entry : { ...entry, id };
  });
}

/** A camera reading replaces the cards, unless they are the same (then only the boxes follow); a card read in the
 * place it lay keeps its id (`keepIds`); the cards corrected by hand stay corrected where the camera reads them as
 * before (`fixed`). */
export function applyReading(state, { frame, stable, table }) {
  const entries = fixed(readingCards(state, table), state.fixes);
  const same = sameCards(state.cards, entries, 0);
  let next = { ...state, frame, stable, groups: table.groups ?? null };
  if (!same) next = changedCards({ ...withIds(next, keepIds(state.cards, entries)), corrected: false });
  return next;
}

/**
 * Whether the cards on the table are settled enough to score: typed or corrected by hand (no camera, or its picture
 * frozen), or a camera reading called stable. Cards read from a picture still changing (a hand over them, a card
 * half laid) are not: a knock scored again for them was shown, and could be confirmed, with a card misread.
 */
export const settled = (state) => !state.camera.source || state.camera.frozen || state.stable;

/**
 * The knock to score again, or null: a shown proposal's knocker, kept while the cards changed (`pendingKnocker`),
 * once the cards now on the table are settled, when they change (from `before`) or when a changing picture settles.
 */
export function knockToScoreAgain(state, before) {
  const knocker = state.pendingKnocker;
  if (!knocker || state.proposal || state.saving || !settled(state) || !dealtSizes(state, knocker)) return null;
  return tableKey(state) !== tableKey(before) || !settled(before) ? knocker : null;
}

/**
 * Whether the table could be scored as a knock by `knocker`: an upcard, and every hand of the dealt size (the knocker's
 * one more, before the discard). A new deal coming in, or a hand over some cards, was scored again and again, each
 * answered 400 ("Bob holds 8 cards"), the knock waiting all the same for the cards to change.
 */
function dealtSizes(state, knocker) {
  const size = state.match.hand_size;
  return Boolean(upcardOf(state)) && players(state).every((name, index) => {
    const count = cardsAt(state, index).length;
    return count === size || (name === knocker && count === size + 1);
  });
}

/** How many of `a`'s cards (a list of card texts) are among `b`'s. */
const overlap = (a, b) => a.filter((card) => b.includes(card)).length;

/**
 * The knock to propose by itself, or null. The server names it (the only player who may knock, in a
 * match still on); the page adds: only on a stable camera reading, once per table (not again after "Not
 * yet"), and never twice for the same deal: after a confirmed round, not until most of its cards have left
 * the table (a new deal).
 */
export function autoKnocker(state) {
  const propose = state.arrangement?.answer?.proposed_knocker ?? null;
  if (!propose || !state.stable || state.proposal || state.saving || state.match.finished) return null;
  const key = tableKey(state);
  if (state.arrangement.key !== key || state.autoProposed === key) return null;
  if (state.confirmed) {
    const now = state.cards.filter((entry) => entry.place !== OUT).map((entry) => entry.card);
    if (overlap(state.confirmed, now) * 2 >= state.confirmed.length) return null;
  }
  return propose;
}

/**
 * Whether `stored` (a recorded round's input: {draw: true}, or upcard, knocker and hands) is the deal `body` holds
 * (a round's body, or the table's {upcard, hands}): both draws, or the same upcard and the same cards in all (in any
 * hand and order: a laid-off card is stored back with its owner). A second confirm of one deal (a double tap, two
 * devices, a table left as it was) is that deal; a round entered on a device that had not seen the last one is not.
 */
export function sameRound(stored, body) {
  if (!stored) return false;
  if (stored.draw || body.draw) return Boolean(stored.draw) === Boolean(body.draw);
  const deal = ({ upcard, hands }) => JSON.stringify([upcard ?? null, Object.values(hands ?? {}).flat().sort()]);
  return deal(stored) === deal(body);
}

/**
 * Whether the knock `stored` holds nearly the deal `body` holds (its upcard and hands): all but a few of its cards, at
 * least `NEARLY_THE_SAME` of them, yet not the same deal (`sameRound`). Such a deal is the same one read otherwise on
 * another device, a card or two apart; the next deal's shuffle shares about a third. {shared, cards} if so, else null.
 */
export function nearlySameRound(stored, body) {
  if (!stored || stored.draw || body.draw || sameRound(stored, body)) return null;
  const cards = ({ upcard, hands }) => [upcard, ...Object.values(hands ?? {}).flat()].filter(Boolean);
  const theirs = cards(body);
  const shared = overlap(theirs, cards(stored));
  return shared >= NEARLY_THE_SAME * theirs.length ? { shared, cards: theirs.length } : null;
}

const NEARLY_THE_SAME = 0.75;

/**
 * What round `line` of `match` scored, in the page's words for a round's result: "Ann +18", "Ann +25, Bob -10",
 * "a draw, no points" (a round where nobody scored says "no points"). Every notice that names a round's score
 * says it so.
 */
export function roundScored(match, line) {
  if (line.draw) return "a draw, no points";
  const signed = (points) => (points > 0 ? `+${points}` : String(points));
  const scores = match.players.filter((name) => line.points[name]).map((name) => `${name} ${signed(line.points[name])}`);
  return scores.join(", ") || "no points";
}

/**
 * The earlier version of round `number` that the server kept for a change just made (an edit or an undo): the one
 * `match` lists that `before` (the match as it was) did not. Null when none was kept or it cannot be put back, so
 * a notice offers a way back only where the server allows one.
 */
export function keptVersion(before, match, number) {
  const known = new Set(before.earlier_versions.map((version) => version.id));
  const kept = match.earlier_versions.find((version) => version.number === number && !known.has(version.id));
  return kept?.restore ? kept : null;
}

/** "round 2", "rounds 2 and 3", "rounds 1, 2 and 4". */
const roundsNamed = (numbers) =>
  (numbers.length === 1 ? `round ${numbers[0]}` : `rounds ${numbers.slice(0, -1).join(", ")} and ${numbers.at(-1)}`);

/**
 * What changed on the sheet from `before` to `after` (the same match, later): `{how, number}` for one round
 * "entered", "edited", "undone", "put back" (its round holds an earlier version again) or "brought back" (an undone
 * round, as the next round); `{how: "several", numbers}` for more at once (the rounds that differ); null where the
 * rounds are as they were (an edit that changed nothing, a round undone and brought back). Read from the rounds alone,
 * so what it says is the net effect of however many changes came between: the earlier versions only tell a version
 * put back from an edit, and the deals a round brought back from one entered anew. Players renamed add `renames`
 * (`renamesOf`) to what changed in the rounds, or to `{how: "renamed"}` where nothing else did: their rounds, renamed
 * too, are not said as changed.
 */
export function sheetChange(before, after) {
  const renames = renamesOf(before, after);
  const change = roundsChange(before, after, renames);
  if (!renames.length) return change;
  return { ...(change ?? { how: "renamed" }), renames };
}

/**
 * The players renamed from `before` to `after` (the same match, later), by seat: `[[old, new], ...]`, none where every
 * player has the name they had.
 */
export function renamesOf(before, after) {
  return before.players.map((name, seat) => [name, after.players[seat]]).filter(([was, now]) => now !== undefined && now !== was);
}

/**
 * Round input `input` (as the server writes it) with the players `renames` names (`[[old, new], ...]`) called by their
 * new names, as the server renames them: its knocker, and the players its hands and layoffs are keyed by.
 */
export function renamedInput(input, renames) {
  if (!input || input.draw || !renames.length) return input;
  const names = new Map(renames);
  const call = (name) => names.get(name) ?? name;
  const keyed = (byPlayer) => (byPlayer ? Object.fromEntries(Object.entries(byPlayer).map(([name, value]) => [call(name), value])) : byPlayer);
  return { ...input, knocker: call(input.knocker), hands: keyed(input.hands), layoffs: keyed(input.layoffs) };
}

/** What `sheetChange` says of the rounds, the rounds of `before` read under the names `renames` gave their players. */
function roundsChange(before, after, renames) {
  const was = before.rounds.length;
  const now = after.rounds.length;
  const changed = after.rounds.slice(0, was)
    .filter((line, index) => !sameInput(line.input, renamedInput(before.rounds[index].input, renames))).map((line) => line.number);
  const kept = (number) => before.earlier_versions.filter((version) => version.number === number);
  if (!changed.length && now === was + 1) {
    const deal = after.deals?.[was];
    const back = deal !== undefined && !before.deals?.includes(deal) && kept(now).some((version) => version.deal === deal);
    return { how: back ? "brought back" : "entered", number: now };
  }
  if (!changed.length && now === was - 1) return { how: "undone", number: was };
  if (changed.length === 1 && now === was) {
    const [number] = changed;
    const back = kept(number).some((version) => sameInput(renamedInput(version.input, renames), after.rounds[number - 1].input));
    return { how: back ? "put back" : "edited", number };
  }
  const gone = Array.from({ length: Math.abs(now - was) }, (_, index) => Math.min(was, now) + index + 1);
  const numbers = [...changed, ...gone];
  return numbers.length ? { how: "several", numbers } : null;
}

/**
 * A change of the sheet (as `sheetChange` says it) from `before` to `after`, in the page's words: one wording for each
 * kind of change, made here or on another device ("Round 3 is on the sheet: Ann +18.", "Round 2 changed on the
 * sheet: now Bob +51.", "Round 1 undone (Ann +18).", "Round 2 put back: now Ann +18.", "Round 4 brought back: Ann
 * +18.", "The sheet changed (rounds 2 and 3).").
 */
export function changeSaid(change, before, after) {
  const rounds = change.how === "renamed" ? "" : roundChangeSaid(change, before, after);
  return `${[renamesSaid(change.renames ?? []), rounds].filter(Boolean).join(" ")}${endingSaid(before, after)}`;
}

/** Players renamed (`[[old, new], ...]`), in the page's words: "Anm is now called Ann." */
const renamesSaid = (renames) => renames.map(([was, now]) => `${was} is now called ${now}.`).join(" ");

function roundChangeSaid({ how, number, numbers }, before, after) {
  const now = () => roundScored(after, after.rounds[number - 1]);
  switch (how) {
    case "entered": return `Round ${number} is on the sheet: ${now()}.`;
    case "edited": return `Round ${number} changed on the sheet: now ${now()}.`;
    case "put back": return `Round ${number} put back: now ${now()}.`;
    case "brought back": return `Round ${number} brought back: ${now()}.`;
    case "undone": return `Round ${number} undone (${roundScored(before, before.rounds[number - 1])}).`;
    default: return `The sheet changed (${roundsNamed(numbers)}).`;
  }
}

/** What a change did to the match's end: " Ann wins the match." when it won it, " The match is on again: nobody has
 * won it." when it took a win back (a winning round undone, or edited into a draw); else nothing. */
function endingSaid(before, after) {
  if (after.finished && !before.finished) return ` ${after.winner} wins the match.`;
  if (before.finished && !after.finished) return " The match is on again: nobody has won it.";
  return "";
}

/** A change another device made, as this page's notice says it: "On another device: round 3 is on the sheet: …". */
export function saidElsewhere(change, before, after) {
  const said = changeSaid(change, before, after); // "round 3 is on the sheet", but a player's name as it is written
  return `On another device: ${said.replace(/^(Round|The) /, (word) => word.toLowerCase())}`;
}

/** After a round was stored: the cards it was scored from wait for a new deal before any auto-proposal. */
export function roundConfirmed(state, match) {
  const body = state.proposal?.body;
  const confirmed = body ? [...Object.values(body.hands).flat(), body.upcard] : null;
  return { ...state, match, proposal: null, laydown: null, pendingKnocker: null, saving: false,
    confirmed: confirmed ?? state.confirmed, unread: {}, refused: {}, fixes: [] };
}

/**
 * The state showing `match` (a change's answer, or the sheet a refusal carries) where it is newer than the one shown:
 * an answer arriving after the 4 s refresh showed a later change never puts the older sheet back.
 */
export function withNewerMatch(state, match) {
  return match.id === state.match.id && match.revision > state.match.revision ? showingMatch(state, match) : state;
}

/**
 * The state showing `match`, the same match later. Players renamed meanwhile (here or on another device) keep the cards
 * the table holds for their seats; what was asked by name is asked again under the new names: the knock proposed is
 * scored again for its knocker (the lay-down said for it, keyed by the old names, left to the engine), and the hands
 * are arranged again (their table's key names the players). A table dismissed with "Not yet" stays dismissed.
 */
function showingMatch(state, match) {
  if (!renamesOf(state.match, match).length) return { ...state, match };
  const seat = players(state).indexOf(state.proposal?.knocker ?? state.pendingKnocker);
  const next = { ...state, match, proposal: null, laydown: null, pendingKnocker: seat < 0 ? null : match.players[seat] };
  return { ...next, autoProposed: state.autoProposed === tableKey(state) ? tableKey(next) : state.autoProposed };
}

/** A value as JSON with its keys in order: the page's first match (the template's JSON) has them sorted. */
const canonical = (value) => JSON.stringify(value, (_, part) => (part && typeof part === "object" && !Array.isArray(part)
  ? Object.fromEntries(Object.entries(part).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  : part));

/** Whether two round inputs, as the server writes them, are the same. */
export const sameInput = (a, b) => a !== undefined && b !== undefined && canonical(a) === canonical(b);

/**
 * Whether `match` shows round `number` undone, `line` (the round as it was shown) the newest of its earlier
 * versions: an undo refused as asked of an older sheet was done already (its first answer was lost on the way, or
 * another device undid it too).
 */
export function undoneAlready(match, number, line) {
  const newest = match.earlier_versions[0];
  return match.rounds.length === number - 1 && newest?.number === number && newest.replaced_by === "undone"
    && sameInput(newest.input, line.input);
}

/**
 * Whether round input `stored` already holds what an edit asks (`asked`: the Edit dialog's round, its cards as
 * typed): both draws, or the same upcard, knocker, cards in each hand (in any order) and lay-down given. Typed cards
 * are compared one per word ("qh", "10S", "T♠"); a hand typed otherwise ("queen of hearts") is not known to be the
 * same (the server is the card reader), so such an edit is asked again rather than said done.
 */
export function holdsEdit(stored, asked) {
  if (!stored) return false;
  if (stored.draw || asked.draw) return Boolean(stored.draw) === Boolean(asked.draw);
  const hand = (cards) => {
    const read = (Array.isArray(cards) ? cards : String(cards ?? "").split(/[\s,]+/).filter(Boolean)).map(parseCard);
    return read.includes(null) ? null : JSON.stringify(read.sort());
  };
  const names = [...new Set([...Object.keys(stored.hands), ...Object.keys(asked.hands ?? {})])];
  const laid = (input) => canonical([input.knocker_melds ?? null, input.discard ?? null, input.layoffs ?? {}]);
  return parseCard(String(asked.upcard ?? "")) === stored.upcard && asked.knocker === stored.knocker
    && names.every((name) => hand(byName(asked.hands, name)) !== null && hand(byName(asked.hands, name)) === hand(byName(stored.hands, name)))
    && laid(asked) === laid(stored);
}

/** Whether `match` shows `version` (an earlier version that was to be put back) in its round already. */
export function restoredAlready(match, version) {
  return sameInput(match.rounds[version.number - 1]?.input, version.input);
}

/** "Bob", "Bob and Cat", "Bob, Cat and Dan". */
const namesSaid = (names) => (names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`);

/**
 * What is wrong with the number of cards in hand `index` (`info`: the server's word on it), in words, or null. The
 * server says it of a hand alone (fewer cards than dealt, more than a knocker's); the page adds what no hand alone
 * shows: the knocker alone holds one card more than dealt (before the discard), and two hands of that size both said
 * "can knock", one of them holding a card that is not its own.
 */
function countProblem(state, index, info) {
  const count = cardsAt(state, index).length;
  if (!count) return null;
  if (info?.problem) return info.problem;
  const size = state.match.hand_size;
  if (count !== size + 1) return null;
  const others = players(state).filter((_, other) => other !== index && cardsAt(state, other).length === count);
  if (!others.length) return null;
  const does = others.length === 1 ? "does" : "do";
  return `${count} cards, and so ${does} ${namesSaid(others)}: only the knocker holds ${count} (before the discard), the others ${size}`;
}

/**
 * A hand's line under its chips: card count, deadwood, knock. A hand of the wrong size says only what is wrong with
 * it (how many cards it holds, how many it should): its deadwood and knock read as scorable, and are not.
 */
export function handStatus(state, index) {
  const count = cardsAt(state, index).length;
  const answer = state.arrangement?.key === tableKey(state) ? state.arrangement.answer : null;
  const name = players(state)[index];
  const info = byName(answer?.players, name);
  // the knock proposed is scored with the discard best for its knocker (it may block a layoff), which is not always
  // the one that leaves the least deadwood: the knocker's line says the one scored, as the chips and proposal do
  const scored = state.proposal?.result?.knocker === name ? state.proposal.result : null;
  const deadwood = scored ? byName(scored.players, name)?.deadwood_points : info?.deadwood_points;
  const discard = scored ? scored.discard : info?.discard;
  // what was typed there but not read (the server could not be reached) stays said under the box until it is read
  // cards typed there wait for the notice's question (move a card from another hand, or keep it there)
  if (state.notice?.typed?.place === index) {
    return { text: "typed, not placed yet: tap Move or Keep in the question", wrongCount: false, canKnock: false, whyNot: "" };
  }
  // what was typed there names no card: said under the box, and no knock until it is fixed (the hand shown is not it)
  const refused = state.refused?.[index];
  if (refused) return { text: `${refused.message}: fix it in the box`, wrongCount: true, canKnock: false, whyNot: refused.message };
  if (!count && state.unread?.[index] !== undefined) {
    return { text: "typed, not read yet: press Enter in the box to read it", wrongCount: false, canKnock: false, whyNot: "" };
  }
  const problem = countProblem(state, index, info);
  if (problem) return { text: problem, wrongCount: true, canKnock: false, whyNot: problem };
  const parts = [`${count} card${count === 1 ? "" : "s"}`];
  if (count && deadwood !== null && deadwood !== undefined) parts.push(`deadwood ${deadwood}`);
  if (discard) parts.push(`discards ${pretty(discard)}`); // as the chips and the proposal write it
  // why a hand may not knock is said in words (a disabled button's tooltip is never seen on a phone)
  const limit = answer?.knock_limit;
  if (state.match.finished) {
    if (count) parts.push("the match is over"); // no knock: why the button is grey
  } else if (info?.can_knock) parts.push(info.deadwood_points === 0 ? "can knock: gin" : "can knock");
  else if (count && Number.isInteger(limit) && info?.deadwood_points > limit) parts.push(limit === 0 ? "only gin may knock" : `over the knock limit ${limit}`);
  return { text: parts.join(" · "), wrongCount: false, canKnock: Boolean(info?.can_knock), whyNot: "" };
}
