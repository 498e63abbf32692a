// Unit tests of the browser camera's frame loop (node --test, no browser): failed frames are told to the page, which
// says how long to wait; a loop started again while an answer is awaited runs once, not twice.
import assert from "node:assert/strict";
import { test } from "node:test";

import { FRAME_INTERVAL_MS, FrameLoop } from "../../web/static/js/camera.js";

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
