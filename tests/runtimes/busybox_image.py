"""The tests' docker image: the same recipe as ``webshelf runtime image`` (runtimes/docker/image.py),
under its own repository name so tests never touch an image a user built."""

from __future__ import annotations

from pathlib import Path

from webshelf.runtimes.docker import image

REPOSITORY = "webshelf-test-busybox"


def busybox_path() -> Path | None:
    try:
        return image.find_busybox()
    except ValueError:
        return None


def rootfs_tar(busybox: Path) -> bytes:
    return image.rootfs_tar(busybox)


def ensure_image(client, busybox: Path) -> str:
    """The image tag, importing the image if this daemon does not have it yet."""
    tag = image.default_tag(busybox).rpartition(":")[2]
    return image.ensure_image(client, busybox, f"{REPOSITORY}:{tag}").name
