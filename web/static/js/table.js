// The table page: cards from the camera (or typed, or picked), click-to-correct, the proposed result,
// and confirming the round onto the score sheet. All scoring happens on the server (/api/arrange,
// /api/score); this file only keeps track of which card lies where.

import { post, put, del, get, request } from "./api.js";
import { DECK, RANKS, SUITS, SUIT_SYMBOLS, cardChip, parseCard, pretty } from "./cards.js";
import { renderSheet, el } from "./sheet.js";
import { BrowserCamera, FrameLoop, cameraSupported, listCameras } from "./camera.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const READING_POLL_MS = 300;
const $ = (id) => document.getElementById(id);

const state = {
  match: JSON.parse($("match-data").textContent),
  cards: [], // {id, card, seat: "1".."4" | "upcard" | "none", box: [x1, y1, x2, y2] | null, detected: card | null}
  frame: null, // {id, width, height, url}: the picture the boxes belong to
  source: null, // "browser" | "server" | null
  frozen: false,
  stable: false,
  corrected: false, // the current frame's cards were corrected by hand
  arrangement: null, // /api/arrange answer for the current cards
  arrangedKey: "",
  proposal: null, // {knocker, result}
  confirmedKey: "", // the cards of the round just confirmed
};
let nextCardId = 1;
const players = state.match.players;
const matchUrl = `/api/matches/${state.match.id}`;
const seatName = (seat) => (seat === "upcard" ? "the upcard" : seat === "none" ? "the cards out of play" : `${players[Number(seat) - 1]}'s hand`);
const cardsOf = (seat) => state.cards.filter((entry) => entry.seat === seat);
const upcard = () => cardsOf("upcard")[0]?.card ?? null;
const handsPayload = () => Object.fromEntries(players.map((name, i) => [name, cardsOf(String(i + 1)).map((e) => e.card)]));

function showError(message) {
  $("table-error").textContent = message ?? "";
}

// ---------------------------------------------------------------- cards on the table

function setCards(entries, { fromCamera = false } = {}) {
  state.cards = entries.map((entry) => ({ id: nextCardId++, box: null, detected: null, ...entry }));
  if (!fromCamera) state.corrected = false;
  cardsChanged();
}

function readingToCards(reading) {
  const entries = [];
  for (const [zone, detections] of Object.entries(reading.zones ?? {})) {
    const seat = zone === "upcard" ? "upcard" : zone === "unassigned" ? "none" : zone;
    if (seat !== "upcard" && seat !== "none" && !(Number(seat) >= 1 && Number(seat) <= players.length)) continue;
    // One upcard: the surest card in the upcard zone; anything else there is out of play (discards).
    const ranked = seat === "upcard" ? [...detections].sort((a, b) => b.confidence - a.confidence) : detections;
    ranked.forEach((detection, index) => {
      entries.push({ card: detection.card, seat: seat === "upcard" && index > 0 ? "none" : seat, box: detection.box,
        detected: detection.card, confidence: detection.confidence });
    });
  }
  return entries;
}

/** Redraw after any change of cards; a shown proposal is scored again at once for the same knocker. */
function cardsChanged() {
  const knocker = state.proposal?.knocker;
  state.proposal = null;
  renderHands();
  renderOverlay();
  renderProposal();
  scheduleArrange();
  if (knocker) propose(knocker);
}

/** Put `card` in `seat`, taking it from wherever it was (a deck has each card once). */
function placeCard(card, seat, box = null) {
  if (seat === "upcard") vacateUpcard(card);
  const existing = state.cards.find((entry) => entry.card === card);
  if (existing) existing.seat = seat;
  else state.cards.push({ id: nextCardId++, card, seat, box, detected: null });
}

// ---------------------------------------------------------------- hands panel

function renderHands() {
  const container = $("hands");
  if (!container.childElementCount) buildHands(container);
  players.forEach((name, index) => {
    const seat = String(index + 1);
    const input = $(`hand-${seat}`);
    if (document.activeElement !== input) input.value = cardsOf(seat).map((e) => e.card).join(" ");
    const chips = $(`chips-${seat}`);
    const info = state.arrangement?.players?.[name];
    const colourOf = meldColours(info);
    chips.replaceChildren(...cardsOf(seat).map((entry) => cardChip(entry.card, colourOf.get(entry.card) ?? "")));
    const count = cardsOf(seat).length;
    let text = `${count} card${count === 1 ? "" : "s"}`;
    if (info?.problem) text = info.problem;
    else if (info) text += ` · deadwood ${info.deadwood_points}${info.can_knock ? " · can knock" : ""}`;
    $(`status-${seat}`).textContent = text;
    const knock = $(`knock-${seat}`);
    knock.disabled = !upcard() || count === 0;
    knock.classList.toggle("primary", Boolean(info?.can_knock));
  });
  const input = $("upcard-input");
  if (document.activeElement !== input) input.value = upcard() ?? "";
  const limit = state.arrangement?.knock_limit;
  $("knock-limit").textContent = upcard() ? (limit === null || limit === undefined ? "" : `Knock with ${limit} or less`) : "No upcard yet";
}

function buildHands(container) {
  players.forEach((name, index) => {
    const seat = String(index + 1);
    const input = el("input", { id: `hand-${seat}`, class: "card-input", autocomplete: "off", spellcheck: "false", placeholder: "e.g. QH 10S 3D" });
    input.addEventListener("focus", freeze);
    input.addEventListener("change", () => typeHand(seat, input.value));
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") typeHand(seat, input.value);
    });
    const pick = el("button", { type: "button", class: "button", "data-pick": seat, text: "Pick" });
    const knock = el("button", { type: "button", class: "button knock", id: `knock-${seat}`, text: `${name} knocked` });
    knock.addEventListener("click", () => propose(name));
    container.append(
      el("section", { class: "hand", "aria-labelledby": `hand-title-${seat}` },
        el("h3", { id: `hand-title-${seat}`, text: name }),
        el("label", { for: `hand-${seat}`, class: "visually-hidden", text: `${name}'s cards` }),
        el("div", { class: "hand-row" }, input, pick),
        el("div", { class: "chips", id: `chips-${seat}`, "aria-live": "polite" }),
        el("div", { class: "hand-row" }, el("span", { class: "status", id: `status-${seat}` }), knock)),
    );
  });
  document.querySelectorAll("[data-pick]").forEach((button) => button.addEventListener("click", () => openGrid(button.dataset.pick)));
}

/** There is one upcard: another card put there sends the old one out of play. */
function vacateUpcard(except) {
  state.cards = state.cards.filter((entry) => !(entry.seat === "upcard" && entry.card !== except && !entry.box));
  for (const entry of cardsOf("upcard")) if (entry.card !== except) entry.seat = "none";
}

/** Cards typed in a box, read by the server (the one card parser: "QH 10S", "ace of clubs"), or null. */
async function readCards(text) {
  try {
    return (await post("/api/cards", { text })).cards;
  } catch (error) {
    showError(error.message);
    return null;
  }
}

async function typeHand(seat, text) {
  const cards = await readCards(text);
  if (!cards) return;
  showError("");
  for (const entry of cardsOf(seat)) if (!cards.includes(entry.card)) entry.seat = entry.box ? "none" : "gone";
  state.cards = state.cards.filter((entry) => entry.seat !== "gone");
  for (const card of cards) placeCard(card, seat);
  markCorrected();
  cardsChanged();
}

async function typeUpcard(text) {
  const cards = await readCards(text);
  if (!cards) return;
  if (cards.length > 1) return showError(`One upcard, not ${cards.length} cards: ${cards.join(" ")}.`);
  const card = cards[0] ?? null;
  showError("");
  for (const entry of cardsOf("upcard")) entry.seat = entry.box ? "none" : "gone";
  state.cards = state.cards.filter((entry) => entry.seat !== "gone");
  if (card) placeCard(card, "upcard");
  markCorrected();
  cardsChanged();
}

const MELD_CLASSES = ["meld-0", "meld-1", "meld-2", "meld-3"];

/** card -> CSS class: the meld it belongs to, "deadwood", or "layoff" when the proposal lays it off. */
function meldColours(info, proposalPlayer = null) {
  const colours = new Map();
  const source = proposalPlayer ?? info;
  source?.melds?.forEach((meld, index) => meld.forEach((card) => colours.set(card, MELD_CLASSES[index % 4])));
  source?.deadwood?.forEach((card) => colours.set(card, "deadwood"));
  proposalPlayer?.layoffs?.forEach((layoff) => colours.set(layoff.card, "layoff"));
  return colours;
}

// ---------------------------------------------------------------- arrangement (melds before a knock)

let arrangeTimer = null;
let arrangeSequence = 0;
function scheduleArrange() {
  clearTimeout(arrangeTimer);
  arrangeTimer = setTimeout(arrange, 120);
}

async function arrange() {
  const body = { match: state.match.id, hands: handsPayload(), upcard: upcard() };
  const key = JSON.stringify(body);
  if (key === state.arrangedKey) return maybeAutoPropose();
  const sequence = ++arrangeSequence;
  try {
    const arrangement = await post("/api/arrange", body);
    if (sequence !== arrangeSequence) return; // a newer request is on its way
    state.arrangement = arrangement;
    state.arrangedKey = key;
    showError("");
  } catch (error) {
    if (sequence !== arrangeSequence) return;
    state.arrangement = null;
    state.arrangedKey = "";
    showError(error.message);
  }
  renderHands();
  renderOverlay();
  maybeAutoPropose();
}

const tableKey = () => JSON.stringify([upcard(), handsPayload()]);

/** A stable camera reading proposes the knock the server proposes (scorer.proposal decides when),
 * but not the round just confirmed, whose cards may still lie on the table. */
function maybeAutoPropose() {
  if (!state.stable || state.proposal || !state.arrangement || state.match.finished) return;
  if (tableKey() === state.confirmedKey) return;
  if (state.arrangement.proposed_knocker) propose(state.arrangement.proposed_knocker);
}

// ---------------------------------------------------------------- proposal and confirmation

async function propose(knocker) {
  const body = { match: state.match.id, upcard: upcard(), knocker, hands: handsPayload() };
  try {
    state.proposal = { knocker, result: await post("/api/score", body) };
    showError("");
  } catch (error) {
    state.proposal = null;
    showError(error.message);
  }
  renderProposal();
  renderOverlay();
  if (state.proposal) $("confirm-round").focus();
}

function describeOutcome(result) {
  const winner = result.winner;
  const points = result.points[winner];
  const kind = { knock: "knock", undercut: "undercut", gin: "gin" }[result.outcome] ?? result.outcome;
  const who = result.outcome === "undercut" ? `${winner} undercuts ${result.knocker}` : `${result.knocker} ${kind === "gin" ? "goes gin" : "knocks"}`;
  return `${who}: ${winner} scores ${points}. Knock limit ${result.knock_limit} (upcard ${pretty(result.upcard)}).`;
}

function renderProposal() {
  const section = $("proposal");
  if (!state.proposal) {
    section.hidden = true;
    return;
  }
  const { result } = state.proposal;
  const parts = [el("p", { class: "outcome", text: describeOutcome(result) })];
  for (const name of players) {
    const player = result.players[name];
    const block = el("div", { class: "result-player" }, el("h3", {
      text: `${name}: deadwood ${player.deadwood_points}, ${result.points[name] > 0 ? "+" : ""}${result.points[name]} points`,
    }));
    player.melds.forEach((meld, index) => block.append(el("div", { class: "meld-line" }, ...meld.map((c) => cardChip(c, MELD_CLASSES[index % 4])))));
    for (const layoff of player.layoffs) {
      block.append(el("div", { class: "meld-line" }, cardChip(layoff.card, "layoff"), el("span", { class: "arrow", text: " laid off on " }),
        ...layoff.onto.map((c) => cardChip(c, "small"))));
    }
    if (player.deadwood.length) block.append(el("div", { class: "meld-line" }, el("span", { class: "hint", text: "deadwood " }), ...player.deadwood.map((c) => cardChip(c, "deadwood"))));
    parts.push(block);
  }
  $("proposal-body").replaceChildren(...parts);
  section.hidden = false;
}

async function confirmRound() {
  if (!state.proposal) return;
  const { knocker } = state.proposal;
  try {
    const answer = await post(`${matchUrl}/rounds`, { upcard: upcard(), knocker, hands: handsPayload() });
    state.confirmedKey = tableKey();
    await saveCorrection();
    setMatch(answer.match);
    clearTable();
  } catch (error) {
    showError(error.message);
  }
}

async function recordDraw() {
  try {
    const answer = await post(`${matchUrl}/rounds`, { draw: true });
    setMatch(answer.match);
    clearTable();
  } catch (error) {
    showError(error.message);
  }
}

function clearTable() {
  state.proposal = null;
  state.stable = false;
  setCards([]);
  if (state.frozen) unfreeze();
}

// ---------------------------------------------------------------- score sheet

function setMatch(match) {
  state.match = match;
  renderSheet($("sheet-body"), match, { onUndo: undoRound, onEdit: openRoundEditor });
  const over = Boolean(match.finished);
  $("confirm-round").disabled = over;
  $("record-draw").disabled = over;
}

async function undoRound(number) {
  if (!number || !window.confirm(`Undo round ${number}?`)) return;
  try {
    setMatch(await del(`${matchUrl}/rounds/${number}`)); // only while it is the last: a second click undoes nothing
  } catch (error) {
    showError(error.message);
  }
}

function openRoundEditor(number) {
  const line = state.match.rounds[number - 1].input; // what was entered: {"draw": true} or upcard, knocker, hands
  const dialog = $("round-editor");
  $("round-editor-title").textContent = `Edit round ${number}`;
  $("round-draw").checked = Boolean(line.draw);
  $("round-upcard").value = line.upcard ?? "";
  $("round-knocker").replaceChildren(...players.map((name) => el("option", { value: name, text: name, selected: line.knocker === name })));
  $("round-hands").replaceChildren(...players.map((name, i) => el("div", {},
    el("label", { for: `round-hand-${i}`, text: `${name}'s cards` }),
    el("input", { id: `round-hand-${i}`, class: "card-input", value: (line.hands?.[name] ?? []).join(" "), autocomplete: "off" }))));
  $("round-error").textContent = "";
  dialog.dataset.number = String(number);
  dialog.showModal();
}

async function saveRoundEdit(event) {
  event.preventDefault();
  const number = Number($("round-editor").dataset.number);
  const body = $("round-draw").checked
    ? { draw: true }
    : {
        upcard: $("round-upcard").value,
        knocker: $("round-knocker").value,
        hands: Object.fromEntries(players.map((name, i) => [name, $(`round-hand-${i}`).value])),
      };
  try {
    setMatch(await put(`${matchUrl}/rounds/${number}`, body));
    $("round-editor").close();
  } catch (error) {
    $("round-error").textContent = error.message;
  }
}

// ---------------------------------------------------------------- overlay over the picture

function renderOverlay() {
  const svg = $("overlay");
  if (!state.frame) {
    svg.replaceChildren();
    return;
  }
  svg.setAttribute("viewBox", `0 0 ${state.frame.width} ${state.frame.height}`);
  const stroke = Math.max(2, state.frame.width / 400);
  const nodes = [];
  // Largest boxes first, so a small box lying inside a big one stays on top and clickable.
  const area = (box) => (box[2] - box[0]) * (box[3] - box[1]);
  const boxed = state.cards.filter((entry) => entry.box).sort((a, b) => area(b.box) - area(a.box));
  for (const entry of boxed) {
    const [x1, y1, x2, y2] = entry.box;
    const seatIndex = Number(entry.seat) - 1;
    const name = players[seatIndex];
    const proposalPlayer = state.proposal?.result?.players?.[name] ?? null;
    const colour = name ? meldColours(state.arrangement?.players?.[name], proposalPlayer).get(entry.card) ?? "unknown" : entry.seat === "upcard" ? "upcard" : "unknown";
    const group = document.createElementNS(SVG_NS, "g");
    group.setAttribute("class", `box ${colour}`);
    group.setAttribute("tabindex", "0");
    group.setAttribute("role", "button");
    group.setAttribute("data-card", entry.card);
    group.setAttribute("aria-label", `${pretty(entry.card)} in ${seatName(entry.seat)}; press to correct`);
    const rect = document.createElementNS(SVG_NS, "rect");
    Object.entries({ x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: stroke * 2, "stroke-width": stroke }).forEach(([k, v]) => rect.setAttribute(k, v));
    const label = document.createElementNS(SVG_NS, "text");
    label.setAttribute("x", x1 + stroke);
    label.setAttribute("y", Math.max(y1 - stroke * 2, stroke * 8));
    label.setAttribute("font-size", Math.max(14, state.frame.width / 45));
    label.textContent = pretty(entry.card);
    group.append(rect, label);
    group.addEventListener("click", (event) => {
      event.stopPropagation();
      openEditor(entry.id);
    });
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        openEditor(entry.id);
      }
    });
    nodes.push(group);
  }
  svg.replaceChildren(...nodes);
}

/** Drag on the picture to draw a box around a card the detector missed. */
function enableDrawing() {
  const svg = $("overlay");
  let start = null;
  let ghost = null;
  const toFrame = (event) => {
    const point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(svg.getScreenCTM().inverse());
  };
  svg.addEventListener("pointerdown", (event) => {
    if (!state.frame || event.target.closest("g.box")) return;
    start = toFrame(event);
    ghost = document.createElementNS(SVG_NS, "rect");
    ghost.setAttribute("class", "ghost");
    svg.append(ghost);
    svg.setPointerCapture(event.pointerId);
  });
  svg.addEventListener("pointermove", (event) => {
    if (!start) return;
    const point = toFrame(event);
    ghost.setAttribute("x", Math.min(start.x, point.x));
    ghost.setAttribute("y", Math.min(start.y, point.y));
    ghost.setAttribute("width", Math.abs(point.x - start.x));
    ghost.setAttribute("height", Math.abs(point.y - start.y));
  });
  svg.addEventListener("pointerup", (event) => {
    if (!start) return;
    const point = toFrame(event);
    const box = [Math.min(start.x, point.x), Math.min(start.y, point.y), Math.max(start.x, point.x), Math.max(start.y, point.y)];
    ghost.remove();
    start = null;
    if (box[2] - box[0] < 8 || box[3] - box[1] < 8) return;
    const seat = players.length === 2 ? ((box[1] + box[3]) / 2 > state.frame.height / 2 ? "1" : "2") : "1";
    freeze();
    openEditor(null, { box, seat });
  });
}

// ---------------------------------------------------------------- click-to-correct editor

function buildEditor() {
  const text = $("editor-text");
  const setPart = (part, value) => {
    const current = parseCard(text.value) ?? "";
    const rank = part === "rank" ? value : current.slice(0, -1) || "A";
    const suit = part === "suit" ? value : current.slice(-1) || "S";
    text.value = rank + suit;
    highlightEditor();
  };
  $("editor-ranks").replaceChildren(...RANKS.map((rank) => {
    const button = el("button", { type: "button", class: "pick rank", "data-rank": rank, text: rank, "aria-pressed": "false" });
    button.addEventListener("click", () => setPart("rank", rank));
    return button;
  }));
  $("editor-suits").replaceChildren(...SUITS.map((suit) => {
    const button = el("button", { type: "button", class: `pick suit ${suit === "D" || suit === "H" ? "red" : "black"}`, "data-suit": suit,
      "aria-label": { C: "clubs", D: "diamonds", H: "hearts", S: "spades" }[suit], text: SUIT_SYMBOLS[suit], "aria-pressed": "false" });
    button.addEventListener("click", () => setPart("suit", suit));
    return button;
  }));
  text.addEventListener("input", highlightEditor);
  $("editor-seat").replaceChildren(
    ...players.map((name, i) => el("option", { value: String(i + 1), text: `${name}'s hand` })),
    el("option", { value: "upcard", text: "The upcard" }),
    el("option", { value: "none", text: "Not in play (stock, discards)" }),
  );
  $("editor-form").addEventListener("submit", saveEditor);
}

function highlightEditor() {
  const card = parseCard($("editor-text").value);
  document.querySelectorAll("#editor-ranks .pick").forEach((b) => b.setAttribute("aria-pressed", String(card?.slice(0, -1) === b.dataset.rank)));
  document.querySelectorAll("#editor-suits .pick").forEach((b) => b.setAttribute("aria-pressed", String(card?.slice(-1) === b.dataset.suit)));
}

function openEditor(cardId, fresh = null) {
  const entry = state.cards.find((e) => e.id === cardId);
  freeze();
  const dialog = $("card-editor");
  dialog.dataset.cardId = entry ? String(entry.id) : "";
  dialog.dataset.box = fresh?.box ? JSON.stringify(fresh.box) : "";
  $("editor-title").textContent = entry ? `Correct ${pretty(entry.card)}` : "Add a missed card";
  $("editor-text").value = entry?.card ?? "";
  $("editor-seat").value = entry?.seat ?? fresh?.seat ?? "1";
  $("editor-delete").hidden = !entry;
  $("editor-error").textContent = "";
  highlightEditor();
  dialog.showModal();
  $("editor-text").select();
}

function saveEditor(event) {
  const action = event.submitter?.value ?? "save";
  const dialog = $("card-editor");
  const entry = state.cards.find((e) => String(e.id) === dialog.dataset.cardId);
  if (action === "cancel") return;
  if (action === "delete") {
    state.cards = state.cards.filter((e) => e !== entry);
  } else {
    const card = parseCard($("editor-text").value);
    if (!card) {
      event.preventDefault();
      $("editor-error").textContent = "Type a card like QH or 10S, or pick a rank and a suit.";
      return;
    }
    const clash = state.cards.find((e) => e.card === card && e !== entry);
    if (clash) {
      event.preventDefault();
      $("editor-error").textContent = `${pretty(card)} is already in ${seatName(clash.seat)}; correct or delete that one first.`;
      return;
    }
    const seat = $("editor-seat").value;
    if (seat === "upcard") vacateUpcard(entry?.card ?? card);
    if (entry) Object.assign(entry, { card, seat });
    else state.cards.push({ id: nextCardId++, card, seat, box: JSON.parse(dialog.dataset.box || "null"), detected: null });
  }
  markCorrected();
  cardsChanged();
  saveCorrection();
}

function markCorrected() {
  if (state.frame) state.corrected = true;
}

/** Save the corrected frame as a training example (the server overwrites it on later corrections). */
async function saveCorrection() {
  if (!state.corrected || !state.frame?.id) return;
  const cards = state.cards.filter((e) => e.box).map((e) => ({ card: e.card, box: e.box, seat: e.seat, detected: e.detected }));
  try {
    await post("/correct/examples", { frame_id: state.frame.id, cards });
  } catch (error) {
    console.warn("correction not saved:", error.message);
  }
}

// ---------------------------------------------------------------- 52-card grid picker

function openGrid(target) {
  const dialog = $("card-grid");
  const single = target === "upcard";
  const chosen = new Set(single ? [upcard()].filter(Boolean) : cardsOf(target).map((e) => e.card));
  $("grid-title").textContent = single ? "Pick the upcard" : `Pick ${players[Number(target) - 1]}'s cards`;
  $("grid-hint").textContent = single ? "One card." : "Tap each card in the hand; tap again to remove it.";
  const buttons = DECK.map((card) => {
    const owner = state.cards.find((e) => e.card === card && e.seat !== target && e.seat !== "none");
    const button = el("button", { type: "button", class: `pick card ${card.endsWith("D") || card.endsWith("H") ? "red" : "black"}`,
      text: pretty(card), "aria-pressed": String(chosen.has(card)), disabled: Boolean(owner),
      title: owner ? `in ${seatName(owner.seat)}` : null, "data-card": card });
    button.addEventListener("click", () => {
      if (single) {
        chosen.clear();
        buttons.forEach((b) => b.setAttribute("aria-pressed", "false"));
      }
      if (chosen.has(card)) chosen.delete(card);
      else chosen.add(card);
      button.setAttribute("aria-pressed", String(chosen.has(card)));
    });
    return button;
  });
  $("grid-cards").replaceChildren(...buttons);
  dialog.onclose = () => {
    if (dialog.returnValue !== "done") return;
    if (single) typeUpcard([...chosen][0] ?? "");
    else typeHand(target, [...chosen].join(" "));
  };
  dialog.returnValue = "";
  freeze();
  dialog.showModal();
}

// ---------------------------------------------------------------- camera: browser or server

const camera = new BrowserCamera($("video"));
const loop = new FrameLoop(camera, sendFrame);
let pollTimer = null;

function setStatus(text) {
  $("camera-status").textContent = text;
}

async function sendFrame(blob) {
  const reading = await request("POST", `/live/frame?players=${players.length}`, blob);
  if (state.frozen || state.source !== "browser") return;
  applyReading(reading, URL.createObjectURL(blob));
}

function conflictText(reading) {
  const conflicts = (reading.conflicts ?? []).map((c) => c.reason).join("; ");
  return conflicts ? ` · ${conflicts}` : "";
}

function applyReading(reading, url) {
  if (!reading.width || !reading.height) return setStatus("Waiting for the first picture…");
  const previous = state.frame;
  if (previous?.url?.startsWith("blob:")) URL.revokeObjectURL(previous.url);
  state.frame = { id: reading.frame_id, width: reading.width, height: reading.height, url };
  const wasStable = state.stable;
  state.stable = Boolean(reading.stable);
  const cards = readingToCards(reading);
  const key = JSON.stringify(cards.map((c) => [c.card, c.seat]));
  const changed = key !== JSON.stringify(state.cards.map((c) => [c.card, c.seat]));
  const moved = changed || cards.some((c, i) => c.box.some((v, k) => Math.abs(v - (state.cards[i]?.box?.[k] ?? -1e9)) > 2));
  const sizeChanged = !previous || previous.width !== reading.width || previous.height !== reading.height;
  if (!changed && !moved && !sizeChanged && wasStable === state.stable) {
    return setStatus(`${state.stable ? "Stable" : "Reading…"} · ${cards.length} cards${conflictText(reading)}`);
  }
  state.cards = cards.map((entry) => ({ id: nextCardId++, ...entry }));
  state.corrected = false;
  if (changed || wasStable !== state.stable) cardsChanged();
  else renderOverlay();
  setStatus(`${state.stable ? "Stable" : "Reading…"} · ${cards.length} cards${conflictText(reading)}`);
}

async function startCamera() {
  if (!cameraSupported()) {
    setStatus("This browser gives no camera here (it needs https or localhost). Type the cards instead.");
    return;
  }
  try {
    stopServerCamera();
    await camera.start($("camera-select").value);
    state.source = "browser";
    $("stage").hidden = false;
    $("stage-hint").hidden = false;
    $("video").hidden = false;
    $("still").hidden = true;
    $("camera-start").hidden = true;
    $("camera-stop").hidden = false;
    setStatus("Camera on: looking for cards…");
    await fillCameraList();
    unfreeze();
  } catch (error) {
    setStatus(`Camera unavailable: ${error.message}. Type the cards instead.`);
  }
}

function stopCamera() {
  loop.stop();
  camera.stop();
  state.source = null;
  state.frame = null;
  $("stage").hidden = true;
  $("stage-hint").hidden = true;
  $("camera-start").hidden = false;
  $("camera-stop").hidden = true;
  $("resume-live").hidden = true;
  state.frozen = false;
  renderOverlay();
  setStatus("Camera off: type or pick the cards below.");
}

async function fillCameraList() {
  const select = $("camera-select");
  const chosen = select.value;
  const cameras = await listCameras().catch(() => []);
  select.replaceChildren(el("option", { value: "", text: "Default camera" }),
    ...cameras.map((device, i) => el("option", { value: device.deviceId, text: device.label || `Camera ${i + 1}` })));
  select.value = chosen;
}

function startServerCamera() {
  stopCamera();
  state.source = "server";
  $("stage").hidden = false;
  $("stage-hint").hidden = false;
  $("video").hidden = true;
  $("still").hidden = false;
  $("still").src = "/live/camera.mjpg";
  setStatus("Table camera on the server: looking for cards…");
  unfreeze();
}

function stopServerCamera() {
  clearInterval(pollTimer);
  pollTimer = null;
  if (state.source === "server") $("still").removeAttribute("src");
}

async function pollServerReading() {
  if (state.frozen || state.source !== "server") return;
  try {
    applyReading(await get("/live/camera/reading"), "/live/camera.mjpg");
  } catch (error) {
    setStatus(error.message);
  }
}

/** Stop following the camera so the current picture can be corrected. */
function freeze() {
  if (!state.source || state.frozen) return;
  state.frozen = true;
  loop.stop();
  clearInterval(pollTimer);
  if (state.frame) {
    const still = $("still");
    still.src = state.source === "server" ? `/live/frames/${state.frame.id}.jpg` : state.frame.url;
    still.hidden = false;
    $("video").hidden = true;
  }
  $("resume-live").hidden = false;
  setStatus("Paused to correct: click a box, or resume live.");
}

function unfreeze() {
  state.frozen = false;
  state.corrected = false;
  $("resume-live").hidden = true;
  if (state.source === "browser") {
    $("video").hidden = false;
    $("still").hidden = true;
    loop.start();
  } else if (state.source === "server") {
    $("still").src = "/live/camera.mjpg";
    clearInterval(pollTimer);
    pollTimer = setInterval(pollServerReading, READING_POLL_MS);
  }
}

// ---------------------------------------------------------------- wiring

function init() {
  buildEditor();
  renderHands();
  enableDrawing();
  setMatch(state.match);
  $("upcard-input").addEventListener("focus", freeze);
  $("upcard-input").addEventListener("change", (event) => typeUpcard(event.target.value));
  $("camera-start").addEventListener("click", startCamera);
  $("camera-stop").addEventListener("click", stopCamera);
  $("server-camera")?.addEventListener("click", startServerCamera);
  $("resume-live").addEventListener("click", unfreeze);
  $("add-card").addEventListener("click", () => openEditor(null, { box: null, seat: "1" }));
  $("confirm-round").addEventListener("click", confirmRound);
  $("cancel-proposal").addEventListener("click", () => {
    state.proposal = null;
    renderProposal();
    renderOverlay();
  });
  $("record-draw").addEventListener("click", recordDraw);
  $("clear-hands").addEventListener("click", () => setCards([]));
  $("round-editor-form").addEventListener("submit", (event) => {
    if (event.submitter?.value === "save") saveRoundEdit(event);
  });
  $("camera-select").addEventListener("change", () => camera.running && startCamera());
  if (!cameraSupported()) setStatus("No camera in this browser here (needs https or localhost): type or pick the cards.");
  document.body.dataset.ready = "true";
}

init();
