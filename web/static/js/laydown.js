// What was laid, on the table page. When the score depends on how the cards were laid, the server lists
// the other lay-downs with their scores; the players pick the one they made, or regroup the knocker's
// cards into the melds he laid by tapping a card, then the row it goes to. The server reads, checks and
// scores every lay-down; this module only shows the choices and sends back what the players chose.

import { cardChip, pretty, textWithCards } from "./cards.js";
import { byName } from "./names.js";
import { el } from "./sheet.js";

const WORDS = { knocker_melds: "the knocker's melds", discard: "the discard" };
const signed = (n) => (n > 0 ? `+${n}` : String(n));

/** The score of a result or alternative in one line: "knock: Ann +18, Bob 0". */
function scoreText(laid) {
  const order = [laid.winner, ...Object.keys(laid.points).filter((name) => name !== laid.winner)];
  return `${laid.outcome}: ${order.map((name) => `${name} ${signed(laid.points[name])}`).join(", ")}`;
}

/** What a lay-down does differently, in words: the parts named in `differs`. */
function laidText(laid, differs) {
  const parts = [];
  if (differs.includes("knocker_melds") && laid.knocker_melds) {
    parts.push(`melds ${laid.knocker_melds.map((meld) => meld.map(pretty).join(" ")).join(" | ")}`);
  }
  if (differs.includes("discard") && laid.discard) parts.push(`discard ${pretty(laid.discard)}`);
  for (const name of differs) {
    const layoffs = byName(laid.layoffs, name);
    if (!layoffs) continue;
    parts.push(layoffs.length ? `${name} lays off ${layoffs.map((x) => pretty(x.card)).join(" ")}` : `${name} lays off nothing`);
  }
  return parts.join("; ") || "as scored";
}

/** The lay-down given with a round's input ({knocker_melds, discard, layoffs}), or null when the engine chose it all. */
export function givenLayDown(input) {
  const laid = { knocker_melds: input?.knocker_melds ?? null, discard: input?.discard ?? null, layoffs: input?.layoffs ?? {} };
  const given = laid.knocker_melds !== null || laid.discard !== null || Object.keys(laid.layoffs).length > 0;
  return given ? laid : null;
}

/** A lay-down in words, every part it gives: "melds J♠ Q♠ K♠; Bob lays off 10♠". */
export function describeLayDown(laid) {
  return laidText(laid, ["knocker_melds", "discard", ...Object.keys(laid.layoffs ?? {})]);
}

/**
 * The choices when the score depends on how the cards were laid: one button per way (`ways`: the first answer that
 * listed them, its own way first), way number `way` pressed (null: none, the melds were regrouped).
 */
function choices(ways, way, onPick) {
  const depends = ways.depends_on.map((part) => WORDS[part] ?? `${part}'s layoffs`).join(" and ");
  const list = el("ul", { class: "laydown-choices" });
  const pick = (laid, label, index) => {
    const pressed = index === way;
    const button = el("button", { type: "button", class: "button small laydown-choice", "aria-pressed": String(pressed), text: label });
    if (!pressed) button.addEventListener("click", () => onPick({ knocker_melds: laid.knocker_melds, discard: laid.discard, layoffs: laid.layoffs }, index));
    list.append(el("li", {}, button));
  };
  const differs = [...new Set(ways.alternatives.flatMap((a) => a.differs))];
  pick(ways.laydown, `${laidText(ways.laydown, differs)} — ${scoreText(ways)}`, 0);
  ways.alternatives.forEach((laid, index) => pick(laid, `${laidText(laid, laid.differs)} — ${scoreText(laid)}`, index + 1));
  return el("div", { class: "laydown" },
    el("p", { class: "laydown-question", text: `The score depends on ${depends}. Which way did you lay the cards?` }), list);
}

/** An editor of the knocker's melds: rows of chips; tap a card, then the row it goes to. */
function regroupEditor(result, onRegroup) {
  const knocker = result.players[result.knocker];
  const rows = [...knocker.melds.map((meld) => [...meld]), [...knocker.deadwood]];
  let selected = null;
  let moved = null; // the card just moved: it keeps the focus, in its new row
  const box = el("div", { class: "regroup" });
  // every press draws the rows anew: the control that had the focus (by its key) has it again
  const keyed = (node, key) => {
    node.dataset.key = key;
    return node;
  };
  const draw = () => {
    const active = box.contains(document.activeElement) ? document.activeElement.dataset.key : null;
    const had = active && moved ? `card ${moved}` : active;
    moved = null;
    const nodes = rows.map((cards, index) => {
      const deadwood = index === rows.length - 1;
      const row = el("div", { class: `regroup-row${deadwood ? " is-deadwood" : ""}`, role: "group",
        "aria-label": deadwood ? "deadwood, not laid in a meld" : `meld ${index + 1}` });
      row.append(el("span", { class: "hint", text: deadwood ? "deadwood" : `meld ${index + 1}` }));
      for (const card of cards) {
        const chip = cardChip(card, card === selected ? "selected" : deadwood ? "deadwood" : "");
        const button = keyed(el("button", { type: "button", class: "chip-button", "aria-pressed": String(card === selected),
          "aria-label": `${pretty(card)}: tap, then the row to move it to` }, chip), `card ${card}`);
        button.addEventListener("click", (event) => {
          event.stopPropagation();
          selected = selected === card ? null : card;
          draw();
        });
        row.append(button);
      }
      // a row is no button: with a card chosen, each other row has one, for a keyboard (a tap on the row does the same)
      if (selected && !cards.includes(selected)) {
        row.append(keyed(el("button", { type: "button", class: "button small", text: `Move ${pretty(selected)} here` }), `row ${index}`));
      }
      row.addEventListener("click", () => {
        if (!selected) return;
        rows.forEach((other) => other.includes(selected) && other.splice(other.indexOf(selected), 1));
        cards.push(selected);
        moved = selected;
        selected = null;
        draw();
      });
      return row;
    });
    const addRow = keyed(el("button", { type: "button", class: "button small", text: "New meld" }), "new");
    addRow.addEventListener("click", () => {
      rows.splice(rows.length - 1, 0, []);
      draw();
    });
    const score = el("button", { type: "button", class: "button small primary", text: "Score as laid" });
    score.addEventListener("click", () => onRegroup(rows.slice(0, -1).filter((cards) => cards.length)));
    box.replaceChildren(...nodes, el("div", { class: "actions" }, addRow, score));
    if (had) box.querySelector(`[data-key="${had}"]`)?.focus();
  };
  draw();
  return box;
}

/** The lay-down part of a proposal: the choices when they matter (`ways`, way number `way` pressed: ``choices``), and
 * a way to regroup the knocker's melds. */
export function layDownPanel(result, { ways = result.alternatives?.length ? result : null, way = 0, onPick, onRegroup }) {
  const parts = [];
  if (result.read?.notes?.length) {
    const sentences = result.read.notes.map((note) => (/[.!?]$/.test(note) ? note : `${note}.`)); // each its own
    parts.push(el("p", { class: "hint" }, ...textWithCards(sentences.join(" "), Object.keys(result.players))));
  }
  if (ways) parts.push(choices(ways, way, onPick));
  const details = el("details", { class: "regroup-details" }, el("summary", { text: `Regroup ${result.knocker}'s melds as laid` }));
  details.append(regroupEditor(result, onRegroup));
  parts.push(details);
  return el("div", { class: "laydown-panel" }, ...parts);
}

/** The camera's groups by player (`{name: [{cards, box}]}`, the server's "table" answer) as lists of cards,
 * when they hold exactly the cards the page has in each hand (else null: the cards were changed by hand). */
export function groupsFor(groups, hands) {
  if (!groups) return null;
  const laid = Object.keys(hands).map((name) => [name, (byName(groups, name) ?? []).map((group) => group.cards)]);
  const sorted = (cards) => JSON.stringify([...cards].sort());
  const held = laid.every(([name, inGroups]) => sorted(inGroups.flat()) === sorted(byName(hands, name)));
  return held ? Object.fromEntries(laid) : null;
}

/** Outlines of the laid groups over the picture, one per group of two or more cards (drawn under the boxes). */
export function groupOutlines(groups, svgNamespace, stroke) {
  const nodes = [];
  for (const laid of Object.values(groups ?? {})) {
    for (const group of laid) {
      if (!group.box || group.cards.length < 2) continue;
      const [x1, y1, x2, y2] = group.box;
      const rect = document.createElementNS(svgNamespace, "rect");
      Object.entries({ x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: stroke * 3, "stroke-width": stroke, class: "laid-group" })
        .forEach(([key, value]) => rect.setAttribute(key, value));
      nodes.push(rect);
    }
  }
  return nodes;
}
