// Cards in the browser: showing them, and reading one card (QH, T♠, "ace of spades") for the card editor's
// instant feedback. Typed hands and upcards are read by the server (POST /api/cards), the one card reader.

export const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
export const SUITS = ["C", "D", "H", "S"];
export const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SYMBOL_SUITS = { "♣": "C", "♧": "C", "♦": "D", "♢": "D", "♥": "H", "♡": "H", "♠": "S", "♤": "S" };
const SHORT = /^(10|[2-9TJQKA1])\s*([CDHS♣♧♦♢♥♡♠♤])$/i;
const RANK_WORDS = { ace: "A", two: "2", three: "3", four: "4", five: "5", six: "6", seven: "7", eight: "8",
  nine: "9", ten: "10", jack: "J", queen: "Q", king: "K" };
const SUIT_WORDS = { club: "C", clubs: "C", diamond: "D", diamonds: "D", heart: "H", hearts: "H", spade: "S", spades: "S" };
const LONG = /\b(\w+)\s+of\s+(\w+)\b/gi;

/** "ace of spades" -> "AS" (and "10 of hearts" -> "10H"); other text unchanged. */
const shortenWords = (text) => String(text).replace(LONG, (whole, rank, suit) => {
  const r = RANK_WORDS[rank.toLowerCase()] ?? rank;
  const s = SUIT_WORDS[suit.toLowerCase()];
  return s ? r + s : whole;
});

/** "qh" -> "QH", "T♠" -> "10S", "queen of hearts" -> "QH"; null when the token is not a card. A phone's keyboard
 * writes "♥" + U+FE0F (emoji presentation): still a heart, as the server reads it. */
export function parseCard(token) {
  const match = SHORT.exec(shortenWords(token).replace(/[\uFE0E\uFE0F]/g, "").trim());
  if (!match) return null;
  let rank = match[1].toUpperCase();
  if (rank === "T") rank = "10";
  if (rank === "1") rank = "A";
  const suit = SYMBOL_SUITS[match[2]] ?? match[2].toUpperCase();
  return rank + suit;
}

export const rankOf = (card) => card.slice(0, -1);
export const suitOf = (card) => card.slice(-1);
export const isRed = (card) => suitOf(card) === "D" || suitOf(card) === "H";
export const pretty = (card) => rankOf(card) + SUIT_SYMBOLS[suitOf(card)];
export const DECK = SUITS.flatMap((suit) => RANKS.map((rank) => rank + suit));

/** A card chip element (a span, or a button to tap): large, coloured by suit, with an accessible name. */
export function cardChip(card, extraClass = "", tag = "span") {
  const chip = document.createElement(tag);
  chip.className = `chip ${isRed(card) ? "red" : "black"} ${extraClass}`.trim();
  chip.textContent = pretty(card);
  chip.dataset.card = card;
  return chip;
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The server's words ("2H straddles Bob and Cat") as parts to show: strings, and {card} for each card code standing
 * alone ("10S", not the "AS" of "ASAP" or a "JD" among `names`: players are named as they chose).
 * Card codes are upper case in the server's texts, and its words are lower case.
 */
export function cardParts(text, names = []) {
  const kept = [...names].filter(Boolean).sort((a, b) => b.length - a.length).map(escapeRegExp);
  const name = kept.length ? `${kept.join("|")}|` : "";
  const token = new RegExp(`(?<![\\p{L}\\p{N}])(?:${name}(10|[2-9AJQK])([CDHS]))(?![\\p{L}\\p{N}])`, "gu");
  const parts = [];
  let from = 0;
  const words = String(text);
  for (const found of words.matchAll(token)) {
    if (found[1] === undefined) continue; // a player's name: text
    if (found.index > from) parts.push(words.slice(from, found.index));
    parts.push({ card: found[1] + found[2] });
    from = found.index + found[0].length;
  }
  if (from < words.length) parts.push(words.slice(from));
  return parts;
}

/** `text` with its card codes shown as the page shows cards ("9♥", red or black): text nodes and spans, so the
 * server's words are never parsed as HTML. */
export function textWithCards(text, names = []) {
  return cardParts(text, names).map((part) => {
    if (typeof part === "string") return document.createTextNode(part);
    const card = document.createElement("span");
    card.className = `card-text ${isRed(part.card) ? "red" : "black"}`;
    card.textContent = pretty(part.card);
    return card;
  });
}
