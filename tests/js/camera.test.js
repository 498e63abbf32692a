// Unit tests of the browser camera's frame loop (node --test, no browser): failed frames are told to the page, which
// says how long to wait; a loop started again while an answer is awaited runs once, not twice.
import assert from "node:assert/strict";
import { test } from "node:test";

import { BrowserCamera, FRAME_INTERVAL_MS, FrameLoop } from "../../web/static/js/camera.js";

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
