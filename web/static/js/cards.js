// Cards in the browser: showing them, and reading one short card (QH, T♠) for the picker's live
// highlight. Typed hands and upcards are read by the server (POST /api/cards), the one card parser.

export const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
export const SUITS = ["C", "D", "H", "S"];
export const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SYMBOL_SUITS = { "♣": "C", "♧": "C", "♦": "D", "♢": "D", "♥": "H", "♡": "H", "♠": "S", "♤": "S" };
const SHORT = /^(10|[2-9TJQKA1])\s*([CDHS♣♧♦♢♥♡♠♤])$/i;

/** "qh" -> "QH", "T♠" -> "10S"; null when the token is not a card. */
export function parseCard(token) {
  const match = SHORT.exec(String(token).trim());
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

/** A card chip element: large, coloured by suit, with an accessible name. */
export function cardChip(card, extraClass = "") {
  const chip = document.createElement("span");
  chip.className = `chip ${isRed(card) ? "red" : "black"} ${extraClass}`.trim();
  chip.textContent = pretty(card);
  chip.dataset.card = card;
  return chip;
}
