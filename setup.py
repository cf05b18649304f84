"""The optional compiled part of webshelf (core/convert/native/_lexbor.pyx); pyproject.toml has
everything else. Optional: without a C compiler (or without Cython) the install goes on and the
pure-Python code serves, with the same output (core/convert/native/__init__.py says how the two
are kept the same)."""

import sys

from setuptools import Extension, setup

# no debug information: the module is 10 times smaller (MSVC has its own flags and defaults)
_FLAGS = [] if sys.platform == "win32" else ["-g0"]

try:
    from Cython.Build import cythonize
except ImportError:  # (a build without Cython: no compiled part)
    extensions = []
else:
    extensions = cythonize(
        [Extension("webshelf.core.convert.native._lexbor", ["core/convert/native/_lexbor.pyx"],
                   include_dirs=["core/convert/native"], extra_compile_args=_FLAGS,
                   depends=["core/convert/native/lexbor_layout.h", "core/convert/native/ws_node_object.h"])],
        compiler_directives={"language_level": 3}, quiet=True)
    for extension in extensions:
        extension.optional = True  # (cythonize makes new Extension objects: set after it)

setup(ext_modules=extensions)
