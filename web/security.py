"""Request guards: CSRF for form posts, a cross-site check for the API, and the optional PIN for other machines.

Why these suffice: a cross-site page can only send "simple" requests without a CORS preflight (form
content types, no custom headers), and this server answers no preflight. So an unsafe request is allowed
when it carries a non-form content type (``application/json``, ``image/jpeg``), a custom header
(``X-Requested-With`` / ``X-CSRF-Token``), or a form field matching the session's CSRF token.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import threading
import time
from pathlib import Path

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
MAX_PIN_FAILURES = 5
PIN_LOCKOUT_SECONDS = 60.0


def load_or_create_secret_key(data_dir: Path) -> bytes:
    """The session signing key, generated once and kept in the data dir (readable by the owner only)."""
    path = data_dir / "secret_key"
    if path.exists():
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    path.write_bytes(key)
    path.chmod(0o600)
    return key


def csrf_token() -> str:
    """This session's CSRF token, created on first use; templates put it in forms and a meta tag."""
    token = session.get(CSRF_FIELD)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        session[CSRF_FIELD] = token
    return token


def is_loopback(address: str | None) -> bool:
    """Requests from this machine (127.0.0.0/8, ::1) never need the PIN.

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("192.168.1.20"), is_loopback(None)
    (True, True, False, False)
    """
    if not address:
        return False
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


class PinThrottle:
    """Slows PIN guessing: after a few wrong PINs from one address, refuse it for a minute."""

    def __init__(self) -> None:
        self._failures: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def locked_out(self, address: str) -> bool:
        with self._lock:
            count, since = self._failures.get(address, (0, 0.0))
            if count >= MAX_PIN_FAILURES and time.monotonic() - since < PIN_LOCKOUT_SECONDS:
                return True
            if count >= MAX_PIN_FAILURES:
                del self._failures[address]
            return False

    def record(self, address: str, ok: bool) -> None:
        with self._lock:
            if ok:
                self._failures.pop(address, None)
            else:
                count, _ = self._failures.get(address, (0, 0.0))
                self._failures[address] = (count + 1, time.monotonic())


def check_pin(app: Flask, given: str | None) -> bool:
    """Compare a PIN in constant time, counting failures per address."""
    throttle: PinThrottle = app.extensions["okgin_pin_throttle"]
    address = request.remote_addr or "?"
    if throttle.locked_out(address):
        raise ApiError(429, "too many wrong PINs; wait a minute")
    ok = given is not None and hmac.compare_digest(given.encode(), str(app.config["PIN"]).encode())
    throttle.record(address, ok)
    return ok


bp = Blueprint("security", __name__)


@bp.route("/pin", methods=["GET", "POST"])
def pin() -> Response | str | tuple[str, int]:
    """Ask a visitor from another machine for the PIN once per session."""
    target = request.args.get("next", "/")
    if not target.startswith("/") or target.startswith("//"):
        target = "/"  # only ever redirect within this site
    if request.method == "POST":
        if check_pin(current_app, request.form.get("pin")):
            session["pin_ok"] = True
            return redirect(target)
        return render_template("pin.html", wrong=True, next=target), 401
    return render_template("pin.html", wrong=False, next=target)


def init_app(app: Flask) -> None:
    """Install the guards as ``before_request`` hooks."""
    app.extensions["okgin_pin_throttle"] = PinThrottle()
    app.jinja_env.globals["csrf_token"] = csrf_token
    app.register_blueprint(bp)

    @app.before_request
    def _require_pin() -> Response | None:
        if not app.config.get("PIN") or is_loopback(request.remote_addr):
            return None
        if session.get("pin_ok") or request.endpoint in PIN_EXEMPT_ENDPOINTS:
            return None
        header = request.headers.get(PIN_HEADER)
        if header is not None and check_pin(app, header):
            return None
        if wants_json():
            raise ApiError(401, f"this server needs its PIN from other machines: send the {PIN_HEADER} header")
        return redirect(url_for("security.pin", next=request.full_path))

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
            if header is not None and not hmac.compare_digest(header, csrf_token()):
                raise ApiError(403, "the CSRF token does not match this session; reload the page")
            return
        if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            field = request.form.get(CSRF_FIELD, "")
            if field and hmac.compare_digest(field, csrf_token()):
                return
            raise ApiError(403, "missing or wrong CSRF token; reload the page and try again")
        if request.method in ("PUT", "DELETE", "PATCH"):
            return  # browsers preflight these methods cross-site
        raise ApiError(
            403, "send JSON (Content-Type: application/json) or the X-Requested-With header; plain posts are refused"
        )
