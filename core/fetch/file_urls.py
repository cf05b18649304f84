"""``file://`` URLs: off by default, and then readable only under ``web.file_dirs``.

A page or an agent that can name ``file:///etc/passwd`` or ``file:///home/me/.ssh/id_rsa``
must get a refusal, not the file. When a deployment opts in, the path is resolved (symlinks
and ``..`` included) before the directory check, so a link cannot lead outside.
"""

from __future__ import annotations

import mimetypes
import os
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from webshelf.core.fetch.body import too_large
from webshelf.errors import BlockedURLError, FetchError
from webshelf.core.fetch.netpolicy import Policy


def read_file_url(url: str, policy: Policy, max_bytes: int) -> tuple[bytes, str | None, str]:
    """(bytes, guessed content type, resolved file:// URL) of an allowed local file."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise BlockedURLError(f"{url}: refused: file:// URLs must name a local path (file:///path), not host {parts.netloc!r}", url=url)
    real = os.path.realpath(url2pathname(unquote(parts.path)))
    roots = [os.path.realpath(os.path.expanduser(d)) for d in policy.file_dirs]
    if not any(os.path.commonpath([real, root]) == root for root in roots):
        where = ", ".join(roots) if roots else "none: web.file_dirs is empty"
        raise BlockedURLError(f"{url}: refused: {real} is outside the directories file:// URLs may read "
                              f"({where}); add its directory to web.file_dirs", url=url)
    if not os.path.isfile(real):  # also keeps FIFOs and devices, which could block or never end, out
        raise FetchError(f"{url}: {real} is not a regular file", url=url)
    try:
        with open(real, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise FetchError(f"{url}: cannot read {real}: {exc.strerror or exc}", url=url) from None
    if len(data) > max_bytes:
        raise too_large(url, max_bytes)
    mtype, _ = mimetypes.guess_type(real)
    if real.endswith(".md"):
        mtype = "text/markdown"
    return data, mtype, "file://" + real
