"""``okgin serve --https``: a self-signed certificate for this machine, served over TLS."""

from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path

import pytest
from cryptography import x509
from test_web_restart import free_port, start_server

from web.tls import ensure_certificate

pytestmark = pytest.mark.slow


def test_the_certificate_names_this_machine_and_is_reused(tmp_path: Path) -> None:
    cert, key = ensure_certificate(tmp_path / "tls")
    loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    names = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    assert "127.0.0.1" in {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}
    assert key.stat().st_mode & 0o077 == 0 and key.parent.stat().st_mode & 0o077 == 0
    assert ensure_certificate(tmp_path / "tls") == (cert, key)
    assert cert.read_bytes() == ensure_certificate(tmp_path / "tls")[0].read_bytes()


def test_serve_https_answers_over_tls(tmp_path: Path) -> None:
    port = free_port()
    server = start_server(tmp_path / "t.db", port, tmp_path / "data", "--https")
    try:
        trusted = ssl.create_default_context(cafile=str(tmp_path / "data" / "tls" / "cert.pem"))
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/api/matches", context=trusted, timeout=10) as answer:
            assert json.load(answer) == {"matches": [], "older": None}
        # a new data directory, made for the certificate before the database (kept elsewhere): its owner's alone
        assert [(tmp_path / where).stat().st_mode & 0o077 for where in ("data", "data/tls")] == [0, 0]
    finally:
        server.terminate()
        server.wait(10)
