"""A real HTTP server on 127.0.0.1 for tests and benchmarks.

It serves the test corpora (``/pydocs/<file>``, ``/wcxb/<id>``: the full shared corpora when
present, else the sample in ``tests/corpus``) and any response a test registers with
``route()`` — status, headers, body, an optional delay — so fetch behaviour is tested over real
sockets rather than mocks. ``latency`` delays every response (benchmarks).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from tests import corpus

# The full shared corpora, for bench/ (benchmarks want every page; tests use tests.corpus).
CORPORA = corpus.SHARED
PYDOCS = CORPORA / "pydocs"
WCXB = CORPORA / "wcxb-dev"


@dataclass
class Response:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})
    delay: float = 0.0
    trickle: float = 0.0  # seconds between body bytes (a slow-loris server), 0 = all at once
    length: bool = True  # False: no Content-Length; the body ends when the connection closes
    reason: str | None = None  # the status line's reason phrase (None: the standard one)


Handler = Callable[[BaseHTTPRequestHandler], Response]


def corpus_response(path: str) -> Response | None:
    """Pages of the test corpora (full or sample, see tests.corpus) by URL path, or None."""
    body = None
    if path.startswith("/pydocs/"):
        body = corpus.pydocs_bytes(path.removeprefix("/pydocs/"))
    elif path.startswith("/wcxb/"):
        body = corpus.wcxb_html(path.removeprefix("/wcxb/"))
    return None if body is None else Response(body)


class QuietServer(ThreadingHTTPServer):
    """Keeps request-handler errors (a client that hung up mid-response, as timeout tests do)
    in ``errors`` instead of printing them: a print from the server thread would land in
    whatever stderr a test is capturing at that moment (e.g. click's CliRunner)."""

    daemon_threads = True
    # listen() backlog: socketserver's default of 5 overflows when a benchmark opens 32-64
    # connections at once, and the kernel then drops SYNs (retried after 1 s, 3 s, ...).
    request_queue_size = 1024

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[BaseException] = []

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        self.errors.append(sys.exc_info()[1])


class LoopbackServer:
    """``with LoopbackServer() as srv: srv.url("/pydocs/library__re.html")``."""

    def __init__(self, latency: float = 0.0, host: str = "127.0.0.1", tls: object | None = None,
                 name: str | None = None) -> None:
        """``host``: another loopback address is another host (per-host politeness tests);
        ``tls``: an ``ssl.SSLContext`` with the server's certificate (https, tests/tlsserver.py);
        ``name``: the host name URLs use instead of the address (a name the test's resolver maps)."""
        self.latency = latency
        self.scheme = "https" if tls is not None else "http"
        self.name = name
        self.routes: dict[str, Response | Handler] = {}
        self.hits: dict[str, int] = {}
        self._lock = threading.Lock()
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 — http.server's naming
                path = self.path.split("?", 1)[0]
                with outer._lock:
                    outer.hits[path] = outer.hits.get(path, 0) + 1
                route = outer.routes.get(path)
                response = route(self) if callable(route) else route or corpus_response(path)
                if response is None:
                    response = Response(b"not found", 404, {"Content-Type": "text/plain"})
                delay = outer.latency + response.delay
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(response.status, response.reason)
                    for k, v in response.headers.items():
                        self.send_header(k, v)
                    if not response.length:
                        self.send_header("Connection", "close")
                        self.close_connection = True
                    elif not any(k.lower() == "content-length" for k in response.headers):
                        self.send_header("Content-Length", str(len(response.body)))
                    self.end_headers()
                    if response.trickle:
                        for i in range(len(response.body)):
                            self.wfile.write(response.body[i:i + 1])
                            self.wfile.flush()
                            time.sleep(response.trickle)
                    else:
                        self.wfile.write(response.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = QuietServer((host, 0), _Handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True,  # type: ignore[attr-defined]
                                                  do_handshake_on_connect=False)  # in the handler thread
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{self.scheme}://{self.name or host}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, response: Response | Handler) -> str:
        """Serve ``response`` (or call a handler) at ``path``; returns the full URL."""
        self.routes[path] = response
        return self.url(path)

    def __enter__(self) -> "LoopbackServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
