"""Builds the compiled core ``decode_ring._core`` from ``_core.pyx``.

The compiled core is the default. A failing build fails the install; there is
no silent fallback while a C compiler works. The pure-Python twin alone is
installed (as a pure wheel) when ``DECODE_RING_NO_EXTENSIONS`` is set to
anything but empty or ``0``, on interpreters other than CPython (PyPy), or
when no C compiler works at all.
"""

import os
import platform
import sys
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def extensions_disabled():
    return os.environ.get("DECODE_RING_NO_EXTENSIONS", "") not in ("", "0")


def compiler_works():
    """Whether the configured C compiler compiles an empty program."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as scratch:
        probe = os.path.join(scratch, "probe.c")
        with open(probe, "w") as source:
            source.write("int main(void) { return 0; }\n")
        try:
            compiler.compile([probe], output_dir=scratch)
        except Exception:  # the error classes differ across setuptools versions
            return False
    return True


class BuildCompiledCore(build_ext):
    """Cythonizes at build time, into the build tree, so no generated C lands
    in the source tree or the sdist."""

    def finalize_options(self):
        from Cython.Build import cythonize

        self.set_undefined_options("build", ("build_temp", "build_temp"))
        self.distribution.ext_modules = cythonize(
            self.distribution.ext_modules,
            build_dir=os.path.join(self.build_temp, "cython"),
            compiler_directives={"language_level": 3},
        )
        super().finalize_options()


def core_extensions():
    if extensions_disabled() or platform.python_implementation() != "CPython":
        return []
    if not compiler_works():
        print(
            "decode_ring: no working C compiler; installing the pure-Python core only",
            file=sys.stderr,
        )
        return []
    return [Extension("decode_ring._core", ["decode_ring/_core.pyx"])]


setup(ext_modules=core_extensions(), cmdclass={"build_ext": BuildCompiledCore})
