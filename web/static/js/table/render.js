// Drawing the table page from its state: one `render(state, before)` after every change. It only shows;
// what a click does comes in `actions` (table.js).

import { cardChip, pretty, textWithCards } from "../cards.js";
import { layDownPanel } from "../laydown.js";
import { byName } from "../names.js";
import { dressSheet, el, renderSheet } from "../sheet.js";
import { drawOverlay } from "./overlay.js";
import { redrawStop, rovingFocus } from "./roving.js";
import { OUT, UPCARD, cardsAt, handStatus, placeName, players, tableKey, upcardOf, zoomLabel } from "./state.js";

const $ = (id) => document.getElementById(id);
const MELD_CLASSES = ["meld-0", "meld-1", "meld-2", "meld-3"];

/** card -> CSS class: the meld it belongs to, "deadwood", or "layoff" when the proposal lays it off. */
export function meldColours(player) {
  const colours = new Map();
  player?.melds?.forEach((meld, index) => meld.forEach((card) => colours.set(card, MELD_CLASSES[index % 4])));
  player?.deadwood?.forEach((card) => colours.set(card, "deadwood"));
  player?.layoffs?.forEach((layoff) => colours.set(layoff.card, "layoff"));
  if (player?.discard) colours.set(player.discard, "discard");
  return colours;
}

/** The colours of every card on the table: from the proposal when one is shown, else from the arrangement. */
function tableColours(state) {
  const colours = new Map();
  const answer = state.arrangement?.key === tableKey(state) ? state.arrangement.answer : null;
  players(state).forEach((name) => {
    const source = byName(state.proposal?.result?.players, name) ?? byName(answer?.players, name);
    const extra = state.proposal?.result?.knocker === name ? { discard: state.proposal.result.discard } : {};
    meldColours({ ...source, ...extra }).forEach((colour, card) => colours.set(card, colour));
  });
  const up = upcardOf(state);
  if (up) colours.set(up, "upcard");
  return colours;
}

/**
 * The focus put on a line that says what the cards make (a hand's, the upcard's), once the box above it is left with
 * Enter or a button that had it is gone: blurred, it was left on the page's body, unseen, and a keyboard's next Tab
 * started over from the top of the page. A line, not a box (a phone's keyboard would rise) nor a button (the next Enter
 * would press it); Tab goes on from there. Brought into view where it is out of it, no further: the last hand's line,
 * focused from its box at a phone's size, lay below the screen's edge.
 */
export function focusLine(line) {
  if (!line) return;
  line.focus({ preventScroll: true });
  line.scrollIntoView({ block: "nearest" });
}

/**
 * Whether the keyboard's focus was taken away by what its button did (the button hidden, disabled or drawn anew): the
 * browser leaves it on the page's body, unseen, and a keyboard's next Tab starts over from the top of the page.
 */
export function focusLost() {
  const active = document.activeElement;
  return !active || active === document.body || !active.isConnected || active.disabled || !active.getClientRects().length;
}

/**
 * A message (the notice, the table's error line) drawn by `draw` in `line` and said once. Where the focus goes on to it
 * (`takes`: the button pressed is gone, or the line had the focus), a screen reader reads it from there, and the live
 * region around it (`region`) is quiet for it; else the region reads it as it appears (`live`: "polite", "assertive").
 * Both, and it was read twice: the notice was an alert, and focused.
 */
function sayOnce({ region, line, live, takes }, draw) {
  region.setAttribute("aria-live", takes ? "off" : live);
  draw();
  if (takes) focusLine(line);
}

/** Each hand's box, chips and buttons, by seat; their players' names are drawn by `renderNames`. */
export function buildHands(state, actions) {
  const container = $("hands");
  state.seating.forEach((_, index) => {
    const n = index + 1;
    const input = el("input", { id: `hand-${n}`, class: "card-input", autocomplete: "off", spellcheck: "false",
      autocapitalize: "characters", placeholder: "e.g. QH 10S 3D", "aria-describedby": `status-${n}` });
    input.addEventListener("focus", actions.freeze);
    input.addEventListener("change", () => actions.typeHand(index, input.value));
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      actions.readAgain(index, input.value); // text the server could not read yet: Enter reads it, changed or not
      // one path: leaving the box sends its change; to the next hand's box, so a phone's keyboard stays up; from the
      // last, to its line (`focusLine`)
      const next = $(`hand-${n + 1}`);
      if (next) next.focus();
      else focusLine($(`status-${n}`));
    });
    const pick = el("button", { type: "button", class: "button", "data-pick": String(n), text: "Pick" });
    pick.addEventListener("click", () => actions.openGrid(index));
    const knock = el("button", { type: "button", class: "button knock", id: `knock-${n}` });
    knock.addEventListener("click", () => actions.knock(index));
    container.append(
      el("section", { class: "hand", id: `hand-section-${n}`, "aria-labelledby": `hand-title-${n}` },
        el("h2", { id: `hand-title-${n}` }),
        el("label", { for: `hand-${n}`, id: `hand-label-${n}`, class: "visually-hidden" }),
        el("div", { class: "hand-row" }, input, pick),
        rovingChips(el("div", { class: "chips", id: `chips-${n}`, role: "toolbar" }), actions),
        el("div", { class: "hand-row" }, el("span", { class: "status", id: `status-${n}`, "aria-live": "polite", tabindex: "-1" }), knock)),
    );
  });
  rovingChips($("out-chips"), actions);
}

const chipsOf = (row) => [...row.querySelectorAll("button.chip")];

/**
 * A row of chips is one Tab stop (a toolbar of buttons, each opening its card in the editor), its arrow keys moving
 * between the chips (`rovingFocus`). Delete or Backspace on a chip deletes its card (`actions.deleteCard`), as the
 * editor's Delete does; the focus goes on to its neighbour as the row is drawn anew (`renderChips`).
 */
function rovingChips(row, actions) {
  row.addEventListener("keydown", (event) => {
    if ((event.key !== "Delete" && event.key !== "Backspace") || !event.target.matches("button.chip")) return;
    event.preventDefault(); // Backspace went back a page in some browsers
    actions.deleteCard(Number(event.target.dataset.id));
  });
  return rovingFocus(row, chipsOf);
}

/**
 * The players' names wherever the table shows them (the title, each hand's heading, box, Pick and knock): drawn again
 * when a player is renamed, here or on another device. A hand's heading also says where its seat is on the picture.
 */
function renderNames(state) {
  const names = players(state);
  const title = names.join(" vs ");
  if ($("table-title").textContent !== title) {
    $("table-title").textContent = title;
    document.title = `${title} · okgin`;
  }
  state.seating.forEach(({ where }, index) => {
    const n = index + 1;
    const name = names[index];
    const heading = $(`hand-title-${n}`);
    if (heading.dataset.name === name) return;
    heading.dataset.name = name;
    heading.replaceChildren(name, ...(where ? [el("span", { class: "seat-where", text: `${where} of the picture` })] : []));
    $(`hand-label-${n}`).textContent = `${name}'s cards`;
    document.querySelector(`[data-pick="${n}"]`).setAttribute("aria-label", `Pick ${name}'s cards`); // whose it picks
    $(`knock-${n}`).textContent = `${name} knocked`;
    $(`chips-${n}`).setAttribute("aria-label", `${name}'s cards: tap one to correct it`);
  });
}

/**
 * Puts `text` on a line under a box. While the table's answer for the cards now there is on its way (`waiting`) the
 * line keeps at least the size it had: it lost its deadwood and knock words on every change and got them back a
 * moment later, and the page jumped under a finger about to tap the button below (a tap's press and release then
 * land on different things and nothing is tapped).
 */
function setLine(line, text, waiting) {
  if (!waiting) Object.assign(line.style, { minHeight: "", minWidth: "" });
  else if (!line.style.minHeight) {
    // its width too: a line that narrowed would widen the knock button beside it, and a button on one line is lower
    const { height, width } = line.getBoundingClientRect(); // not offsetHeight: rounded, the page moved half a pixel
    Object.assign(line.style, { minHeight: `${height}px`, minWidth: `${width}px` });
  }
  line.textContent = text;
}

function renderHands(state, actions) {
  const colours = tableColours(state);
  const over = Boolean(state.match.finished);
  const waiting = Boolean(state.arrangement) && state.arrangement.key !== tableKey(state); // arrange() asks again
  $("hands").setAttribute("aria-busy", String(waiting));
  let redrawn = false; // a hand's chips or line drawn anew: the hands below moved
  players(state).forEach((name, index) => {
    const n = index + 1;
    const entries = cardsAt(state, index);
    const input = $(`hand-${n}`);
    if (document.activeElement !== input) {
      const asked = state.notice?.typed?.place === index ? state.notice.typed.text : undefined;
      input.value = state.unread[index] ?? state.refused?.[index]?.text ?? asked ?? entries.map((e) => e.card).join(" ");
    }
    redrawn = renderChips($(`chips-${n}`), entries, state, colours, actions) || redrawn;
    const status = handStatus(state, index);
    const line = $(`status-${n}`);
    const said = line.textContent;
    setLine(line, status.text, waiting);
    redrawn ||= line.textContent !== said;
    line.classList.toggle("wrong-count", status.wrongCount);
    const knock = $(`knock-${n}`);
    knock.disabled = over || state.saving || !status.canKnock;
    knock.title = status.canKnock || over ? "" : status.whyNot;
    knock.classList.toggle("primary", status.canKnock && !over);
  });
  // a hand's line with the keyboard's focus (its box left with Enter) kept in view as the answer comes: the chips and
  // lines drawn above it then pushed it below a phone's screen
  const focused = document.activeElement;
  if (redrawn && focused?.matches("#hands .status")) focused.scrollIntoView({ block: "nearest" });
  const input = $("upcard-input");
  const up = upcardOf(state);
  const refused = state.refused?.[UPCARD]; // typed, and no card (or two): the box keeps it, its line says why
  if (document.activeElement !== input) input.value = state.unread[UPCARD] ?? refused?.text ?? up ?? "";
  const answer = state.arrangement?.key === tableKey(state) ? state.arrangement.answer : null;
  const limit = answer?.knock_limit;
  setLine($("knock-limit"), refused ? `${refused.message}: fix it in the box` : !up ? "No upcard yet"
    : limit === null || limit === undefined ? ""
      : limit === 0 ? "Only gin may knock" : `Knock with ${limit} or less`, waiting); // 0: an ace upcard, gin-only aces
  $("knock-limit").classList.toggle("wrong-count", Boolean(refused));
  const outCards = cardsAt(state, OUT);
  $("out-cards").hidden = outCards.length === 0;
  renderChips($("out-chips"), outCards, state, colours, actions);
}

/** Puts a row's chips in only when they differ from those it last put in (answers whether they did): the camera's
 * every frame renders the page, and a chip drawn anew under a finger loses the tap (down on one button, up on its
 * replacement). A chip's markup is all it shows, its entry's id included, so the markup as drawn is what is compared. */
function renderChips(container, entries, state, colours, actions) {
  const chips = entries.map((entry) => chipButton(state, entry, colours, actions));
  const drawn = chips.map((chip) => chip.outerHTML).join("");
  if (container.dataset.drawn === drawn) return false;
  container.dataset.drawn = drawn;
  // the chip with the keyboard's focus (its colour changes when the table's answer comes, its card is corrected or
  // deleted): the same card keeps it, else its neighbour; its hand left with no card, the hand's line
  redrawStop(container, chipsOf, () => container.replaceChildren(...chips),
    () => focusLine(container.closest(".hand")?.querySelector(".status")));
  return true;
}

function chipButton(state, entry, colours, actions) {
  const chip = cardChip(entry.card, colours.get(entry.card) ?? "", "button");
  chip.type = "button";
  chip.dataset.id = String(entry.id);
  // whose it is, said with the card: a list of the page's buttons read "7♥: correct it" alike in every hand
  const where = entry.place === OUT ? "out of play" : `in ${placeName(state, entry.place)}`;
  chip.setAttribute("aria-label", `${pretty(entry.card)} ${where}${entry.box ? "" : " (typed)"}: correct it`);
  if (entry.id === state.selected) chip.classList.add("selected");
  chip.addEventListener("click", () => actions.openEditor(entry.id));
  return chip;
}

function describeOutcome(result, names) {
  const { winner, knocker } = result;
  const who = result.outcome === "undercut" ? `${winner} undercuts ${knocker}`
    : `${knocker} ${result.outcome === "gin" ? "goes gin" : "knocks"}`;
  // three or four players: an undercut tied goes to the player nearest the layer-down's left, said so (Ann, with as
  // little deadwood as Dan, scored 0 beside Dan's 20 without a word why)
  const least = result.players[winner].deadwood_points;
  const tied = result.outcome === "undercut"
    ? names.filter((name) => name !== winner && name !== knocker && result.players[name]?.deadwood_points === least) : [];
  const tie = tied.length ? ` ${tied.join(" and ")} ${tied.length === 1 ? "has" : "have"} ${least} too: the tie goes to the player nearest ${knocker}'s left.` : "";
  const discard = result.discard ? ` ${knocker} discards ${pretty(result.discard)}.` : "";
  const doubled = result.doubled ? " Doubled: the upcard is a spade." : "";
  return `${who}: ${winner} scores ${result.points[winner]}.${tie}${doubled}${discard} Knock limit ${result.knock_limit} (upcard ${pretty(result.upcard)}).`;
}

function renderProposal(state, actions) {
  const section = $("proposal");
  // a match ended meanwhile (on another device) leaves a proposal here that can no longer be confirmed: it steps aside
  // for the match's end, said where it was (four players' proposal, a screen and more, hid it with a greyed Confirm)
  section.hidden = !state.proposal || Boolean(state.match.finished);
  $("confirm-round").disabled = state.saving || Boolean(state.match.finished);
  $("confirm-round").textContent = state.saving ? "Saving…" : "Confirm round";
  if (!state.proposal) return;
  // Drawn again only when it changes: it is a live region (read out again whenever drawn: after every camera frame),
  // and a way pressed, or the regrouping opened, was lost on the next render.
  const shown = [state.proposal, ...players(state)];
  if (drawnProposal.length === shown.length && shown.every((part, i) => part === drawnProposal[i])) return;
  drawnProposal = shown;
  const { result } = state.proposal;
  const parts = [el("p", { class: "outcome", text: describeOutcome(result, players(state)) })];
  for (const name of players(state)) {
    const player = result.players[name];
    const points = result.points[name];
    const block = el("div", { class: "result-player" }, el("h3", {
      text: `${name}: deadwood ${player.deadwood_points}, ${points > 0 ? "+" : ""}${points} points`,
    }));
    player.melds.forEach((meld, index) => block.append(el("div", { class: "meld-line" }, ...meld.map((c) => cardChip(c, MELD_CLASSES[index % 4])))));
    for (const layoff of player.layoffs) {
      block.append(el("div", { class: "meld-line" }, cardChip(layoff.card, "layoff"), el("span", { class: "arrow", text: " laid off on " }),
        ...layoff.onto.map((c) => cardChip(c, "small"))));
    }
    if (player.deadwood.length) {
      block.append(el("div", { class: "meld-line" }, el("span", { class: "hint", text: "deadwood " }), ...player.deadwood.map((c) => cardChip(c, "deadwood"))));
    }
    if (name === result.knocker && result.discard) {
      block.append(el("div", { class: "meld-line" }, el("span", { class: "hint", text: "discards " }), cardChip(result.discard, "discard")));
    }
    parts.push(block);
  }
  if (state.proposal.problem) parts.push(el("p", { class: "error-text", role: "alert" }, ...textWithCards(state.proposal.problem, players(state))));
  const { ways, way } = state.proposal;
  parts.push(layDownPanel(result, { ways, way, onPick: actions.layDown, onRegroup: (melds) => actions.layDown({ knocker_melds: melds }) }));
  redrawKeepingFocus($("proposal-body"), parts);
}

let drawnProposal = []; // the proposal and the names it was drawn with

/** `container`'s content replaced by `parts`: the focus (a way pressed) goes to the control drawn in its place, and the
 * regrouping stays open. */
function redrawKeepingFocus(container, parts) {
  const controls = () => [...container.querySelectorAll("button, summary")];
  const focused = controls().indexOf(document.activeElement);
  const open = container.querySelector("details")?.open;
  container.replaceChildren(...parts);
  const details = container.querySelector("details");
  if (details && open) details.open = true;
  if (focused >= 0) controls()[focused]?.focus({ preventScroll: true });
}

/** A trophy drawn in SVG: no emoji font needed. */
export function trophy() {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", "trophy");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", "M7 2h10v2h4v3a5 5 0 0 1-4.6 5A5 5 0 0 1 13 15v3h4v4H7v-4h4v-3a5 5 0 0 1-3.4-3A5 5 0 0 1 3 7V4h4V2zm0 4H5v1a3 3 0 0 0 2 2.8V6zm10 0v3.8A3 3 0 0 0 19 7V6h-2z");
  svg.append(path);
  return svg;
}

/** The agreed number of rounds once the match has played them (draws do not count), else null: they end the match,
 * or a tie at the top plays on. */
function playedOut(match) {
  return match.agreed_rounds_played ? match.rules.rounds_limit : null;
}

function renderMatchOver(state) {
  const over = Boolean(state.match.finished);
  $("match-over").hidden = !over;
  $("record-draw").disabled = over || state.saving;
  sayWinner();
}

/** Who won, where the proposal was, in the words of the sheet's banner (drawn by the server, with the bonuses): one
 * wording of a match's end, said again whenever the sheet is drawn anew. */
function sayWinner() {
  const banner = document.querySelector("#sheet-body .winner-banner");
  const text = banner ? banner.textContent.replace(/\s+/g, " ").trim() : "";
  const line = $("match-over-text");
  if (line.dataset.said === text) return; // redrawn only when it changes: the section is a live region
  line.dataset.said = text;
  // its nodes, not its text: a name written right to left stays set apart (<bdi>) from the score after it
  line.replaceChildren(...(text ? [trophy(), " ", ...banner.cloneNode(true).childNodes] : []));
}

function renderTotals(state) {
  const { match } = state;
  // once the match is won its bonuses are part of the totals, as the sheet shows them
  const totals = match.finished ? match.final_totals : match.totals;
  const limit = match.finished ? null : playedOut(match); // the agreed rounds are played and the lead is tied
  $("totals-bar").replaceChildren(...match.players.map((name) => el("span", { class: `bar-total${match.winner === name ? " is-winner" : ""}` },
    el("span", { class: "bar-name", text: name }), el("strong", { text: String(totals[name]) }))),
  el("span", { class: "bar-target", text: limit ? `${match.goal} · tied: play on` : match.goal }));
}

let noticeCaller = null; // what had the focus when a question took it: it goes back there once the question is gone

/**
 * The notice, drawn only when it changes (a tap in progress stays). It takes the focus where a button pressed here is
 * gone (Confirm, Record a draw: `focusLost`) or one of its own was pressed (Undo, OK), and once gone leaves the focus on
 * the upcard's line; news no tap here asked for (`unasked`: another device's change) leaves the focus where it is.
 * A question about the cards typed (`question`: move a card from another hand?) takes the focus wherever it was: it
 * sat above the hands, a keyboard's 15 Shift+Tabs away. Answered or dismissed (Escape), the focus goes back there.
 */
function renderNotice(state, before) {
  if (before && before.notice === state.notice) return;
  const box = $("notice");
  const had = box.contains(document.activeElement);
  box.hidden = !state.notice;
  if (!state.notice) {
    box.replaceChildren();
    const caller = noticeCaller;
    noticeCaller = null;
    if (had) focusLine(caller?.isConnected && caller.getClientRects().length ? caller : $("knock-limit"));
    return;
  }
  const buttons = state.notice.actions.map(({ label, action, primary }) => {
    const button = el("button", { type: "button", class: `button small${primary ? " primary" : ""}`, text: label });
    button.addEventListener("click", action);
    return button;
  });
  const asks = Boolean(state.notice.question) && !state.notice.unasked && !had; // not again for news following it
  if (asks && !focusLost()) noticeCaller = document.activeElement;
  const takes = had || asks || (!state.notice.unasked && focusLost());
  sayOnce({ region: $("notice-said"), line: box, live: "polite", takes },
    () => box.replaceChildren(el("span", { text: state.notice.text }), ...buttons));
}

/** The table's error line, drawn only when it changes: it takes the focus where a button pressed here is gone (a
 * Confirm the server refused), else its live region says it. */
function renderError(state, before) {
  if (before && before.error === state.error) return;
  const line = $("table-error");
  const takes = Boolean(state.error) && (document.activeElement === line || focusLost());
  sayOnce({ region: line, line, live: "assertive", takes }, () => { line.textContent = state.error; });
}

function renderCamera(state) {
  const { source, frozen, status, hidden } = state.camera;
  $("stage-wrap").hidden = !source;
  $("stage-hint").hidden = !source;
  $("camera-start").hidden = source === "browser";
  $("camera-stop").hidden = source !== "browser";
  $("resume-live").hidden = !(source && frozen);
  $("video").hidden = !(source === "browser" && !frozen);
  const still = $("still");
  still.hidden = !(source === "server" || frozen);
  const src = !source || (hidden && !frozen) ? "" : frozen && state.frame ? (source === "server" ? `/live/frames/${state.frame.id}.jpg` : state.frame.url) : source === "server" ? "/live/camera.mjpg" : "";
  if (src && still.getAttribute("src") !== src) still.src = src;
  if (!src && still.hasAttribute("src")) still.removeAttribute("src");
  const line = $("camera-status");
  if (line.dataset.said !== status) { // redrawn only when it changes: a live region is read out when redrawn
    line.replaceChildren(...textWithCards(status, players(state)));
    line.dataset.said = status;
  }
  document.body.classList.toggle("proposing", Boolean(state.proposal && source && !state.match.finished));
  document.body.classList.toggle("camera-on", Boolean(source));
  const stage = $("stage");
  stage.style.width = `${state.zoom * 100}%`;
  stage.classList.toggle("zoomed", state.zoom > 1);
  $("zoom").textContent = zoomLabel(state.zoom);
  $("zoom").setAttribute("aria-pressed", String(state.zoom > 1));
}

export function render(state, before, actions) {
  renderCamera(state);
  renderNames(state);
  renderHands(state, actions);
  renderProposal(state, actions);
  renderMatchOver(state);
  renderNotice(state, before);
  renderError(state, before);
  if (!before || before.match !== state.match) {
    const sheetActions = { onUndo: actions.undoRound, onEdit: actions.openRoundEditor, onRestore: actions.restoreVersion };
    if (before) renderSheet($("sheet-body"), state.match, sheetActions).then(sayWinner);
    else { // the sheet came with the page, drawn from the same match
      dressSheet($("sheet-body"), sheetActions);
      sayWinner();
    }
    renderTotals(state);
  }
  drawOverlay(state);
}

export const placeLabel = (state, place) => (place === UPCARD ? "The upcard" : place === OUT ? "Not in play (stock, discards)" : `${players(state)[place]}'s hand`);
