"""Choosing pyglet's backend before anything imports ``pyglet.gl``: a window (X11/GLX, or the platform's)
when there is a display, or offscreen rendering through EGL (``pyglet.options['headless']``).

pyglet decides once per process, when ``pyglet.gl`` / ``pyglet.window`` are first imported; ``select``
must therefore run before ``urdf_dyn_viewer.window`` (or ``trimesh.viewer``) is imported. After that the
choice is fixed: ``select`` returns the backend actually in use.
"""
from __future__ import annotations

import os
import sys

from urdf_dyn import UrdfDynError

__all__ = ["has_display", "select", "ViewerError"]


class ViewerError(UrdfDynError):
    """The viewer cannot run here: no OpenGL, no display for a window, an output format it cannot write."""


def has_display() -> bool:
    """True when a window can be opened: an X display on Linux/BSD (``DISPLAY``); always on macOS/Windows."""
    if sys.platform.startswith(("win", "darwin")):
        return True
    return bool(os.environ.get("DISPLAY"))


def select(headless: bool) -> bool:
    """Make pyglet render offscreen through EGL (``headless=True``) or in windows. Returns the backend in
    use (True for headless), which differs from the request when pyglet's GL was imported already."""
    try:
        import pyglet
    except ImportError as e:
        raise ViewerError(f"pyglet is not installed ({e}); pip install 'pyglet<2'") from None
    if "pyglet.gl" not in sys.modules and "pyglet.window" not in sys.modules:
        pyglet.options["headless"] = bool(headless)
        pyglet.options["shadow_window"] = False  # one context per viewer; no hidden extra window
        pyglet.options["debug_gl"] = False       # a glGetError after every call costs ~30 % of the frame rate
    return bool(pyglet.options["headless"])
