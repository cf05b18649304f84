"""The policy proxy: every byte Chromium sends leaves through here, or not at all.

Chromium resolves names and opens sockets itself, so checking the page URL before ``goto`` is
not enough: a script can ``fetch()`` a loopback service, an ``<img>`` can point at the cloud
metadata address, a redirect can hop to an intranet host, a WebSocket can dial anywhere. The
browser is therefore started with this proxy as its only way out (``--proxy-server``, with
``<-loopback>`` so that even loopback goes through it), and the proxy applies the local
backend's address policy to every request:

- the DNS-free rules first (core/fetch/netpolicy.py ``check_host``: reserved names, IP literals
  in any spelling), then one lookup whose every answer is checked (``check_addresses``), then a
  connection to a checked IP — never to the name — so a rebinding DNS server gets no second
  chance (the same resolve-once rule as core/fetch/guarded_connect.py, and its resolver seam);
  the lookup runs on the browser's own bounded resolver threads with a deadline
  (core/backends/browser/resolver.py), never on the calling loop's default executor, so a slow
  DNS answer for one page's sub-resource does not stall other URLs' work;
- ``CONNECT host:port`` (https, wss) is a byte tunnel after the check (TLS stays end to end,
  Chromium verifies the certificate); a plain ``GET http://…`` is forwarded as one request with
  ``Connection: close``, so every request on a new connection is checked on its own;
- a refused request gets ``403`` and is recorded in ``blocked`` (the backend reports it);
- the bytes sent back to the browser are counted per proxy (one proxy per page) and the
  connections are cut at ``max_bytes``, so a page cannot pull more than the byte cap.

It listens on 127.0.0.1 on a random port and only the browser webshelf started is told the port.

With ``web.proxy`` (or ``web.proxy_by_backend.browser``, or the environment with
``web.trust_env_proxy``) the connection to a checked target is made *through* that proxy: an
HTTP ``CONNECT host:port`` (Basic credentials from the proxy URL) or a SOCKS5 connect, for http
and https targets alike, after the same policy check. As for the local backend, the upstream
proxy then resolves the name itself (README "Proxies": what that means for DNS pinning), and
its own address is operator configuration, not subject to the policy.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from urllib.parse import urlsplit

from webshelf.core.backends.browser.resolver import browser_resolver
from webshelf.core.fetch.guarded_connect import Resolver
from webshelf.core.fetch.netpolicy import Policy, check_addresses, check_host
from webshelf.core.fetch.proxy import Chooser, ProxySettings
from webshelf.errors import BlockedURLError

MAX_HEAD = 64 * 1024  # request line + headers
BLOCKED_HEADER = "X-Webshelf-Blocked"  # on the proxy's own refusals, so the backend can tell them from the site's
HOP_HEADERS = {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}


class PolicyProxy:
    """An HTTP/CONNECT proxy on loopback that connects only to addresses ``policy`` allows."""

    def __init__(self, policy: Policy, *, resolver: Resolver | None = None, max_bytes: int | None = None,
                 connect_timeout_s: float = 10.0, upstream: Chooser | None = None) -> None:
        self.policy = policy
        self.upstream = upstream  # target URL → the proxy to go through (None: connect directly)
        self.resolver = resolver or browser_resolver
        self.max_bytes = max_bytes
        self.connect_timeout_s = connect_timeout_s
        self.blocked: list[str] = []  # "host:port: why", in order
        self.proxy_failed: list[str] = []  # those of them the upstream proxy (web.proxy) failed: not a policy refusal
        self.received = 0  # bytes sent back to the browser
        self.over_cap = False
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def url(self) -> str:
        assert self._server is not None, "start() first"
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def start(self) -> "PolicyProxy":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._one(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, asyncio.TimeoutError, ValueError):
            pass
        except asyncio.CancelledError:  # close(): end quietly (asyncio's stream callback logs a cancelled task)
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        if len(head) > MAX_HEAD:
            return await _refuse(writer, 431, "request head too large")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _version = request_line.split(" ", 2)
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            host, port = host.strip("[]"), int(port_text)
            upstream = await self._open(host, port, f"https://{target}/")
            if upstream is None:
                return await _refuse(writer, 403, "blocked by webshelf's address policy")
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            return await self._pipe(reader, writer, *upstream)
        parts = urlsplit(target)
        if parts.scheme.lower() not in ("http", "ws") or not parts.hostname:
            return await _refuse(writer, 400, "only absolute http:// requests and CONNECT are proxied")
        port = parts.port or 80
        upstream = await self._open(parts.hostname, port, target)
        if upstream is None:
            return await _refuse(writer, 403, "blocked by webshelf's address policy")
        upgrade = any(line.lower().startswith("upgrade:") for line in header_lines)
        kept = [line for line in header_lines if line and line.split(":", 1)[0].strip().lower() not in HOP_HEADERS]
        kept.append("Connection: Upgrade" if upgrade else "Connection: close")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        upstream[1].write("\r\n".join([f"{method} {path} HTTP/1.1", *kept, "", ""]).encode("latin-1"))
        await self._pipe(reader, writer, *upstream)

    async def _open(self, host: str, port: int, url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """Resolve once, check every answer, connect to a checked IP; None (recorded) when refused."""
        try:
            literal = check_host(host, url, self.policy)
            if literal is not None:
                addresses = check_addresses(host, [str(literal)], self.policy)
            else:
                try:
                    answers = await asyncio.wait_for(self.resolver(host, port), self.connect_timeout_s)
                except (OSError, asyncio.TimeoutError, UnicodeError) as exc:
                    why = str(exc) or (f"no DNS answer for {host!r} within {self.connect_timeout_s:g} s"
                                       if isinstance(exc, asyncio.TimeoutError) else type(exc).__name__)
                    self.blocked.append(f"{host}:{port}: cannot resolve ({why})")
                    return None
                addresses = check_addresses(host, answers, self.policy)
        except BlockedURLError as exc:
            self.blocked.append(f"{host}:{port}: {exc.message.removeprefix('refused: ')}")
            return None
        via = self.upstream(url) if self.upstream is not None else None
        if via is not None:  # checked here; the upstream proxy is handed the name (it resolves it again)
            try:
                return await asyncio.wait_for(tunnel(via, host, port), self.connect_timeout_s)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as exc:
                why = f"{host}:{port}: the proxy {via.shown} (web.proxy) did not connect: {exc or type(exc).__name__}"
                self.blocked.append(why)
                self.proxy_failed.append(why)
                return None
        for address in addresses:  # never the name: the checked address
            with contextlib.suppress(OSError, asyncio.TimeoutError):
                return await asyncio.wait_for(asyncio.open_connection(address, port), self.connect_timeout_s)
        return None

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter) -> None:
        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter, count: bool) -> None:
            try:
                while chunk := await src.read(65536):
                    if count:
                        self.received += len(chunk)
                        if self.max_bytes is not None and self.received > self.max_bytes:
                            self.over_cap = True
                            return
                    dst.write(chunk)
                    await dst.drain()
            finally:
                with contextlib.suppress(Exception):
                    dst.close()

        try:
            await asyncio.gather(copy(reader, up_writer, False), copy(up_reader, writer, True))
        finally:
            up_writer.close()


async def tunnel(via: ProxySettings, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A byte stream to ``host:port`` through the proxy ``via`` (HTTP CONNECT or SOCKS5)."""
    parts = urlsplit(via.server)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        if via.scheme.startswith("socks"):
            await _socks5(reader, writer, via, host, port)
        elif via.scheme == "http":
            await _connect(reader, writer, via, host, port)
        else:
            raise ValueError(f"the browser reaches the web through http:// or socks5:// proxies, not {via.scheme}://; "
                             "set web.proxy_by_backend.browser")
    except BaseException:
        writer.close()
        raise
    return reader, writer


async def _connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, via: ProxySettings,
                   host: str, port: int) -> None:
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    head = f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n"
    if via.username is not None:
        token = base64.b64encode(f"{via.username}:{via.password or ''}".encode()).decode()
        head += f"Proxy-Authorization: Basic {token}\r\n"
    writer.write((head + "\r\n").encode("latin-1"))
    await writer.drain()
    answer = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    status = answer.split(" ", 2)[1] if answer.count(" ") >= 1 else "?"
    if status != "200":
        raise ValueError(f"it answered CONNECT with HTTP {status}" + (" (check the credentials in web.proxy)"
                                                                      if status == "407" else ""))


async def _socks5(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, via: ProxySettings,
                  host: str, port: int) -> None:
    auth = via.username is not None
    writer.write(b"\x05\x01" + (b"\x02" if auth else b"\x00"))
    await writer.drain()
    _version, method = await reader.readexactly(2)
    if method == 0x02 and auth:
        user, password = (via.username or "").encode(), (via.password or "").encode()
        writer.write(b"\x01" + bytes([len(user)]) + user + bytes([len(password)]) + password)
        await writer.drain()
        if (await reader.readexactly(2))[1] != 0:
            raise ValueError("it refused the credentials in web.proxy (SOCKS5)")
    elif method != 0x00:
        raise ValueError("it offered no SOCKS5 authentication method webshelf speaks")
    name = host.encode("idna")
    writer.write(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + port.to_bytes(2, "big"))
    await writer.drain()
    reply = await reader.readexactly(4)
    if reply[1] != 0:
        raise ValueError(f"it refused the SOCKS5 connect (reply {reply[1]})")
    skip = {1: 4, 4: 16}.get(reply[3])
    if skip is None:
        skip = (await reader.readexactly(1))[0]
    await reader.readexactly(skip + 2)


async def _refuse(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    body = f"webshelf: {why}\n".encode()
    writer.write(f"HTTP/1.1 {status} {why}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
                 f"{BLOCKED_HEADER}: 1\r\n"
                 f"Connection: close\r\n\r\n".encode() + body)
    with contextlib.suppress(OSError):
        await writer.drain()
