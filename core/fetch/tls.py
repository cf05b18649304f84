"""``web.ca_bundle``: the extra certificate authorities webshelf's own HTTPS clients trust.

A corporate TLS-inspecting proxy re-signs every site with the company's CA; without that CA in
the trust store every https fetch through it fails certificate verification. ``web.ca_bundle``
(a PEM file, one or more CA certificates; ``web.ca_bundle_by_backend.<backend>`` overrides it,
as ``web.proxy_by_backend`` does the proxy) is *added* to the default trust (certifi's roots, as
httpx uses), never a reason to stop verifying: hosts are still checked against their names, and
nothing else is trusted. It is used by the local backend's httpx client (direct and proxied) and
by the hosted clients; the browser backend trusts it through Chromium's SPKI allow-list
(core/backends/browser/lifecycle.py), which accepts certificates chained to exactly these CAs.

``verify_failure`` recognises a certificate-verification failure in an httpx/httpcore exception,
so the error says which setting fixes it instead of "ConnectError".
"""

from __future__ import annotations

import base64
import hashlib
import os
import ssl
from functools import lru_cache
from pathlib import Path

import httpx

from webshelf.errors import ConfigError

HOW = ("if a TLS-inspecting proxy or a private CA signs this site, put that CA's certificate (PEM) in a file and "
       "set web.ca_bundle to its path")


def ca_bundle_for(config: object, backend: str) -> str | None:
    """The PEM path ``backend`` adds to its trust: ``web.ca_bundle_by_backend.<backend>``, else ``web.ca_bundle``."""
    web = config.web  # type: ignore[attr-defined]
    path = web.ca_bundle_by_backend.get(backend) or web.ca_bundle
    return os.path.expanduser(path) if path else None


def ssl_context(config: object, backend: str) -> ssl.SSLContext:
    """httpx's default verifying context, plus the CA bundle of ``backend`` when one is set."""
    path = ca_bundle_for(config, backend)
    return _context(path) if path else httpx.create_ssl_context(trust_env=False)


@lru_cache(maxsize=8)
def _context(path: str) -> ssl.SSLContext:
    context = httpx.create_ssl_context(trust_env=False)
    try:
        context.load_verify_locations(cafile=path)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"web.ca_bundle {path!r} cannot be used: {getattr(exc, 'strerror', None) or exc}; it must be "
                          "a readable PEM file of CA certificates (-----BEGIN CERTIFICATE-----)", key="web.ca_bundle") from None
    return context


def spki_hashes(path: str) -> list[str]:
    """base64(SHA-256(SubjectPublicKeyInfo)) of every certificate in a PEM file — Chromium's
    ``--ignore-certificate-errors-spki-list`` form, which trusts chains through exactly these keys."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        from webshelf.errors import MissingPackageError

        raise MissingPackageError("the browser trusts web.ca_bundle by its CA keys, which needs the cryptography "
                                  "package: pip install 'webshelf[browser]'", package="cryptography") from None

    try:
        certificates = x509.load_pem_x509_certificates(Path(path).read_bytes())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"web.ca_bundle {path!r} cannot be used: {exc}; it must be a readable PEM file of CA "
                          "certificates", key="web.ca_bundle") from None
    return [base64.b64encode(hashlib.sha256(cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)).digest()).decode()
        for cert in certificates]


def verify_failure(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate-verification error inside an httpx/httpcore exception chain, if that is what it was."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return current
        current = current.__cause__ or current.__context__
    return None


def verify_message(exc: ssl.SSLCertVerificationError, backend: str = "local") -> str:
    reason = exc.verify_message or exc.reason or str(exc)
    return f"TLS certificate verification failed ({reason}); {HOW} (or web.ca_bundle_by_backend.{backend})"


__all__ = ["ca_bundle_for", "spki_hashes", "ssl_context", "verify_failure", "verify_message"]
