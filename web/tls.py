"""A self-signed certificate for ``okgin serve --https``, so phones and tablets on the LAN get a camera.

Browsers only offer ``getUserMedia`` in a secure context: ``http://localhost`` qualifies, a LAN address
does not. The certificate is made once (with ``cryptography`` when installed, else ``openssl``), kept in
``<data dir>/tls/`` and reused until a month before it expires; it names localhost, 127.0.0.1 and this
machine's addresses. Browsers will still warn once, since no authority signed it.
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import socket
import subprocess
from pathlib import Path

from scorer.errors import OkginError

VALID_DAYS = 825
RENEW_BEFORE_DAYS = 30


class CertificateError(OkginError, RuntimeError):
    """No certificate could be made: neither ``cryptography`` nor ``openssl`` is available or working."""


def local_addresses() -> list[str]:
    """This machine's IP addresses, best effort (used as certificate names)."""
    found = {"127.0.0.1", "::1"}
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None):
            found.add(str(info[4][0]).split("%")[0])
    except OSError:
        pass
    try:  # the address used to reach the LAN; connect() on UDP sends nothing
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            found.add(probe.getsockname()[0])
    except OSError:
        pass
    return sorted(found)


def ensure_certificate(directory: Path, hostnames: list[str] | None = None) -> tuple[Path, Path]:
    """Return (certificate, key) paths in ``directory``, creating or renewing them as needed.

    :raises CertificateError: when neither ``cryptography`` nor ``openssl`` can make one.
    """
    cert, key = directory / "cert.pem", directory / "key.pem"
    if cert.exists() and key.exists() and not _expires_soon(cert):
        return cert, key
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # the key is readable by its owner alone from the start
    names = ["localhost", socket.gethostname(), *(hostnames or [])]
    addresses = local_addresses()
    try:
        _make_with_cryptography(cert, key, names, addresses)
    except ImportError:
        _make_with_openssl(cert, key, names, addresses)
    key.chmod(0o600)
    return cert, key


def _expires_soon(cert: Path) -> bool:
    try:
        from cryptography import x509
    except ImportError:
        return False  # openssl-made certificates are simply kept for their lifetime
    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    except ValueError:
        return True
    remaining = loaded.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    return remaining < datetime.timedelta(days=RENEW_BEFORE_DAYS)


def _make_with_cryptography(cert: Path, key: Path, names: list[str], addresses: list[str]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private_key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "okgin table companion")])
    now = datetime.datetime.now(datetime.UTC)
    alternative_names: list[x509.GeneralName] = [x509.DNSName(name) for name in dict.fromkeys(names) if name]
    alternative_names += [x509.IPAddress(ipaddress.ip_address(address)) for address in addresses]
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(private_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(private_key, hashes.SHA256())
    )
    key.write_bytes(
        private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))


def _make_with_openssl(cert: Path, key: Path, names: list[str], addresses: list[str]) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise CertificateError("--https needs the 'cryptography' package or the 'openssl' program; install one")
    alternative = ",".join([f"DNS:{n}" for n in dict.fromkeys(names) if n] + [f"IP:{a}" for a in addresses])
    command = [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
               "-keyout", str(key), "-out", str(cert), "-days", str(VALID_DAYS), "-subj", "/CN=okgin table companion",
               "-addext", f"subjectAltName={alternative}"]  # fmt: skip
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise CertificateError(f"openssl could not make a certificate: {completed.stderr.strip()[:300]}")
