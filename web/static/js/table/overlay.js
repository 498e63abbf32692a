// The boxes over the camera picture: a box per card (tap to correct), labels that never overlap, hit areas
// of at least 32 CSS pixels, and drawing a box around a card the detector missed.

import { pretty } from "../cards.js";
import { groupOutlines } from "../laydown.js";
import { redrawStop, rovingFocus } from "./roving.js";
import { OUT, UPCARD, cardsAt, placeName, players, tableKey } from "./state.js";

const SVG_NS = "http://www.w3.org/2000/svg";
export const MIN_HIT_PX = 32; // the smallest tap target on a phone
const LABEL_PX = 14; // label text height on screen, whatever the picture's scale
const MIN_DRAWN_PX = 8;
const TAP_SLOP_PX = 12; // a finger that moves less than this between down and up taps
const TAP_CLICK_MS = 800; // the click a tap may be followed by comes sooner than this

/**
 * Label positions that never overlap: for each box (in order), the first free spot of above, below, inside
 * the top, then the left or right side; a label with no free spot is left out (the chips list every card).
 * Boxes and sizes in the same units. Returns [{x, y} | null] (x, y: the label's top-left corner).
 */
export function placeLabels(boxes, widths, height, bounds) {
  const placed = [];
  const fits = (r) => r.x >= 0 && r.y >= 0 && r.x + r.w <= bounds.width && r.y + r.h <= bounds.height;
  const free = (r) => placed.every((p) => r.x + r.w <= p.x || p.x + p.w <= r.x || r.y + r.h <= p.y || p.y + p.h <= r.y);
  return boxes.map(([x1, y1, x2, y2], index) => {
    const w = widths[index];
    const h = height;
    const spots = [
      { x: x1, y: y1 - h }, { x: x1, y: y2 }, { x: x1, y: y1 },
      { x: x1 - w, y: y1 }, { x: x2, y: y1 }, { x: x2 - w, y: y1 - h }, { x: x2 - w, y: y2 },
    ];
    const spot = spots.map((s) => ({ ...s, w, h })).find((r) => fits(r) && free(r));
    if (!spot) return null;
    placed.push(spot);
    return { x: spot.x, y: spot.y };
  });
}

/** The box grown around its centre to at least `minimum` on each side (a tap target). */
export function hitBox([x1, y1, x2, y2], minimum) {
  const grow = (a, b) => {
    const extra = Math.max(0, minimum - (b - a)) / 2;
    return [a - extra, b + extra];
  };
  const [hx1, hx2] = grow(x1, x2);
  const [hy1, hy2] = grow(y1, y2);
  return [hx1, hy1, hx2, hy2];
}

function svgNode(tag, attributes) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

function boxClass(state, entry) {
  if (entry.place === UPCARD) return "upcard";
  if (entry.place === OUT) return "out";
  const answer = state.proposal?.result ?? (state.arrangement?.key === tableKey(state) ? state.arrangement.answer : null);
  const player = answer?.players?.[players(state)[entry.place]];
  if (player?.layoffs?.some((l) => l.card === entry.card)) return "layoff";
  const meld = player?.melds?.findIndex((m) => m.includes(entry.card)) ?? -1;
  if (meld >= 0) return `meld-${meld % 4}`;
  return player?.deadwood?.includes(entry.card) ? "deadwood" : "";
}

/** Distance from a point to a box (0 inside it). */
function distanceTo([x1, y1, x2, y2], { x, y }) {
  return Math.hypot(Math.max(x1 - x, 0, x - x2), Math.max(y1 - y, 0, y - y2));
}

/**
 * The id of the box a tap at `point` means, of `targets` ([{id, box, hit}], frame pixels): among those whose tap
 * target holds the point, the box nearest to it, then the one whose centre is nearest. Fanned cards' small boxes
 * have tap targets grown to 32 CSS pixels that overlap, and the one drawn last is not the one a finger was nearest.
 * Null where no target holds the point.
 */
export function nearestBox(point, targets) {
  const centreDistance = ([x1, y1, x2, y2]) => Math.hypot((x1 + x2) / 2 - point.x, (y1 + y2) / 2 - point.y);
  let best = null;
  for (const target of targets) {
    if (distanceTo(target.hit, point) > 0) continue;
    const key = [distanceTo(target.box, point), centreDistance(target.box)];
    if (!best || key[0] < best.key[0] || (key[0] === best.key[0] && key[1] < best.key[1])) best = { id: target.id, key };
  }
  return best?.id ?? null;
}

/**
 * Frame pixels per CSS pixel of the picture as shown. The SVG fits the frame in its box as the picture does when its
 * height is capped (preserveAspectRatio "meet", object-fit: contain): by the width alone, labels and tap targets of a
 * picture narrower than its box (a phone turned sideways) came out smaller than they are meant to be.
 */
function frameScale(svg, { width, height }) {
  return Math.max(width / Math.max(1, svg.clientWidth || width), height / Math.max(1, svg.clientHeight || height));
}

/**
 * The ids of the cards with a box on the picture in the arrow keys' order: by hand, as the chips below list them (the
 * hands in seat order, the upcard, the cards out of play). Not in reading order: the side players' cards lie one under
 * the next at the picture's edges, so a line across the picture went from one side hand's card to the other's, and
 * boxes at nearly one height swapped places as the camera's boxes moved a pixel from frame to frame.
 */
export function boxOrder(state) {
  const places = [...players(state).map((_, seat) => seat), UPCARD, OUT];
  return places.flatMap((place) => cardsAt(state, place)).filter((entry) => entry.box).map((entry) => String(entry.id));
}

/** The picture's boxes in the arrow keys' order (`boxOrder`; the selected one is drawn last, on top). */
const boxesOf = (svg, state) => {
  const boxes = new Map([...svg.querySelectorAll("g.box")].map((group) => [group.dataset.id, group]));
  return boxOrder(state).map((id) => boxes.get(id)).filter(Boolean);
};

/**
 * Draw every card's box over the picture (the SVG's viewBox is the frame's pixel size). The boxes are one Tab stop
 * (`rovingFocus`, set up by `enablePicture`): a picture of 20 cards took 20 Tab presses to cross. The live camera
 * draws them with every frame, only what changed (`drawInPlace`): the box with the focus keeps it, or its neighbour
 * where its card is no longer seen.
 */
export function drawOverlay(state) {
  const svg = document.getElementById("overlay");
  const lastly = () => document.getElementById("camera-status").focus({ preventScroll: true }); // no box left
  redrawStop(svg, (within) => boxesOf(within, state), () => drawBoxes(svg, state), lastly);
}

/** A node drawn over the picture -> what it draws ("box 12": the box of the card whose entry's id is 12). */
const drawnAs = new WeakMap();

function keyed(node, key) {
  drawnAs.set(node, key);
  return node;
}

function drawBoxes(svg, state) {
  if (!state.frame || !state.camera.source) {
    svg.replaceChildren();
    return;
  }
  const { width, height } = state.frame;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.parentElement.style.setProperty("--picture-aspect", `${width} / ${height}`); // the stage as wide as the picture
  const scale = frameScale(svg, state.frame);
  const stroke = Math.max(2, 2 * scale);
  const boxed = state.cards.filter((entry) => entry.box);
  const fontSize = LABEL_PX * scale;
  const labels = placeLabels(boxed.map((e) => e.box), boxed.map((e) => (pretty(e.card).length * 0.62 + 0.4) * fontSize),
    fontSize * 1.15, { width, height });
  const hits = [];
  const boxes = [];
  const texts = [];
  boxed.forEach((entry, index) => {
    const [x1, y1, x2, y2] = entry.box;
    // Generous tap targets underneath, the boxes themselves on top: a tap on a box is that card, a tap
    // near small (fanned) boxes goes to the nearest box whose target holds it (`nearestBox`).
    const [hx1, hy1, hx2, hy2] = hitBox(entry.box, MIN_HIT_PX * scale);
    hits.push(keyed(svgNode("rect", { class: "hit", "data-id": entry.id, "data-box": entry.box.join(" "),
      x: hx1, y: hy1, width: hx2 - hx1, height: hy2 - hy1 }), `hit ${entry.id}`));
    const classes = ["box", boxClass(state, entry), entry.id === state.selected ? "selected" : ""].filter(Boolean).join(" ");
    const group = svgNode("g", { class: classes, tabindex: "-1", role: "button", "data-card": entry.card, "data-id": entry.id,
      "aria-label": `${pretty(entry.card)} in ${placeName(state, entry.place)}: correct it` });
    group.append(svgNode("rect", { class: "outline", x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: stroke * 2, "stroke-width": stroke }));
    boxes.push(keyed(group, `box ${entry.id}`));
    const spot = labels[index];
    if (spot) {
      const label = svgNode("text", { x: spot.x + fontSize * 0.2, y: spot.y + fontSize, "font-size": fontSize, class: "label" });
      label.textContent = pretty(entry.card);
      texts.push(keyed(label, `label ${entry.id}`));
    }
  });
  const selected = boxes.filter((group) => Number(group.dataset.id) === state.selected);
  const outlines = groupOutlines(state.groups, SVG_NS, stroke).map((outline, index) => keyed(outline, `group ${index}`));
  // a box being drawn (`enablePicture`) stays on top: the live camera draws the boxes with every frame, mid-drag
  const drawing = svg.querySelector("rect.ghost");
  drawInPlace(svg, [...outlines, ...hits, ...boxes.filter((group) => !selected.includes(group)), ...selected,
    ...texts, ...(drawing ? [drawing] : [])]);
}

/**
 * `svg` made to show `nodes` (drawn afresh, keyed by `drawnAs`): a node already drawn for the same key is kept, only
 * its attributes and text that differ changed, and only what appeared or went is added or removed. Drawn anew with
 * every frame, the boxes cost a phone's page a redraw a few times a second, and the box under a finger or a mouse lost
 * its hover, its focus (a screen reader read it anew each time) and its tap.
 */
function drawInPlace(svg, nodes) {
  const drawn = new Map([...svg.children].filter((node) => drawnAs.has(node)).map((node) => [drawnAs.get(node), node]));
  arrange(svg, nodes.map((node) => {
    const kept = drawnAs.has(node) && drawn.get(drawnAs.get(node));
    if (!kept) return node;
    patch(kept, node);
    return kept;
  }));
}

/** `node` made like `like` (of the same tag): its attributes, then its children's alike, or its text. The Tab stop's
 * tabindex is left as it is: the boxes' one stop (`rovingFocus`) keeps it. */
function patch(node, like) {
  for (const { name } of [...node.attributes]) {
    if (name !== "tabindex" && !like.hasAttribute(name)) node.removeAttribute(name);
  }
  for (const { name, value } of like.attributes) {
    if (name !== "tabindex" && node.getAttribute(name) !== value) node.setAttribute(name, value);
  }
  const [children, likes] = [[...node.children], [...like.children]];
  if (children.length !== likes.length || children.some((child, i) => child.localName !== likes[i].localName)) {
    node.replaceChildren(...like.childNodes);
  } else if (likes.length) {
    children.forEach((child, i) => patch(child, likes[i]));
  } else if (node.textContent !== like.textContent) {
    node.textContent = like.textContent;
  }
}

/**
 * `parent`'s children made `nodes`, in their order, moving only the nodes out of place, never the one with the focus
 * (a node moved loses it): the others are put before and after it.
 */
function arrange(parent, nodes) {
  const wanted = new Set(nodes);
  [...parent.childNodes].filter((node) => !wanted.has(node)).forEach((node) => node.remove());
  if (!nodes.length) return;
  let at = nodes.indexOf(document.activeElement);
  if (at < 0 || nodes[at].parentNode !== parent) at = 0;
  if (nodes[at].parentNode !== parent) parent.prepend(nodes[at]);
  for (let i = at + 1; i < nodes.length; i += 1) {
    if (nodes[i - 1].nextSibling !== nodes[i]) nodes[i - 1].after(nodes[i]);
  }
  for (let i = at - 1; i >= 0; i -= 1) {
    if (nodes[i + 1].previousSibling !== nodes[i]) nodes[i + 1].before(nodes[i]);
  }
}

/**
 * The click that follows a tap already taken, at the tap's spot, is swallowed: a touch screen sends it after the
 * finger lifts, and it would land in the editor the tap opened (on a rank, or on Save). A click elsewhere, or later,
 * is the player's own.
 */
function swallowTheTapsClick(x, y) {
  const swallow = (event) => {
    if (Math.hypot(event.clientX - x, event.clientY - y) > TAP_SLOP_PX) return;
    event.preventDefault();
    event.stopPropagation();
    window.removeEventListener("click", swallow, true);
  };
  window.addEventListener("click", swallow, true);
  setTimeout(() => window.removeEventListener("click", swallow, true), TAP_CLICK_MS);
}

/**
 * One gesture on the picture at a time, followed from its pointers' events: the fingers on it are counted once, for
 * taps, drawn boxes and the two-finger pan alike (counted twice, a pointer's end taken by one count and missed by the
 * other left a tap or a pan stuck). A pointer pressed alone (a finger, the main mouse button) on a card's box is a tap
 * of it until it moves further than one, when it draws a box from where it went down (in a fan a missed card's strip
 * lies within its neighbour's box); pressed off every box, it draws at once. A second finger makes the gesture a pan of
 * the two: the tap or the box begun is no more, and nothing starts again until every finger has lifted. Two fingers
 * moved apart or together (further than a tap's slop from their spread at the start: a pan's fingers drift) pinch
 * too, the pan going on, read once a frame (`frame`).
 *
 * `act` does what the gesture means: `tap(box, pointer)`, `draw(from, pointer)` (a box begun at `from`, the press's
 * picture point), `drawTo(pointer)`, `drawn(pointer)` (let go: the box is made), `undraw()` (the box begun is no box),
 * `pan(dx, dy)` (scroll by the fingers' midpoint's move), `pinch(ratio, at)` (zoom by the fingers' spread now over
 * their spread at the last pinch, about their midpoint `at`, {x, y}). Pointers are the events' {pointerId, pointerType,
 * isPrimary, clientX, clientY, button, buttons}.
 */
export class PictureGesture {
  constructor(act) {
    this.act = act;
    this.touches = new Map(); // pointerId -> {x, y}: the fingers on the picture
    this.press = null; // {pointer, x, y, box, from, drawing}: the one pointer pressed
    this.pan = null; // {x, y, spread, pinching}: the two fingers' midpoint as last scrolled to, their spread as last zoomed
  }

  /** `box`: the id of the card's box it went down on, or null; `from`: where on the picture (null: no picture, so
   * no box to draw). */
  down(pointer, { box, from }) {
    if (pointer.pointerType === "touch") {
      if (pointer.isPrimary) this.touches.clear(); // the only finger on the screen: one still counted lifted unseen
      this.touches.set(pointer.pointerId, { x: pointer.clientX, y: pointer.clientY });
    }
    this.endPress(); // a press left over (let go outside the window) starts nothing more
    if (this.touches.size >= 2) {
      this.pan = this.twoFingers();
      return;
    }
    if (pointer.button !== 0 || (box === null && from === null)) return;
    this.press = { pointer: pointer.pointerId, x: pointer.clientX, y: pointer.clientY, box, from, drawing: false };
    if (box === null) this.startDrawing(pointer);
  }

  move(pointer) {
    if (this.touches.has(pointer.pointerId)) this.touches.set(pointer.pointerId, { x: pointer.clientX, y: pointer.clientY });
    if (this.pan) {
      if (this.touches.size < 2) return;
      const now = this.twoFingers();
      this.act.pan(this.pan.x - now.x, this.pan.y - now.y);
      this.pan = { ...this.pan, x: now.x, y: now.y };
      return;
    }
    const press = this.press;
    if (press?.pointer !== pointer.pointerId) return;
    if (!press.drawing) {
      if (!(pointer.buttons & 1)) { // let go outside the picture: no drag to come
        this.press = null;
        return;
      }
      if (Math.hypot(pointer.clientX - press.x, pointer.clientY - press.y) <= TAP_SLOP_PX) return;
      if (press.from === null) { // moved off the box with no picture to draw on: no tap either
        this.press = null;
        return;
      }
      this.startDrawing(pointer);
    }
    this.act.drawTo(pointer);
  }

  /**
   * The fingers' moves of one frame all seen (called once a frame while they move): two fingers moved apart or together
   * pinch. Not on each move: each finger's move comes as an event of its own, and a pan's spread, read between the
   * two, jumped by a frame's move and back.
   */
  frame() {
    if (!this.pan || this.touches.size < 2) return;
    const { x, y, spread } = this.twoFingers();
    const pinching = this.pan.pinching || Math.abs(spread - this.pan.spread) > TAP_SLOP_PX;
    if (!pinching || spread === this.pan.spread) return;
    this.act.pinch(spread / this.pan.spread, { x, y });
    this.pan = { ...this.pan, spread, pinching };
  }

  up(pointer) {
    this.lift(pointer);
    const press = this.press;
    if (press?.pointer !== pointer.pointerId) return;
    this.press = null;
    if (press.drawing) this.act.drawn(pointer);
    else if (Math.hypot(pointer.clientX - press.x, pointer.clientY - press.y) <= TAP_SLOP_PX) this.act.tap(press.box, pointer);
  }

  /** The browser took the pointer back (a system gesture, a palm): whatever it was doing is undone. */
  cancel(pointer) {
    this.lift(pointer);
    if (this.press?.pointer === pointer.pointerId) this.endPress();
  }

  lift(pointer) {
    this.frame(); // a pinch's last move, lifted before its frame came
    this.touches.delete(pointer.pointerId);
    if (this.pan) this.pan = this.touches.size >= 2 ? this.twoFingers() : null; // a third finger lifted: the two left pan
  }

  startDrawing(pointer) {
    this.press.drawing = true;
    this.act.draw(this.press.from, pointer);
  }

  endPress() {
    if (this.press?.drawing) this.act.undraw();
    this.press = null;
  }

  /** The first two fingers' midpoint and spread (the distance between them, at least a pixel). */
  twoFingers() {
    const [a, b] = this.touches.values();
    return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2, spread: Math.max(1, Math.hypot(a.x - b.x, a.y - b.y)), pinching: false };
  }
}

/**
 * The picture's boxes answer taps, keys and drags, and two fingers pan it zoomed and pinch to zoom it (`onPinch(ratio,
 * at)`, as `PictureGesture`'s `pinch`): it takes no touch gestures of its own (css touch-action: one finger draws), so
 * on a phone the zoomed picture was stuck at its top left, and a pinch did nothing.
 *
 * A tap or a key (Enter, Space) on a box opens its card (`onCard(id)`); the arrow keys move between the boxes, one Tab
 * stop (`rovingFocus`, in `boxOrder`). The live camera draws the boxes with every frame (a few a second), a box whose
 * card is read afresh (moved, read as another card) drawn anew, and a box replaced while the finger is down gets no
 * click: so a tap is the box it went down on, taken when the finger (or the main mouse button) lifts near where it went
 * down, and the click that may follow it is that tap's. A click with no press before it (a keyboard, a screen reader)
 * opens its box too. A drag draws a box around a card the detector missed: `onBox(box)` gets it in frame pixels. A
 * pointer's move, lift and cancel are followed on the window: the box it went down on may be gone from the picture
 * (redrawn), and the finger lifted off the picture.
 */
export function enablePicture(getState, { onCard, onBox, onPinch }) {
  const svg = rovingFocus(document.getElementById("overlay"), (within) => boxesOf(within, getState()));
  const idOf = (event) => {
    if (!event.target.matches?.("rect.hit")) return Number(event.target.closest("[data-id]")?.dataset.id ?? NaN);
    const matrix = svg.getScreenCTM()?.inverse();
    if (!matrix) return Number(event.target.dataset.id);
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix);
    const targets = [...svg.querySelectorAll("rect.hit")].map((rect) => {
      const [x, y, width, height] = ["x", "y", "width", "height"].map((name) => Number(rect.getAttribute(name)));
      return { id: Number(rect.dataset.id), box: rect.dataset.box.split(" ").map(Number), hit: [x, y, x + width, y + height] };
    });
    return nearestBox(point, targets) ?? Number(event.target.dataset.id);
  };
  const toFrame = (event) => new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
  let ghost = null; // the box being drawn
  let start = null; // where it was begun, in frame pixels
  const undraw = () => {
    ghost?.remove();
    ghost = null;
    start = null;
  };
  const gesture = new PictureGesture({
    tap(id, pointer) {
      swallowTheTapsClick(pointer.clientX, pointer.clientY);
      onCard(id);
    },
    draw(from, pointer) {
      start = from;
      ghost = svgNode("rect", { class: "ghost" });
      svg.append(ghost);
      svg.setPointerCapture(pointer.pointerId);
    },
    drawTo(pointer) {
      const point = toFrame(pointer);
      ghost.setAttribute("x", Math.min(start.x, point.x));
      ghost.setAttribute("y", Math.min(start.y, point.y));
      ghost.setAttribute("width", Math.abs(point.x - start.x));
      ghost.setAttribute("height", Math.abs(point.y - start.y));
    },
    drawn(pointer) {
      const point = toFrame(pointer);
      const box = [Math.min(start.x, point.x), Math.min(start.y, point.y), Math.max(start.x, point.x), Math.max(start.y, point.y)];
      undraw();
      const frame = getState().frame;
      if (!frame) return; // the camera stopped (or ended) while the box was drawn: no picture to add it to
      const least = MIN_DRAWN_PX * frameScale(svg, frame);
      if (box[2] - box[0] < least || box[3] - box[1] < least) return;
      onBox(box.map((v) => Math.round(v)));
    },
    undraw,
    pan: (dx, dy) => svg.closest(".stage-scroll")?.scrollBy(dx, dy),
    pinch: onPinch,
  });
  svg.addEventListener("pointerdown", (event) => {
    const id = idOf(event);
    gesture.down(event, { box: Number.isNaN(id) ? null : id, from: getState().frame ? toFrame(event) : null });
  });
  let frameAsked = false; // the pinch read at the next frame (`PictureGesture.frame`), once however many moves come
  window.addEventListener("pointermove", (event) => {
    gesture.move(event);
    if (event.pointerType !== "touch" || frameAsked) return;
    frameAsked = true;
    requestAnimationFrame(() => {
      frameAsked = false;
      gesture.frame();
    });
  });
  window.addEventListener("pointerup", (event) => gesture.up(event));
  window.addEventListener("pointercancel", (event) => gesture.cancel(event));
  svg.addEventListener("click", (event) => {
    const id = idOf(event);
    if (!Number.isNaN(id)) onCard(id);
  });
  svg.addEventListener("keydown", (event) => {
    const id = idOf(event);
    if ((event.key === "Enter" || event.key === " ") && !Number.isNaN(id)) {
      event.preventDefault();
      onCard(id);
    }
  });
}
