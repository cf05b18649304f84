"""Reading an exec's multiplexed output without losing the bytes that came with its headers.

The docker SDK hands out the *raw* socket of a hijacked exec connection, but ``http.client``
read the ``101 UPGRADED`` headers through a buffered reader: when the daemon's first frames
arrive in the same segment as the headers (over TCP, a proxy, or just a fast command), they sit
in that buffer and the SDK's ``frames_iter`` — which polls the raw socket — never sees them
(the command's output comes back empty). Reading the frames through the buffered reader gets
the buffered bytes first and the socket's after them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

#: stream ids in the 8-byte frame header (``stream, 0, 0, 0, big-endian length``)
STDOUT, STDERR = 1, 2
_HEADER = struct.Struct(">BxxxL")


def buffered_reader(sock):
    """The buffered reader the headers were read through, else None (an SDK that changed shape)."""
    response = getattr(sock, "_response", None)
    try:
        return response.raw._fp.fp
    except AttributeError:
        return None


def frames(reader) -> Iterator[tuple[int, bytes]]:
    """``(stream, payload)`` for each frame until the daemon closes the stream."""
    while len(header := reader.read(_HEADER.size)) == _HEADER.size:
        stream, length = _HEADER.unpack(header)
        if length:
            payload = reader.read(length)
            yield stream, payload
            if len(payload) < length:
                return  # cut mid-frame: what arrived is kept, the stream is over
