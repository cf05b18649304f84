"""A real forward proxy on loopback that records what it was asked for: HTTP, CONNECT and SOCKS5.

Tests of ``web.proxy`` point webshelf at it and check what reached it (request line, headers,
credentials) — and, for targets the address policy refuses, that nothing did. It listens on
127.0.0.2 by default, so a test can allow the target (127.0.0.1) without allowing the proxy.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import threading
from urllib.parse import urlsplit


class ForwardProxy:
    def __init__(self, host: str = "127.0.0.2", auth: tuple[str, str] | None = None,
                 hosts: dict[str, str] | None = None) -> None:
        """``hosts``: names this proxy resolves itself (a test name → a loopback address; nothing
        else is looked up in DNS for them). Each CONNECT records the address it connected to."""
        self.host = host
        self.auth = auth
        self.hosts = hosts or {}
        self.requests: list[dict] = []
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.base_events.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0

    def url(self, scheme: str = "http", userinfo: str = "") -> str:
        return f"{scheme}://{userinfo + '@' if userinfo else ''}{self.host}:{self.port}"

    def __enter__(self) -> "ForwardProxy":
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(asyncio.start_server(self._handle, self.host, 0), self._loop).result()
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            self._server.close()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            first = await reader.readexactly(1)
            if first == b"\x05":
                await self._socks5(reader, writer)
            else:
                await self._http(first, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            writer.close()

    def _authorised(self, headers: dict[str, str]) -> bool:
        if self.auth is None:
            return True
        expected = "Basic " + base64.b64encode(f"{self.auth[0]}:{self.auth[1]}".encode()).decode()
        return headers.get("proxy-authorization") == expected

    async def _http(self, first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = first + await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if line)}
        self.requests.append({"method": method, "target": target, "headers": headers})
        if not self._authorised(headers):
            writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"t\"\r\n"
                         b"Content-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            address = self.hosts.get(host.strip("[]"), host.strip("[]"))
            self.requests[-1]["connected"] = address
            up_r, up_w = await asyncio.open_connection(address, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await self._pipe(reader, writer, up_r, up_w)
            return
        parts = urlsplit(target)
        up_r, up_w = await asyncio.open_connection(parts.hostname, parts.port or 80)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = "".join(f"{line}\r\n" for line in lines[1:] if line and not line.lower().startswith(("proxy-", "connection")))
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        up_w.write(f"{method} {path} HTTP/1.1\r\n{kept}Connection: close\r\n\r\n".encode("latin-1") + body)
        await up_w.drain()
        answer = await up_r.read()
        up_w.close()
        status, _, rest = answer.partition(b"\r\n")
        writer.write(status + b"\r\nConnection: close\r\n" + rest)
        await writer.drain()

    async def _socks5(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        methods = await reader.readexactly((await reader.readexactly(1))[0])
        if self.auth:
            if 2 not in methods:
                writer.write(b"\x05\xff")
                return
            writer.write(b"\x05\x02")
            await reader.readexactly(1)
            user = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
            password = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
            ok = (user, password) == self.auth
            writer.write(b"\x01\x00" if ok else b"\x01\x01")
            if not ok:
                return
        else:
            writer.write(b"\x05\x00")
        _ver, _cmd, _rsv, atyp = await reader.readexactly(4)
        if atyp == 1:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif atyp == 4:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        else:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        port = int.from_bytes(await reader.readexactly(2), "big")
        self.requests.append({"method": "SOCKS5 CONNECT", "target": f"{host}:{port}", "headers": {}})
        up_r, up_w = await asyncio.open_connection(host, port)
        writer.write(b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00")
        await writer.drain()
        await self._pipe(reader, writer, up_r, up_w)

    @staticmethod
    async def _pipe(reader, writer, up_r, up_w) -> None:  # noqa: ANN001
        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(copy(reader, up_w), copy(up_r, writer))
