"""The server behind ``okgin serve``: waitress for HTTP and HTTPS alike, with limits a LAN can rely on.

Waitress reads every request on one event loop (non-blocking sockets) and hands only complete
requests to its worker threads, so a client that connects and sends nothing, or sends a byte a
minute, costs a socket and never a thread. Waitress has no TLS; ``--https`` adds it on the same
event loop: each accepted socket is wrapped without a handshake, and the handshake, every read and
every write then run non-blocking like the plain ones. A silent TLS client therefore stops nobody
(a handshake that runs on the accept loop, as in Werkzeug's server, stops every other client), and
one that has not finished its handshake within ``handshake_timeout`` seconds is dropped.

Limits (``ServerLimits``), the same for both schemes:

- ``idle_timeout``: a connection with no request in progress is closed after this many seconds.
- ``handshake_timeout``: a TLS handshake must finish within this many seconds.
- ``stall_timeout``: a client that takes none of its answer for this long (a phone asleep under a
  camera stream) is disconnected, so it cannot hold a worker thread forever.
- ``connection_limit``: at most this many open connections. A new client is never turned away
  because others sit idle: past the limit, the connection idle the longest is closed to make room.
  Only when every connection has a request in progress does the server stop accepting.
- ``max_request_body``: bodies beyond the app's upload limit are refused by waitress (413) before
  they are buffered to disk.
- No ``Server`` header: the server does not announce its software or version.

Why not another server: cheroot and gunicorn (gthread) give each new connection a worker thread
before it has sent a request, so a few silent clients hold every thread for the read timeout, and
cheroot's TLS handshake runs on its accept loop; an ASGI server would need the WSGI app adapted and
does not tell a streaming response that its viewer left.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ThreadedTaskDispatcher

from scorer.errors import OkginError

log = logging.getLogger("okgin.server")

_DISCONNECTED = (ssl.SSLError, ConnectionError, OSError)


class ListenError(OkginError):
    """The address cannot be listened on: not an address of this machine, or already in use."""


@dataclass(frozen=True)
class ServerLimits:
    """What one client may hold. The defaults suit a card table's few devices; tests shorten the timeouts."""

    threads: int = 16
    connection_limit: int = 250
    idle_timeout: int = 30
    handshake_timeout: float = 10.0
    stall_timeout: float = 60.0
    max_request_body: int = 11 * 1024 * 1024
    max_request_header: int = 64 * 1024
    cleanup_interval: int = 1


class _Channel(HTTPChannel):  # type: ignore[misc]
    """An ``HTTPChannel`` that answers a refused request at once, even one that asked to be told to go on.

    A client sending ``Expect: 100-continue`` waits for "100 Continue" before its body. Waitress sent it even
    for a request it had already refused (a body over ``max_request_body``), and marked that request unfinished:
    the client uploaded its body, up to the limit and more, before the 413 came."""

    def send_continue(self) -> None:
        if self.request.error is not None:  # refused from its headers: the error is the answer, sent as it is
            self.request.expect_continue = False
            return
        super().send_continue()


class _TLSChannel(_Channel):
    """An ``HTTPChannel`` over a non-blocking ``SSLSocket``: the handshake and all I/O run on the event loop.

    OpenSSL allows one operation at a time on a connection, and waitress writes from worker threads
    while the event loop reads, so every call on the socket holds ``_tls_lock`` (none of them blocks).
    Decrypted bytes OpenSSL has buffered are drained on each read: ``select`` cannot see them.
    """

    def __init__(self, server: Any, sock: ssl.SSLSocket, addr: Any, adj: Adjustments, map: Any = None) -> None:
        self._tls_lock = threading.Lock()
        self.handshaking = True
        self._wants_write = False  # the handshake, or a read, waits for the socket to take bytes
        super().__init__(server, sock, addr, adj, map)

    def readable(self) -> bool:
        if self.handshaking:
            return not self._wants_write and not self.will_close
        return bool(super().readable())

    def writable(self) -> bool:
        if self.handshaking:
            return self._wants_write or self.will_close
        return bool(super().writable()) or self._wants_write

    def handle_read(self) -> None:
        if self.handshaking:
            self._continue_handshake()
            return
        try:
            with self._tls_lock:
                data = self.socket.recv(self.adj.recv_bytes)
                while data and self.socket.pending():
                    data += self.socket.recv(self.socket.pending())
        except ssl.SSLWantReadError:
            return
        except ssl.SSLWantWriteError:
            self._wants_write = True
            return
        except _DISCONNECTED as error:
            log.debug("TLS read from %s failed: %s", self.addr, error)
            self.handle_close()
            return
        if not data:  # the client closed the connection
            self.handle_close()
            return
        self.last_activity = time.time()
        self.received(data)

    def handle_write(self) -> None:
        if self.handshaking:
            if self.will_close:
                self.handle_close()
            else:
                self._continue_handshake()
            return
        if self._wants_write:
            self._wants_write = False
            self.handle_read()
        if self.connected:
            super().handle_write()

    def send(self, data: bytes, do_close: bool = True) -> int:
        try:
            with self._tls_lock:
                sent: int = self.socket.send(data)
                return sent
        except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
            return 0  # OpenSSL keeps the record; waitress offers the same bytes again
        except _DISCONNECTED as error:
            log.debug("TLS write to %s failed: %s", self.addr, error)
            if do_close:
                self.handle_close()
            return 0

    def _continue_handshake(self) -> None:
        try:
            with self._tls_lock:
                self.socket.do_handshake()
        except ssl.SSLWantReadError:
            self._wants_write = False
            return
        except ssl.SSLWantWriteError:
            self._wants_write = True
            return
        except _DISCONNECTED as error:  # not TLS (plain HTTP to the HTTPS port), a bad hello, or gone
            log.debug("TLS handshake with %s failed: %s", self.addr, error)
            self.handle_close()
            return
        self.handshaking = False
        self._wants_write = False
        self.last_activity = time.time()


class _OkginServer(TcpWSGIServer):  # type: ignore[misc]
    """One listening socket: accepts, wraps for TLS when asked, and keeps the connection count bounded."""

    next_channel_cleanup: float = 0.0

    def __init__(self, *args: Any, tls: ssl.SSLContext | None, limits: ServerLimits, **kwargs: Any) -> None:
        self.tls = tls
        self.limits = limits
        self.channel_class = _TLSChannel if tls is not None else _Channel
        super().__init__(*args, **kwargs)

    def readable(self) -> bool:
        now = time.time()
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        if not self.accepting:
            return False
        return len(self.active_channels) < self.limits.connection_limit or self._idle_channel() is not None

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
        except OSError as error:  # e.g. out of file descriptors: try again on the next turn of the loop
            log.warning("accept() failed: %s", error)
            return
        if accepted is None:
            return
        conn, addr = accepted
        try:
            self.set_socket_options(conn)
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
            channel = self.channel_class(self, conn, self.fix_addr(addr), self.adj, map=self._map)
        except OSError as error:  # the client left before we got to it
            log.debug("could not set up a connection from %s: %s", addr, error)
            conn.close()
            return
        if len(self.active_channels) > self.limits.connection_limit:
            idle = self._idle_channel(besides=channel)
            if idle is not None:
                log.info("connection limit %d reached: closing the longest idle one", self.limits.connection_limit)
                idle.handle_close()

    def _idle_channel(self, besides: Any = None) -> Any:
        """The open connection without a request in progress that has been quiet longest, if any."""
        idle = [
            channel
            for channel in self.active_channels.values()
            if channel is not besides and not channel.requests and not channel.total_outbufs_len
        ]
        return min(idle, key=lambda channel: channel.last_activity, default=None)

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # closes connections idle for longer than idle_timeout
        handshake_started_before = now - self.limits.handshake_timeout
        stalled_since = now - self.limits.stall_timeout
        stalled = []
        for channel in self.active_channels.values():
            if getattr(channel, "handshaking", False) and channel.creation_time < handshake_started_before:
                channel.will_close = True
            elif channel.total_outbufs_len and channel.last_activity < stalled_since:
                stalled.append(channel)
        if stalled:
            # A client that stopped reading (a phone asleep under a camera stream) would hold a worker thread
            # forever, and its socket never turns writable to act on will_close: close it outright, from the
            # event loop's dispatch phase (this method runs while the loop is still collecting sockets).
            self.trigger.pull_trigger(lambda: [channel.handle_close() for channel in stalled])


class Server:
    """The listening sockets of one app, their event loop and worker threads."""

    def __init__(self, listeners: list[_OkginServer], socket_map: dict[int, Any], adj: Adjustments) -> None:
        self._listeners = listeners
        self._map = socket_map
        self._adj = adj
        self._running = False
        self.dispatcher: ThreadedTaskDispatcher = listeners[0].task_dispatcher

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """``(host, port)`` of each listening socket (the port is known once bound, also for port 0)."""
        return [(str(listener.effective_host), int(listener.effective_port)) for listener in self._listeners]

    def run(self) -> None:
        """Serve until ``close()`` or Ctrl+C."""
        self._running = True
        try:
            wasyncore.loop(timeout=self._adj.asyncore_loop_timeout, map=self._map, use_poll=self._adj.asyncore_use_poll)
        except KeyboardInterrupt:
            pass
        finally:
            self._running = False
            self._close_sockets()
            self.dispatcher.shutdown()

    def close(self) -> None:
        """Stop serving: the event loop closes every socket and ``run()`` returns. Safe to call at any time,
        also while ``run()`` is ending on its own."""
        if self._running:
            try:
                self._listeners[0].trigger.pull_trigger(self._close_sockets)  # runs on the event loop's thread
                return
            except OSError:  # the loop ended meanwhile and closed its trigger with the other sockets
                pass
        self._close_sockets()
        self.dispatcher.shutdown()

    def _close_sockets(self) -> None:
        for dispatcher in list(self._map.values()):
            with contextlib.suppress(OSError):
                dispatcher.close()


def check_host(host: str, port: int) -> None:
    """Refuse early, in words, a ``--host`` that is neither an IP address nor a name this machine resolves.

    >>> check_host("999.1.1.1", 5000)
    Traceback (most recent call last):
    ...
    web.server.ListenError: cannot listen on '999.1.1.1': not an IP address of this machine, nor a name it can resolve
    """
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        raise ListenError(
            f"cannot listen on {host!r}: not an IP address of this machine, nor a name it can resolve"
        ) from None


def build_server(
    app: Callable[..., Any],
    host: str,
    port: int,
    limits: ServerLimits = ServerLimits(),
    tls: ssl.SSLContext | None = None,
) -> Server:
    """Bind ``host:port`` (every address the name resolves to) and return the server, not yet running.

    Binding happens here, so a port in use is reported before anything says "serving on".

    :raises ListenError: for a host that is no address, or an address that cannot be bound.
    """
    check_host(host, port)
    adj = Adjustments(
        host=host,
        port=port,
        threads=limits.threads,
        connection_limit=limits.connection_limit,
        channel_timeout=limits.idle_timeout,
        cleanup_interval=limits.cleanup_interval,
        max_request_body_size=limits.max_request_body,
        max_request_header_size=limits.max_request_header,
        url_scheme="https" if tls is not None else "http",
        ident="",  # no Server header
        asyncore_use_poll=hasattr(select, "poll"),  # select() stops at 1024 descriptors
        expose_tracebacks=False,
    )
    socket_map: dict[int, Any] = {}
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    listeners: list[_OkginServer] = []
    shared_channels: dict[int, Any] = {}  # one connection count across IPv4 and IPv6 sockets
    try:
        for sockinfo in adj.listen:
            listener = _OkginServer(
                app, map=socket_map, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo, tls=tls, limits=limits
            )
            listener.active_channels = shared_channels
            listeners.append(listener)
    except OSError as error:
        for listener in listeners:
            listener.close()
        dispatcher.shutdown()
        raise ListenError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return Server(listeners, socket_map, adj)


def tls_context(certificate: Path, key: Path) -> ssl.SSLContext:
    """A server context: TLS 1.2 or newer, no renegotiation, the self-signed certificate of ``web.tls``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= getattr(ssl, "OP_NO_RENEGOTIATION", 0)
    context.load_cert_chain(str(certificate), str(key))
    return context
