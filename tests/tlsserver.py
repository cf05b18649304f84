"""A test certificate authority (``trustme``) for loopback HTTPS servers.

``TestCA`` issues a server certificate for a test host name and 127.0.0.1, gives the
``ssl.SSLContext`` a ``LoopbackServer(tls=...)`` serves with, and writes the CA certificate as a
PEM file — what ``web.ca_bundle`` points at, as a corporate TLS-inspecting proxy's CA would be.
Nothing here is trusted by anything but the tests that are handed the PEM path.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import trustme

TLS_NAME = "shelf-tls.test"  # never resolved by DNS: tests map it to 127.0.0.1 (resolver seam, proxy hosts map)


class TestCA:
    __test__ = False  # not a pytest class

    def __init__(self, directory: Path, *names: str) -> None:
        self.ca = trustme.CA()
        self.cert = self.ca.issue_cert(*(names or (TLS_NAME,)), "127.0.0.1")
        self.pem = directory / "test-ca.pem"
        self.ca.cert_pem.write_to_path(str(self.pem))

    def server_context(self, *, present_ca: bool = False) -> ssl.SSLContext:
        """``present_ca``: send the CA certificate after the leaf, as TLS-inspecting proxies do —
        Chromium's SPKI allow-list matches keys in the chain the server presents."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        if not present_ca:
            self.cert.configure_cert(context)
            return context
        chain = self.pem.with_name(self.pem.stem + "-server-chain.pem")
        chain.write_bytes(b"".join(blob.bytes() for blob in (*self.cert.cert_chain_pems, self.ca.cert_pem)))
        key = self.pem.with_name(self.pem.stem + "-server-key.pem")
        self.cert.private_key_pem.write_to_path(str(key))
        context.load_cert_chain(str(chain), str(key))
        return context


__all__ = ["TLS_NAME", "TestCA"]
