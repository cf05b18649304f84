"""Human-friendly durations and sizes for config values: ``15m``, ``7d``, ``1h30m``, ``1GiB``.

Plain numbers keep working (seconds, bytes), so a config can say ``ttl: 604800`` or
``ttl: 7d``. A value that does not parse is a validation error naming the accepted forms.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400, "w": 604_800}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b?\s*$", re.IGNORECASE)
_SIZE_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def parse_duration(value: object) -> object:
    """``"1h30m"`` → 5400.0 seconds; numbers pass through (pydantic checks the range)."""
    if not isinstance(value, str):
        return value
    text = value.strip().lower()
    try:
        return float(text)
    except ValueError:
        pass
    compact = text.replace(" ", "")
    parts = _DURATION_PART.findall(compact)
    if not parts or "".join(n + u for n, u in parts) != compact:
        raise ValueError(f"{value!r} is not a duration; write seconds (900) or e.g. 90s, 15m, 12h, 7d, 1h30m")
    return float(sum(float(n) * _DURATION_UNITS[u] for n, u in parts))


def parse_size(value: object) -> object:
    """``"1GiB"`` → 1073741824, ``"500MB"`` → 500000000; numbers pass through."""
    if not isinstance(value, str):
        return value
    m = _SIZE.match(value)
    if not m:
        raise ValueError(f"{value!r} is not a size; write bytes (1048576) or e.g. 500MB, 1GiB, 2g")
    number, prefix, binary = float(m.group(1)), m.group(2).lower(), m.group(3)
    base = 1024 if binary or (prefix and not value.strip().lower().endswith("b")) else 1000
    return int(number * base ** _SIZE_POWERS[prefix])


def describe_duration(seconds: float) -> str:
    """A short human form for output: 900 → '15m', 93784 → '1d2h3m4s'."""
    if seconds <= 0:
        return "0s"
    out, rest = [], int(round(seconds))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)):
        if rest >= size:
            out.append(f"{rest // size}{unit}")
            rest %= size
    return "".join(out) or f"{seconds:g}s"


def describe_size(n: int) -> str:
    """Bytes in binary units for output: 1536 → '1.5 KiB'."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n:,} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n:,} B"


Duration = Annotated[float, BeforeValidator(parse_duration)]
Size = Annotated[int, BeforeValidator(parse_size)]
