"""``${VAR}`` interpolation in the config, where an unset variable breaks only what uses it.

``${VAR}`` and ``${VAR:-default}`` read the environment. A variable that is unset (and has no
default) used to fail the whole file, so a missing ``FIRECRAWL_API_KEY`` behind
``web.firecrawl.api_key: "${FIRECRAWL_API_KEY}"`` stopped ``webshelf read``, ``webshelf cache …``
and local extracts that never touch Firecrawl. Now the setting that names it is *deferred*:
the file loads with that setting at its default, and reading the setting (``config.web.firecrawl
.api_key``) raises the ConfigError naming the key and the variable — at the moment something
actually needs it, and only then.

The unit of deferral is one model field: a list item or a dict entry defers its whole field
(``web.allow_hosts[2]`` defers ``web.allow_hosts``). A required field without a default cannot
be deferred; its missing variable is still an error when the file is loaded.
"""

from __future__ import annotations

import os
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from webshelf.errors import ConfigError

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")
Part = str | int


@dataclass(frozen=True)
class Unset:
    """A setting whose value names an environment variable that is not set."""

    key: str  # as written: web.firecrawl.api_key, web.allow_hosts[0]
    var: str
    file: Path

    def error(self) -> ConfigError:
        return ConfigError(f"{self.file}: {self.key}: environment variable {self.var} is not set; export it or write "
                           f"${{{self.var}:-default}}", path=str(self.file), key=self.key)


def _key(parts: tuple[Part, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(parts))


def interpolate(node: Any, file: Path, unset: dict[tuple[Part, ...], Unset], parts: tuple[Part, ...] = ()) -> Any:
    """``node`` with every ``${VAR}`` replaced; an unset one is left as written and recorded in ``unset``."""
    if isinstance(node, dict):
        return {k: interpolate(v, file, unset, (*parts, str(k))) for k, v in node.items()}
    if isinstance(node, list):
        return [interpolate(v, file, unset, (*parts, i)) for i, v in enumerate(node)]
    if not isinstance(node, str):
        return node

    def repl(m: re.Match[str]) -> str:
        value = os.environ.get(m.group(1))
        if value is not None:
            return value
        if m.group(2) is not None:
            return m.group(2)
        unset.setdefault(parts, Unset(_key(parts), m.group(1), file))
        return m.group(0)

    return _ENV_REF.sub(repl, node)


def _model(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def field_path(root: type[BaseModel], parts: tuple[Part, ...], data: Any = None) -> tuple[Part, ...] | None:
    """The path of the model field that holds ``parts`` (model fields, keys of dicts of models,
    and runtime instances, whose model ``data`` — the loaded YAML — chooses by its ``type``), or
    None for a key the models do not know (then validation names it as unknown)."""
    current: type[BaseModel] | None = root
    node = data
    path: list[Part] = []
    i = 0
    while i < len(parts):
        name = parts[i]
        if current is None or not isinstance(name, str):
            return None
        if name not in current.model_fields:  # a named instance (RuntimesConfig.extra_model)
            hook = getattr(current, "extra_model", None)
            value = node.get(name) if isinstance(node, dict) else None
            inner = hook(value) if hook is not None else None
            if inner is None or i + 1 >= len(parts):
                return None
            path.append(name)
            current, node, i = inner, value, i + 1
            continue
        path.append(name)
        value = node.get(name) if isinstance(node, dict) else None
        annotation = current.model_fields[name].annotation
        if (inner := _model(annotation)) and i + 1 < len(parts):
            current, node, i = inner, value, i + 1
            continue
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) is dict and len(args) == 2 and (inner := _model(args[1])) \
                and i + 2 < len(parts):
            path.append(parts[i + 1])
            current, i = inner, i + 2
            node = value.get(parts[i - 1]) if isinstance(value, dict) else None
            continue
        return tuple(path)
    return tuple(path)


def prune(data: Any, path: tuple[Part, ...]) -> None:
    """Remove the value at ``path`` from the loaded YAML, so that the field takes its default."""
    for part in path[:-1]:
        data = data.get(part) if isinstance(data, dict) else None
    if isinstance(data, dict):
        data.pop(path[-1], None)


def defer(config: BaseModel, path: tuple[Part, ...], unset: Unset) -> None:
    """Make reading the field at ``path`` of the validated ``config`` raise ``unset.error()``."""
    owner: Any = config
    for part in path[:-1]:
        if isinstance(owner, BaseModel):  # a field, or a named instance (pydantic keeps those as extras)
            owner = owner.__dict__[part] if part in owner.__dict__ else owner.__pydantic_extra__[part]
        else:
            owner = owner[part]
    pending = object.__getattribute__(owner, "__pydantic_private__")
    pending["_unset"] = {**pending.get("_unset", {}), path[-1]: unset}


def unset_settings(model: BaseModel) -> list[Unset]:
    """Every deferred setting under ``model`` (for ``config show`` and ``config check``)."""
    found = list((object.__getattribute__(model, "__pydantic_private__") or {}).get("_unset", {}).values())
    for value in [*model.__dict__.values(), *(model.__pydantic_extra__ or {}).values()]:
        for item in value.values() if isinstance(value, dict) else [value]:
            if isinstance(item, BaseModel):
                found.extend(unset_settings(item))
    return found


__all__ = ["Unset", "defer", "field_path", "interpolate", "prune", "unset_settings"]
