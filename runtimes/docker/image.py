"""A minimal sandbox image built on this machine, without a registry: ``webshelf runtime image``.

The docker runtime's default image must otherwise be pulled, and many agent machines (and CI)
reach no registry. Everything the sandbox needs — ``sh``, ``sed``, ``awk``, ``cat``, ``head``,
``mount`` for ``verify()`` — is in one static ``busybox`` binary, which Debian ships as
``busybox-static``. So the image is a rootfs of that binary, one symlink per applet and a
1777 ``/tmp``, packed as a tar in memory and handed to ``docker import`` (the daemon's
``/images/create?fromSrc=-``): no base image, no network, a few MB.

The tag carries a hash of the busybox binary: building twice is a no-op, and a changed
busybox gives a new tag. ``docker import`` of this tar is the whole recipe; the equivalent
Dockerfile (for a daemon reached only through ``docker build``) is ``DOCKERFILE``.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import struct
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = "webshelf-busybox"
#: what ``verify()`` and ``read_file_in`` run inside; a busybox without them cannot host webshelf
NEEDED_APPLETS = ("sh", "sed", "awk", "cat", "head", "mount")
DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
ENV PATH=/bin
"""
_PT_INTERP = 3


@dataclass(frozen=True)
class BuiltImage:
    name: str
    busybox: Path
    created: bool  # False: the daemon already had it


def is_static(binary: Path) -> bool:
    """True for an ELF executable without a program interpreter (it runs in an empty rootfs)."""
    with open(binary, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF":
            return False
        wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
        if wide:
            phoff, = struct.unpack_from(order + "Q", head, 32)
            phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
        else:
            phoff, = struct.unpack_from(order + "I", head, 28)
            phentsize, phnum = struct.unpack_from(order + "HH", head, 42)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    return all(struct.unpack_from(order + "I", table, i * phentsize)[0] != _PT_INTERP for i in range(phnum))


def find_busybox(explicit: str | None = None) -> Path:
    """The static busybox to build from, or ``ValueError`` saying how to get one."""
    found = explicit or shutil.which("busybox") or next(
        (p for p in ("/bin/busybox", "/usr/bin/busybox") if Path(p).exists()), None)
    if not found or not Path(found).is_file():
        raise ValueError(f"no busybox at {explicit}" if explicit else
                         "no busybox on this machine; install a static one (Debian/Ubuntu: apt-get install "
                         "busybox-static) or pass --busybox PATH")
    path = Path(found).resolve()
    if not is_static(path):
        raise ValueError(f"{path} is dynamically linked and cannot run in an empty image; install a static "
                         "busybox (Debian/Ubuntu: apt-get install busybox-static) or pass --busybox PATH")
    return path


def applets(busybox: Path) -> list[str]:
    names = subprocess.run([str(busybox), "--list"], capture_output=True, text=True, check=True, timeout=30).stdout.split()
    missing = [a for a in NEEDED_APPLETS if a not in names]
    if missing:
        raise ValueError(f"{busybox} lacks the applets {', '.join(missing)} that the sandbox needs; "
                         "use a full busybox (Debian: busybox-static)")
    return names


def rootfs_tar(busybox: Path) -> bytes:
    """The image's whole filesystem: /bin/busybox, a symlink per applet, /tmp (1777)."""
    binary = busybox.read_bytes()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(name: str, kind: bytes, mode: int, data: bytes = b"", link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime, info.size, info.linkname = kind, mode, 0, len(data), link
            tar.addfile(info, io.BytesIO(data) if data else None)

        add("bin", tarfile.DIRTYPE, 0o755)
        add("tmp", tarfile.DIRTYPE, 0o1777)
        add("bin/busybox", tarfile.REGTYPE, 0o755, binary)
        for applet in applets(busybox):
            if applet != "busybox" and "/" not in applet:
                add(f"bin/{applet}", tarfile.SYMTYPE, 0o777, link="busybox")
    return buf.getvalue()


def default_tag(busybox: Path) -> str:
    return f"{REPOSITORY}:{hashlib.sha256(busybox.read_bytes()).hexdigest()[:12]}"


def ensure_image(client, busybox: Path, name: str | None = None) -> BuiltImage:
    """Import the image into the daemon behind ``client`` unless it already has ``name``."""
    import docker

    name = name or default_tag(busybox)
    try:
        client.images.get(name)
        return BuiltImage(name, busybox, created=False)
    except docker.errors.ImageNotFound:
        pass
    repository, _, tag = name.rpartition(":") if ":" in name.rsplit("/", 1)[-1] else (name, "", "latest")
    client.api.import_image_from_data(rootfs_tar(busybox), repository=repository, tag=tag, changes=["ENV PATH=/bin"])
    client.images.get(name)
    return BuiltImage(name, busybox, created=True)
