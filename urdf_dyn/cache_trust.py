"""The one trust rule for every folder urdf_dyn keeps a cache in (the machine checks of ``jobs.disk_cache``,
numba's compiled kernels of ``numba_cache``), after OpenSSH's ``StrictModes`` (sshd_config(5); auth.c's
``auth_secure_path``): a cache is read only from a folder no other user can write.

- the cache's own folder, and each file in it, must be owned by this user, must not be a symbolic link, and
  must not be writable by the group or by others;
- every folder above it (after resolving links) must be owned by this user or by root and not writable by
  the group or by others — except a root-owned folder with the sticky bit (``/tmp``: no one can rename or
  remove another's entry);
- "writable by the group" is allowed when the group is the user's own private group (same name as the user,
  no other members), as Debian's OpenSSH does (``user-group-modes``): the usual ``umask 002`` of a
  user-private-group system gives such folders.

A folder that fails is refused: ``safe_folder`` prints one line ``warning: …`` on stderr naming the folder
and why, and returns a private folder (``tempfile.mkdtemp``: mode 0700, removed at exit) for this run; a
file that fails (``untrusted_file``) is treated as absent. Nothing is deleted, followed or changed."""
from __future__ import annotations

import atexit
import os
import shutil
import stat
import sys
import tempfile

__all__ = ["folder_problem", "untrusted_file", "safe_folder", "warn_once"]

_warned: set = set()
_private: dict = {}


def warn_once(text: str):
    """Print ``warning: text`` on stderr, once per process (not through ``warnings``: a warnings filter
    of ``error`` must not turn a cache that is skipped into a failed run)."""
    if text not in _warned:
        _warned.add(text)
        print(f"warning: {text}", file=sys.stderr)


def _private_group(st) -> bool:
    """True when the file's group is this user's own private group (its name is the user's, no others)."""
    try:
        import grp
        import pwd
        me = pwd.getpwuid(os.getuid())
        g = grp.getgrgid(st.st_gid)
    except (ImportError, KeyError):
        return False
    return st.st_gid == me.pw_gid and g.gr_name == me.pw_name and set(g.gr_mem) <= {me.pw_name}


def _writable_by_others(st) -> bool:
    if st.st_mode & stat.S_IWOTH:
        return True
    return bool(st.st_mode & stat.S_IWGRP) and not _private_group(st)


def _own_problem(path, st, kind: str):
    """Why the cache's own ``kind`` (folder or file) at ``path`` with lstat ``st`` is refused, or None."""
    if stat.S_ISLNK(st.st_mode):
        return f"the {kind} is a symbolic link"
    if st.st_uid != os.getuid():
        return f"the {kind} is owned by another user (uid {st.st_uid})"
    if _writable_by_others(st):
        return f"the {kind} is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _stat(path, how):
    """(``how(path)``, None), (None, None) when it does not exist, or (None, why it cannot be examined)."""
    try:
        return how(path), None
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, e.strerror or str(e)


def folder_problem(folder):
    """Why the cache folder ``folder`` may not be trusted (a sentence), or None; a folder that does not
    exist yet is judged by its nearest existing ancestors (it will be made by this user)."""
    folder = os.path.abspath(folder)
    st, err = _stat(folder, os.lstat)
    if err:
        return f"cannot be examined ({err})"
    if st is not None:
        if not stat.S_ISLNK(st.st_mode) and not stat.S_ISDIR(st.st_mode):
            return "is not a folder"
        why = _own_problem(folder, st, "folder")
        if why:
            return why
    up = os.path.realpath(os.path.dirname(folder))
    while True:
        st, err = _stat(up, os.stat)
        if err:
            return f"{up} cannot be examined ({err})"
        if st is not None:
            if st.st_uid not in (0, os.getuid()):
                return f"the folder above it, {up}, is owned by another user (uid {st.st_uid})"
            sticky_root = st.st_uid == 0 and st.st_mode & stat.S_ISVTX
            if _writable_by_others(st) and not sticky_root:
                return f"the folder above it, {up}, is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
        parent = os.path.dirname(up)
        if parent == up:
            return None
        up = parent


def untrusted_file(path) -> str | None:
    """Why the cache file ``path`` may not be read (not a regular file, a link, another owner, writable by
    others), or None when it may be (or does not exist: a miss)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    why = _own_problem(path, st, "file")
    if why is None and not stat.S_ISREG(st.st_mode):
        why = "it is not a regular file"
    return why


def safe_folder(folder, what: str) -> str:
    """``folder`` (made with mode 0700 when missing) when the trust rule accepts it; else one warning line
    naming it, ``what`` it holds and why, and a private folder for the rest of this process."""
    folder = os.path.abspath(folder)
    why = folder_problem(folder)
    if why is None:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as e:
            why = f"cannot be made ({e.strerror})"
        else:
            why = folder_problem(folder)      # made by someone else between the check and here?
    if why is None:
        return folder
    if what not in _private:
        _private[what] = tempfile.mkdtemp(prefix=f"urdf_dyn-{what.replace(' ', '_')}-")
        atexit.register(shutil.rmtree, _private[what], True)
    warn_once(f"{what} {folder}: {why}; not used (as ssh's StrictModes would refuse it): this run keeps its "
              f"{what} in the private folder {_private[what]}")
    return _private[what]
