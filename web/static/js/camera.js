// The browser's camera: pick a device, show it, and post JPEG frames to the server a few times a
// second with at most one request in flight (the newest frame wins; nothing queues up). A frame that
// fails is told to the page, which says how long to wait before the next: a server refusing frames is
// not asked 4 times a second.

export const FRAME_INTERVAL_MS = 250; // about 4 frames a second
const MAX_FRAME_WIDTH = 1280;

export function cameraSupported() {
  return Boolean(navigator.mediaDevices?.getUserMedia);
}

export async function listCameras() {
  if (!navigator.mediaDevices?.enumerateDevices) return [];
  const devices = await navigator.mediaDevices.enumerateDevices();
  return devices.filter((device) => device.kind === "videoinput");
}

export class BrowserCamera {
  /** `onEnded()` is called when the camera stops by itself (unplugged, taken by another app, turned off by the
   * browser): its track ends, and its frames would only be black. Not called for `stop()`. */
  constructor(video, onEnded = () => {}) {
    this.video = video;
    this.onEnded = onEnded;
    this.stream = null;
    this.starts = 0; // which start() the camera belongs to: a stream arriving for an earlier one is stopped at once
    this.canvas = document.createElement("canvas");
  }

  /** Start the camera `deviceId` (the default camera for ""); answers whether it started. False when `start()` or
   * `stop()` was called again while the browser was still opening it (Start tapped twice, Stop during the permission
   * prompt): that stream is stopped, so no camera is left on that nothing shows or stops. */
  async start(deviceId) {
    this.stop();
    const mine = this.starts;
    const video = deviceId ? { deviceId: { exact: deviceId } } : { width: { ideal: 1280 }, height: { ideal: 720 } };
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video, audio: false });
    } catch (error) {
      if (mine !== this.starts) return false; // refused, but no longer asked for
      throw error;
    }
    if (mine !== this.starts) {
      for (const track of stream.getTracks()) track.stop();
      return false;
    }
    this.stream = stream;
    for (const track of stream.getVideoTracks()) {
      track.addEventListener("ended", () => {
        if (this.stream !== stream) return; // a camera stopped or replaced since
        this.stop();
        this.onEnded();
      });
    }
    this.video.srcObject = stream;
    await this.video.play().catch(() => {});
    return true;
  }

  stop() {
    this.starts += 1;
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = null;
    this.video.srcObject = null;
  }

  get running() {
    return this.stream !== null;
  }

  /** The current picture as a JPEG blob (at most 1280 px wide), or null before the first frame. */
  async capture() {
    const { videoWidth, videoHeight } = this.video;
    if (!videoWidth || !videoHeight) return null;
    const scale = Math.min(1, MAX_FRAME_WIDTH / videoWidth);
    this.canvas.width = Math.round(videoWidth * scale);
    this.canvas.height = Math.round(videoHeight * scale);
    this.canvas.getContext("2d").drawImage(this.video, 0, 0, this.canvas.width, this.canvas.height);
    return new Promise((resolve) => this.canvas.toBlob(resolve, "image/jpeg", 0.85));
  }
}

/**
 * Calls `send(blob)` with fresh frames; waits for each answer before capturing the next. A frame that fails (`send`
 * or the capture throws) goes to `failed(error, failures)`, with the number of frames failed in a row, which answers
 * how many ms to wait before the next frame.
 */
export class FrameLoop {
  constructor(camera, send, failed = () => FRAME_INTERVAL_MS) {
    this.camera = camera;
    this.send = send;
    this.failed = failed;
    this.run = 0; // which start() the ticks belong to: a tick of an earlier run, still awaiting its answer, ends there
    this.active = false;
    this.failures = 0;
    this.timer = null;
  }

  start() {
    if (this.active) return;
    this.active = true;
    this.failures = 0;
    this.tick(++this.run);
  }

  stop() {
    this.active = false;
    clearTimeout(this.timer);
  }

  async tick(run) {
    const current = () => this.active && run === this.run;
    if (!current()) return;
    const started = performance.now();
    let wait;
    try {
      const blob = await this.camera.capture();
      if (blob && current()) await this.send(blob);
      this.failures = 0;
      wait = FRAME_INTERVAL_MS - (performance.now() - started);
    } catch (error) {
      if (!current()) return;
      wait = this.failed(error, ++this.failures);
    }
    if (!current()) return;
    this.timer = setTimeout(() => this.tick(run), Math.max(0, wait));
  }
}
