"""README's Security section names real tests, and every error code in it exists in webshelf/errors.py."""

from __future__ import annotations

import re
from pathlib import Path

import webshelf.errors as errors

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "README.md").read_text().split("## Security", 1)[1].split("\n## ", 1)[0]


def test_every_test_named_in_the_security_section_exists():
    current = None
    named = 0
    for ref in re.findall(r"`((?:tests/[\w/]+/)?test_\w+\.py|…)::(test_\w+)`", SECTION):
        module, test = ref
        if module != "…":
            current = module if module.startswith("tests/") else f"tests/core/{module}"
        source = (ROOT / current).read_text()
        assert f"def {test}(" in source, f"{current}::{test} is named in README but does not exist"
        named += 1
    assert named >= 30


def test_every_error_code_in_the_readme_is_defined():
    defined = {cls.code for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.WebshelfError)}
    table = SECTION.split("### Error codes", 1)[1]
    first_cells = [row.split(" | ", 1)[0] for row in re.findall(r"^\| (`.*)$", table, re.M)]
    listed = {code for cell in first_cells for code in re.findall(r"`(\w+)`", cell)}
    assert (listed - {"internal_error"}) <= defined
    assert defined - {"webshelf_error"} <= listed | {"internal_error"}
