"""The optional compiled part of webshelf (core/convert/native/_lexbor.pyx); pyproject.toml has
everything else. ``optional=True``: without a C compiler the install goes on and the pure-Python
code serves (core/convert/native/__init__.py says how the two are kept the same)."""

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # (building from a checkout without Cython: no compiled part)
    extensions = []
else:
    extensions = cythonize(
        [Extension("webshelf.core.convert.native._lexbor", ["core/convert/native/_lexbor.pyx"],
                   include_dirs=["core/convert/native"], optional=True)],
        compiler_directives={"language_level": 3}, quiet=True)

setup(ext_modules=extensions)
