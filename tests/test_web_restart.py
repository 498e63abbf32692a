"""A real ``okgin serve`` killed with SIGKILL mid-match loses no confirmed round, and resumes the match."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from web_fixtures import ROUND

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def call(base: str, method: str, path: str, body: object = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def start_server(database: Path, port: int, data_dir: Path, *extra: str) -> subprocess.Popen[bytes]:
    okgin = shutil.which("okgin")
    command = [okgin] if okgin else [sys.executable, "-c", "from scorer.cli import run; run()"]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(
        [*command, "serve", "--db", str(database), "--port", str(port), "--data-dir", str(data_dir), *extra],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"okgin serve exited: {process.stdout.read().decode() if process.stdout else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError("okgin serve did not start listening within 20 s")


def test_kill_9_mid_match_loses_no_confirmed_round(tmp_path: Path) -> None:
    database, port = tmp_path / "table.db", free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(database, port, tmp_path / "data")
    try:
        status, created = call(base, "POST", "/api/matches", {"players": ["Ann", "Bob"], "dealer": "Bob"})
        assert status == 201
        match_path = f"/api/matches/{created['id']}"
        for body in (ROUND, {"draw": True}, ROUND):
            assert call(base, "POST", f"{match_path}/rounds", body)[0] == 201
        before = call(base, "GET", match_path)[1]
    finally:
        server.send_signal(signal.SIGKILL)  # no clean shutdown: only what was committed survives
        server.wait(10)

    server = start_server(database, port, tmp_path / "data")
    try:
        status, after = call(base, "GET", match_path)
        assert status == 200
        assert after == before
        assert after["totals"] == {"Ann": 36, "Bob": 0} and len(after["rounds"]) == 3
        assert call(base, "POST", f"{match_path}/rounds", ROUND)[1]["match"]["totals"] == {"Ann": 54, "Bob": 0}
        status, listed = call(base, "GET", "/api/matches")
        assert [m["id"] for m in listed["matches"] if not m["winner"]] == [created["id"]]  # offered for resuming
    finally:
        server.terminate()
        server.wait(10)


def test_kill_9_during_a_stream_of_rounds_keeps_every_answered_round(tmp_path: Path) -> None:
    database, port = tmp_path / "table.db", free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(database, port, tmp_path / "data")
    confirmed = 0
    try:
        match_path = f"/api/matches/{call(base, 'POST', '/api/matches', {'players': ['Ann', 'Bob']})[1]['id']}"
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            assert call(base, "POST", f"{match_path}/rounds", {"draw": True})[0] == 201
            confirmed += 1
            if confirmed == 5:
                # kill while the next request may be half-way through its transaction
                threading.Timer(0.002, server.send_signal, (signal.SIGKILL,)).start()
                with contextlib.suppress(OSError, urllib.error.URLError):
                    call(base, "POST", f"{match_path}/rounds", {"draw": True})
                break
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(10)
    server = start_server(database, port, tmp_path / "data")
    try:
        stored = len(call(base, "GET", match_path)[1]["rounds"])
        assert confirmed <= stored <= confirmed + 1  # the last one may have committed before its answer was sent
    finally:
        server.terminate()
        server.wait(10)
