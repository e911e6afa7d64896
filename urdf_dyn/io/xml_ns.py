"""Namespace prefixes used without a declaration (``<drake:rotor_inertia>`` in a published UR5e description,
``drake:`` attributes in Drake's models): urdfdom (TinyXML2) and Pinocchio ignore namespaces, libxml2 and
expat refuse the file. ``declare_prefixes`` declares each such prefix on the root element (``drake`` as
Drake's namespace, any other as ``urn:undeclared:<prefix>``) and says where it was first used, so that a
reader can load the file with a located warning instead of a syntax error."""
from __future__ import annotations

import re

__all__ = ["declare_prefixes", "DRAKE_NS"]

DRAKE_NS = "http://drake.mit.edu"
_USED = re.compile(rb"<([A-Za-z_][\w.-]*):[A-Za-z_]|\s([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*\s*=")
_DECLARED = re.compile(rb"xmlns:([A-Za-z_][\w.-]*)\s*=")
_ROOT = re.compile(rb"<([A-Za-z_][\w.:-]*)")


def _blank(m):
    return b" " * len(m.group(0))


def declare_prefixes(data: bytes):
    """(data with the undeclared prefixes declared on its root element, [(prefix, namespace, line of first
    use)]); ``data`` unchanged and [] when every prefix is declared (or the root cannot be found)."""
    body = re.sub(rb"<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>", _blank, data, flags=re.S)
    declared = {m.group(1) for m in _DECLARED.finditer(body)} | {b"xml", b"xmlns"}
    first = {}
    for m in _USED.finditer(body):
        p = m.group(1) or m.group(2)
        if p not in declared and p not in first:
            first[p] = body[:m.start(1) if m.group(1) else m.start(2)].count(b"\n") + 1
    r = _ROOT.search(body)
    if not first or r is None:
        return data, []
    found = []
    decl = b""
    for p, line in first.items():
        uri = DRAKE_NS if p == b"drake" else f"urn:undeclared:{p.decode()}"
        decl += f' xmlns:{p.decode()}="{uri}"'.encode()
        found.append((p.decode(), uri, line))
    return data[:r.end()] + decl + data[r.end():], found
