"""Benchmark the web server as players' devices use it, on loopback against a real ``okgin serve``.

Measures ``/api/detect`` throughput and p50/p95 latency with 1, 4 and 16 concurrent clients (every
answer must be 200, or 503 "busy" under overload: never a failure or a crash), ``/api/score`` requests
per second, and the server's peak memory (VmHWM) with the model loaded (target: under 1 GiB).

    python benchmarks/bench_web.py [--model DIR] [--requests 24] [--quick]

Without a shipped model (``models/manifest.json``) the detect rows report that detection is unavailable
and the score and memory rows are still measured.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"  # loopback only
SCORE_BODY = {
    "upcard": "KS",
    "knocker": "Ann",
    "hands": {"Ann": "8C 9C 10C JC 9H 10H JH 2S 2D AC", "Bob": "QS QC QH 10S JS 3D 5H 7S AD 7D"},
}
MEMORY_TARGET_BYTES = 1024**3


@dataclass
class Run:
    """Answers of one load run: latencies of successful requests and every status seen."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    wall: float = 0.0

    def line(self, label: str) -> str:
        ok = len(self.latencies)
        if not ok:
            return f"{label:<26} no successful answers; statuses {dict(self.statuses)} {self.errors[:1]}"
        ordered = sorted(self.latencies)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        return (
            f"{label:<26} {ok / self.wall:8.1f} req/s   p50 {statistics.median(ordered) * 1000:7.1f} ms"
            f"   p95 {p95 * 1000:7.1f} ms   statuses {dict(sorted(self.statuses.items()))}"
            + (f"   FAILED {len(self.errors)}: {self.errors[0]}" if self.errors else "")
        )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def table_image() -> bytes:
    """A 1280x720 JPEG of a table: a rendered scene when deck faces exist, else plain drawn cards."""
    try:
        from scorer.cards import parse_cards
        from scorer.synth.scene import render_table_scene

        hands = {1: parse_cards("8C 9C 10C JC 9H 10H JH 2S 2D AC"), 2: parse_cards("QS QC QH 10S JS 3D 5H 7S AD 7D")}
        image, _ = render_table_scene(3, hands, mild=True)
    except (ImportError, RuntimeError, OSError):
        image = np.full((720, 1280, 3), (40, 100, 35), np.uint8)
        for i in range(10):
            cv2.rectangle(image, (60 + i * 95, 520), (145 + i * 95, 640), (250, 250, 250), -1)
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    assert ok
    return encoded.tobytes()


def okgin_command(*args: str) -> list[str]:
    """``okgin ARGS`` run from the checkout on ``PYTHONPATH`` (the one being measured, not an installed copy)."""
    return [sys.executable, "-c", "from scorer.cli import run; run()", *args]


def start_server(
    port: int, workdir: Path, model: str | None, *extra: str, repo: Path = REPO
) -> subprocess.Popen[bytes]:
    """``okgin serve`` on loopback with its database in ``workdir``, running the code of ``repo`` (this
    checkout unless another is given), once it accepts connections; ``extra`` are more serve options."""
    command = okgin_command("serve", "--host", HOST, "--port", str(port), "--db", str(workdir / "bench.db"))
    command += ["--data-dir", str(workdir), *(["--model", model] if model else []), *extra]
    env = os.environ | {"YOLO_OFFLINE": "1", "PYTHONPATH": str(repo)}
    process = subprocess.Popen(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"okgin serve exited: {process.stderr.read().decode() if process.stderr else ''}")
        try:
            with socket.create_connection((HOST, port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("okgin serve did not start within 30 s")


def post(connection: http.client.HTTPConnection, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
    connection.request("POST", path, body=body, headers={"Content-Type": content_type})
    answer = connection.getresponse()
    return answer.status, answer.read()


def load(port: int, path: str, body: bytes, content_type: str, clients: int, per_client: int, ok: int = 200) -> Run:
    """``clients`` threads, each sending ``per_client`` requests back to back on its own connection.

    Answers with status ``ok`` are timed; 503 (busy) is counted; anything else is a failure.
    """
    run = Run()
    lock = threading.Lock()

    def client() -> None:
        connection = http.client.HTTPConnection(HOST, port, timeout=120)
        for _ in range(per_client):
            started = time.perf_counter()
            try:
                status, payload = post(connection, path, body, content_type)
            except (OSError, http.client.HTTPException) as error:
                with lock:
                    run.errors.append(repr(error))
                connection.close()
                connection = http.client.HTTPConnection(HOST, port, timeout=120)
                continue
            elapsed = time.perf_counter() - started
            with lock:
                run.statuses[status] += 1
                if status == ok:
                    run.latencies.append(elapsed)
                elif status != 503:
                    run.errors.append(f"{status} {payload[:120]!r}")
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run.wall = time.perf_counter() - started
    return run


def peak_rss(pid: int) -> int:
    """The process's peak resident memory in bytes (Linux VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="model folder for okgin serve --model (default: the shipped models/)")
    parser.add_argument("--requests", type=int, default=48, help="detect requests per concurrency level")
    parser.add_argument("--score-requests", type=int, default=400)
    parser.add_argument("--quick", action="store_true", help="a smaller run (12 detect, 100 score requests)")
    options = parser.parse_args()
    if options.quick:
        options.requests, options.score_requests = 12, 100
    image = table_image()
    port = free_port()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="okgin-bench-") as workdir:
        server = start_server(port, Path(workdir), options.model)
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=300)
            started = time.perf_counter()
            status, payload = post(connection, "/api/detect", image, "image/jpeg")
            print(f"okgin serve pid {server.pid} on {HOST}:{port}; image {len(image) // 1024} KiB 1280x720")
            detect_available = status == 200
            if detect_available:
                cards = len(json.loads(payload)["cards"])
                print(f"first /api/detect (loads the model): {time.perf_counter() - started:.2f} s, {cards} cards")
                for clients in (1, 4, 16):
                    per_client = max(1, options.requests // clients)
                    run = load(port, "/api/detect", image, "image/jpeg", clients, per_client)
                    failures += len(run.errors)
                    print(run.line(f"/api/detect x{clients} clients"))
            else:
                print(f"/api/detect unavailable ({status}): {json.loads(payload).get('error')}")
            body = json.dumps(SCORE_BODY).encode()
            for clients in (1, 4):
                run = load(port, "/api/score", body, "application/json", clients, options.score_requests // clients)
                failures += len(run.errors)
                print(run.line(f"/api/score x{clients} clients"))
            rss = peak_rss(server.pid)
            verdict = "under" if rss < MEMORY_TARGET_BYTES else "OVER"
            loaded = "with the model loaded" if detect_available else "no model loaded"
            print(f"server peak RSS {rss / 1024**2:.0f} MiB ({loaded}; {verdict} the 1 GiB target)")
            alive = server.poll() is None
            print(f"server still running after the load: {alive}; failed requests: {failures}")
            return 0 if alive and failures == 0 else 1
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    sys.exit(main())
