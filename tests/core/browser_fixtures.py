"""Helpers for the browser backend tests: Chromium present (or a clear skip), a second loopback
server that only counts connections, and a way to run one backend call."""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from tests.components import need
from webshelf.core.backends.browser.lifecycle import INSTALL_HINT, PIP_HINT, find_chromium, playwright_installed


def need_browser() -> None:
    need(playwright_installed(), "Playwright's Python package", PIP_HINT)
    need(find_chromium() is not None, "Chromium", INSTALL_HINT)


def spa_page(title: str, heading: str, words: str) -> bytes:
    """A page whose text exists only after its script runs (the local backend sees an empty shell)."""
    return (f"<!doctype html><html><head><title>{title}</title></head><body><div id=r></div><script>"
            f"document.getElementById('r').innerHTML='<main><h1>{heading}</h1><p>' + '{words} '.repeat(30)"
            f" + '</p></main>';</script></body></html>").encode()


@pytest.fixture
def fresh_browser_services():
    """No browser service left from an earlier test, none left for the next."""
    from webshelf.core.backends.browser import service

    need_browser()
    service.shutdown_all()
    yield
    service.shutdown_all()


class CountingServer:
    """A TCP listener that counts every connection it accepts and answers a tiny HTTP 200.

    It stands in for the internal service a hostile page aims at: any request that reached it,
    of any kind (fetch, XHR, WebSocket, image, redirect), shows up in ``connections``."""

    def __init__(self, host: str = "127.0.0.2") -> None:
        self.sock = socket.create_server((host, 0))
        self.host, self.port = self.sock.getsockname()[:2]
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(1)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nsecret")
                except OSError:
                    pass

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "CountingServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def target():
    with CountingServer() as srv:
        yield srv


def run(coro):
    return asyncio.run(coro)
