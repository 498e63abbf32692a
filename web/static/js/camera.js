// The browser's camera: pick a device, show it, and post JPEG frames to the server a few times a
// second with at most one request in flight (the newest frame wins; nothing queues up).

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
  constructor(video) {
    this.video = video;
    this.stream = null;
    this.canvas = document.createElement("canvas");
  }

  async start(deviceId) {
    this.stop();
    const video = deviceId ? { deviceId: { exact: deviceId } } : { width: { ideal: 1280 }, height: { ideal: 720 } };
    this.stream = await navigator.mediaDevices.getUserMedia({ video, audio: false });
    this.video.srcObject = this.stream;
    await this.video.play().catch(() => {});
  }

  stop() {
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

/** Calls `send(blob)` with fresh frames; waits for each answer before capturing the next. */
export class FrameLoop {
  constructor(camera, send) {
    this.camera = camera;
    this.send = send;
    this.active = false;
    this.timer = null;
  }

  start() {
    if (this.active) return;
    this.active = true;
    this.tick();
  }

  stop() {
    this.active = false;
    clearTimeout(this.timer);
  }

  async tick() {
    if (!this.active) return;
    const started = performance.now();
    try {
      const blob = await this.camera.capture();
      if (blob && this.active) await this.send(blob);
    } catch (error) {
      console.warn("frame not processed:", error);
    }
    if (!this.active) return;
    const wait = Math.max(0, FRAME_INTERVAL_MS - (performance.now() - started));
    this.timer = setTimeout(() => this.tick(), wait);
  }
}
