"""Resolution of ROS ``package://`` URIs and xacro ``$(find pkg)`` without a ROS installation.

A package ``pkg`` is looked for, in this order, in: an explicit mapping ``{pkg: folder}``; each folder of
``package_dirs`` and of ``ROS_PACKAGE_PATH``; and the folders above the robot file (the ROS layout, where a
package sits next to its siblings). In each search folder D, ``D/pkg`` is taken if it exists, or D itself
if ``D/package.xml`` names ``pkg``.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from urdf_dyn.errors import PackageNotFoundError

__all__ = ["PackageResolver"]

_NAME_RE = re.compile(r"<name>\s*([^<\s]+)\s*</name>")


def _package_xml_name(folder: Path):
    f = folder / "package.xml"
    try:
        m = _NAME_RE.search(f.read_text(errors="replace"))
    except OSError:
        return None
    return m.group(1) if m else None


class PackageResolver:
    """Finds ROS package folders. ``package_dirs`` is a mapping {package: folder}, a list of folders that
    contain packages, or None; ``origin`` is the robot file whose ancestors are searched too."""

    def __init__(self, package_dirs=None, origin=None):
        self.mapping = {}
        self.search = []
        # absolute from the start: a relative folder (``--package-dir .``) would otherwise be read again
        # relative to each including file's folder when xacro resolves $(find pkg)/... inside an include
        if isinstance(package_dirs, dict):
            self.mapping = {k: Path(v).absolute() for k, v in package_dirs.items()}
        elif isinstance(package_dirs, (str, os.PathLike)):
            self.search.append(Path(package_dirs).absolute())
        elif package_dirs:
            self.search.extend(Path(p).absolute() for p in package_dirs)
        for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep):
            if p:
                self.search.append(Path(p).absolute())
        if origin is not None:
            here = Path(origin).resolve().parent
            self.search.extend([here, *here.parents])

    def find(self, pkg: str) -> Path:
        """Folder of package ``pkg``. Raises PackageNotFoundError listing every folder tried."""
        if pkg in self.mapping:
            return self.mapping[pkg]
        for d in self.search:
            if (d / pkg).is_dir():
                return d / pkg
            if _package_xml_name(d) == pkg:
                return d
        tried = ", ".join(str(d) for d in self.search) or "(nothing: give package_dirs or set ROS_PACKAGE_PATH)"
        raise PackageNotFoundError(f"ROS package {pkg!r} not found; searched: {tried}")

    def resolve(self, uri: str, base_dir=None) -> str:
        """Path of a ``package://pkg/rel``, ``file://`` or relative file name (relative to ``base_dir``)."""
        if uri.startswith("package://"):
            pkg, _, rel = uri[len("package://"):].partition("/")
            return str(self.find(pkg) / rel)
        if uri.startswith("file://"):
            return uri[len("file://"):]
        if base_dir is not None and not os.path.isabs(uri):
            return str(Path(base_dir) / uri)
        return uri

    def as_tuple(self):
        """A picklable description, stored in the Model so that viewers can resolve meshes later."""
        return tuple(self.mapping.items()), tuple(str(p) for p in self.search)
