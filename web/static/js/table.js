// The table page: cards from the camera (or typed, or picked), tap-to-correct, the proposed result, and
// confirming the round onto the score sheet. All scoring and every rule (who may knock, which card is the
// upcard, which seat a box is in) is the server's; this page keeps one state (table/state.js), changes it
// through one store, draws it with one render (table/render.js), and sequences every request.

import { ApiError, del, get, post, put } from "./api.js";
import { cameraSupported } from "./camera.js";
import { pretty } from "./cards.js";
import { CardEditor, CardGrid, RenameDialog, RoundEditor } from "./table/dialogs.js";
import { LiveTable } from "./table/live.js";
import { groupsFor } from "./laydown.js";
import { enablePicture } from "./table/overlay.js";
import { buildHands, focusLine, focusLost, render } from "./table/render.js";
import { STALE, Sequencer, Store } from "./table/sequence.js";
import {
  OUT,
  UPCARD,
  autoKnocker,
  changeSaid,
  clashes,
  deleteCard,
  handsPayload,
  holdsEdit,
  initialState,
  keptVersion,
  knockToScoreAgain,
  nearlySameRound,
  nextZoom,
  pinchedZoom,
  placeName,
  putCard,
  restoredAlready,
  roundConfirmed,
  saidElsewhere,
  sameInput,
  sameRound,
  setPlace,
  sheetChange,
  tableKey,
  typedRefused,
  typedSettled,
  typedUnread,
  undoneAlready,
  upcardOf,
  withIds,
  withNewerMatch,
} from "./table/state.js";

const $ = (id) => document.getElementById(id);
const ARRANGE_DELAY_MS = 120;
const REFRESH_MS = 4000; // how often the match is fetched again, for rounds recorded on another device
// A change of the sheet not answered by then is given up and said so: tapping again is safe, since the server refuses
// a change made already (a round's number, the revision every change names).
const CHANGE = { timeout: 15_000 };

const data = JSON.parse($("table-data").textContent);
const sequencer = new Sequencer();
const actions = {};
const store = new Store(initialState(data.match, data.seating), (state, before) => render(state, before, actions));
const matchUrl = () => `/api/matches/${store.state.match.id}`;
const live = new LiveTable(store, sequencer);
const update = (change) => store.update(change);
/**
 * Bring `element` into view where it is out of it, unless the player is typing (but for a question the cards typed
 * wait for: `evenTyping`): the answer to a tap is seen where it lands (a knock's proposal, an undo's refusal or a
 * notice drawn a phone's screen away from the button tapped). The pinned totals bar and picture are kept clear (their
 * CSS scroll margins).
 */
function reveal(element, { evenTyping = false } = {}) {
  if (element.hidden || (typing() && !evenTyping)) return;
  // its top first where it is above or taller than the view: a tall proposal shows its result, Confirm a scroll below
  const { top, height } = element.getBoundingClientRect();
  element.scrollIntoView({ block: top < 0 || height > innerHeight ? "start" : "nearest" });
}

const setError = (message) => {
  const before = store.state.error;
  update((state) => (state.error === message ? state : { ...state, error: message }));
  if (message && message !== before) reveal($("table-error"));
};
// A notice: its text and its buttons, the last one OK (`dismiss`), which only closes it.
const noticeOf = (text, extra = []) =>
  ({ text, actions: [...extra, { label: "OK", dismiss: true, action: () => update((s) => ({ ...s, notice: null })) }] });
/**
 * Say `text` in the notice (with buttons `extra`), brought into view unless `unasked` (news no tap here asked for: it
 * never takes the focus either, `renderNotice`).
 */
const notify = (text, extra = [], { unasked = false } = {}) => {
  update((state) => ({ ...state, notice: { ...noticeOf(text, extra), unasked } }));
  if (!unasked) reveal($("notice"));
};

/**
 * Say a change of the sheet made on another device (`said`; `match`, the sheet now), as news no tap here asked for
 * (`unasked`: its live region reads it, the focus stays where it is). A notice still offering something (an
 * Undo just offered, a question about the cards) is not replaced: the news follows its text and its buttons stay,
 * since the players may still want them, but for a way back the change elsewhere has made impossible (`holds`: an
 * Undo of a round no longer the last, a version to put back into a sheet that changed), which would only be refused.
 * Later news replaces the earlier news there, not the offer.
 */
function tell(said, match) {
  update((state) => {
    const shown = state.notice?.offer ?? state.notice; // the notice as it was before any news followed it
    const news = { ...noticeOf(said), unasked: true };
    if (!shown?.actions.some((action) => !action.dismiss)) return { ...state, notice: news };
    const offer = { ...shown, actions: shown.actions.filter((action) => !action.holds || action.holds(match)) };
    // an offer the change elsewhere has made impossible goes with its words ("Round 2 is on the sheet: Ann +18.
    // On another device: round 2 undone" said both)
    if (!offer.actions.some((action) => !action.dismiss)) return { ...state, notice: news };
    return { ...state, notice: { ...offer, text: `${shown.text} ${said}`, offer, unasked: true } };
  });
}

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
  // the upcard as it was (and its box: not text typed before it that named no card)
  const keep = place === UPCARD ? () => update((state) => ({ ...typedSettled(state, UPCARD), notice: null })) : placing(rest);
  const answers = [{ label: "Move", primary: true, action: placing(cards) }, { label: `Keep ${them} there`, action: keep }];
  // the hand's box goes on showing the cards typed (not the cards it held before) while the question waits
  const asked = cards.join(" ");
  const typed = place === UPCARD ? null : { place, text: asked };
  // Escape answers neither: the cards stay where they are, and what was typed stays in its box (Enter there asks again)
  const dismiss = () => update((state) => ({ ...typedUnread(state, place, asked), notice: null }));
  update((state) => ({ ...state, notice: { text, actions: answers, typed, question: true, dismiss } }));
  // shown however the cards came (typed, the keyboard up and Enter gone on to the next box): the cards wait for it
  reveal($("notice"), { evenTyping: true });
}

/** Escape in the notice closes it as its OK does, or a question as neither answer (its `dismiss`); the focus then goes
 * back to where it was before the notice took it (render.js `renderNotice`). */
function dismissNotice(event) {
  const { notice } = store.state;
  const dismiss = notice?.dismiss ?? notice?.actions.find((action) => action.dismiss)?.action;
  if (event.key !== "Escape" || !dismiss) return;
  event.preventDefault();
  dismiss();
}

const reading = new Set(); // the cards typed being read by the server (typeCards' promises)
const proposing = new Set(); // the knocks asked to be scored, not answered yet (propose's promises)

/**
 * Cards typed in a box, read by the server (the one card reader: "QH 10S", "ace of spades"). Text it could not read
 * (it could not be reached) stays in its box, kept with the typed cards, for Enter to read again. Confirm round and
 * Record a draw wait for a reading on its way (`answered`).
 */
function typeCards(place, text) {
  const read = readCards(place, text);
  reading.add(read);
  return read.finally(() => reading.delete(read));
}

/**
 * Once the requests in `pending` (sets of them: `reading`, `proposing`) are answered, those they lead to included (the
 * cards read, their knock scored again), or `CHANGE.timeout` has passed; answers whether none is on its way. A box just
 * left by a tap on Confirm sent its cards to be read; a way the cards were laid, tapped, is being scored.
 */
async function answered(...pending) {
  const until = performance.now() + CHANGE.timeout;
  const waiting = () => pending.some((requests) => requests.size);
  while (waiting() && performance.now() < until) {
    const late = new Promise((resolve) => { setTimeout(resolve, until - performance.now()); });
    await Promise.race([Promise.allSettled(pending.flatMap((requests) => [...requests])), late]);
  }
  return !waiting();
}

async function readCards(place, text) {
  let cards;
  try {
    const answer = await sequencer.latest(`cards-${place}`, () => post("/api/cards", { text }));
    if (answer === STALE) return;
    cards = answer.cards;
  } catch (error) {
    if (error.status !== 0) { // said under the hand's box (beside the upcard's), which keeps the text to be fixed
      setError("");
      const said = error.message.replace(/^the cards: /, ""); // the line is the hand's: "unknown card 'QZ': …"
      return update((state) => typedRefused(state, place, text, said));
    }
    update((state) => typedUnread(state, place, text));
    return setError(`${error.message} What was typed stays in its box: press Enter there again once the server is back.`);
  }
  if (place === UPCARD && cards.length > 1) {
    setError("");
    return update((state) => typedRefused(state, UPCARD, text, "there is one upcard: write one card, like 7D"));
  }
  setError("");
  placeCards(place, cards);
}

/** Enter in a box still showing text the server could not read: read it again (unchanged, the box sends no change). */
function readAgain(place, text) {
  if (store.state.unread[place] === text) typeCards(place, text);
}

async function clearTable() {
  await answered(reading); // a box just left by this tap: its cards are cleared too, not put back once read
  const { cards: before, unread } = store.state;
  if (!before.length && !Object.keys(unread).length) return;
  const { fixes } = store.state;
  update((state) => ({ ...state, cards: [], unread: {}, fixes: [], proposal: null, pendingKnocker: null, error: "" }));
  notify(`Table cleared (${before.length} cards).`, [
    { label: "Undo", primary: true, action: () => update((state) => ({ ...state, cards: before, unread, fixes, notice: null })) },
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
  if (before && state.cards === before.cards && state.unread === before.unread) return;
  const typed = state.cards.filter((entry) => !entry.box).map(({ card, place }) => ({ card, place }));
  const { unread } = state;
  try {
    if (typed.length || Object.keys(unread).length) {
      sessionStorage.setItem(keptKey(), JSON.stringify({ rounds: state.match.rounds.length, cards: typed, unread }));
    } else sessionStorage.removeItem(keptKey());
  } catch {
    // no storage here (a private window may refuse it): nothing is kept
  }
}

/** The typed cards kept for this round, and the text typed that the server could not read yet (by place). */
function typedCardsKept() {
  const { players, rounds } = store.state.match;
  const validPlace = (place) => place === UPCARD || place === OUT || (Number.isInteger(place) && place >= 0 && place < players.length);
  const valid = (entry) => typeof entry?.card === "string" && validPlace(entry.place);
  try {
    const kept = JSON.parse(sessionStorage.getItem(keptKey()) ?? "null");
    if (kept?.rounds !== rounds.length) return { cards: [], unread: {} };
    const unread = Object.entries(kept.unread ?? {})
      .map(([place, text]) => [place === UPCARD ? place : Number(place), text])
      .filter(([place, text]) => place !== OUT && validPlace(place) && typeof text === "string");
    return { cards: Array.isArray(kept.cards) ? kept.cards.filter(valid) : [], unread: Object.fromEntries(unread) };
  } catch {
    return { cards: [], unread: {} };
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

/**
 * The error line once a background request of `kind` ("arrange", "propose") was answered: the error it put there
 * itself is gone, any other stays. Those requests follow every change of the table, and a reading answered just
 * after an undo timed out took the undo's error off the line before it could be read.
 */
const backgroundErrors = new Map(); // kind -> the error it last put on the line
function errorAfter(kind, state) {
  const own = backgroundErrors.get(kind);
  backgroundErrors.delete(kind);
  return own !== undefined && state.error === own ? "" : state.error;
}
function backgroundError(kind, message) {
  backgroundErrors.set(kind, message);
  return message;
}

async function arrange() {
  const state = store.state;
  const key = tableKey(state);
  const body = { match: state.match.id, hands: handsPayload(state), upcard: upcardOf(state) };
  try {
    const answer = await sequencer.latest("arrange", () => post("/api/arrange", body));
    if (answer === STALE) return;
    update((s) => ({ ...s, arrangement: { key, answer }, error: errorAfter("arrange", s) }));
  } catch (error) {
    update((s) => ({ ...s, arrangement: null, error: backgroundError("arrange", error.message) }));
  }
}

/** Whether the player is typing in a box: an answer arriving then leaves the focus there, or the Enter that ends
 * the box would press Confirm. */
function typing() {
  const active = document.activeElement;
  return active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement || Boolean(active?.isContentEditable);
}

/** The focus, where it was lost, on the first of `targets` shown with something to say (the notice, an error line). */
function refocus(...targets) {
  if (!focusLost()) return;
  const shown = (target) => target && !target.closest("[hidden]") && target.getClientRects().length && target.textContent.trim();
  focusLine(targets.find(shown));
}

/**
 * Score `knocker`'s knock on the cards on the table, as `laid` where the players said how (a listed way, `way` its
 * place in the list, or melds regrouped). The proposal keeps the ways the score depends on, listed as first found, so a
 * way tapped by mistake can be undone by tapping another. What the players say is kept only once it scores: a regroup
 * that is no meld is said beside the proposal, which stays (it vanished, and every knock after it sent the same
 * lay-down again, until the cards changed).
 */
function propose(...asked) {
  const scoring = scoreKnock(...asked);
  proposing.add(scoring);
  return scoring.finally(() => proposing.delete(scoring));
}

async function scoreKnock(knocker, laid = store.state.laydown, way = null, { quiet = false } = {}) {
  const state = store.state;
  if (state.match.finished || state.saving) return;
  const key = tableKey(state);
  const hands = handsPayload(state);
  // The camera's groups, while they hold the hands' cards, say what was laid: the server reads them.
  const groups = groupsFor(state.groups, hands);
  const body = { match: state.match.id, upcard: upcardOf(state), knocker, hands, ...(groups && { groups }), ...laid };
  try {
    const result = await sequencer.latest("propose", () => post("/api/score", body));
    if (result === STALE) return;
    // The answer is for the cards it was asked about: shown (and confirmed) only while they are still on the table.
    if (tableKey(store.state) !== key) return;
    update((s) => {
      const before = s.proposal?.key === key && s.proposal.knocker === knocker ? s.proposal : null;
      const ways = before?.ways ?? (result.alternatives?.length ? result : null);
      // its own way is first in a list it gave; a knock tapped again with the way kept keeps it pressed
      const shownWay = ways === result || !laid ? 0 : way ?? (laid === s.laydown && before ? before.way : null);
      return { ...s, laydown: laid, proposal: { knocker, key, body, result, ways, way: shownWay }, error: errorAfter("propose", s) };
    });
    if (!typing()) $("confirm-round").focus({ preventScroll: true });
  } catch (error) {
    if (tableKey(store.state) !== key) return;
    const shown = store.state.proposal;
    if (laid && laid !== store.state.laydown && shown?.key === key && shown.knocker === knocker) {
      // the server names the field ("knocker_melds: 3S 4S is not a meld: ..."): the players laid melds
      const problem = error.message.replace(/^knocker_melds: /, "the melds: ");
      update((s) => ({ ...s, proposal: { ...s.proposal, problem: `Not scored as laid: ${problem}` } }));
    } else if (laid) {
      update((s) => ({ ...s, laydown: null })); // kept from before, it no longer scores: the engine's way then
      await propose(knocker, null, null, { quiet });
    } else if (quiet && error.status === 400) {
      // scored again by itself for cards that changed (a card lifted): the hand's line says what is wrong, and the
      // knock is scored again once the cards change back
      update((s) => ({ ...s, proposal: null, pendingKnocker: knocker }));
    } else {
      update((s) => ({ ...s, proposal: null, laydown: null, error: backgroundError("propose", error.message) }));
    }
  }
}

let sending = 0; // changes of the sheet sent from here and not answered yet
let unanswered = null; // {holds(match), say(match)}: the change last sent from here, whose answer was lost

/**
 * Send a change of the sheet (`ask()`: its request), answering what the server answers. While it is on its way, the
 * refresh shows the match it finds without saying what changed (it cannot tell this page's change from another
 * device's: the answer says it); its answer lost (it may be made all the same), `lost` ({holds(match): whether a match
 * shows it made, say(match)}) says it as this page's once the refresh finds it made, never as another device's.
 */
async function sendChange(ask, lost) {
  sending += 1;
  unanswered = null;
  try {
    return await ask();
  } catch (error) {
    if (error.status === 0) unanswered = lost;
    throw error;
  } finally {
    sending -= 1;
  }
}

/** What a change found made by the refresh adds to its notice: `verb` ("saved", "done") from here. */
const answerLost = (verb) => `It was ${verb} from here; the server's answer was lost on the way.`;

/**
 * Say a change of the sheet this page made (`change`, as `sheetChange` says one: how, and which round) from `before`
 * to `match`, with `more`, and the way back where there is one: a round entered or brought back is undone while it is
 * the last; an edit, a version put back or an undo puts back what the server kept of it (`keptVersion`).
 */
function sayChange(change, before, match, more = "") {
  const { how, number } = change;
  let back = [];
  if (how === "entered" || how === "brought back") {
    // undone while it is the last, the same deal as entered here (asked of the sheet as it is then): not another deal
    // entered in its place after another device undid it, nor the round as another device then edited it
    const holds = (now) => now.rounds.length === number && now.deals?.[number - 1] === match.deals?.[number - 1]
      && sameInput(now.rounds[number - 1]?.input, match.rounds[number - 1]?.input);
    if (holds(match)) back = [{ label: `Undo round ${number}`, action: () => undoRound(number), holds }];
  } else {
    const kept = keptVersion(before, match, number);
    const label = how === "undone" ? `Bring back round ${number}` : "Undo the change";
    const holds = (now) => now.revision === match.revision; // asked of this sheet only
    if (kept) back = [{ label, action: () => restoreVersion(kept.id, match.revision), holds }];
  }
  notify(`${changeSaid(change, before, match)}${more ? ` ${more}` : ""}`, back);
}

/**
 * Post a round with the number the page believes it adds and the revision of the sheet it shows: a second post of
 * that number is a 409, never a copy, and so is one arriving after the round was undone (or the sheet changed
 * otherwise). Returns {match, number, fresh} (fresh: stored by this post, not found stored already), or null when
 * nothing was stored. The deal the sheet's last round holds already is added again only when the player says so.
 */
async function saveRound(body) {
  const state = store.state;
  if (state.saving || state.match.finished) return null;
  const { revision } = state.match;
  const number = state.match.rounds.length + 1;
  const last = state.match.rounds.at(-1);
  // The same deal again, or a draw after a draw (a second tap of Record a draw, once the first was stored): asked first.
  // So is a deal all but a few cards alike: stored from another device, a card read otherwise there, it was stored
  // again here as the next round, its points counted twice.
  const nearly = nearlySameRound(last?.input, body);
  const again = body.draw ? `Round ${last?.number} on the sheet is a draw already. Record another draw as round ${number}?`
    : nearly ? `Round ${last.number} on the sheet holds nearly this deal (${nearly.shared} of its ${nearly.cards} cards, the upcard counted). Add this as round ${number}?`
      : `Round ${last?.number} on the sheet already holds this deal. Add it again as round ${number}?`;
  if (last && (nearly || sameRound(last.input, body)) && !window.confirm(again)) return null;
  update((s) => ({ ...s, saving: true, error: "" }));
  // Its answer lost, the refresh (or a second tap) finds whether it was stored.
  const lost = {
    holds: (match) => sameRound(match.rounds[number - 1]?.input, body),
    say: (match) => roundStored({ match, number, fresh: true }, { draw: Boolean(body.draw), more: answerLost("saved") }),
  };
  try {
    const answer = await sendChange(() => post(`${matchUrl()}/rounds`, { ...body, number, revision }, CHANGE), lost);
    return { match: answer.match, number, fresh: true };
  } catch (error) {
    const match = error.status === 409 ? error.data?.match : null;
    if (match?.id === state.match.id) {
      const stored = match.rounds[number - 1];
      if (stored && sameRound(stored.input, body)) {
        notify(`Round ${number} was already on the sheet; it was not added twice.`);
        return { match, number, fresh: false };
      }
      // Not stored, and the proposal stays: confirmed again, it is asked of the sheet as it is now.
      update((s) => ({ ...withNewerMatch(s, match), saving: false }));
      const next = match.finished ? "The match is over." : `confirm it again to add it as round ${match.rounds.length + 1}.`;
      notify(stored
        // Another device recorded another round meanwhile. It may be this deal read otherwise there (a card apart):
        // the players say which.
        ? `Round ${number} was recorded on another device meanwhile (see the sheet), so this round was not saved. `
          + (match.finished ? next : `If that was this deal, tap Not yet; if this is the next one, ${next}`)
        // A round undone or edited, here or on another device, since this one was proposed.
        : `The score sheet changed meanwhile (see the sheet), so this round was not saved. ${match.finished ? next : `Check it and ${next}`}`);
      return null;
    }
    update((s) => ({ ...s, saving: false }));
    setError(error.message); // brought into view: under the hands, it is a screen below Confirm on a phone
    return null;
  }
}

/**
 * The round this page posted is on the sheet (`saved`, as saveRound answers): the table waits for the next deal, and
 * a round stored by this post is said where the proposal was ("Round 3 is on the sheet: Ann +18.") with its Undo,
 * and `more` (why the corrected frame was not saved; that the server's answer was lost on the way).
 */
function roundStored(saved, { draw = false, more = "" } = {}) {
  const before = store.state.match;
  update((state) => ({ ...roundConfirmed(draw ? { ...state, proposal: null } : state, saved.match), cards: [], stable: false, error: "" }));
  const { match, number, fresh } = saved;
  if (fresh) sayChange({ how: "entered", number }, before, match, more); // found stored already: the notice says so
  if (store.state.camera.frozen) live.resume();
}

/** A proposal's round as it is stored: the hands the groups were read into (layoffs back with whoever laid them). */
function proposedRound(proposal) {
  const { upcard, knocker, hands } = proposal.body;
  return { upcard, knocker, hands: proposal.result.read?.hands ?? hands, ...proposal.result.given };
}

/** Confirm tapped: the proposal (its button) is gone after it, the focus goes on to what it brought. */
async function confirmRound() {
  await confirmProposal();
  refocus($("notice"), $("table-error"), $("confirm-round"));
}

async function confirmProposal() {
  const proposal = store.state.proposal;
  if (!proposal) return;
  // Confirm tapped at once after a card fixed in its box (leaving it sent the cards to be read) or a way the cards were
  // laid: the round stored is the one they make, not the one proposed before them (the reading answered late also put
  // the old hand on the next deal). Changed, it is shown to be confirmed.
  const settledNow = reading.size || proposing.size ? await answered(reading, proposing) : true;
  const { state } = store;
  if (state.notice?.question) return reveal($("notice"), { evenTyping: true }); // a card typed is in another hand: Move or Keep first
  // a box showing text that is not the cards proposed: confirmed, the round would hold the cards before it
  if (Object.keys(state.unread).length || Object.keys(state.refused ?? {}).length) {
    return setError("The round was not confirmed: a box holds typed text not read yet, or naming no card. Fix it, or press Enter in it to read it.");
  }
  if (state.proposal !== proposal || !settledNow) {
    if (!settledNow) return setError("The cards or the way they were laid are still being scored: confirm once the result shows.");
    const now = state.proposal;
    if (!now || JSON.stringify(proposedRound(now)) !== JSON.stringify(proposedRound(proposal))) {
      notify("The round was not confirmed: what it scores changed as Confirm was tapped (a card fixed, or the way the cards were laid). Check the result, then confirm it.");
      return;
    }
    return confirmProposal(); // the same round, as now proposed
  }
  const saved = await saveRound(proposedRound(proposal));
  if (!saved) return;
  const unsaved = await saveCorrection();
  roundStored(saved, { more: unsaved && `The correction was not saved: ${unsaved}` });
}

async function recordDraw() {
  await answered(reading); // a box just left: its cards are placed before the draw clears the table, not on the next deal
  const saved = await saveRound({ draw: true });
  if (saved) roundStored(saved, { draw: true });
  refocus($("notice"), $("table-error"), $("record-draw")); // disabled while saving, it lost the focus
}

/**
 * A change of the sheet refused (a 409 carries the sheet as it is now, shown where newer): `{match, done}` when that
 * sheet already holds the change (`holds(match)`; done: its first answer was lost on the way, or another device made
 * it too) or the change was asked of an older sheet (not done: asked again, it is asked of this one); null for any
 * other failure, said as it is.
 */
function refusal(error, revision, holds) {
  const match = error.status === 409 ? error.data?.match : null;
  if (match?.id !== store.state.match.id) return null;
  update((state) => withNewerMatch(state, match));
  const done = holds(match);
  return done || match.revision !== revision ? { match, done } : null;
}

const sheetChanged = (what) => `The score sheet changed meanwhile (see the sheet), so ${what}`;

let undoing = 0; // the round whose undo is on its way
const SECOND_TAP_MS = 1000; // a double tap's second tap comes within this of the first one's answer
let lastUndone = { number: 0, at: -Infinity }; // the round last undone from here, and when (performance.now())

/**
 * Undo round `number` only while it is the last and the match is as the page showed it (its revision): a second
 * click, a second device, or an undo arriving after the round was entered again undoes nothing more.
 */
async function undoRound(number) {
  const before = store.state.match;
  const { revision, rounds } = before;
  // A second tap while the first is on its way undoes nothing more, and says why.
  if (undoing) return setError(`Round ${undoing} is being undone: waiting for the server's answer.`);
  if (!number) return;
  // The sheet drawn after an undo has the Undo of the round before where the last one was, focused: a double tap's
  // second tap, or a click sent twice, lands on it and would undo that round too. Asked again a moment later, it does.
  if (number < lastUndone.number && performance.now() - lastUndone.at < SECOND_TAP_MS) {
    return setError(`Round ${lastUndone.number} was just undone: to undo round ${number} too, tap Undo round ${number} again.`);
  }
  // Undone already (on another device, as the refresh showed): nothing more to undo, and said, not ignored.
  if (number > rounds.length) return setError(`Round ${number} was undone already (see the sheet): there is nothing more to undo.`);
  if (number < rounds.length) {
    setError(`Round ${number} is no longer the last: round ${rounds.length} came after it. Undo that first, or edit round ${number}.`);
    return;
  }
  undoing = number; // not asked first: the notice it brings puts the round back (an earlier version, kept)
  const lost = {
    holds: (match) => undoneAlready(match, number, rounds[number - 1]),
    say: (match) => sayUndone(before, match, number, answerLost("done")),
  };
  try {
    sayUndone(before, await sendChange(() => del(`${matchUrl()}/rounds/${number}?revision=${revision}`, CHANGE), lost), number);
    lastUndone = { number, at: performance.now() };
  } catch (error) {
    const refused = refusal(error, revision, lost.holds);
    if (refused?.done) {
      sayUndone(before, refused.match, number);
      lastUndone = { number, at: performance.now() };
    } else setError(refused ? sheetChanged(`round ${number} was not undone: undo it again if still wanted.`) : error.message);
  } finally {
    undoing = 0;
  }
}

/**
 * Round `number` of `before` (the match as the undo saw it) is undone in `match`: said with what it scored, and
 * brought back from the notice (the server keeps it as an earlier version, also on the sheet).
 */
function sayUndone(before, match, number, more = "") {
  update((state) => ({ ...withNewerMatch(state, match), confirmed: null, error: "" }));
  // the sheet's Undo, pressed on its only round, goes with it (the sheet drawn anew has no round to undo): the focus
  // goes on to the notice that says so, with its Bring back, not to the page's body once the sheet is drawn
  if (!match.rounds.length && document.activeElement?.matches("#sheet-body [data-undo-round]")) document.activeElement.blur();
  sayChange({ how: "undone", number }, before, match, more);
}

/**
 * Replace round `number` of the match at `revision` (as the editor showed it): a late edit never undoes a later one.
 * Refused as asked of an older sheet, it is done when the round holds the edit already; else the error says the sheet
 * changed (the editor then asks of the sheet as it is now).
 */
async function editRound(number, body, revision) {
  const before = store.state.match;
  // What the round held is kept by the server as an earlier version (also on the sheet): the notice puts it back.
  const holds = (match) => holdsEdit(match.rounds[number - 1]?.input, body);
  // saved as the page showed the round: sent all the same (the sheet shown may be seconds behind, and the server
  // refuses an edit of an older sheet), and said as nothing changed, not as a change
  const unchanged = holds(before);
  // undone meanwhile (on another device): there is no round to save it in, however often Save is tapped
  const gone = (match) => (number > match.rounds.length
    ? `Round ${number} is no longer on the sheet: it was undone meanwhile, so this change was not saved. The sheet's "Undone round ${number}" brings it back, to edit it then.`
    : null);
  if (gone(before)) throw new ApiError(409, gone(before));
  const sayEdited = (match, more) => {
    update((state) => withNewerMatch(state, match));
    if (unchanged) notify(`Round ${number} already holds this: nothing changed.${more ? ` ${more}` : ""}`);
    else sayChange({ how: "edited", number }, before, match, more);
  };
  try {
    sayEdited(await sendChange(() => put(`${matchUrl()}/rounds/${number}?revision=${revision}`, body, CHANGE),
      { holds, say: (match) => sayEdited(match, answerLost("done")) }));
  } catch (error) {
    const refused = refusal(error, revision, holds);
    if (refused?.done) return notify(`Round ${number} already holds this.`);
    if (refused) {
      throw new ApiError(409, gone(refused.match) ?? sheetChanged("this change was not saved: Save again to make it on the sheet as it is now."), error.data);
    }
    throw error;
  }
}

let restoring = false; // an earlier version is on its way back

/**
 * Put back an earlier version of a round (the server says which can come back, and how) on the match at `revision`,
 * as the sheet or the notice showed it: a second tap, or one arriving after another change, changes nothing.
 */
async function restoreVersion(id, revision) {
  if (restoring) return;
  const before = store.state.match;
  const version = before.earlier_versions.find((kept) => kept.id === id);
  // Said as the edit or the round entered it makes ("Round 2 put back: now Ann +18.", "Round 4 brought back: …"),
  // with the way back: what it replaced is kept in turn, and a round brought back is the last.
  const sayRestored = (match, more) => {
    update((state) => ({ ...withNewerMatch(state, match), error: "" }));
    const change = version ? { how: version.restore === "add" ? "brought back" : "put back", number: version.number }
      : sheetChange(before, match);
    if (change) sayChange(change, before, match, more);
  };
  const holds = (match) => Boolean(version) && restoredAlready(match, version);
  restoring = true;
  try {
    sayRestored(await sendChange(() => post(`${matchUrl()}/earlier-versions/${id}/restore`, { revision }, CHANGE),
      { holds, say: (match) => sayRestored(match, answerLost("done")) }));
  } catch (error) {
    const refused = refusal(error, revision, holds);
    if (refused?.done) {
      setError("");
      notify(`Round ${version.number} already holds this version.`);
    } else setError(refused ? sheetChanged("that version was not put back: put it back again if still wanted.") : error.message);
  } finally {
    restoring = false;
  }
}

/**
 * Rename the player in `seat` (1 for the first) to `typed`, on the match at `revision` (as the dialog showed it): the
 * server renames them everywhere the match holds the name, and a rename asked of an older sheet changes nothing. Refused
 * so, it is done when that sheet already names the player so (its answer was lost, or another device did it too).
 * Said in a notice, with the way back (the old name, asked of the sheet the rename made).
 */
async function renamePlayer(seat, typed, revision) {
  const before = store.state.match;
  const was = before.players[seat - 1];
  const name = typed.trim(); // as the server keeps it
  const holds = (match) => match.players[seat - 1] === name;
  const sayRenamed = (match, more = "") => {
    update((state) => ({ ...withNewerMatch(state, match), error: "" }));
    if (was === name) return notify(`${name} is that player's name already: nothing changed.`);
    const back = { label: "Undo the change", holds: (now) => now.revision === match.revision,
      action: () => renamePlayer(seat, was, match.revision).catch((error) => setError(error.message)) };
    const said = changeSaid({ how: "renamed", renames: [[was, name]] }, before, match);
    notify(`${said} The sheet, its exports and the players' records say so.${more ? ` ${more}` : ""}`, [back]);
  };
  try {
    sayRenamed(await sendChange(() => put(`${matchUrl()}/players/${seat}`, { name: typed, revision }, CHANGE),
      { holds, say: (match) => sayRenamed(match, answerLost("done")) }));
  } catch (error) {
    const refused = refusal(error, revision, holds);
    if (refused?.done) return sayRenamed(refused.match);
    if (refused) throw new ApiError(409, sheetChanged(`${was} was not renamed: rename again if still wanted.`), error.data);
    throw error;
  }
}

/**
 * Another device at the table may record, undo or edit a round: fetch the match now and then (and when the page is
 * shown again), and show it when it has moved on (a higher revision), so the totals read here are never stale, and
 * say once what changed there (`sheetChange`). A change of this page's found made (its answer was lost) is said as
 * this page's; while one is on its way, what the refresh finds is shown but not said.
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
  if (unanswered?.holds(match) && !unanswered.holds(state.match)) {
    // The change this page sent last, whose answer never came: it is made, from here.
    const { say } = unanswered;
    unanswered = null;
    say(match);
    return;
  }
  const added = match.rounds.length > state.match.rounds.length ? match.rounds.at(-1) : null;
  const change = sending ? null : sheetChange(state.match, match);
  const table = { upcard: upcardOf(state), hands: handsPayload(state) };
  if (added && !added.draw && sameRound(added.input, table)) {
    // The deal on this table was confirmed on another device: it is done here too, and not proposed again. The notice
    // replaces any offer: what it offered about the cards, or of the sheet before this round, no longer holds.
    update((s) => ({ ...roundConfirmed(s, match), confirmed: [...Object.values(table.hands).flat(), table.upcard], cards: [], stable: false }));
    const news = saidElsewhere(change ?? { how: "entered", number: added.number }, state.match, match);
    notify(`${news} Round ${added.number} was this table's deal: its cards are cleared.`, [], { unasked: true });
    return;
  }
  update((s) => withNewerMatch(s, match));
  if (change) tell(saidElsewhere(change, state.match, match), match);
}

let rematching = false; // the rematch asked for, on its way: a second tap waits for it (one page load, not two)
// the page shown again from the browser's back-forward cache, after the rematch's: Rematch works again
window.addEventListener("pageshow", (event) => {
  if (event.persisted) rematching = false;
});

/** A new match with the same players and rules, the next dealer dealing first: one however often (and on however
 * many phones) Rematch is pressed, its table saying on arrival that it is the rematch (web/api.py `rematch`). */
async function rematch() {
  if (rematching) return;
  rematching = true;
  try {
    const created = await post(`/api/matches/${store.state.match.id}/rematch`, {});
    window.location.assign(`/matches/${created.id}`);
  } catch (error) {
    rematching = false;
    setError(error.message);
  }
}

// ---------------------------------------------------------------- what follows a change

store.subscribe((state, before) => {
  keepTypedCards(state, before);
  scheduleArrange();
  // Cards changed while a proposal was shown: score the same knock again for the cards now on the table, once settled.
  const knocker = knockToScoreAgain(state, before);
  if (knocker) {
    propose(knocker, state.laydown, null, { quiet: true });
    return;
  }
  const auto = autoKnocker(state);
  if (auto) {
    update((s) => ({ ...s, autoProposed: tableKey(s) }));
    propose(auto);
  }
});

/** The card of entry `id` deleted, by the editor's Delete or the Delete key on its chip: the picture paused first, as
 * the editor pauses it (`openEditor`), and the correction saved. */
function removeCard(id) {
  live.freeze();
  update((state) => deleteCard(state, id));
  saveCorrection();
}

const editor = new CardEditor(store, Object.assign(Object.create(null), {
  select: (id) => update((state) => (state.selected === id ? state : { ...state, selected: id })),
  deleteCard: removeCard,
  putCard: (change) => {
    update((state) => ({ ...putCard(state, change), error: "" }));
    saveCorrection();
  },
}));
const grid = new CardGrid(store, { setPlace: placeCards });
const roundEditor = new RoundEditor(store, { editRound });
const renameDialog = new RenameDialog(store, { renamePlayer });

Object.assign(actions, {
  freeze: () => live.freeze(),
  typeHand: (index, text) => typeCards(index, text),
  readAgain,
  openGrid: async (target) => {
    live.freeze();
    await answered(reading); // Pick tapped just after typing in the box: the grid starts from the cards typed
    grid.open(target);
  },
  deleteCard: removeCard,
  openEditor: (id) => {
    live.freeze();
    editor.open(id);
  },
  /** A knock tapped (the hand in `seat`, 0 for the first): its proposal (or why there is none) shown where the player
   * sees it. */
  knock: async (seat) => {
    const knocker = store.state.match.players[seat];
    // the way the players said is the knocker's it was said for: another's knock starts from the engine's
    await propose(knocker, store.state.proposal?.knocker === knocker ? store.state.laydown : null);
    if (store.state.proposal?.knocker === knocker) reveal($("proposal"));
    else if (store.state.error) reveal($("table-error")); // else asked again meanwhile, or the cards changed
  },
  /** The players say how they laid the cards (a listed way, `way` its place in the list, or the knocker's melds
   * regrouped): score that. */
  layDown: (laid, way = null) => {
    const knocker = store.state.proposal?.knocker;
    if (knocker) propose(knocker, laid, way);
  },
  undoRound,
  restoreVersion,
  openRoundEditor: (number) => roundEditor.open(number),
});

/**
 * Two fingers pinched the picture by `ratio` about `at` (their midpoint, client pixels): zoomed within the Zoom button's
 * range (its words saying how far: `zoomLabel`), the spot of the picture under the fingers kept under them: its view
 * scrolls, and the page for what the view cannot (the view grows with the picture down to its capped height), else
 * the cards pinched at slid down from under the fingers (and one finger on the picture draws: it scrolls nothing).
 */
function pinchPicture(ratio, at) {
  const before = store.state.zoom;
  const zoom = pinchedZoom(before, ratio);
  if (zoom === before) return;
  const stage = $("stage");
  const was = stage.getBoundingClientRect();
  const [across, down] = [(at.x - was.left) / was.width, (at.y - was.top) / was.height]; // the spot, in the picture
  update((state) => ({ ...state, zoom }));
  const away = () => {
    const now = stage.getBoundingClientRect();
    return [now.left + across * now.width - at.x, now.top + down * now.height - at.y];
  };
  stage.closest(".stage-scroll").scrollBy(...away());
  window.scrollBy(0, away()[1]);
}

function init() {
  buildHands(store.state, actions);
  render(store.state, null, actions);
  const kept = typedCardsKept();
  if (kept.cards.length || Object.keys(kept.unread).length) update((state) => ({ ...withIds(state, kept.cards), unread: kept.unread }));
  // what the page that sent the players here had to say: read by its live region, the focus left at the page's top
  if (data.notices.length) notify(data.notices.join(" "), [], { unasked: true });
  scheduleArrange();
  enablePicture(() => store.state, { onCard: actions.openEditor, onBox: drawnBox, onPinch: pinchPicture });
  $("notice").addEventListener("keydown", dismissNotice);
  $("upcard-input").addEventListener("focus", () => live.freeze());
  $("upcard-input").addEventListener("change", (event) => typeCards(UPCARD, event.target.value));
  $("upcard-input").addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    readAgain(UPCARD, event.target.value);
    focusLine($("knock-limit"));
  });
  document.querySelector('[data-pick="upcard"]').addEventListener("click", () => actions.openGrid(UPCARD));
  $("camera-start").addEventListener("click", () => live.startBrowser());
  $("camera-stop").addEventListener("click", () => live.stop());
  $("server-camera")?.addEventListener("click", () => live.startServer());
  $("resume-live").addEventListener("click", () => live.resume());
  $("camera-select").addEventListener("change", () => live.camera.running && live.startBrowser());
  $("zoom").addEventListener("click", () => {
    live.freeze();
    // zoomed about the middle of what is in view (it opened on the picture's top left, the cards often out of view)
    const view = document.querySelector(".stage-scroll");
    const share = (scrolled, shown, whole) => (whole ? (scrolled + shown / 2) / whole : 0.5); // the paused picture: no size yet
    const across = share(view.scrollLeft, view.clientWidth, view.scrollWidth);
    const down = share(view.scrollTop, view.clientHeight, view.scrollHeight);
    update((state) => ({ ...state, zoom: nextZoom(state.zoom) }));
    // once the paused picture is drawn in the live one's place (loading, it has no size and nothing scrolls)
    const centre = () => view.scrollTo(across * view.scrollWidth - view.clientWidth / 2, down * view.scrollHeight - view.clientHeight / 2);
    const still = $("still");
    if (still.complete) requestAnimationFrame(centre);
    else still.addEventListener("load", centre, { once: true });
  });
  $("add-card").addEventListener("click", () => {
    live.freeze();
    editor.open(null, { box: null, place: 0 });
  });
  $("confirm-round").addEventListener("click", confirmRound);
  $("cancel-proposal").addEventListener("click", () => {
    sequencer.cancel("propose"); // a way's answer still on its way must not bring the proposal back
    const seat = store.state.match.players.indexOf(store.state.proposal?.knocker);
    update((state) => ({ ...state, proposal: null, laydown: null, pendingKnocker: null, autoProposed: tableKey(state) }));
    refocus($(`status-${seat + 1}`), $("knock-limit")); // the knocker's line: Tab goes on to their knock
  });
  $("record-draw").addEventListener("click", recordDraw);
  $("clear-hands").addEventListener("click", clearTable);
  $("rematch").addEventListener("click", rematch);
  $("rename-player").addEventListener("click", () => renameDialog.open());
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
