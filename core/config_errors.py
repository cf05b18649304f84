"""pydantic's validation errors and PyYAML's syntax errors, said the way webshelf says things.

A config error names the file, the key, what is wrong and what to write instead, like every
other webshelf error — never pydantic's own wording ("Value error, …", "Input should be a valid
dictionary or instance of WebConfig", "Field required"). ``describe`` turns one
``ValidationError`` into one line per bad key; ``yaml_problem`` names the file, line and column
of a syntax error; ``empty_sections`` makes ``web:`` with nothing under it mean the defaults.
"""

from __future__ import annotations

import re
import types
import typing
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:  # yaml is imported only where a file is parsed (core/config.py)
    import yaml

#: what a value of the wrong type should have been, by pydantic error type
_EXPECTED = {
    "string_type": "a string", "str_type": "a string",
    "int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
    "float_type": "a number", "float_parsing": "a number",
    "bool_type": "true or false", "bool_parsing": "true or false",
    "list_type": "a list", "tuple_type": "a list",
    "dict_type": "a mapping of keys to values", "model_type": "a mapping of settings",
    "model_attributes_type": "a mapping of settings",
    "none_required": "null",
}
_BOUNDS = {"greater_than_equal": "≥ {ge}", "less_than_equal": "≤ {le}", "greater_than": "> {gt}", "less_than": "< {lt}"}


def _unwrap(ann: Any) -> Any:
    while typing.get_origin(ann) is Annotated:
        ann = typing.get_args(ann)[0]
    return ann


def _label(member: Any) -> str:
    return member.__name__ if isinstance(member, type) else str(member)


def clean_loc(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The location as the user wrote it, found by walking the models along it: pydantic adds
    the member of a union (``image.ModalImageConfig.base``) and the ``type`` tag of a runtime
    instance (``runtimes.gpu-box.docker.image``), neither of which is in the YAML."""
    out: list[Any] = []
    ann: Any = root
    parts = list(loc)
    while parts:
        part, ann = parts[0], _unwrap(ann)
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            field = ann.model_fields.get(part) if isinstance(part, str) else None
            if field is not None:
                ann = field.annotation
            elif (hook := getattr(ann, "extra_model", None)) is not None:
                ann = ("tagged", hook)  # a runtime instance: the tag comes next
            else:
                ann = None
        elif isinstance(ann, tuple) and ann[0] == "tagged":
            model = ann[1]({"type": part})
            if model is not None:  # the type tag pydantic inserted: not in the YAML
                parts.pop(0)
                ann = model
                continue
            ann = None
        elif origin in (Union, types.UnionType):
            members = [m for m in args if m is not type(None)]
            chosen = next((m for m in members if _label(_unwrap(m)) == part), None)
            if chosen is not None:  # the union member pydantic tried
                parts.pop(0)
            ann = chosen if chosen is not None else (members[0] if len(members) == 1 else None)
            if ann is not None:
                continue
        elif origin is dict:
            ann = args[1] if len(args) == 2 else None
        elif origin in (list, tuple):
            ann = args[0] if args else None
        else:
            ann = None
        out.append(parts.pop(0))
    return tuple(out)


def key_of(loc: tuple[Any, ...]) -> str:
    """``web.allow_hosts[1]``: dots between keys, brackets around list indices."""
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(loc))


def _choices(expected: str) -> str:
    """pydantic's "'a', 'b' or 'c'" as "a, b, c"."""
    return ", ".join(x.strip().strip("'") for x in re.split(r",| or ", expected) if x.strip())


def _num(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _one(key: str, err: dict[str, Any], tags: tuple[str, ...]) -> str:
    kind, ctx, got = err["type"], err.get("ctx") or {}, err.get("input")
    if kind == "extra_forbidden":
        return f"{key}: unknown key (check the spelling; see README's config reference)"
    if kind == "missing":
        return f"{key}: missing key (it has no default)"
    if kind in _BOUNDS:
        return f"{key}: {got!r} is out of range; allowed: {_BOUNDS[kind].format(**{k: _num(v) for k, v in ctx.items()})}"
    if kind == "literal_error":
        return f"{key}: {got!r} is not one of the choices; choose one of: {_choices(ctx.get('expected', ''))}"
    if kind == "union_tag_not_found":
        return f"{key}: missing key type (the kind of runtime); choose one of: {', '.join(tags)}"
    if kind == "union_tag_invalid":
        return f"{key}.type: {ctx.get('tag')!r} is not a runtime type; choose one of: {', '.join(tags)}"
    if kind == "value_error":
        return f"{key}: {ctx.get('error', err['msg'])}"
    if kind in ("string_too_short", "too_short"):
        return f"{key}: must not be empty" if ctx.get("min_length") == 1 else \
            f"{key}: needs at least {ctx.get('min_length')} {'characters' if kind.startswith('string') else 'items'}"
    if kind in ("string_too_long", "too_long"):
        return f"{key}: {got!r} is too long; at most {ctx.get('max_length')}"
    if kind == "string_pattern_mismatch":
        return f"{key}: {got!r} does not have the expected form (pattern {ctx.get('pattern')})"
    if kind in _EXPECTED:
        return f"{key}: must be {_EXPECTED[kind]} (got {got!r})"
    return f"{key}: {err['msg'][:1].lower()}{err['msg'][1:]} (got {got!r})"


def describe(exc: ValidationError, root: type[BaseModel], tags: tuple[str, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    """(location, message) per problem; a union's alternatives that did not fit are said once
    (``must be a string or a mapping of settings``), and not at all when the value took one of
    their shapes and failed inside it (then only the inner problem is named). ``tags``: the
    runtime types, named when an instance's ``type`` is missing or unknown."""
    errors = [(clean_loc(root, tuple(e["loc"])), e) for e in exc.errors()]
    deeper = {loc[:n] for loc, _ in errors for n in range(1, len(loc))}
    by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for loc, err in errors:
        by_key.setdefault(loc, []).append(err)
    out = []
    for loc, errs in by_key.items():
        kinds = [e for e in errs if e["type"] in _EXPECTED]
        if kinds and loc in deeper:  # a mapping for `image:` that failed inside: say what is wrong inside
            errs = [e for e in errs if e not in kinds]
        elif len(kinds) > 1:
            wanted = " or ".join(dict.fromkeys(_EXPECTED[e["type"]] for e in kinds))
            errs = [e for e in errs if e not in kinds]
            out.append((loc, f"{key_of(loc)}: must be {wanted} (got {kinds[0].get('input')!r})"))
        out.extend((loc, _one(key_of(loc), e, tags)) for e in errs)
    return out


def yaml_problem(file: Any, exc: yaml.YAMLError) -> str:
    """``FILE: line 3, column 9: not valid YAML: mapping values are not allowed here``."""
    mark = getattr(exc, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    detail = f"{problem} ({context})" if context else problem
    return (f"{file}: {where}not valid YAML: {detail}; check the indentation, and quote values that contain ': ' "
            "or start with a special character")


def empty_sections(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with every section written with nothing under it (``web:``) as ``{}``: its defaults."""
    out = dict(data)
    for key, value in data.items():
        field = model.model_fields.get(key)
        inner = field.annotation if field is not None else None
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            hook = getattr(model, "extra_model", None)
            inner = hook(value) if field is None and hook is not None else None
        if inner is None:
            continue
        if value is None:
            out[key] = {}
        elif isinstance(value, dict):
            out[key] = empty_sections(inner, value)
    return out


__all__ = ["clean_loc", "describe", "empty_sections", "key_of", "yaml_problem"]
