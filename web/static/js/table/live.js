// The camera feeding the table: the browser's own (frames posted to /live/frame) or the server's
// (`okgin serve --camera`, its reading polled). Answers are sequenced; a frozen picture ignores them.
// A frame or poll that fails (or is not answered in 15 s) says the server's words and waits longer before the next
// (RETRY_MS); the first answered again shows the reading. The browser's camera pauses while the page is hidden and
// says when it ends, or why it did not start.

import { request } from "../api.js";
import { BrowserCamera, FrameLoop, cameraSupported, listCameras } from "../camera.js";
import { el } from "../sheet.js";
import { STALE } from "./sequence.js";
import { applyReading } from "./state.js";

const $ = (id) => document.getElementById(id);
const POLL_MS = 300;
/** A frame (or a poll of the server's camera) not answered in this long is given up and said, as a failed one is: a
 * connection that hangs (the phone's Wi-Fi dropped, a server wedged) left "Stable" on the page and no frame more. */
export const ANSWER_TIMEOUT_MS = 15_000;
const RETRY_MS = [1000, 2000, 5000]; // after a failed poll or frame: wait longer, never hammer the server
const retryDelay = (failures) => RETRY_MS[Math.min(failures, RETRY_MS.length) - 1];
const LOOKING = "Camera on: looking for cards…";
const SERVER_LOOKING = "Table camera on the server: looking for cards…";

/** `url` asked (`method`, `body`) and its answer, or an Error saying the server did not answer within
 * ANSWER_TIMEOUT_MS (not that tapping again is safe: nothing is tapped, the next frame goes by itself). */
async function answerOf(method, url, body = undefined) {
  try {
    return await request(method, url, body, { timeout: ANSWER_TIMEOUT_MS });
  } catch (error) {
    if (error.timedOut) throw new Error(`the okgin server did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`, { cause: error });
    throw error;
  }
}

/** Why the browser's camera did not start, in the players' words (the browser's own are often empty or "Permission
 * denied"); `chosen`: a camera was picked from the list. */
function cameraTrouble(error, chosen) {
  switch (error?.name) {
    case "NotAllowedError":
    case "SecurityError":
      return "this page was not allowed to use the camera: allow it in the browser's settings for this site, then tap Start camera.";
    case "NotFoundError":
    case "OverconstrainedError":
      return chosen ? "the camera chosen is not there any more (unplugged?): the default camera is chosen now."
        : "no camera was found on this device.";
    case "NotReadableError":
    case "AbortError":
      return "the camera could not be opened: another app may be using it.";
    default:
      return sentence(error?.message || error?.name || "the browser gave no reason");
  }
}

/** The server's words with a full stop, and no second one after its own "?" or ".". */
const sentence = (words) => (/[.?!]$/.test(words) ? words : `${words}.`);

/** This page's own id for its camera (`?camera=` of each frame), new each time one starts: two tabs of one browser
 * share a session, and the server keeps a reading per session and camera, so two cameras never mix their cards. */
function pageCameraId() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function describeReading(reading, count) {
  // a match's table names its players where the reading says "seat N"
  const conflicts = (reading.table?.conflicts ?? reading.conflicts ?? []).map((c) => c.reason).join("; ");
  const cards = `${count} ${count === 1 ? "card" : "cards"}`;
  // a frame not read (blurred: the camera moving) says why, its reading the one the frames before it left
  const unread = reading.unread ? ` · Last frame not read: ${reading.unread}` : "";
  return `${reading.stable ? "Stable" : "Reading…"} · ${cards}${conflicts ? ` · ${conflicts}` : ""}${unread}`;
}

export class LiveTable {
  constructor(store, sequencer) {
    this.store = store;
    this.sequencer = sequencer;
    this.camera = new BrowserCamera($("video"), () => this.cameraEnded());
    this.cameraId = pageCameraId();
    this.loop = new FrameLoop(this.camera, (blob) => this.sendFrame(blob), (error, failures) => this.frameFailed(error, failures));
    this.pollTimer = null;
    this.failures = 0;
    document.addEventListener("visibilitychange", () => this.visibilityChanged());
  }

  get matchId() {
    return this.store.state.match.id;
  }

  setCamera(change) {
    this.store.update((state) => ({ ...state, camera: { ...state.camera, ...change } }));
  }

  /** Show a reading (the server's "table" answer placed every card) unless the picture is frozen. */
  show(reading, url) {
    const state = this.store.state;
    if (state.camera.frozen) return;
    if (!reading.width || !reading.height) {
      this.setCamera({ status: "Waiting for the first picture…" });
      return;
    }
    const previous = state.frame?.url;
    // a browser frame not read keeps the picture its reading came from (and the frame a correction is saved with)
    const kept = Boolean(reading.unread && url.startsWith("blob:") && state.frame?.url?.startsWith("blob:"));
    if (kept) URL.revokeObjectURL(url);
    else if (previous?.startsWith("blob:") && previous !== url) URL.revokeObjectURL(previous);
    const frame = kept ? state.frame : { id: reading.frame_id, width: reading.width, height: reading.height, url };
    const count = Object.values(reading.table.hands).flat().length + (reading.table.upcard ? 1 : 0);
    this.store.update((s) => ({
      ...applyReading(s, { frame, stable: Boolean(reading.stable), table: reading.table }),
      camera: { ...s.camera, status: describeReading(reading, count) },
    }));
  }

  async sendFrame(blob) {
    if (this.store.state.camera.source !== "browser") return;
    const url = `/live/frame?match=${this.matchId}&camera=${this.cameraId}`;
    const reading = await this.sequencer.latest("frame", () => answerOf("POST", url, blob));
    if (reading === STALE || this.store.state.camera.source !== "browser") return;
    this.draw(reading, URL.createObjectURL(blob));
  }

  /** `show`, outside the frame's or the poll's failures: a page that cannot draw a reading is a bug of the page,
   * reported as one (the console, the tests' page errors), never said to the players as a frame not read nor slowing
   * the camera down. */
  draw(reading, url) {
    try {
      this.show(reading, url);
    } catch (error) {
      reportError(error);
    }
  }

  /** Post no frame more, and drop the answer of the one on its way: it is of a camera, or a moment, gone. */
  stopFrames() {
    this.loop.stop();
    this.sequencer.cancel("frame");
  }

  /** A frame not read (refused, no model, the server unreachable): say why in the server's words, no longer "Stable",
   * and wait longer before the next; the next frame answered shows its reading. Answers how long to wait (ms). */
  frameFailed(error, failures) {
    const { source, frozen } = this.store.state.camera;
    if (source === "browser" && !frozen) {
      const status = `Camera frames not read: ${sentence(error.message)} Trying again…`;
      this.store.update((state) => ({ ...state, stable: false, camera: { ...state.camera, status } }));
    }
    return retryDelay(failures);
  }

  /** The camera stopped by itself (unplugged, taken by another app): stop posting, offer Start again; the cards on
   * the table stay as they were. */
  cameraEnded() {
    this.stopFrames();
    this.store.update((state) => ({ ...state, frame: null, stable: false, zoom: 1,
      camera: { ...state.camera, source: null, frozen: false,
        status: "The camera stopped (unplugged, or taken by another app). Tap Start camera to start it again, or type the cards." } }));
  }

  /** A hidden page (another tab, the phone locked) neither posts frames nor follows the server's camera (its
   * reading polled, its picture streamed): nobody sees them, and they take the server's time and a viewer's place
   * from the tables that play. Shown again, it goes on. */
  visibilityChanged() {
    const { source, frozen, ended } = this.store.state.camera;
    if (!source || frozen || (source === "server" && ended)) {
      // nothing to pause or go on with (what it said stays said); the stream waits for it once the camera is live
      this.setCamera({ hidden: document.hidden });
      return;
    }
    if (document.hidden) {
      this.stopFrames();
      this.stopServer();
      this.store.update((state) => ({ ...state, stable: false,
        camera: { ...state.camera, hidden: true, status: "Camera paused while this page is hidden" } }));
    } else {
      this.setCamera({ hidden: false, status: source === "server" ? SERVER_LOOKING : LOOKING });
      if (source === "browser") this.loop.start();
      else this.schedulePoll(0);
    }
  }

  async startBrowser() {
    if (!cameraSupported()) {
      this.setCamera({ status: "This browser gives no camera here (it needs https or localhost). Type the cards instead." });
      return;
    }
    const select = $("camera-select");
    const chosen = select.value;
    try {
      this.stopServer();
      this.stopFrames(); // a frame of the camera switched from, answered after the switch, is not the new one's
      if (!(await this.camera.start(chosen))) return; // started again, or stopped, while it was opening
      // a camera switched to, or started again: the server reads it afresh, the frames before not voted with its own
      this.cameraId = pageCameraId();
      this.setCamera({ source: "browser", frozen: false, status: LOOKING });
      await this.fillCameraList();
      this.resume();
    } catch (error) {
      // the camera that was on (another one picked) is off now: the page says so, keeping the cards read
      if (chosen && ["NotFoundError", "OverconstrainedError"].includes(error?.name)) select.value = "";
      this.store.update((state) => ({ ...state, frame: null, stable: false, zoom: 1,
        camera: { ...state.camera, source: null, frozen: false,
          status: `Camera unavailable: ${cameraTrouble(error, chosen)} Type the cards instead.` } }));
      await this.fillCameraList(); // a camera unplugged leaves the list
    }
  }

  stop() {
    this.stopFrames();
    this.camera.stop();
    this.stopServer();
    this.store.update((state) => ({ ...state, frame: null, stable: false, zoom: 1,
      camera: { ...state.camera, source: null, frozen: false, status: "Camera off: type or pick the cards below." } }));
  }

  async fillCameraList() {
    const select = $("camera-select");
    const chosen = select.value;
    const cameras = await listCameras().catch(() => []);
    select.replaceChildren(el("option", { value: "", text: "Default camera" }),
      ...cameras.map((device, i) => el("option", { value: device.deviceId, text: device.label || `Camera ${i + 1}` })));
    select.value = chosen;
  }

  startServer() {
    this.loop.stop();
    this.camera.stop();
    this.failures = 0;
    this.setCamera({ source: "server", frozen: false, ended: false, status: SERVER_LOOKING });
    this.resume();
  }

  stopServer() {
    clearTimeout(this.pollTimer);
    this.pollTimer = null;
    this.sequencer.cancel("poll");
  }

  schedulePoll(delay) {
    clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => this.poll(), delay);
  }

  async poll() {
    const { source, frozen } = this.store.state.camera;
    if (source !== "server" || frozen) return;
    try {
      const reading = await this.sequencer.latest("poll", () => answerOf("GET", `/live/camera/reading?match=${this.matchId}`));
      if (reading === STALE) return;
      this.failures = 0;
      this.draw(reading, "/live/camera.mjpg");
      this.schedulePoll(POLL_MS);
    } catch (error) {
      if (error.status === 410) {
        // The camera ended (a video file) or failed for good: say so once, stop asking.
        this.setCamera({ ended: true, status: `${error.message}. Type the cards, or restart the server's camera.` });
        return;
      }
      this.setCamera({ status: error.message });
      this.schedulePoll(retryDelay(++this.failures));
    }
  }

  /** Stop following the camera so the current picture can be corrected. */
  freeze() {
    const { source, frozen } = this.store.state.camera;
    if (!source || frozen) return;
    this.stopFrames();
    this.stopServer();
    this.setCamera({ frozen: true, status: "Paused to correct: tap a card or a box, or resume live." });
  }

  resume() {
    this.store.update((state) => ({ ...state, corrected: false, zoom: 1, camera: { ...state.camera, frozen: false } }));
    const { source, ended } = this.store.state.camera;
    if (document.hidden) return;
    if (source === "browser") this.loop.start();
    else if (source === "server" && !ended) this.schedulePoll(0);
  }
}
