"""What pyproject.toml cannot say: the version, read from loader/ordo.h
(the project's one place for it), and the wheel's tag. libordo.so sits in
the package (ordo/_lib/libordo.so, put there by `make wheel`), so the wheel
is for this platform and any Python 3 (the library is loaded through
ctypes, not as an extension module): py3-none-<platform>."""
import os
import re

from setuptools import Distribution, setup
from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))


def version():
    """MAJOR.MINOR.PATCH from ../loader/ordo.h's ORDO_VERSION_* defines."""
    header = os.path.join(HERE, "..", "loader", "ordo.h")
    with open(header, encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(rf"^#define ORDO_VERSION_{name} ([0-9]+)$", text, re.M)
             for name in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise SystemExit(f"{header}: no ORDO_VERSION_MAJOR/MINOR/PATCH defines")
    return ".".join(p.group(1) for p in parts)


class WithLibrary(Distribution):
    """The package holds a shared library: it installs as platform-specific
    (into platlib, the wheel's root)."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """A wheel holding a shared library loaded through ctypes: tagged for
    this platform, any Python 3 (py3-none-<platform>)."""

    def get_tag(self):
        return ("py3", "none", super().get_tag()[2])


setup(version=version(), distclass=WithLibrary, cmdclass={"bdist_wheel": PlatformWheel})
