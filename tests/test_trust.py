"""The caches a run believes without checking: one trust rule (``urdf_dyn.cache_trust``, after ssh's
StrictModes), authenticated and type-checked entries of the machine checks' cache (``jobs.disk_cache``), a
cleanup that removes only the cache's own files, and numba's cache folder (a corrupt file is a miss).

Each attack is shown to be real first (a plain ``pickle.load`` of the planted file runs its code; plain
numba fails on the corrupt index), then to be refused."""
import os
import pickle
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from urdf_dyn import cache_trust
from urdf_dyn.jobs import disk_cache


class _Plant:
    """A pickle that, when loaded, creates the file it names (what a planted cache entry would do)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("URDF_DYN_CACHE", "on")
    monkeypatch.setenv("URDF_DYN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache_trust, "_warned", set())
    return tmp_path


def _entry(name="a"):
    return disk_cache._folder() / f"{name * 40}.pkl"


# -- the trust rule ---------------------------------------------------------------------------------------------
def test_a_private_folder_is_trusted_and_one_others_can_write_is_not(tmp_path):
    ok = tmp_path / "ok"
    ok.mkdir(mode=0o700)
    assert cache_trust.folder_problem(ok) is None
    assert cache_trust.folder_problem(tmp_path / "not_yet" / "made") is None     # judged by its ancestors
    world = tmp_path / "world"
    world.mkdir()
    os.chmod(world, 0o777)
    assert "writable by other users (mode 0777)" in cache_trust.folder_problem(world)
    assert "the folder above it" in cache_trust.folder_problem(world / "checks")  # XDG_CACHE_HOME 0777
    link = tmp_path / "link"
    link.symlink_to(ok)
    assert "symbolic link" in cache_trust.folder_problem(link)


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_or_of_a_shared_group_is_not_trusted(tmp_path):
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, -1)
    assert "owned by another user (uid 65534)" in cache_trust.folder_problem(other)
    group = tmp_path / "group"
    group.mkdir()
    os.chown(group, -1, 65534)                  # a group that is not the user's own private group
    os.chmod(group, 0o770)
    assert "writable by other users (mode 0770)" in cache_trust.folder_problem(group)


def test_an_untrusted_cache_folder_is_refused_with_one_line_and_a_private_folder(cache, capsys):
    shared = cache / "cache" / "checks"
    shared.mkdir(parents=True)
    os.chmod(shared, 0o777)
    p = _entry()
    assert p.parent != shared and oct(os.stat(p.parent).st_mode & 0o777) == "0o700"
    assert disk_cache.store(p, {"x": np.arange(3)}) and not list(shared.iterdir())
    _entry()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"checks cache {shared}: the folder is writable by other users" in err


# -- the entries ------------------------------------------------------------------------------------------------
def test_a_planted_pickle_runs_code_with_pickle_and_not_through_the_cache(cache):
    marker = cache / "pwned"
    p = _entry()
    p.write_bytes(pickle.dumps(_Plant(marker)))
    with open(p, "rb") as f:                    # the attack is real: pickle runs it
        pickle.load(f)
    assert marker.exists()
    marker.unlink()
    assert disk_cache.load(p) is None and not marker.exists()


def test_a_planted_entry_with_a_valid_mac_still_builds_only_urdf_dyn_types(cache):
    """The key stolen: the MAC holds, and the restricted unpickler still refuses os.system."""
    marker = cache / "pwned"
    p = _entry()
    payload = pickle.dumps(_Plant(marker))
    key = disk_cache._key(p.parent)
    kind = "builtins.int"
    p.write_bytes(disk_cache._MAGIC + disk_cache._mac(key, p.name, kind, payload) + kind.encode() + b"\n" + payload)
    assert disk_cache.load(p) is None and not marker.exists()


def test_an_edited_entry_or_one_of_another_type_is_a_miss(cache):
    from urdf_dyn.machines.sizing import Cylinder
    p = _entry()
    assert disk_cache.store(p, Cylinder(0.14, 0.1, 1))
    good = p.read_bytes()
    assert disk_cache.load(p) == Cylinder(0.14, 0.1, 1)
    edited = good.replace(struct.pack(">d", 0.14), struct.pack(">d", 7.7778))    # the bore edited in place
    assert edited != good
    p.write_bytes(edited)
    assert disk_cache.load(p) is None
    p.write_bytes(good.replace(b"urdf_dyn.machines.sizing.Cylinder", b"urdf_dyn.machines.sizing.Cylindex"))
    assert disk_cache.load(p) is None
    p.write_bytes(good[:len(good) // 2])
    assert disk_cache.load(p) is None
    p.write_bytes(good)
    os.chmod(p, 0o666)                           # an entry others can write is not read
    assert disk_cache.load(p) is None
    os.chmod(p, 0o600)
    assert disk_cache.load(p) == Cylinder(0.14, 0.1, 1)


def test_a_key_file_others_can_read_disables_the_cache(cache):
    p = _entry()
    assert disk_cache.store(p, [1.0])
    os.chmod(p.parent / "key", 0o644)
    assert disk_cache.load(p) is None and not disk_cache.store(p, [2.0])


# -- the cleanup ----------------------------------------------------------------------------------------------
def test_the_cleanup_removes_only_its_own_files_and_follows_no_link(cache, monkeypatch):
    """A checks/ folder that is a link to the user's folder of 200 files is refused (a private folder is
    used); in the cache's own folder, files of other names, of other owners or links are never removed."""
    monkeypatch.setattr(disk_cache, "MAX_FILES", 2)
    user = cache / "documents"
    user.mkdir()
    for i in range(200):
        (user / f"{i:040x}.pkl" if i % 2 else user / f"notes{i}.txt").write_text("mine")
    (cache / "cache").mkdir()
    (cache / "cache" / "checks").symlink_to(user)
    for c in "abcd":
        assert disk_cache.store(_entry(c), [c])
    assert len(list(user.iterdir())) == 200
    # in the real folder: a user's file, a link to a user's file, the cache's own names
    monkeypatch.setenv("URDF_DYN_CACHE_DIR", str(cache / "cache2"))
    folder = disk_cache._folder()
    (folder / "mine.txt").write_text("mine")
    (folder / ("f" * 40 + ".pkl")).symlink_to(user / "notes0.txt")
    for c in "0123":
        assert disk_cache.store(_entry(c), [c])
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted(["mine.txt", "f" * 40 + ".pkl", "key", "2" * 40 + ".pkl", "3" * 40 + ".pkl"])
    assert (user / "notes0.txt").read_text() == "mine"


# -- numba -----------------------------------------------------------------------------------------------------
KERNEL = textwrap.dedent("""
    import sys
    import urdf_dyn.numba_cache as nc
    if sys.argv[1] == "guarded":
        nc.install()
    from numba import njit
    @njit(cache=True)
    def twice(x):
        return 2 * x
    print(twice(21))
""")


def _numba(tmp_path, how):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"), PYTHONPATH=str(tmp_path))
    return subprocess.run([sys.executable, str(tmp_path / "kern.py"), how], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)


def test_a_corrupt_numba_cache_is_a_miss_with_one_line(tmp_path):
    (tmp_path / "nb").mkdir(mode=0o700)
    (tmp_path / "kern.py").write_text(KERNEL)
    first = _numba(tmp_path, "guarded")
    assert first.returncode == 0 and first.stdout.strip() == "42" and first.stderr == ""
    index = list((tmp_path / "nb").rglob("*.nbi"))
    data = list((tmp_path / "nb").rglob("*.nbc"))
    assert index and data
    for f in index:
        f.write_bytes(b"garbage")
    plain = _numba(tmp_path, "plain")               # numba alone: every run fails
    assert plain.returncode != 0 and "Traceback" in plain.stderr
    again = _numba(tmp_path, "guarded")
    assert again.returncode == 0 and again.stdout.strip() == "42"
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: numba cache ") and str(tmp_path / "nb") in lines[0]
    for f in (tmp_path / "nb").rglob("*.nbc"):   # rewritten; now truncate the data
        f.write_bytes(f.read_bytes()[:20])
    trunc = _numba(tmp_path, "guarded")
    assert trunc.returncode == 0 and trunc.stdout.strip() == "42" and trunc.stderr.count("\n") == 1
    clean = _numba(tmp_path, "guarded")             # rewritten again: silent
    assert clean.returncode == 0 and clean.stderr == ""


def test_a_world_writable_numba_folder_is_not_used(tmp_path):
    (tmp_path / "nb").mkdir()
    os.chmod(tmp_path / "nb", 0o777)
    (tmp_path / "kern.py").write_text(KERNEL)
    run = _numba(tmp_path, "guarded")
    assert run.returncode == 0 and run.stdout.strip() == "42"
    assert run.stderr.count("\n") == 1 and "writable by other users" in run.stderr
    assert not list((tmp_path / "nb").iterdir())     # nothing read from or written to it
