"""Request guards: known host names, CSRF for form posts, a cross-site check for the API, and the optional PIN.

Host names: a request must name this server by an IP address, ``localhost``, this machine's name or
one configured (``okgin serve --host``/``--allow-host``). DNS rebinding points an attacker's name at
this server's address, so a page from that name could read and change scores as same-origin; its
requests carry the attacker's name in ``Host`` and are refused here.

The PIN: a session that gave it holds a tag derived from the PIN and the secret key, so changing the
PIN logs every other machine out. Wrong PINs slow down per address (an IPv6 one by its /64; three free, then a wait that
doubles up to an hour) and in total (at most ``GLOBAL_PIN_FAILURES`` an hour from everyone, so many
addresses do not multiply the rate), with a bounded memory of addresses.

Why these suffice: a cross-site page can only send "simple" requests without a CORS preflight (form
content types, no custom headers), and this server answers no preflight. So an unsafe request is allowed
when it carries a non-form content type (``application/json``, ``image/jpeg``), a custom header
(``X-Requested-With`` / ``X-CSRF-Token``), or a form field matching the session's CSRF token.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import hmac
import ipaddress
import math
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

from flask import Blueprint, Flask, current_app, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from web.errors import ApiError, wants_json

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Content types a cross-site <form> or no-cors fetch can send without a preflight.
SIMPLE_CONTENT_TYPES = frozenset({"", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain"})
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
PIN_HEADER = "X-Okgin-Pin"
PIN_EXEMPT_ENDPOINTS = frozenset({"security.pin", "static"})
PIN_SESSION_KEY = "pin"
FREE_PIN_TRIES = 3
MAX_PIN_WAIT_SECONDS = 3600.0
GLOBAL_PIN_FAILURES = 30
GLOBAL_PIN_WINDOW_SECONDS = 3600.0
TRACKED_ADDRESSES = 1024
NEW_MATCHES_PER_HOUR = 30
"""The matches one client address may start in an hour (a set-up, a rematch, a match file opened): a table starts one
every quarter of an hour at most, while each is kept on disk (under 1 KB begun, some 200 bytes more a round of two
players opened from a file), so a machine that started them without end would fill it. This machine (loopback) is not
counted, as it needs no PIN; an IPv6 device counts by its /64 (``client_key``)."""
NEW_MATCH_WINDOW_SECONDS = 3600.0
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


def write_private(path: Path, data: bytes) -> None:
    """Write a file that only its owner can read, from the moment it exists (then moved into place)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def load_or_create_secret_key(data_dir: Path) -> bytes:
    """The session signing key, generated once and kept in the data dir (readable by the owner only)."""
    path = data_dir / "secret_key"
    if path.exists():
        key = path.read_bytes()
        if len(key) >= 32:
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)  # made by an older okgin, before keys were private from the start
            return key
    key = secrets.token_bytes(32)
    write_private(path, key)
    return key


def csrf_token() -> str:
    """This session's CSRF token, created on first use; templates put it in forms and a meta tag."""
    token = session.get(CSRF_FIELD)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        session[CSRF_FIELD] = token
    return token


def same_token(given: str, token: str) -> bool:
    """Whether a token sent (a form field, a header) is ``token``, compared in constant time as UTF-8 bytes:
    ``hmac.compare_digest`` refuses two strings with a non-ASCII character in either (a TypeError, answered 500).

    >>> same_token("abc", "abc"), same_token("\u00e9", "abc")
    (True, False)
    """
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass"))


def is_loopback(address: str | None) -> bool:
    """Requests from this machine (127.0.0.0/8, ::1, and 127.0.0.1 as a dual-stack socket shows it) never need the
    PIN.

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("::ffff:127.0.0.1"), is_loopback("192.168.1.20")
    (True, True, True, False)
    >>> is_loopback(None)
    False
    """
    ip = _ip(address)
    return ip is not None and ip.is_loopback


def client_key(address: str | None) -> str | None:
    """Who a connection is, for limits per client (``web.detection.TABLES_PER_ADDRESS``): None for this machine
    (``is_loopback``), an IPv4 address as itself (also when a dual-stack socket shows it as ``::ffff:a.b.c.d``), and
    an IPv6 address as its /64: a device picks any address of its network's /64, and changes it by itself.

    >>> client_key("::ffff:192.168.1.20"), client_key("2001:db8:0:1::18"), client_key("::1")
    ('192.168.1.20', '2001:db8:0:1::/64', None)
    """
    ip = _ip(address)
    if ip is None:
        return address or None
    if ip.is_loopback:
        return None
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _ip(address: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """A connection's address (without an IPv6 zone), an IPv4 one given as IPv4-mapped IPv6 as IPv4; None if none."""
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return None
    mapped = getattr(ip, "ipv4_mapped", None)
    return mapped if mapped is not None else ip


class PinThrottle:
    """Slows PIN guessing per address (exponential backoff) and in total (a global budget per window).

    >>> clock = [0.0]
    >>> throttle = PinThrottle(clock=lambda: clock[0])
    >>> [throttle.attempt("10.0.0.9", ok=False) for _ in range(4)], throttle.wait("10.0.0.10")  # 3 free, then 2 s
    ([0.0, 0.0, 0.0, 2.0], 0.0)
    >>> clock[0] = 2.0
    >>> throttle.attempt("10.0.0.9", ok=False), throttle.wait("10.0.0.9")  # counted: then 4 s, 8 s ...
    (0.0, 4.0)
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        free_tries: int = FREE_PIN_TRIES,
        max_wait: float = MAX_PIN_WAIT_SECONDS,
        global_failures: int = GLOBAL_PIN_FAILURES,
        global_window: float = GLOBAL_PIN_WINDOW_SECONDS,
        tracked: int = TRACKED_ADDRESSES,
    ) -> None:
        self._clock = clock
        self._free_tries = free_tries
        self._max_wait = max_wait
        self._global_window = global_window
        self._tracked = tracked
        # address -> (wrong PINs in a row, time of the last one); least recently failed first
        self._failures: collections.OrderedDict[str, tuple[int, float]] = collections.OrderedDict()
        self._recent: collections.deque[float] = collections.deque(maxlen=global_failures)  # every address
        self._lock = threading.Lock()

    def wait(self, address: str) -> float:
        """Seconds before ``address`` may try a PIN again (0: now)."""
        with self._lock:
            return self._wait(address, self._clock())

    def attempt(self, address: str, ok: bool) -> float:
        """A PIN from ``address``, right or not (``ok``), counted unless it must wait: the seconds to wait (0: counted).
        One step: checked and counted apart, guesses sent at once all passed the wait before any was counted."""
        with self._lock:
            now = self._clock()
            wait = self._wait(address, now)
            if wait <= 0:
                self._record(address, ok, now)
            return wait

    def _wait(self, address: str, now: float) -> float:
        """``wait`` at ``now``, the lock held."""
        waits = [0.0]
        if len(self._recent) == self._recent.maxlen:
            waits.append(self._recent[0] + self._global_window - now)
        count, last = self._failures.get(address, (0, 0.0))
        if count >= self._free_tries:
            waits.append(last + min(2.0 ** (count - self._free_tries + 1), self._max_wait) - now)
        return max(waits)

    def _record(self, address: str, ok: bool, now: float) -> None:
        """Count a right (``ok``) or wrong PIN at ``now``, the lock held."""
        if ok:
            self._failures.pop(address, None)
            return
        count, _ = self._failures.pop(address, (0, 0.0))
        self._failures[address] = (count + 1, now)
        while len(self._failures) > self._tracked:
            self._failures.popitem(last=False)  # forgetting one address never lifts the global budget
        self._recent.append(now)


class NewMatchLimit:
    """Counts the matches each client address starts, refusing more than ``per_hour`` in any hour. It remembers the
    ``tracked`` addresses that started one last: one forgotten may start ``per_hour`` more.

    >>> clock = [0.0]
    >>> limit = NewMatchLimit(clock=lambda: clock[0], per_hour=2)
    >>> [limit.take("10.0.0.9")[0] for _ in range(3)], limit.take("10.0.0.10")[0]
    ([0.0, 0.0, 3600.0], 0.0)
    >>> clock[0] = 1800.0
    >>> limit.take("10.0.0.9")[0], limit.take("10.0.0.9")[0]  # an hour after the first two, two more
    (1800.0, 1800.0)
    >>> clock[0] = 3600.0
    >>> [limit.take("10.0.0.9")[0] for _ in range(3)]
    [0.0, 0.0, 3600.0]
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        per_hour: int = NEW_MATCHES_PER_HOUR,
        window: float = NEW_MATCH_WINDOW_SECONDS,
        tracked: int = TRACKED_ADDRESSES,
    ) -> None:
        self._clock = clock
        self.per_hour = per_hour
        self._window = window
        self._tracked = tracked
        # address -> when its last ``per_hour`` matches were started; least recently starting first
        self._started: collections.OrderedDict[str, collections.deque[float]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def take(self, address: str) -> tuple[float, float]:
        """Count a match ``address`` starts, unless it started ``per_hour`` in the last hour: the seconds until it
        may start one (0: counted), and when it was counted (what ``give_back`` is given if it is not stored)."""
        with self._lock:
            now = self._clock()
            started = self._started.pop(address, None) or collections.deque(maxlen=self.per_hour)
            self._started[address] = started
            if len(started) == started.maxlen and started[0] + self._window > now:
                return started[0] + self._window - now, now
            started.append(now)
            while len(self._started) > self._tracked:
                self._started.popitem(last=False)
            return 0.0, now

    def give_back(self, address: str, taken_at: float) -> None:
        """Uncount the match ``address`` was counted for at ``taken_at``: it was not stored (its write failed).
        Places taken at once by other requests stay theirs, so no more than ``per_hour`` are ever stored.

        >>> limit = NewMatchLimit(clock=lambda: 5.0, per_hour=1)
        >>> wait, taken_at = limit.take("10.0.0.9")
        >>> limit.take("10.0.0.9")[0] > 0, limit.give_back("10.0.0.9", taken_at), limit.take("10.0.0.9")[0]
        (True, None, 0.0)
        """
        with self._lock:
            started = self._started.get(address)
            if started is not None and taken_at in started:  # else forgotten meanwhile (``tracked``): nothing held
                started.remove(taken_at)


@contextlib.contextmanager
def new_match_place() -> Iterator[None]:
    """A place among the matches this request's client may start in the hour (``NewMatchLimit``), held while the
    match is stored and given back if it is not (the database locked, the write refused): only a stored match
    counts, and places are taken under one lock, so requests at once never store more than the hour's. This
    machine's matches are not counted.

    :raises ApiError: 429 while the client has started ``NEW_MATCHES_PER_HOUR`` matches in the last hour.
    """
    address = client_key(request.remote_addr)
    if address is None:
        yield
        return
    limit: NewMatchLimit = current_app.extensions["okgin_new_matches"]
    wait, taken_at = limit.take(address)
    if wait > 0:
        raise ApiError(
            429,
            f"this machine has started {limit.per_hour} matches in the last hour, the most okgin lets one machine"
            f" start (each is kept on disk); try again in {math.ceil(wait / 60)} min, or start it on the server",
        )
    try:
        yield
    except BaseException:
        limit.give_back(address, taken_at)
        raise


def pin_tag(app: Flask) -> str:
    """What a session that gave the PIN holds: tied to this PIN and this secret key, useless for any other."""
    key = app.secret_key if isinstance(app.secret_key, bytes) else str(app.secret_key).encode()
    return hmac.new(key, b"okgin-pin:" + str(app.config["PIN"]).encode(), hashlib.sha256).hexdigest()


def check_pin(app: Flask, given: str | None) -> bool:
    """Compare a PIN in constant time, counting failures per address and in total.

    :raises ApiError: 429 while this address (or everyone, past the global budget) must wait.
    """
    throttle: PinThrottle = app.extensions["okgin_pin_throttle"]
    address = client_key(request.remote_addr) or "?"  # an IPv6 device picks any address of its /64: counted as one
    ok = given is not None and hmac.compare_digest(given.encode(), str(app.config["PIN"]).encode())
    wait = throttle.attempt(address, ok)
    if wait > 0:
        raise ApiError(429, f"too many wrong PINs; try again in {math.ceil(wait)} s")
    return ok


def safe_next(target: str | None) -> str:
    r"""A redirect target on this site, else ``/``: a path, never a scheme, a host or a browser-ignored character.

    Browsers drop tabs and newlines from URLs and read ``\`` as ``/``, so ``/\t/evil.com`` would become
    ``//evil.com``: any control character or backslash makes the target unsafe.

    >>> safe_next("/matches/3?x=1"), safe_next("/\t/evil.com"), safe_next("//evil.com"), safe_next("https://x")
    ('/matches/3?x=1', '/', '/', '/')
    >>> safe_next("/\\evil.com"), safe_next(None), safe_next("matches")
    ('/', '/', '/')
    """
    if not target or not target.startswith("/") or target.startswith("//"):
        return "/"
    if "\\" in target or any(ord(character) < 0x20 or ord(character) == 0x7F for character in target):
        return "/"
    parts = urlsplit(target)
    return target if not parts.scheme and not parts.netloc else "/"


def host_name(host: str) -> str:
    """The name part of a ``Host`` header, lower case, without port or trailing dot.

    >>> host_name("Example.LAN.:5000"), host_name("[::1]:5000"), host_name("192.168.1.5")
    ('example.lan', '::1', '192.168.1.5')
    """
    if host.startswith("["):
        return host[1 : host.find("]")].lower() if "]" in host else host.lower()
    return host.rsplit(":", 1)[0].rstrip(".").lower() if host.count(":") <= 1 else host.lower()


def machine_names() -> set[str]:
    """This machine's own names, as devices on the LAN may type them (``name``, ``name.local``)."""
    name = socket.gethostname().lower().rstrip(".")
    short = name.split(".")[0]
    return {name, short, f"{short}.local"} - {""}


def allowed_hosts(configured: Iterable[str]) -> frozenset[str]:
    """The names a request may use for this server: localhost, this machine's names, and ``configured``."""
    names = {"localhost"} | machine_names()
    names |= {host_name(name) for name in configured if name not in WILDCARD_HOSTS}
    return frozenset(names)


def is_allowed_host(name: str, allowed: frozenset[str]) -> bool:
    """Any IP address (rebinding needs a name), ``*.localhost``, or a name in ``allowed``.

    >>> allowed = allowed_hosts(["okgin.lan"])
    >>> [is_allowed_host(n, allowed) for n in ("192.168.1.5", "::1", "okgin.lan", "app.localhost", "evil.example")]
    [True, True, True, True, False]
    """
    if name in allowed or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def refuse_overlong_form(max_fields: int) -> None:
    """Refuse a URL-encoded form of more than ``max_fields`` fields before it is parsed. Werkzeug bounds the parts
    of a multipart form only; a 10 MB URL-encoded one of 2.5 million fields took 20 s and 400 MB to parse, and the PIN
    page reads its form for any machine. okgin's forms have a few dozen fields.

    :raises ApiError: 413 naming the limit.
    """
    if request.get_data(cache=True).count(b"&") >= max_fields:  # the form is parsed from these cached bytes
        raise ApiError(413, f"the form has too many fields: okgin reads up to {max_fields}")


bp = Blueprint("security", __name__)


@bp.route("/pin", methods=["GET", "POST"])
def pin() -> Response | str | tuple[str, int]:
    """Ask a visitor from another machine for the PIN once per session."""
    target = safe_next(request.args.get("next"))
    if request.method == "POST":
        try:
            right = check_pin(current_app, request.form.get("pin"))
        except ApiError as error:  # the wait, said over the form (the error page lost the page to go on to)
            return render_template("pin.html", wait=error.message, next=target), error.status
        if right:
            session[PIN_SESSION_KEY] = pin_tag(current_app)
            return redirect(target)
        return render_template("pin.html", wrong=True, next=target), 401
    return render_template("pin.html", wrong=False, next=target)


def init_app(app: Flask) -> None:
    """Install the guards as ``before_request`` hooks."""
    app.extensions["okgin_pin_throttle"] = PinThrottle()
    app.extensions["okgin_new_matches"] = NewMatchLimit()
    app.jinja_env.globals["csrf_token"] = csrf_token
    app.register_blueprint(bp)
    hosts = allowed_hosts(app.config.get("ALLOWED_HOSTS") or ())

    @app.before_request
    def _require_known_host() -> None:
        name = host_name(request.host)
        if not name or not request.headers.get("Host"):  # none sent (HTTP/1.0), or one werkzeug finds malformed
            raise ApiError(400, "the request names no valid host: send a Host header, the name or address used")
        if not is_allowed_host(name, hosts):
            raise ApiError(
                400,
                f"this server does not answer to the name {name!r} (a guard against DNS rebinding); "
                f"use its address, or start it with okgin serve --allow-host {name}",
            )

    @app.before_request
    def _require_pin() -> Response | None:
        if not app.config.get("PIN") or is_loopback(request.remote_addr):
            return None
        if request.endpoint in PIN_EXEMPT_ENDPOINTS:
            return None
        given = session.get(PIN_SESSION_KEY)
        if isinstance(given, str) and hmac.compare_digest(given, pin_tag(app)):
            return None
        header = request.headers.get(PIN_HEADER)
        if header is not None and check_pin(app, header):
            return None
        if wants_json():  # a PIN sent and wrong is said so, not asked for as if none were sent
            asked = (
                f"the {PIN_HEADER} header sent is not this server's PIN" if header else f"send the {PIN_HEADER} header"
            )
            raise ApiError(401, f"this server needs its PIN from other machines: {asked}")
        return redirect(url_for("security.pin", next=request.full_path))

    @app.before_request
    def _refuse_overlong_form() -> None:
        if request.mimetype == "application/x-www-form-urlencoded":
            refuse_overlong_form(app.config["MAX_FORM_PARTS"])

    @app.before_request
    def _require_same_site() -> None:
        if request.method in SAFE_METHODS:
            return
        origin = request.headers.get("Origin")
        if origin and origin != "null" and origin.rstrip("/") != request.host_url.rstrip("/"):
            raise ApiError(403, f"cross-site request from {origin} refused")
        if request.mimetype not in SIMPLE_CONTENT_TYPES:
            return  # a cross-site page cannot send this content type without a preflight we never answer
        if request.headers.get("X-Requested-With") or request.headers.get(CSRF_HEADER):
            header = request.headers.get(CSRF_HEADER)
            if header is not None and not same_token(header, csrf_token()):
                raise ApiError(403, "the CSRF token does not match this session; reload the page")
            return
        if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            field = request.form.get(CSRF_FIELD, "")
            if field and same_token(field, csrf_token()):
                return
            raise ApiError(403, "missing or wrong CSRF token; reload the page and try again")
        if request.method in ("PUT", "DELETE", "PATCH"):
            return  # browsers preflight these methods cross-site
        raise ApiError(
            403, "send JSON (Content-Type: application/json) or the X-Requested-With header; plain posts are refused"
        )
