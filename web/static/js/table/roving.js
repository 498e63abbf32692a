// One Tab stop for a row of cards (a hand's chips, the picture's boxes): the arrow keys move the focus between them.
// With a stop per card, two hands' chips took 21 Tab presses to cross, and a picture of 20 cards 20 more.

/**
 * Where the arrow key `key` moves the focus among `count` cards from the one at `at` (its index): Left and Up to the
 * one before, Right and Down to the one after (a row of chips wraps on a phone), Home and End to the first and the
 * last; it stays at the ends. Null for any other key (Enter, Space: the card's own button).
 */
export function rovingStep(key, at, count) {
  const to = { ArrowLeft: at - 1, ArrowUp: at - 1, ArrowRight: at + 1, ArrowDown: at + 1, Home: 0, End: count - 1 }[key];
  return to === undefined ? null : Math.min(Math.max(to, 0), count - 1);
}

/**
 * Which of the cards (`ids`, as drawn now) holds the Tab stop, `held` being the one that held it ({id, at}: its entry's
 * id and its place among them): that card wherever it now lies, else (gone: deleted, moved to another hand, no longer
 * seen) its neighbour, the one now in its place (the one before, where it was the last). -1 where there is no card.
 */
export function rovingStop(ids, held) {
  const kept = ids.indexOf(held?.id);
  return kept >= 0 ? kept : Math.min(held?.at ?? 0, ids.length - 1);
}

/**
 * `container`'s cards (`items(container)`: its elements with a `data-id`, in the arrow keys' order) are one Tab stop:
 * the card last focused (`holdStop`), kept on that card, or its neighbour, when they are drawn anew (`redrawStop`).
 */
export function rovingFocus(container, items) {
  container.addEventListener("keydown", (event) => {
    const cards = items(container);
    const at = cards.indexOf(event.target);
    const to = at < 0 ? null : rovingStep(event.key, at, cards.length);
    if (to === null) return;
    event.preventDefault(); // Up and Down scrolled the page
    cards[to].focus();
  });
  container.addEventListener("focusin", (event) => {
    if (items(container).includes(event.target)) holdStop(container, event.target, items);
  });
  return container;
}

/** `card` holds its container's Tab stop (tabindex 0, the others -1), remembered as its entry's id and its place. */
function holdStop(container, card, items) {
  const cards = items(container);
  cards.forEach((other) => {
    // set only where it changes (the cards kept across a redraw: the stop that moved); the attribute compared, since a
    // button's tabIndex is 0 with none
    const index = String(other === card ? 0 : -1);
    if (other.getAttribute("tabindex") !== index) other.setAttribute("tabindex", index);
  });
  container.dataset.stop = card.dataset.id;
  container.dataset.stopAt = String(cards.indexOf(card));
}

/**
 * `redraw()` draws `container`'s cards anew: the Tab stop goes to the card that held it, else its neighbour
 * (`rovingStop`), and so does the focus where one of them had it (a chip's colour changed by the table's answer, a box
 * redrawn by the camera's every frame, a card corrected or deleted), never the page's body: with no card left, to
 * `lastly` (a line, `focusLine`). A container never focused has its first card as its stop.
 */
export function redrawStop(container, items, redraw, lastly) {
  const focused = container !== document.activeElement && container.contains(document.activeElement); // a card had it
  const { stop, stopAt } = container.dataset;
  redraw();
  const cards = items(container);
  const held = cards[rovingStop(cards.map((card) => card.dataset.id), stop === undefined ? null : { id: stop, at: Number(stopAt) })];
  if (held) holdStop(container, held, items);
  if (held && focused) held.focus({ preventScroll: true });
  else if (focused) lastly();
}
