"""Benchmark many writers on one long match against a real ``okgin serve`` (issue 11's reproduction).

A match is given ``--rounds`` rounds through the API, then ``--clients`` clients each post ``--each``
more at once. Prints how many were stored (201) and how many were refused as "database is locked"
(503), the write rate and latency, and the time to read the long match.

    python benchmarks/bench_writes.py [--rounds 400] [--clients 32] [--each 10] [--repo PATH]

A match holds at most ``MAX_ROUNDS`` rounds and is played to ``MAX_TARGET`` at most: the rounds given and posted must
fit both (Ann scores 18 a round, 9 on average while the match is filled).

``--repo`` serves another checkout's code (e.g. the main branch before a change) for a before/after figure.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import time
from pathlib import Path

from bench_web import HOST, REPO, SCORE_BODY, free_port, load, start_server

from scorer.match import MAX_ROUNDS
from scorer.rules import MAX_TARGET

UNDERCUT = SCORE_BODY | {"hands": {**SCORE_BODY["hands"], "Bob": "QS QC QH 10S JS 3D 2H 7S 7C 7D"}}


def call(port: int, method: str, path: str, body: object | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection(HOST, port, timeout=600)
    try:
        payload = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"{}")
    finally:
        connection.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=400, help="rounds in the match before the writers start")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--each", type=int, default=10, help="rounds each client posts")
    parser.add_argument("--repo", type=Path, default=REPO, help="checkout whose code serves (default: this one)")
    options = parser.parse_args()
    posted = options.clients * options.each
    if options.rounds + posted > MAX_ROUNDS or (options.rounds + 1) // 2 * 18 + posted * 18 >= MAX_TARGET:
        parser.error(f"{options.rounds} rounds and {posted} posted: a match holds {MAX_ROUNDS} rounds, to {MAX_TARGET}")
    with tempfile.TemporaryDirectory() as workdir:
        port = free_port()
        server = start_server(port, Path(workdir), None, repo=options.repo.resolve())
        try:
            setup = {"players": ["Ann", "Bob"], "options": {"target": MAX_TARGET}}
            status, created = call(port, "POST", "/api/matches", setup)
            assert status == 201, created
            path = f"/api/matches/{created['id']}"
            started = time.perf_counter()
            for number in range(options.rounds):  # Ann knocks (18), Bob undercuts (10), in turn
                status, answer = call(port, "POST", f"{path}/rounds", UNDERCUT if number % 2 else SCORE_BODY)
                assert status == 201, answer
            filled = time.perf_counter() - started
            print(f"serving {options.repo}; {options.rounds} rounds posted one by one in {filled:.1f} s")
            started = time.perf_counter()
            status, _ = call(port, "GET", path)
            print(f"GET the {options.rounds}-round match: {(time.perf_counter() - started) * 1000:.0f} ms")
            body = json.dumps(SCORE_BODY).encode()
            run = load(port, f"{path}/rounds", body, "application/json", options.clients, options.each, ok=201)
            total = options.clients * options.each
            print(run.line(f"{options.clients} writers x {options.each}"))
            stored = len(call(port, "GET", path)[1]["rounds"]) - options.rounds
            print(f"stored {stored} of {total}; refused 503 {run.statuses.get(503, 0)}; failures {len(run.errors)}")
            return 0 if stored == run.statuses.get(201, 0) and not run.errors else 1
        finally:
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    sys.exit(main())
