"""The base of every config model, here so that each runtime's model can live next to its adapter.

``runtimes`` may not import ``core`` (the room order), yet a runtime's options are one block of
webshelf's YAML config, validated like every other section. So the base class is defined here
and ``core.config`` builds its sections on it too. Unknown keys are errors (``extra="forbid"``):
a typo in a deployment config fails loudly at start instead of quietly changing behaviour.

A field whose ``${VAR}`` is unset raises its ConfigError when read, not when the file loads
(``core/config_env.py`` records it in ``_unset``); this class only does the raising.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationInfo
from pydantic.functional_validators import AfterValidator



def _absolute(value: str, info: ValidationInfo) -> str:
    if not value.startswith("/"):
        raise ValueError(f"{info.field_name} {value!r} must be an absolute path")
    return value


#: a path setting that must be absolute (a sandbox's workdir, a remote staging directory)
AbsolutePath = Annotated[str, AfterValidator(_absolute)]

#: what a runtime instance may be called (``--runtime NAME``, a key under ``runtimes:``)
INSTANCE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class Strict(BaseModel):
    """Base for every config section: unknown keys are errors. A field whose ``${VAR}`` is unset
    raises its ConfigError when read, not when the file loads (core/config_env.py)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)
    _unset: dict[str, Any] = PrivateAttr(default_factory=dict)

    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_" and name in type(self).__pydantic_fields__:
            pending = (object.__getattribute__(self, "__pydantic_private__") or {}).get("_unset")
            if pending and name in pending:
                raise pending[name].error()
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        private = object.__getattribute__(self, "__pydantic_private__") or {}
        if name in private.get("_unset", {}):  # a value set in code replaces the unset one
            private["_unset"] = {k: v for k, v in private["_unset"].items() if k != name}
        super().__setattr__(name, value)


__all__ = ["INSTANCE_NAME", "Strict"]
