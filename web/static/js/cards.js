// Cards in the browser: the same text forms as scorer/cards.py (AS, 10H, Th, Q♥, "ace of spades"), for
// instant feedback; the server re-checks everything.

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

/** "qh" -> "QH", "T♠" -> "10S", "queen of hearts" -> "QH"; null when the token is not a card. */
export function parseCard(token) {
  const match = SHORT.exec(shortenWords(token).trim());
  if (!match) return null;
  let rank = match[1].toUpperCase();
  if (rank === "T") rank = "10";
  if (rank === "1") rank = "A";
  const suit = SYMBOL_SUITS[match[2]] ?? match[2].toUpperCase();
  return rank + suit;
}

/** Parse "QH 10S, 3d" -> {cards: [...], bad: [...tokens that are not cards], repeated: [...]} */
export function parseHand(text) {
  const cards = [];
  const bad = [];
  const repeated = [];
  for (const token of shortenWords(text).split(/[\s,;]+/)) {
    if (!token) continue;
    const card = parseCard(token);
    if (card === null) bad.push(token);
    else if (cards.includes(card)) repeated.push(card);
    else cards.push(card);
  }
  return { cards, bad, repeated };
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
