"""A tiny test image built here, not pulled: no registry is reachable from CI.

A rootfs of Debian's static ``/bin/busybox`` plus one symlink per applet and a 1777 ``/tmp``,
packed as a tar in memory and imported through the docker SDK. Built once per daemon (the
tag carries a hash of the busybox binary, so a changed busybox makes a new image).
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

REPOSITORY = "webshelf-test-busybox"


def busybox_path() -> Path | None:
    found = shutil.which("busybox")
    if not found:
        return None
    path = Path(found).resolve()
    # only a static busybox runs in an otherwise empty rootfs
    out = subprocess.run(["file", "-b", str(path)], capture_output=True, text=True) if shutil.which("file") else None
    if out is not None and "dynamically linked" in out.stdout:
        return None
    return path


def rootfs_tar(busybox: Path) -> bytes:
    binary = busybox.read_bytes()
    applets = subprocess.run([str(busybox), "--list"], capture_output=True, text=True, check=True).stdout.split()
    buf = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(name: str, kind: bytes, mode: int, data: bytes = b"", link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime, info.size, info.linkname = kind, mode, now, len(data), link
            tar.addfile(info, io.BytesIO(data) if data else None)

        add("bin", tarfile.DIRTYPE, 0o755)
        add("tmp", tarfile.DIRTYPE, 0o1777)
        add("bin/busybox", tarfile.REGTYPE, 0o755, binary)
        for applet in applets:
            if applet != "busybox" and "/" not in applet:
                add(f"bin/{applet}", tarfile.SYMTYPE, 0o777, link="busybox")
    return buf.getvalue()


def ensure_image(client, busybox: Path) -> str:
    """The image tag, importing the image if this daemon does not have it yet."""
    import docker

    tag = hashlib.sha256(busybox.read_bytes()).hexdigest()[:12]
    name = f"{REPOSITORY}:{tag}"
    try:
        client.images.get(name)
    except docker.errors.ImageNotFound:
        client.api.import_image_from_data(rootfs_tar(busybox), repository=REPOSITORY, tag=tag,
                                          changes=["ENV PATH=/bin"])
        client.images.get(name)
    return name
