// Unit tests of the browser camera's frame loop (node --test, no browser): failed frames are told to the page, which
// says how long to wait; a loop started again while an answer is awaited runs once, not twice. And of the gestures on
// its picture: one count of the fingers makes each a tap, a drawn box or a pan, never two of them, nor one left stuck.
import assert from "node:assert/strict";
import { test } from "node:test";

import { BrowserCamera, FRAME_INTERVAL_MS, FrameLoop } from "../../web/static/js/camera.js";
import { PictureGesture } from "../../web/static/js/table/overlay.js";

const camera = { capture: async () => new Blob(["frame"]) };
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("a failed frame is told with the failures in a row, and the loop waits as long as it is told", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const told = [];
  let refuse = true;
  let sent = 0;
  const loop = new FrameLoop(camera, async () => {
    sent += 1;
    if (refuse) throw new Error("the server follows the cameras of 8 tables at once");
  }, (error, failures) => {
    told.push([error.message, failures]);
    return 5000;
  });
  loop.start();
  await settle();
  assert.deepEqual(told, [["the server follows the cameras of 8 tables at once", 1]]);
  t.mock.timers.tick(FRAME_INTERVAL_MS);
  await settle();
  assert.equal(sent, 1, "not asked again at the frame rate");
  t.mock.timers.tick(5000 - FRAME_INTERVAL_MS);
  await settle();
  assert.equal(sent, 2);
  assert.deepEqual(told.at(-1)[1], 2);
  refuse = false;
  t.mock.timers.tick(5000);
  await settle();
  assert.equal(sent, 3);
  assert.equal(told.length, 2, "an answered frame is not a failure");
  t.mock.timers.tick(FRAME_INTERVAL_MS);
  await settle();
  assert.equal(sent, 4, "answered again: back to the frame rate");
  refuse = true;
  t.mock.timers.tick(FRAME_INTERVAL_MS);
  await settle();
  assert.deepEqual(told.at(-1)[1], 1, "the failures in a row start again");
  loop.stop();
});

test("a loop stopped and started while a frame awaits its answer runs once", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const answers = [];
  const loop = new FrameLoop(camera, () => new Promise((resolve) => answers.push(resolve)));
  loop.start();
  await settle();
  loop.stop(); // the page hidden, or paused to correct
  loop.start(); // shown again before the first answer came
  await settle();
  assert.equal(answers.length, 2);
  answers[0](); // the first run's answer comes late: that run ends there
  await settle();
  t.mock.timers.tick(FRAME_INTERVAL_MS);
  await settle();
  assert.equal(answers.length, 2, "only the running loop asks for frames");
  answers[1]();
  await settle();
  t.mock.timers.tick(FRAME_INTERVAL_MS);
  await settle();
  assert.equal(answers.length, 3);
  loop.stop();
});

test("a camera opened for a start since superseded (Start tapped twice, Stop while opening) is stopped at once", async (t) => {
  const opened = [];
  const pending = [];
  const stream = () => {
    const track = { readyState: "live", stop() { this.readyState = "ended"; }, addEventListener() {} };
    return { getTracks: () => [track], getVideoTracks: () => [track] };
  };
  const mediaDevices = { getUserMedia: () => new Promise((resolve) => pending.push(() => {
    const opening = stream();
    opened.push(opening);
    resolve(opening);
  })) };
  const before = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { value: { mediaDevices }, configurable: true });
  globalThis.document = { createElement: () => ({}) };
  t.after(() => {
    if (before) Object.defineProperty(globalThis, "navigator", before);
    else delete globalThis.navigator;
    delete globalThis.document;
  });
  const video = { srcObject: null, play: async () => {} };
  const live = () => opened.filter((s) => s.getVideoTracks()[0].readyState === "live").length;
  const browserCamera = new BrowserCamera(video);
  const first = browserCamera.start("");
  const second = browserCamera.start(""); // tapped again before the browser opened the first
  pending[0]();
  pending[1]();
  assert.deepEqual(await Promise.all([first, second]), [false, true]);
  assert.equal(live(), 1, "the first camera opened is stopped");
  assert.equal(video.srcObject, opened[1]);
  const third = browserCamera.start("");
  browserCamera.stop(); // Stop tapped while the browser was still opening it
  pending[2]();
  assert.equal(await third, false);
  assert.equal(live(), 0, "no camera left on that nothing shows or stops");
  mediaDevices.getUserMedia = () => Promise.reject(new Error("Permission denied"));
  const refused = browserCamera.start("");
  browserCamera.stop(); // Stop tapped, then the prompt refused: nothing to say about a camera no longer asked for
  assert.equal(await refused, false);
  await assert.rejects(browserCamera.start(""), /Permission denied/);
});

/** A PictureGesture whose acts are recorded as [name, ...what it was told] (pointers as their ids). */
function recordedGesture() {
  const acts = [];
  const gesture = new PictureGesture({
    tap: (box, pointer) => acts.push(["tap", box, pointer.pointerId]),
    draw: (from, pointer) => acts.push(["draw", from, pointer.pointerId]),
    drawTo: (pointer) => acts.push(["drawTo", pointer.pointerId]),
    drawn: (pointer) => acts.push(["drawn", pointer.pointerId]),
    undraw: () => acts.push(["undraw"]),
    pan: (dx, dy) => acts.push(["pan", dx, dy]),
  });
  return { gesture, acts };
}

/** The first finger's on the screen (or, with `pointerType: "mouse"`, the main mouse button's) pointer event at x, y,
 * pressed; `second` for one more finger's. */
const finger = (pointerId, x, y, more = {}) => ({
  pointerId, pointerType: "touch", isPrimary: true, clientX: x, clientY: y, button: 0, buttons: 1, ...more,
});
const second = (pointerId, x, y) => finger(pointerId, x, y, { isPrimary: false });
const FROM = { x: 500, y: 400 }; // where on the picture the press went down, in frame pixels

test("a finger lifted where it went down on a box taps it; moved further, it draws from there and taps nothing", () => {
  const { gesture, acts } = recordedGesture();
  gesture.down(finger(1, 100, 100), { box: 7, from: FROM });
  gesture.move(finger(1, 106, 104));
  gesture.up(finger(1, 106, 104));
  assert.deepEqual(acts, [["tap", 7, 1]]);
  acts.length = 0;
  gesture.down(finger(2, 100, 100), { box: 7, from: FROM });
  gesture.move(finger(2, 140, 100)); // a drag begun on the box: a missed card's strip in a fan
  gesture.move(finger(2, 104, 100)); // and brought back: still the box drawn, never a tap as well
  gesture.up(finger(2, 104, 100));
  assert.deepEqual(acts, [["draw", FROM, 2], ["drawTo", 2], ["drawTo", 2], ["drawn", 2]]);
});

test("a second finger down then cancelled leaves no tap, no box and no pan stuck", () => {
  const { gesture, acts } = recordedGesture();
  gesture.down(finger(1, 100, 100), { box: 7, from: FROM });
  gesture.down(second(2, 140, 100), { box: null, from: FROM });
  gesture.cancel(second(2, 140, 100)); // the browser took the second finger back
  gesture.move(finger(1, 80, 100));
  gesture.up(finger(1, 100, 100));
  assert.deepEqual(acts, [], "the first finger neither taps nor pans nor draws");
  gesture.down(finger(3, 100, 100), { box: 4, from: FROM });
  gesture.up(finger(3, 100, 100));
  assert.deepEqual(acts, [["tap", 4, 3]], "the next finger alone taps: no finger is left counted");
  acts.length = 0;
  gesture.down(finger(4, 100, 100), { box: null, from: FROM });
  gesture.down(second(5, 140, 100), { box: null, from: FROM });
  assert.deepEqual(acts, [["draw", FROM, 4], ["undraw"]], "a second finger: the box begun is no box");
  gesture.cancel(second(5, 140, 100));
  gesture.move(finger(4, 60, 100));
  gesture.up(finger(4, 60, 100));
  assert.deepEqual(acts.slice(2), [], "nor is the first finger drawing or panning after");
});

test("two fingers pan by their midpoint's move until one lifts; the one left then does nothing", () => {
  const { gesture, acts } = recordedGesture();
  gesture.down(finger(1, 100, 100), { box: 7, from: FROM });
  gesture.down(second(2, 140, 100), { box: null, from: FROM });
  gesture.move(finger(1, 70, 110));
  gesture.move(second(2, 110, 110));
  gesture.up(second(2, 110, 110));
  gesture.move(finger(1, 20, 110));
  gesture.up(finger(1, 20, 110));
  assert.deepEqual(acts, [["pan", 15, -5], ["pan", 15, -5]]);
});

test("a mouse's other buttons, a press let go outside the window and a cancelled drawing start nothing", () => {
  const { gesture, acts } = recordedGesture();
  const mouse = (x, y, more = {}) => finger(1, x, y, { pointerType: "mouse", ...more });
  gesture.down(mouse(100, 100, { button: 2, buttons: 2 }), { box: null, from: FROM });
  gesture.up(mouse(100, 100, { button: 2, buttons: 0 }));
  assert.deepEqual(acts, [], "the right button draws no box");
  gesture.down(mouse(100, 100), { box: 7, from: FROM });
  gesture.move(mouse(100, 100, { buttons: 0 })); // let go where the page saw no lift
  gesture.move(mouse(160, 100, { buttons: 0 }));
  gesture.up(mouse(100, 100));
  assert.deepEqual(acts, [], "no tap, no box for a press already let go");
  gesture.down(finger(2, 100, 100), { box: null, from: FROM });
  gesture.cancel(finger(2, 100, 100));
  gesture.down(finger(3, 100, 100), { box: 5, from: FROM });
  gesture.up(finger(3, 100, 100));
  assert.deepEqual(acts, [["draw", FROM, 2], ["undraw"], ["tap", 5, 3]]);
});

test("a finger whose lift the page never saw is not counted once another finger is alone on the screen", () => {
  const { gesture, acts } = recordedGesture();
  gesture.down(finger(1, 100, 100), { box: 7, from: FROM }); // lifted where no event reached the page
  gesture.down(finger(2, 300, 100), { box: 4, from: FROM }); // the next tap, the only finger down
  gesture.up(finger(2, 300, 100));
  assert.deepEqual(acts, [["tap", 4, 2]], "a tap, not the second finger of a pan");
});
