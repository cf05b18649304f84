"""Read a response body with a cap on its *decoded* size, so gzip and brotli bombs stay small.

httpx decodes a compressed chunk in one call, and one 64 KB brotli chunk can expand to
gigabytes before anyone counts. Here the raw bytes are decoded by ourselves in bounded steps
(``max_length`` for zlib, ``output_buffer_limit`` for brotli), and reading stops as soon as the
decoded total passes ``web.max_bytes`` — memory stays near the cap whatever the ratio.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

import brotli

from webshelf.errors import FetchError, TooLargeError

STEP = 64 * 1024  # the most decoded bytes produced by one decompression call


class _Zlib:
    def __init__(self, wbits: int) -> None:
        self._d = zlib.decompressobj(wbits)
        self._deflate = wbits == zlib.MAX_WBITS
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._deflate and not self._started and data:
            self._started = True
            if (data[0] & 0x0F) != 8:  # "deflate" sent without the zlib header, as some servers do
                self._d = zlib.decompressobj(-zlib.MAX_WBITS)
        while data:
            out = self._d.decompress(data, STEP)
            if out:
                yield out
            data = self._d.unconsumed_tail
            if self._d.eof:
                return


class _Brotli:
    def __init__(self) -> None:
        self._d = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        if not data:
            return
        out = self._d.process(data, output_buffer_limit=STEP)
        if out:
            yield out
        while not self._d.can_accept_more_data():
            out = self._d.process(b"", output_buffer_limit=STEP)
            if not out:
                break
            yield out


def decoders(content_encoding: str | None, url: str) -> list[_Zlib | _Brotli]:
    """Decoders for a Content-Encoding header, in the order to apply them (last encoding first)."""
    chain: list[_Zlib | _Brotli] = []
    for coding in reversed([c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]):
        if coding in ("gzip", "x-gzip"):
            chain.append(_Zlib(zlib.MAX_WBITS | 16))
        elif coding == "deflate":
            chain.append(_Zlib(zlib.MAX_WBITS))
        elif coding == "br":
            chain.append(_Brotli())
        elif coding != "identity":
            raise FetchError(f"{url}: the server used content encoding {coding!r}, which webshelf cannot decode "
                             "(it asks for gzip, deflate or br)", url=url)
    return chain


def through(data: bytes, chain: list[_Zlib | _Brotli]) -> Iterator[bytes]:
    if not chain:
        yield data
        return
    for piece in chain[0].feed(data):
        yield from through(piece, chain[1:])


def too_large(url: str, cap: int) -> TooLargeError:
    return TooLargeError(f"{url}: the page is larger than web.max_bytes ({cap:,} bytes, after decompression); "
                         "raise web.max_bytes in the config to read it", url=url)


async def read_capped(raw: AsyncIterator[bytes], content_encoding: str | None, cap: int, url: str) -> bytes:
    """The decoded body, or ``TooLargeError`` as soon as it passes ``cap`` bytes."""
    chain = decoders(content_encoding, url)
    parts: list[bytes] = []
    total = 0
    try:
        async for chunk in raw:
            for piece in through(chunk, chain):
                total += len(piece)
                if total > cap:
                    raise too_large(url, cap)
                parts.append(piece)
    except (zlib.error, brotli.error) as exc:
        raise FetchError(f"{url}: the server sent a corrupt compressed body ({content_encoding}: {exc})", url=url) from None
    return b"".join(parts)
