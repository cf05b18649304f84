"""Labels that tie a docker container to the webshelf process and home that created it.

Every container the docker runtime creates carries ``io.webshelf.runtime`` (its runtime name),
``io.webshelf.home`` and the owner (``io.webshelf.owner.pid|start|boot|host``, see
``runtimes.owner``). A container of the same home whose owner is gone is an orphan: the next
docker start removes it, and ``webshelf runtime prune`` lists and removes it. Containers of
another home, of an owner on another host, or without these labels (attached ones, ones from
older versions) are never touched.
"""

from __future__ import annotations

from pathlib import Path

from webshelf.errors import RuntimeUnavailableError
from webshelf.runtimes.owner import Orphan, Owner, current

LABEL = "io.webshelf.runtime"
HOME = "io.webshelf.home"
PID, START, BOOT, HOST = (f"io.webshelf.owner.{k}" for k in ("pid", "start", "boot", "host"))


def home_of(web: Path) -> str:
    """The webshelf home whose ``cache/web`` is ``web``."""
    return str(Path(web).parent.parent)


def owner_labels(runtime: str, web: Path) -> dict[str, str]:
    me = current()
    return {LABEL: runtime, HOME: home_of(web), PID: str(me.pid), START: me.start, BOOT: me.boot, HOST: me.host}


def owner_of(labels: dict[str, str]) -> Owner | None:
    try:
        return Owner(int(labels[PID]), labels.get(START, ""), labels.get(BOOT, ""), labels[HOST])
    except (KeyError, ValueError):
        return None


def orphans(client, errors, web: Path, *, runtime: str = "docker") -> list[Orphan]:
    """Containers of this home whose owner process is gone (``errors`` is ``docker.errors``);
    removing one that the daemon refuses, or with the daemon gone, is a ``RuntimeUnavailableError``.

    Listed with the low-level API (one request, labels included): the high-level list inspects
    each container afterwards and fails on one removed in between by someone else."""
    home = home_of(web)
    found = []
    for row in client.api.containers(all=True, filters={"label": [f"{HOME}={home}", PID]}):
        labels = row.get("Labels") or {}
        owner = owner_of(labels)
        if owner is None or owner.alive():
            continue

        def remove(cid=row["Id"]) -> None:
            import requests  # a dependency of the docker SDK

            try:
                client.api.remove_container(cid, force=True)
            except errors.NotFound:
                pass  # removed meanwhile (by another pruner): fine
            except (errors.DockerException, requests.exceptions.RequestException, OSError) as exc:
                raise RuntimeUnavailableError(f"cannot remove orphan container {cid[:12]}: {exc}",
                                              runtime=runtime) from None

        found.append(Orphan("docker container", row["Id"][:12], owner,
                            f", runtime {labels.get(LABEL, '?')}, home {home}", remove))
    return found
