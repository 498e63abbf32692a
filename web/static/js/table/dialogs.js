// The table page's dialogs: correct one card (rank and suit buttons, where it lies), pick cards from the
// 52-card grid, edit a confirmed round, and rename a player. Each reads the state when it opens and hands the result to
// `actions`; none keeps table state of its own.

import { DECK, RANKS, SUITS, SUIT_SYMBOLS, parseCard, pretty } from "../cards.js";
import { describeLayDown, givenLayDown } from "../laydown.js";
import { byName } from "../names.js";
import { el } from "../sheet.js";
import { focusLine, placeLabel } from "./render.js";
import { OUT, UPCARD, cardsAt, findCard, placeName, players, upcardOf } from "./state.js";

const $ = (id) => document.getElementById(id);
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };

/** The card editor: opened on a box, a chip, or a freshly drawn box ({box, place}). */
export class CardEditor {
  constructor(store, actions) {
    this.store = store;
    this.actions = actions;
    this.entryId = null;
    this.fresh = null;
    this.confirmedMove = null; // the card the player agreed to move out of another hand
    this.opener = null; // what had the focus when the editor opened
    this.home = null; // where the opener lies: a row of chips, or the picture (`restoreFocus`)
    const text = $("editor-text");
    const setPart = (part, value) => {
      const current = parseCard(text.value) ?? "";
      const rank = part === "rank" ? value : current.slice(0, -1) || "A";
      const suit = part === "suit" ? value : current.slice(-1) || "S";
      text.value = rank + suit;
      this.highlight();
    };
    $("editor-ranks").replaceChildren(...RANKS.map((rank) => {
      const button = el("button", { type: "button", class: "pick rank", "data-rank": rank, text: rank, "aria-pressed": "false" });
      button.addEventListener("click", () => setPart("rank", rank));
      return button;
    }));
    $("editor-suits").replaceChildren(...SUITS.map((suit) => {
      const button = el("button", { type: "button", class: `pick suit ${suit === "D" || suit === "H" ? "red" : "black"}`,
        "data-suit": suit, "aria-label": SUIT_NAMES[suit], text: SUIT_SYMBOLS[suit], "aria-pressed": "false" });
      button.addEventListener("click", () => setPart("suit", suit));
      return button;
    }));
    text.addEventListener("input", () => this.highlight());
    $("editor-form").addEventListener("submit", (event) => this.submit(event));
    $("card-editor").addEventListener("close", () => {
      this.actions.select(null);
      this.restoreFocus();
    });
  }

  /**
   * Back to the card that was being corrected. The browser returns the focus to the chip or box that opened the
   * editor, but that one is drawn anew when its card is selected or changed: the focus was left on nothing, and a
   * keyboard's next Tab started over from the top of the page. Now it goes to the card as drawn now (wherever it
   * was moved), else to the chip or box holding its row's or the picture's Tab stop (its neighbour, roving.js
   * `rovingStop`), else (its hand left without a card) to the hand's line. Where it was is found as the editor opens: a
   * card deleted is gone from its row, which a chip drawn apart no longer names.
   */
  restoreFocus() {
    const { opener, home, entryId } = this;
    this.opener = null;
    this.home = null;
    const lost = document.activeElement === document.body || $("card-editor").contains(document.activeElement);
    if (!opener || opener.isConnected || !lost) return;
    const card = (scope, id = "") => scope?.querySelector(`button.chip[data-id${id}], g.box[data-id${id}]`);
    const stop = home?.querySelector('button.chip[tabindex="0"], g.box[tabindex="0"]');
    const target = (entryId !== null && card(document, `="${entryId}"`)) || stop || card(home);
    if (target) target.focus({ preventScroll: true });
    else focusLine(home?.closest(".hand")?.querySelector(".status"));
  }

  highlight() {
    const card = parseCard($("editor-text").value);
    document.querySelectorAll("#editor-ranks .pick").forEach((b) => b.setAttribute("aria-pressed", String(card?.slice(0, -1) === b.dataset.rank)));
    document.querySelectorAll("#editor-suits .pick").forEach((b) => b.setAttribute("aria-pressed", String(card?.slice(-1) === b.dataset.suit)));
    this.confirmedMove = null;
    $("editor-save").textContent = "Save";
    $("editor-error").textContent = "";
  }

  open(entryId, fresh = null) {
    const state = this.store.state;
    const entry = state.cards.find((e) => e.id === entryId) ?? null;
    this.entryId = entry?.id ?? null;
    this.fresh = entry ? null : fresh;
    this.opener = document.activeElement;
    this.home = this.opener?.closest(".chips, #overlay") ?? null; // never drawn anew
    const places = [...players(state).map((_, index) => index), UPCARD, OUT];
    $("editor-seat").replaceChildren(...places.map((place) => el("option", { value: String(place), text: placeLabel(state, place) })));
    $("editor-title").textContent = entry ? `Correct ${pretty(entry.card)}` : "Add a missed card";
    $("editor-text").value = entry?.card ?? "";
    $("editor-seat").value = String(entry?.place ?? fresh?.place ?? 0);
    $("editor-delete").hidden = !entry;
    this.highlight();
    this.actions.select(this.entryId);
    $("card-editor").showModal();
    $("editor-text").select();
  }

  submit(event) {
    const action = event.submitter?.value ?? "save";
    if (action === "cancel") return;
    if (action === "delete") {
      this.actions.deleteCard(this.entryId);
      return;
    }
    const card = parseCard($("editor-text").value);
    if (!card) {
      event.preventDefault();
      $("editor-error").textContent = "Type a card like QH or 10S, or pick a rank and a suit.";
      return;
    }
    const value = $("editor-seat").value;
    const place = value === UPCARD || value === OUT ? value : Number(value);
    const state = this.store.state;
    const holder = findCard(state, card);
    const elsewhere = holder && holder.id !== this.entryId && holder.place !== OUT;
    if (elsewhere && this.confirmedMove !== card) {
      // Never move a card out of another hand (or the upcard) without saying so: that hand is left short.
      event.preventDefault();
      this.confirmedMove = card;
      $("editor-error").textContent = `${pretty(card)} is in ${placeName(state, holder.place)}. Save again to move it to ${placeName(state, place)}.`;
      $("editor-save").textContent = "Move it here";
      return;
    }
    this.actions.putCard({ id: this.entryId, card, place, box: this.fresh?.box ?? null });
  }
}

/** The 52-card grid: tap the cards of a hand (or the upcard). Cards in another hand are marked, not hidden. */
export class CardGrid {
  constructor(store, actions) {
    this.store = store;
    this.actions = actions;
    this.target = null;
    this.chosen = new Set();
    $("card-grid").addEventListener("close", () => {
      if ($("card-grid").returnValue !== "done") return;
      const cards = [...this.chosen];
      if (this.target === UPCARD) this.actions.setPlace(UPCARD, cards.slice(0, 1));
      else this.actions.setPlace(this.target, cards);
    });
  }

  open(target) {
    const state = this.store.state;
    const single = target === UPCARD;
    this.target = target;
    this.chosen = new Set(single ? [upcardOf(state)].filter(Boolean) : cardsAt(state, target).map((e) => e.card));
    $("grid-title").textContent = single ? "Pick the upcard" : `Pick ${players(state)[target]}'s cards`;
    $("grid-hint").textContent = single ? "One card." : "Tap each card in the hand; tap again to remove it.";
    // how many are picked, as they are tapped, against how many a hand holds: ten picked from 52 is easily one short
    const size = state.match.hand_size;
    const counted = () => {
      const picked = this.chosen.size;
      const over = picked === size + 1 ? ": a hand and its discard" : `: ${picked - size} more than a hand holds (${size})`;
      $("grid-count").textContent = single ? "" : picked > size ? `${picked} picked${over}` : `${picked} of ${size} picked`;
    };
    counted();
    const buttons = DECK.map((card) => {
      const owner = findCard(state, card);
      const taken = owner && owner.place !== target && owner.place !== OUT;
      const button = el("button", { type: "button", class: `pick card ${card.endsWith("D") || card.endsWith("H") ? "red" : "black"}${taken ? " taken" : ""}`,
        text: pretty(card), "aria-pressed": String(this.chosen.has(card)), "data-card": card,
        title: taken ? `in ${placeName(state, owner.place)}` : null,
        "aria-label": `${pretty(card)}${taken ? `, in ${placeName(state, owner.place)}` : ""}` });
      button.addEventListener("click", () => {
        if (single) {
          this.chosen.clear();
          buttons.forEach((b) => b.setAttribute("aria-pressed", "false"));
        }
        if (this.chosen.has(card)) this.chosen.delete(card);
        else this.chosen.add(card);
        button.setAttribute("aria-pressed", String(this.chosen.has(card)));
        counted();
      });
      return button;
    });
    $("grid-cards").replaceChildren(...buttons);
    const first = Math.max(0, buttons.findIndex((button) => this.chosen.has(button.dataset.card)));
    roveWithArrows(buttons, first);
    $("card-grid").returnValue = "";
    $("card-grid").showModal();
    buttons[first].focus(); // the dialog's first card else (tabIndex -1 is still focusable), not the one Tab reaches
  }
}

/**
 * One Tab stop for the whole grid, its arrow keys moving between the cards as they lie (Home, End: the first, the
 * last): 52 Tab presses reached Done. `first`: the card the grid is entered on.
 */
function roveWithArrows(buttons, first) {
  buttons.forEach((button, index) => {
    button.tabIndex = index === first ? 0 : -1;
    button.addEventListener("keydown", (event) => {
      const columns = buttons.filter((other) => other.offsetTop === buttons[0].offsetTop).length; // as wrapped now
      const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -columns, ArrowDown: columns, Home: -index,
        End: buttons.length - 1 - index }[event.key];
      const next = buttons[index + step];
      if (step === undefined) return;
      event.preventDefault();
      if (!next) return; // the grid's edge: the focus stays
      button.tabIndex = -1;
      next.tabIndex = 0;
      next.focus();
    });
  });
}

/**
 * A dialog that changes the sheet (`dialog`: its id, `said`: its error line's; its form's save button sends
 * `change(revision)`), asked of the match as the dialog showed it (its revision, in the dialog's data). A second tap of
 * save while the first is on its way sends nothing (refused as asked of the sheet the first one changed, its answer
 * replaced the first's notice and its Undo); refused as asked of an older sheet (now shown), saving again asks it of
 * the sheet as it is now.
 */
class SheetChangeDialog {
  constructor(store, actions, dialog, said) {
    this.store = store;
    this.actions = actions;
    this.dialog = dialog;
    this.said = said;
    $(dialog).querySelector("form").addEventListener("submit", (event) => {
      if (event.submitter?.value !== "save") return;
      event.preventDefault();
      this.save();
    });
  }

  /** Show the dialog for the match as it is now. */
  show() {
    $(this.said).textContent = "";
    $(this.dialog).dataset.revision = String(this.store.state.match.revision);
    $(this.dialog).showModal();
  }

  async save() {
    if (this.saving) return;
    this.saving = true;
    try {
      await this.change(Number($(this.dialog).dataset.revision));
      $(this.dialog).close();
    } catch (error) {
      $(this.said).textContent = error.message;
      if (error.status === 409) $(this.dialog).dataset.revision = String(this.store.state.match.revision);
    } finally {
      this.saving = false;
    }
  }
}

/** Edit a confirmed round of the sheet (or make it a draw). */
export class RoundEditor extends SheetChangeDialog {
  constructor(store, actions) {
    super(store, actions, "round-editor", "round-error");
  }

  open(number) {
    const { match } = this.store.state;
    const round = match.rounds[number - 1];
    const line = round.input ?? round; // what was entered: a draw, or upcard, knocker and hands
    $("round-editor-title").textContent = `Edit round ${number}`;
    $("round-draw").checked = line.draw;
    $("round-upcard").value = line.upcard ?? "";
    $("round-knocker").replaceChildren(...match.players.map((name) => el("option", { value: name, text: name, selected: line.knocker === name })));
    $("round-hands").replaceChildren(...match.players.map((name, i) => el("div", {},
      el("label", { for: `round-hand-${i}`, text: `${name}'s cards` }),
      // a box of two lines: a hand of 10 or 11 cards is seen whole on a phone, not scrolled out of a one-line box
      el("textarea", { id: `round-hand-${i}`, class: "card-input", rows: 2, autocomplete: "off", spellcheck: "false",
        text: (byName(line.hands, name) ?? []).join(" ") }))));
    // The lay-down given with the round is kept unless the players untick it (then the engine chooses).
    this.laid = line.draw ? null : givenLayDown(line);
    $("round-laid-row").hidden = !this.laid;
    $("round-laid").checked = Boolean(this.laid);
    $("round-laid-text").textContent = this.laid ? `Scored as laid: ${describeLayDown(this.laid)}` : "";
    $("round-editor").dataset.number = String(number);
    this.show();
  }

  change(revision) {
    const { match } = this.store.state;
    const number = Number($("round-editor").dataset.number);
    const body = $("round-draw").checked
      ? { draw: true }
      : {
          upcard: $("round-upcard").value,
          knocker: $("round-knocker").value,
          hands: Object.fromEntries(match.players.map((name, i) => [name, $(`round-hand-${i}`).value])),
          ...(this.laid && $("round-laid").checked ? this.laid : {}),
        };
    return this.actions.editRound(number, body, revision);
  }
}

/**
 * Rename a player of the match (a name mistyped at set-up): the server renames them everywhere the match holds the name,
 * asked of the match as the dialog showed it (its revision).
 */
export class RenameDialog extends SheetChangeDialog {
  constructor(store, actions) {
    super(store, actions, "rename-dialog", "rename-error");
    // the box starts from the name it changes: a typo is fixed, not typed again
    $("rename-seat").addEventListener("change", () => this.showName());
  }

  /** Open for the player in `seat` (1 for the first). */
  open(seat = 1) {
    const { match } = this.store.state;
    $("rename-seat").replaceChildren(...match.players.map((name, index) => el("option", { value: String(index + 1), text: name })));
    $("rename-seat").value = String(seat);
    this.showName();
    this.show();
  }

  showName() {
    $("rename-name").value = this.store.state.match.players[Number($("rename-seat").value) - 1] ?? "";
  }

  change(revision) {
    return this.actions.renamePlayer(Number($("rename-seat").value), $("rename-name").value, revision);
  }
}
