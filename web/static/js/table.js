// The table page: cards from the camera (or typed, or picked), tap-to-correct, the proposed result, and
// confirming the round onto the score sheet. All scoring and every rule (who may knock, which card is the
// upcard, which seat a box is in) is the server's; this page keeps one state (table/state.js), changes it
// through one store, draws it with one render (table/render.js), and sequences every request.

import { del, get, post, put } from "./api.js";
import { cameraSupported } from "./camera.js";
import { pretty } from "./cards.js";
import { CardEditor, CardGrid, RoundEditor } from "./table/dialogs.js";
import { LiveTable } from "./table/live.js";
import { groupsFor } from "./laydown.js";
import { enableDrawing, enableTaps } from "./table/overlay.js";
import { buildHands, render } from "./table/render.js";
import { STALE, Sequencer, Store } from "./table/sequence.js";
import {
  OUT,
  UPCARD,
  autoKnocker,
  clashes,
  deleteCard,
  handsPayload,
  initialState,
  keptVersion,
  placeName,
  putCard,
  roundConfirmed,
  roundScored,
  sameRound,
  setPlace,
  tableKey,
  upcardOf,
  withIds,
} from "./table/state.js";

const $ = (id) => document.getElementById(id);
const ARRANGE_DELAY_MS = 120;
const ZOOMS = [1, 2, 3];
const REFRESH_MS = 4000; // how often the match is fetched again, for rounds recorded on another device

const data = JSON.parse($("table-data").textContent);
const sequencer = new Sequencer();
const actions = {};
const store = new Store(initialState(data.match, data.seating), (state, before) => render(state, before, actions));
const matchUrl = () => `/api/matches/${store.state.match.id}`;
const live = new LiveTable(store, sequencer);
const update = (change) => store.update(change);
const setError = (message) => update((state) => (state.error === message ? state : { ...state, error: message }));
const notify = (text, extra = []) =>
  update((state) => ({ ...state, notice: { text, actions: [...extra, { label: "OK", action: () => update((s) => ({ ...s, notice: null })) }] } }));

// ---------------------------------------------------------------- cards on the table

/** Put exactly `cards` at `place`; cards held in another hand (or the upcard) move only after asking, or stay
 * where they are while the rest go to the hand (the upcard stays as it was). */
function placeCards(place, cards) {
  const taken = clashes(store.state, place, cards);
  const placing = (typed) => () => update((state) => ({ ...setPlace(state, place, typed), notice: null, error: "" }));
  if (!taken.length) return placing(cards)();
  const rest = cards.filter((card) => !taken.some((entry) => entry.card === card));
  const where = taken.map((entry) => `${pretty(entry.card)} is in ${placeName(store.state, entry.place)}`).join("; ");
  const them = taken.length === 1 ? "it" : "them";
  const text = `${where}. Move ${them} to ${placeName(store.state, place)}?`;
  const keep = place === UPCARD ? () => update((state) => ({ ...state, notice: null })) : placing(rest); // the upcard as it was
  const answers = [{ label: "Move", primary: true, action: placing(cards) }, { label: `Keep ${them} there`, action: keep }];
  update((state) => ({ ...state, notice: { text, actions: answers } }));
}

/** Cards typed in a box, read by the server (the one card reader: "QH 10S", "ace of spades"). */
async function typeCards(place, text) {
  let cards;
  try {
    const answer = await sequencer.latest(`cards-${place}`, () => post("/api/cards", { text }));
    if (answer === STALE) return;
    cards = answer.cards;
  } catch (error) {
    return setError(error.message);
  }
  if (place === UPCARD && cards.length > 1) return setError("There is one upcard: write one card, like 7D.");
  setError("");
  placeCards(place, cards);
}

function clearTable() {
  const before = store.state.cards;
  if (!before.length) return;
  update((state) => ({ ...state, cards: [], proposal: null, pendingKnocker: null, error: "" }));
  notify(`Table cleared (${before.length} cards).`, [
    { label: "Undo", primary: true, action: () => update((state) => ({ ...state, cards: before, notice: null })) },
  ]);
}

/**
 * The corrected frame saved as a training example (the server overwrites it on later corrections). Answers why it
 * was not saved ("" when it was, or there was nothing to save): the round is scored either way, and the notice of
 * the round confirmed says it (a full corrections folder), where a passing error line would be gone at the next
 * reading.
 */
async function saveCorrection() {
  const state = store.state;
  if (!state.corrected || !state.frame?.id) return "";
  const seat = (place) => (place === UPCARD ? "upcard" : place === OUT ? "none" : state.seating[place].zone);
  const cards = state.cards.filter((e) => e.box).map((e) => ({ card: e.card, box: e.box, seat: seat(e.place), detected: e.detected }));
  try {
    await sequencer.latest("correction", () => post("/correct/examples", { frame_id: state.frame.id, cards }));
    return "";
  } catch (error) {
    return error.message;
  }
}

/** A box drawn on the picture: the server's layout says whose it is; then the editor asks which card. */
async function drawnBox(box) {
  live.freeze();
  const { width, height } = store.state.frame;
  let place = 0;
  try {
    const answer = await sequencer.latest("place", () => post(`/live/place?match=${store.state.match.id}`, { box, width, height }));
    if (answer === STALE) return;
    place = answer.upcard ? UPCARD : answer.out ? OUT : Math.max(0, store.state.match.players.indexOf(answer.player));
  } catch (error) {
    setError(error.message);
  }
  editor.open(null, { box, place });
}

/**
 * The cards typed or picked (those without a camera box) are kept in the tab's session storage until the round is
 * confirmed or the table cleared: a reload, or a phone dropping the tab while it is in the background, keeps them.
 * They are kept for the round they were typed for: once the sheet holds more rounds (this deal confirmed here or on
 * another device), they are not brought back.
 */
const keptKey = () => `okgin-table-${store.state.match.id}`;

function keepTypedCards(state, before) {
  if (before && state.cards === before.cards) return;
  const typed = state.cards.filter((entry) => !entry.box).map(({ card, place }) => ({ card, place }));
  try {
    if (typed.length) sessionStorage.setItem(keptKey(), JSON.stringify({ rounds: state.match.rounds.length, cards: typed }));
    else sessionStorage.removeItem(keptKey());
  } catch {
    // no storage here (a private window may refuse it): nothing is kept
  }
}

function typedCardsKept() {
  const { players, rounds } = store.state.match;
  const valid = (entry) => typeof entry?.card === "string"
    && (entry.place === UPCARD || entry.place === OUT || (Number.isInteger(entry.place) && entry.place >= 0 && entry.place < players.length));
  try {
    const kept = JSON.parse(sessionStorage.getItem(keptKey()) ?? "null");
    return kept?.rounds === rounds.length && Array.isArray(kept.cards) ? kept.cards.filter(valid) : [];
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------- arrangement, proposal, confirmation

let arrangeTimer = null;
let arrangedKey = null;

function arrangeKey(state) {
  return `${tableKey(state)}|${state.match.finished}`;
}

function scheduleArrange() {
  const key = arrangeKey(store.state);
  if (key === arrangedKey) return;
  arrangedKey = key;
  clearTimeout(arrangeTimer);
  arrangeTimer = setTimeout(arrange, ARRANGE_DELAY_MS);
}

async function arrange() {
  const state = store.state;
  const key = tableKey(state);
  const body = { match: state.match.id, hands: handsPayload(state), upcard: upcardOf(state) };
  try {
    const answer = await sequencer.latest("arrange", () => post("/api/arrange", body));
    if (answer === STALE) return;
    update((s) => ({ ...s, arrangement: { key, answer }, error: "" }));
  } catch (error) {
    update((s) => ({ ...s, arrangement: null, error: error.message }));
  }
}

/** Whether the player is typing in a box: an answer arriving then leaves the focus there, or the Enter that ends
 * the box would press Confirm. */
function typing() {
  const active = document.activeElement;
  return active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement || Boolean(active?.isContentEditable);
}

async function propose(knocker) {
  const state = store.state;
  if (state.match.finished || state.saving) return;
  const key = tableKey(state);
  const hands = handsPayload(state);
  // The camera's groups, while they hold the hands' cards, say what was laid: the server reads them.
  const groups = groupsFor(state.groups, hands);
  const body = { match: state.match.id, upcard: upcardOf(state), knocker, hands, ...(groups && { groups }), ...state.laydown };
  try {
    const result = await sequencer.latest("propose", () => post("/api/score", body));
    if (result === STALE) return;
    // The answer is for the cards it was asked about: shown (and confirmed) only while they are still on the table.
    if (tableKey(store.state) !== key) return;
    update((s) => ({ ...s, proposal: { knocker, key, body, result }, error: "" }));
    if (!typing()) $("confirm-round").focus({ preventScroll: true });
  } catch (error) {
    if (tableKey(store.state) === key) update((s) => ({ ...s, proposal: null, error: error.message }));
  }
}

/**
 * Post a round with the number the page believes it adds: a second post of that number is a 409, never a copy.
 * Returns {match, number, fresh} (fresh: stored by this post, not found stored already), or null when nothing was
 * stored. The deal the sheet's last round holds already is added again only when the player says so.
 */
async function saveRound(body) {
  const state = store.state;
  if (state.saving || state.match.finished) return null;
  const number = state.match.rounds.length + 1;
  const last = state.match.rounds.at(-1);
  if (!body.draw && last && sameRound(last.input, body)
    && !window.confirm(`Round ${last.number} on the sheet already holds this deal. Add it again as round ${number}?`)) return null;
  update((s) => ({ ...s, saving: true, error: "" }));
  try {
    return { match: (await post(`${matchUrl()}/rounds`, { ...body, number })).match, number, fresh: true };
  } catch (error) {
    if (error.status === 409) {
      const match = await get(matchUrl()).catch(() => null);
      if (match && match.rounds.length >= number) {
        if (sameRound(match.rounds[number - 1].input, body)) {
          notify(`Round ${number} was already on the sheet; it was not added twice.`);
          return { match, number, fresh: false };
        }
        // Another device recorded another round meanwhile: this one is not stored, and stays to be confirmed again.
        update((s) => ({ ...s, match, saving: false }));
        // It may be this deal read otherwise there (a card apart): the players say which.
        notify(`Round ${number} was recorded on another device meanwhile (see the sheet), so this round was not saved. `
          + (match.finished ? "The match is over."
            : `If that was this deal, tap Not yet; if this is the next one, confirm it again to add it as round ${match.rounds.length + 1}.`));
        return null;
      }
    }
    update((s) => ({ ...s, saving: false, error: error.message }));
    return null;
  }
}

/**
 * Say where the round just stored went, where the proposal was: "Round 3 is on the sheet: Ann +18.", with Undo, and
 * why the corrected frame was not saved, if it was not (`unsaved`).
 */
function announceStored({ match, number, fresh }, unsaved = "") {
  if (!fresh) return; // found stored already: the notice says so
  const undo = number === match.rounds.length ? [{ label: `Undo round ${number}`, action: () => undoRound(number) }] : [];
  const why = unsaved ? ` The correction was not saved: ${unsaved}` : "";
  notify(`Round ${number} is on the sheet: ${roundScored(match, match.rounds[number - 1])}.${why}`, undo);
}

/** A proposal's round as it is stored: the hands the groups were read into (layoffs back with whoever laid them). */
function proposedRound(proposal) {
  const { upcard, knocker, hands } = proposal.body;
  return { upcard, knocker, hands: proposal.result.read?.hands ?? hands, ...proposal.result.given };
}

async function confirmRound() {
  const proposal = store.state.proposal;
  if (!proposal) return;
  const saved = await saveRound(proposedRound(proposal));
  if (!saved) return;
  const unsaved = await saveCorrection();
  update((state) => ({ ...roundConfirmed(state, saved.match), cards: [], stable: false }));
  announceStored(saved, unsaved);
  if (store.state.camera.frozen) live.resume();
}

async function recordDraw() {
  const saved = await saveRound({ draw: true });
  if (!saved) return;
  update((state) => ({ ...roundConfirmed({ ...state, proposal: null }, saved.match), cards: [], stable: false }));
  announceStored(saved);
  if (store.state.camera.frozen) live.resume();
}

let undoing = false; // an undo is on its way

/**
 * Undo round `number` only while it is the last and the match is as the page showed it (its revision): a second
 * click, a second device, or an undo arriving after the round was entered again undoes nothing more. The notice
 * says what the round scored, and brings it back (the server keeps it as an earlier version, also on the sheet).
 */
async function undoRound(number) {
  const before = store.state.match;
  const { revision, rounds } = before;
  // A second tap (while the first is on its way, or once the round is gone) undoes nothing more.
  if (undoing || !number || number > rounds.length) return;
  if (number < rounds.length) {
    setError(`Round ${number} is no longer the last: round ${rounds.length} came after it. Undo that first, or edit round ${number}.`);
    return;
  }
  if (!window.confirm(`Undo round ${number}?`)) return;
  undoing = true;
  try {
    const match = await del(`${matchUrl()}/rounds/${number}?revision=${revision}`);
    update((state) => ({ ...state, match, confirmed: null, error: "" }));
    const kept = keptVersion(before, match, number);
    notify(`Round ${number} undone (${roundScored(before, rounds[number - 1])}).`,
      kept ? [{ label: `Bring back round ${number}`, action: () => restoreVersion(kept.id, match.revision) }] : []);
  } catch (error) {
    showChangedMatch(error);
    setError(error.message);
  } finally {
    undoing = false;
  }
}

/** Replace round `number` of the match at `revision` (as the editor showed it): a late edit never undoes a later one. */
async function editRound(number, body, revision) {
  const before = store.state.match;
  try {
    const match = await put(`${matchUrl()}/rounds/${number}?revision=${revision}`, body);
    update((state) => ({ ...state, match }));
    // What the round held is kept by the server as an earlier version (also on the sheet): the notice puts it back.
    const kept = keptVersion(before, match, number);
    notify(`Round ${number} changed on the sheet: now ${roundScored(match, match.rounds[number - 1])}.`,
      kept ? [{ label: "Undo the change", action: () => restoreVersion(kept.id, match.revision) }] : []);
  } catch (error) {
    showChangedMatch(error);
    throw error;
  }
}

let restoring = false; // an earlier version is on its way back

/**
 * Put back an earlier version of a round (the server says which can come back, and how) on the match at `revision`,
 * as the sheet or the notice showed it: a second tap, or one arriving after another change, changes nothing.
 */
async function restoreVersion(version, revision) {
  if (restoring) return;
  restoring = true;
  try {
    const match = await post(`${matchUrl()}/earlier-versions/${version}/restore`, { revision });
    update((state) => ({ ...state, notice: null, error: "", ...(match.revision > state.match.revision && { match }) }));
  } catch (error) {
    showChangedMatch(error);
    setError(error.message);
  } finally {
    restoring = false;
  }
}

/** A 409 carries the match as it is now: show that, so the players see what changed before they try again. */
function showChangedMatch(error) {
  const match = error.status === 409 ? error.data?.match : null;
  if (match && match.id === store.state.match.id) update((state) => ({ ...state, match }));
}

/**
 * Another device at the table may record, undo or edit a round: fetch the match now and then (and when the page is
 * shown again), and show it when it has moved on (a higher revision), so the totals read here are never stale.
 */
async function refreshMatch() {
  if (document.hidden || store.state.saving) return;
  let match;
  try {
    match = await sequencer.latest("match", () => get(matchUrl()));
  } catch {
    return; // the server cannot be reached now: the next request says so
  }
  if (match === STALE) return;
  const { state } = store;
  if (match.id !== state.match.id || match.revision <= state.match.revision || state.saving) return;
  const added = match.rounds.length > state.match.rounds.length ? match.rounds.at(-1) : null;
  const table = { upcard: upcardOf(state), hands: handsPayload(state) };
  if (added && !added.draw && sameRound(added.input, table)) {
    // The deal on this table was confirmed on another device: it is done here too, and not proposed again.
    update((s) => ({ ...roundConfirmed(s, match), confirmed: [...Object.values(table.hands).flat(), table.upcard], cards: [], stable: false }));
    notify(`Round ${added.number} was confirmed on another device.`);
    return;
  }
  update((s) => ({ ...s, match }));
}

/** A new match with the same players and rules, the next dealer dealing first. */
async function rematch() {
  const { id, players, rules, dealer } = store.state.match;
  const { preset, ...options } = rules;
  try {
    // one rematch of this match, however often (and on however many phones) Rematch is pressed: web/once.py
    const once = { headers: { "Idempotency-Key": `rematch-of-match-${id}` } };
    const created = await post("/api/matches", { players, rules: preset, options, dealer }, once);
    window.location.assign(`/matches/${created.id}`);
  } catch (error) {
    setError(error.message);
  }
}

// ---------------------------------------------------------------- what follows a change

store.subscribe((state, before) => {
  keepTypedCards(state, before);
  scheduleArrange();
  // Cards corrected while a proposal was shown: score the same knock again for the cards now on the table.
  const knocker = state.pendingKnocker;
  if (knocker && !state.proposal && !state.saving && tableKey(state) !== tableKey(before)) {
    propose(knocker);
    return;
  }
  const auto = autoKnocker(state);
  if (auto) {
    update((s) => ({ ...s, autoProposed: tableKey(s) }));
    propose(auto);
  }
});

const editor = new CardEditor(store, Object.assign(Object.create(null), {
  select: (id) => update((state) => (state.selected === id ? state : { ...state, selected: id })),
  deleteCard: (id) => {
    update((state) => deleteCard(state, id));
    saveCorrection();
  },
  putCard: (change) => {
    update((state) => ({ ...putCard(state, change), error: "" }));
    saveCorrection();
  },
}));
const grid = new CardGrid(store, { setPlace: placeCards });
const roundEditor = new RoundEditor(store, { editRound });

Object.assign(actions, {
  freeze: () => live.freeze(),
  typeHand: (index, text) => typeCards(index, text),
  openGrid: (target) => {
    live.freeze();
    grid.open(target);
  },
  openEditor: (id) => {
    live.freeze();
    editor.open(id);
  },
  propose,
  /** The players say how they laid the cards (a listed way, or the knocker's melds regrouped): score that. */
  layDown: (laid) => {
    const knocker = store.state.proposal?.knocker;
    update((state) => ({ ...state, laydown: laid }));
    if (knocker) propose(knocker);
  },
  undoRound,
  restoreVersion,
  openRoundEditor: (number) => roundEditor.open(number),
});

function init() {
  buildHands(store.state, actions);
  render(store.state, null, actions);
  const kept = typedCardsKept();
  if (kept.length) update((state) => withIds(state, kept));
  if (data.notices.length) notify(data.notices.join(" ")); // what the page that sent the players here had to say
  scheduleArrange();
  enableDrawing(() => store.state, drawnBox);
  enableTaps(actions.openEditor);
  $("upcard-input").addEventListener("focus", () => live.freeze());
  $("upcard-input").addEventListener("change", (event) => typeCards(UPCARD, event.target.value));
  $("upcard-input").addEventListener("keydown", (event) => event.key === "Enter" && event.target.blur());
  document.querySelector('[data-pick="upcard"]').addEventListener("click", () => actions.openGrid(UPCARD));
  $("camera-start").addEventListener("click", () => live.startBrowser());
  $("camera-stop").addEventListener("click", () => live.stop());
  $("server-camera")?.addEventListener("click", () => live.startServer());
  $("resume-live").addEventListener("click", () => live.resume());
  $("camera-select").addEventListener("change", () => live.camera.running && live.startBrowser());
  $("zoom").addEventListener("click", () => {
    live.freeze();
    update((state) => ({ ...state, zoom: ZOOMS[(ZOOMS.indexOf(state.zoom) + 1) % ZOOMS.length] }));
  });
  $("add-card").addEventListener("click", () => {
    live.freeze();
    editor.open(null, { box: null, place: 0 });
  });
  $("confirm-round").addEventListener("click", confirmRound);
  $("cancel-proposal").addEventListener("click", () =>
    update((state) => ({ ...state, proposal: null, pendingKnocker: null, autoProposed: tableKey(state) })));
  $("record-draw").addEventListener("click", recordDraw);
  $("clear-hands").addEventListener("click", clearTable);
  $("rematch").addEventListener("click", rematch);
  window.addEventListener("resize", () => render(store.state, store.state, actions));
  // On a phone the totals bar is pinned over the page's foot: the page ends with room for it, however many lines
  // the players' names wrap it to (css: --totals-bar-height).
  new ResizeObserver(([bar]) => $("main").style.setProperty("--totals-bar-height", `${bar.borderBoxSize[0].blockSize}px`))
    .observe($("totals-bar"));
  setInterval(refreshMatch, REFRESH_MS);
  document.addEventListener("visibilitychange", refreshMatch);
  const status = cameraSupported() ? "No camera: type or pick the cards below."
    : "No camera in this browser here (needs https or localhost): type or pick the cards.";
  update((state) => ({ ...state, camera: { ...state.camera, status } }));
  document.body.dataset.ready = "true";
}

init();
