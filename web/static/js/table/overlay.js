// The boxes over the camera picture: a box per card (tap to correct), labels that never overlap, hit areas
// of at least 32 CSS pixels, and drawing a box around a card the detector missed.

import { pretty } from "../cards.js";
import { groupOutlines } from "../laydown.js";
import { OUT, UPCARD, placeName, players, tableKey } from "./state.js";

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

/** Draw every card's box over the picture (the SVG's viewBox is the frame's pixel size). */
export function drawOverlay(state) {
  const svg = document.getElementById("overlay");
  if (!state.frame || !state.camera.source) {
    svg.replaceChildren();
    return;
  }
  const { width, height } = state.frame;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const scale = width / Math.max(1, svg.clientWidth || width); // frame pixels per CSS pixel
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
    hits.push(svgNode("rect", { class: "hit", "data-id": entry.id, "data-box": entry.box.join(" "),
      x: hx1, y: hy1, width: hx2 - hx1, height: hy2 - hy1 }));
    const classes = ["box", boxClass(state, entry), entry.id === state.selected ? "selected" : ""].filter(Boolean).join(" ");
    const group = svgNode("g", { class: classes, tabindex: "0", role: "button", "data-card": entry.card, "data-id": entry.id,
      "aria-label": `${pretty(entry.card)} in ${placeName(state, entry.place)}: correct it` });
    group.append(svgNode("rect", { class: "outline", x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: stroke * 2, "stroke-width": stroke }));
    boxes.push(group);
    const spot = labels[index];
    if (spot) {
      const label = svgNode("text", { x: spot.x + fontSize * 0.2, y: spot.y + fontSize, "font-size": fontSize, class: "label" });
      label.textContent = pretty(entry.card);
      texts.push(label);
    }
  });
  const selected = boxes.filter((group) => Number(group.dataset.id) === state.selected);
  const outlines = groupOutlines(state.groups, SVG_NS, stroke);
  // a box being drawn (`enableDrawing`) stays on top: the live camera redraws the boxes with every frame, mid-drag
  const drawing = svg.querySelector("rect.ghost");
  svg.replaceChildren(...outlines, ...hits, ...boxes.filter((group) => !selected.includes(group)), ...selected, ...texts,
    ...(drawing ? [drawing] : []));
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
 * Taps and keys on the boxes open the editor for that card (one listener for the whole overlay). The live camera
 * redraws the boxes with every frame (a few a second), and a box replaced while the finger is down gets no click:
 * so a tap is the box it went down on, taken when the finger (or the main mouse button) lifts near where it went
 * down, and the click that may follow it is that tap's. A click with no press before it (a keyboard, a screen
 * reader) opens its box too.
 */
export function enableTaps(onCard) {
  const svg = document.getElementById("overlay");
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
  let pressed = null; // {id, pointer, x, y}: the box the finger or the main button went down on
  const fingers = new Set(); // the fingers on the picture: two pan it (`enableDrawing`), and tap nothing
  svg.addEventListener("pointerdown", (event) => {
    if (event.pointerType === "touch") fingers.add(event.pointerId);
    const id = idOf(event);
    pressed = event.button === 0 && fingers.size < 2 && !Number.isNaN(id)
      ? { id, pointer: event.pointerId, x: event.clientX, y: event.clientY } : null;
  });
  svg.addEventListener("pointerup", (event) => {
    fingers.delete(event.pointerId);
    const press = pressed;
    pressed = null;
    if (!press || press.pointer !== event.pointerId) return;
    if (Math.hypot(event.clientX - press.x, event.clientY - press.y) > TAP_SLOP_PX) return;
    swallowTheTapsClick(event.clientX, event.clientY);
    onCard(press.id);
  });
  svg.addEventListener("pointercancel", (event) => {
    fingers.delete(event.pointerId);
    pressed = null;
  });
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

/**
 * Drag on the picture to draw a box around a card the detector missed; `onBox(box)` gets it in frame pixels. A drag
 * may start on another card's box (in a fan a missed card's strip lies within its neighbour's box): a press there is a
 * tap (`enableTaps`) unless it moves further than one, when it draws from where it went down. Two fingers pan the
 * zoomed picture: it takes no touch gestures of its own (one finger draws), and on a phone it was stuck at its top left.
 */
export function enableDrawing(getState, onBox) {
  const svg = document.getElementById("overlay");
  let start = null;
  let ghost = null;
  let pressed = null; // {point, x, y}: a press on a box, a tap or the start of a drawn box
  let drawer = null; // the pointer (mouse, pen or finger) pressed or drawing
  // Two fingers pan the zoomed picture (one draws: the picture takes no touch gestures of its own, css touch-action)
  const fingers = new Map(); // pointerId -> {x, y}: the fingers on the picture
  let pan = null; // {x, y}: the two fingers' midpoint, as last scrolled to
  const midpoint = () => {
    const [a, b] = fingers.values();
    return { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
  };
  const drop = () => {
    pressed = null;
    ghost?.remove();
    start = null;
    drawer = null;
  };
  const toFrame = (event) => {
    const point = svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(svg.getScreenCTM().inverse());
  };
  const begin = (event, point) => {
    start = point;
    ghost = svgNode("rect", { class: "ghost" });
    svg.append(ghost);
    svg.setPointerCapture(event.pointerId);
  };
  svg.addEventListener("pointerdown", (event) => {
    if (event.pointerType === "touch") fingers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (fingers.size >= 2) { // a second finger: the two pan the picture, and the box begun is no box
      drop();
      pan = midpoint();
      return;
    }
    if (!getState().frame) return;
    drawer = event.pointerId;
    if (event.target.closest("[data-id]")) pressed = { point: toFrame(event), x: event.clientX, y: event.clientY };
    else begin(event, toFrame(event));
  });
  svg.addEventListener("pointercancel", (event) => {
    fingers.delete(event.pointerId);
    if (fingers.size < 2) pan = null;
    drop();
  });
  svg.addEventListener("pointermove", (event) => {
    if (fingers.has(event.pointerId)) fingers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pan) {
      if (fingers.size < 2) return;
      const now = midpoint();
      svg.closest(".stage-scroll")?.scrollBy(pan.x - now.x, pan.y - now.y);
      pan = now;
      return;
    }
    if (event.pointerId !== drawer) return;
    if (pressed && !(event.buttons & 1)) pressed = null; // let go outside the picture: no drag to come
    if (pressed && Math.hypot(event.clientX - pressed.x, event.clientY - pressed.y) > TAP_SLOP_PX) {
      begin(event, pressed.point);
      pressed = null;
    }
    if (!start) return;
    const point = toFrame(event);
    ghost.setAttribute("x", Math.min(start.x, point.x));
    ghost.setAttribute("y", Math.min(start.y, point.y));
    ghost.setAttribute("width", Math.abs(point.x - start.x));
    ghost.setAttribute("height", Math.abs(point.y - start.y));
  });
  svg.addEventListener("pointerup", (event) => {
    fingers.delete(event.pointerId);
    if (fingers.size < 2) pan = null;
    if (event.pointerId !== drawer) return;
    drawer = null;
    pressed = null;
    if (!start) return;
    const point = toFrame(event);
    const box = [Math.min(start.x, point.x), Math.min(start.y, point.y), Math.max(start.x, point.x), Math.max(start.y, point.y)];
    ghost.remove();
    start = null;
    const frame = getState().frame;
    if (!frame) return; // the camera stopped (or ended) while the box was drawn: no picture to add it to
    const scale = frame.width / Math.max(1, svg.clientWidth);
    if (box[2] - box[0] < MIN_DRAWN_PX * scale || box[3] - box[1] < MIN_DRAWN_PX * scale) return;
    onBox(box.map((v) => Math.round(v)));
  });
}
