"""The one safe writer of every output file: a failed run never leaves a half-written file in place of a good
one, never replaces one of its own inputs, and never renames over anything that is not a regular file.

- ``atomic_path(path, inputs=())`` writes a temporary file beside the target and renames it over the target
  only when the writing succeeded (``os.replace``: atomic on POSIX), so the previous output survives a
  failure;
- an output that is the same file (``os.path.samefile``: same device and inode, through links too) as an
  input of this run is refused with ``OutputError`` before anything is written: the inputs are those given
  and every file noted with ``note_input`` (the robot, scenario and pin-table readers note theirs: a user's
  sources, never a run's own outputs, which a later run rewrites);
- a target that exists and is not a regular file is never renamed over: a symbolic link to a regular file
  has its target replaced (the link stays); a character device, FIFO or socket (``/dev/null``, a link to
  ``/proc/self/fd/1``) is written into; a folder or a dangling link is refused."""
from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from urdf_dyn.errors import UrdfDynError

__all__ = ["atomic_path", "note_input", "OutputError"]

_inputs: dict = {}       # (st_dev, st_ino) -> {paths noted with that identity}


class OutputError(UrdfDynError):
    """An output path that would destroy an input or cannot be written safely."""


def note_input(path) -> None:
    """Remember ``path`` (a file this process read as input) so that no ``atomic_path`` replaces it."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        _inputs.setdefault((st.st_dev, st.st_ino), set()).add(os.path.abspath(path))


def _check_not_input(path: Path, inputs) -> None:
    try:
        st = os.stat(path)
    except OSError:
        return
    # the noted paths of the same device and inode that are still that file (an inode number is reused once
    # its file is deleted: a noted path that is gone or now another file does not count)
    noted = [p for p in sorted(_inputs.get((st.st_dev, st.st_ino), ())) if _same(path, p)]
    for p in [*inputs, *noted]:
        if _same(path, p):
            raise OutputError(f"{path}: the output is the input file {p}: refusing to overwrite it "
                              f"(give another output path)")


def _same(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _target(path: Path):
    """(the regular file to replace, or None) and (the special file to write into, or None)."""
    if not os.path.lexists(path):
        return path, None
    try:
        st = os.stat(path)         # follows links
    except OSError as e:
        raise OutputError(f"{path}: a symbolic link to a file that cannot be reached ({e.strerror}): "
                          f"refusing to write through it") from None
    if stat.S_ISREG(st.st_mode):
        return Path(os.path.realpath(path)), None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{path}: is a folder, expected a file name")
    return None, path             # device, FIFO, socket: written into, never replaced


@contextlib.contextmanager
def atomic_path(path, inputs=()):
    """Yield a temporary path beside ``path``; on success it replaces ``path`` (os.replace), else it is removed.

    ``inputs``: files of this run that ``path`` must not be (besides those noted with ``note_input``).
    Raises ``OutputError`` for an output that is an input, a folder or a dangling link (module docstring)."""
    path = Path(path)
    _check_not_input(path, inputs)
    replace, into = _target(path)
    where = (replace or path).parent if into is None else Path(tempfile.gettempdir())
    where.mkdir(parents=True, exist_ok=True)
    name = (replace or path).name
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=path.suffix, dir=where)
    os.close(fd)
    try:
        yield Path(tmp)
        if into is not None:
            with open(tmp, "rb") as src, open(into, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes private files; outputs get the usual permissions
            os.replace(tmp, replace)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
