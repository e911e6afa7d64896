"""Escaping at the sinks: text from a robot file or a scenario (a joint's, a robot's, an actuator's name, a
description) written into markdown that a browser renders (the viewer's panels; ``sizing_report.md``), into
an XML attribute or into an XML comment (generated URDFs). A name is data: it must never become markup.

- ``md_text``: one value inside a markdown table cell or a line (markdown's punctuation escaped with a
  backslash, CommonMark §2.4; then ``&``, ``<``, ``>``, ``"``, ``'`` as HTML entities, and line breaks as
  spaces), so ``<iframe srcdoc=…>`` shows as text;
- ``md_document``: a whole markdown document made from trusted text with names in it: every ``<`` outside code
  spans becomes ``&lt;`` (no raw HTML survives: a renderer that passes HTML through gets none), and a figure
  that is not a finite number of sensible size (``inf``, ``nan``, 20 digits or more, a three-digit exponent
  such as ``1e+300``) is refused;
- ``xml_attr`` and ``xml_comment``: XML 1.0 §2.3 attribute values and §2.5 comments (no ``--``), with
  characters XML cannot hold replaced by U+FFFD."""
from __future__ import annotations

import html
import re

__all__ = ["md_text", "md_document", "xml_attr", "xml_comment", "NotFiniteFigure"]

_MD = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()#+!|~"})
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_CODE = re.compile(r"(`+)(.*?)\1", re.S)
_BAD_FIGURE = re.compile(r"(?<![\w.])[-+]?(?:inf|nan|infinity)(?![\w])|\d{20,}|\d[eE][+-]?\d{3,}", re.I)


class NotFiniteFigure(ValueError):
    """A report line holds ``inf``, ``nan``, a number of 20 digits or more, or a three-digit exponent."""


def md_text(value) -> str:
    """``value`` (str() of it) as literal text in markdown that may be rendered as HTML (module docstring)."""
    s = re.sub(r"[\r\n]+", " ", str(value)).translate(_MD)
    return html.escape(s, quote=True)


def md_document(text: str, source: str = "report", figures: bool = True) -> str:
    """``text`` with every ``<`` outside code spans written ``&lt;``; with ``figures``, raises NotFiniteFigure
    naming ``source`` and the line when a figure is ``inf``, ``nan`` or 20 digits or more (a report prints
    physical numbers)."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        plain = _CODE.sub("", line)
        m = _BAD_FIGURE.search(plain) if figures else None
        if m:
            raise NotFiniteFigure(f"{source}: line {n}: the figure {m.group(0)[:24]!r} is not a finite, physical "
                                  f"number ({line.strip()[:100]!r}); an input is out of its physical range")
        parts, last = [], 0
        for c in _CODE.finditer(line):
            parts.append(line[last:c.start()].replace("<", "&lt;"))
            parts.append(c.group(0))
            last = c.end()
        parts.append(line[last:].replace("<", "&lt;"))
        out.append("".join(parts))
    return "\n".join(out)


def xml_attr(text) -> str:
    """``text`` as the value of a double-quoted XML attribute (``&``, ``<``, ``>``, ``"`` escaped)."""
    return html.escape(_NOT_XML.sub("\ufffd", str(text)), quote=True)


def xml_comment(text) -> str:
    """``text`` safe inside ``<!-- -->``: a space after each ``-`` that another follows (no ``--``, and no
    ``-`` right before the closing ``-->``), characters XML cannot hold as U+FFFD."""
    s = re.sub("-(?=-)", "- ", _NOT_XML.sub("\ufffd", str(text)))
    return s + " " if s.endswith("-") else s
