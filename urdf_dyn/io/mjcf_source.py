"""Where an element of an MJCF file is: its line, so that every error and warning of the MJCF reader
(``urdf_dyn.io.mjcf``) names the user's file, line and element, never the URDF translation.

MuJoCo's compiled ``mjModel`` keeps no source lines, so the file is read once more with lxml and its elements
are matched to the compiled objects the way MuJoCo numbers them: bodies, joints and sites by name (or, when
unnamed, by their order in ``<worldbody>``), equalities, tendons and actuators by their order in their
sections (MuJoCo gives ids in document order). ``<include>``d files are not followed: their elements get no
line (the message still names the file and the element).
"""
from __future__ import annotations

import warnings

from lxml import etree

from urdf_dyn.errors import ModelError, ModelWarning

__all__ = ["MjcfSource"]

_SECTION = {"equality": "equality", "tendon": "tendon", "actuator": "actuator"}


class MjcfSource:
    """The MJCF text's elements by kind; ``err``/``warn`` build located errors and warnings.

    Args:
        data: the file's bytes (or the XML text's).
        name: the display name of the file ("<string>" for text).
    """

    def __init__(self, data, name):
        self.name = name
        try:
            root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
        except etree.XMLSyntaxError:  # MuJoCo compiled it, so this cannot happen short of an encoding quirk
            root = None
        self.kinds = {k: [] for k in ("body", "joint", "site", "equality", "tendon", "actuator", "option")}
        if root is None:
            return
        for wb in root.iter("worldbody"):
            for el in wb.iter("body", "joint", "freejoint", "site"):
                self.kinds["joint" if el.tag == "freejoint" else el.tag].append(el)
        self.kinds["option"] = list(root.iter("option"))
        for sec, kind in _SECTION.items():
            for s in root.iter(sec):
                self.kinds[kind].extend(c for c in s if isinstance(c.tag, str))

    def element(self, kind, index, name=None, count=None):
        """The lxml element of MuJoCo's object ``index`` of ``kind`` (named ``name`` if it has a name;
        ``count``: how many MuJoCo has, to refuse a positional match when the numbers differ), or None."""
        els = self.kinds.get(kind, [])
        if name:
            for el in els:
                if el.get("name") == name:
                    return el
            return None
        if kind == "body":
            index -= 1  # the world body is MuJoCo's body 0
        if count is not None and len(els) != count - (kind == "body"):
            return None
        return els[index] if 0 <= index < len(els) else None

    def where(self, kind, index, name=None, count=None, label=None):
        """(line or None, element description such as ``<connect name="c1">``) of that object."""
        el = self.element(kind, index, name, count)
        tag = el.tag if el is not None else kind
        desc = f"<{tag}" + (f" name=\"{name}\"" if name else "") + ">"
        if label and not name:
            desc += f" ({label})"
        return (el.sourceline if el is not None else None), desc

    def err(self, where, msg, cls=ModelError):
        """The error ``cls`` located at ``where`` = (line, element description)."""
        line, desc = where
        return cls(msg, file=self.name, line=line, element=desc)

    def warn(self, where, msg):
        """A located ModelWarning."""
        warnings.warn(str(self.err(where, msg)), ModelWarning, stacklevel=3)
