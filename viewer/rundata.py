"""A sizing job's output folder, read for the viewers: the motion, the actuator forces, the pin loads, the
soil force and payload, and what the scene needs to draw them (``view.json``).

The folder is what ``urdf-dyn run`` writes for ``job: size`` (urdf_dyn.jobs.sizing_job):

- ``motion.npz``          the consistent motion (t, q, q̇, q̈) in the model's joint order (required);
- ``actuator_forces.csv`` t [s], ``u[name] [kN]`` / ``[kN·m]`` per actuator, strokes, power, pressures;
- ``pin_loads.csv``       t [s], ``force[loop] [kN]`` (magnitudes), ``moment[loop] [kN·m]``;
- ``soil.csv``            t [s], depth [m], the force on the cutting edge in world axes [N] (3 columns),
  the edge velocity [m/s], rake angle [deg], bank volume cut [m³], payload [kg] — columns are matched by
  name (a force column starts with "F" or names "force"), so a renamed column still reads;
- ``view.json``           ``bench_height`` [m] (``soil.ground.height``), ``edge`` {link, xyz, rpy} (the
  cutting-edge frame), ``payload`` {link, com} (the cut soil's centroid in the link frame), ``loop_tol``.

Every problem is a ``ViewerError`` naming the file (and the column); a folder with a motion but no forces
plays the motion only.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .backend import ViewerError

__all__ = ["RunData", "read_run", "read_view", "read_csv_columns", "soil_columns", "external_loads", "UNIT_SCALE"]

UNIT_SCALE = {"N": 1.0, "kN": 1e3, "MN": 1e6, "N·m": 1.0, "N m": 1.0, "kN·m": 1e3, "kN m": 1e3, "Nm": 1.0,
              "kNm": 1e3}


@dataclass
class RunData:
    """What a run folder holds, on the motion's samples.

    folder: the run folder.  motion: playback.Motion (N samples).
    actuators: {name: (N,) [N or N m]} from actuator_forces.csv (empty without it); units {name: "N" | "N m"}.
    pin_force: {loop: (N,) [N]} magnitudes from pin_loads.csv (empty without it).
    soil_force: (N, 3) [N] the soil's force on the edge in world axes, or None.  soil_depth: (N,) [m] or None.
    payload_mass: (N,) [kg] the cut soil in the bucket, or None.
    view: the dict of view.json ({} without it).
    f_ext: {link: (N, 6)} [n; f] (N m, N) the external wrenches the run applied (f_ext.npz), or None (a run
    folder written before the job wrote them).
    pin_wrenches: the pin wrenches {loop: (N, 6)} under the run's loads, kept by the first ForceSource that
    computes them (None before), so that the viewers drawing one run compute them once."""
    folder: Path
    motion: object
    actuators: dict = field(default_factory=dict)
    units: dict = field(default_factory=dict)
    pin_force: dict = field(default_factory=dict)
    soil_force: np.ndarray = None
    soil_depth: np.ndarray = None
    payload_mass: np.ndarray = None
    view: dict = field(default_factory=dict)
    f_ext: dict = None
    pin_wrenches: dict = field(default=None, repr=False)   # {loop: (N, 6)} once computed (forces.ForceSource)
    pin_lock: object = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def bench_height(self):
        """The dig bench's surface z [m] in the root frame (``soil.ground.height``), or None."""
        h = self.view.get("bench_height")
        return None if h is None else float(h)


def read_csv_columns(path):
    """(header [str], data (rows, cols) float) of a numeric CSV with one header row, every value finite
    (``urdf_dyn.io.bounded``: size, rows and field length bounded). Raises ViewerError naming the file, line
    and column."""
    from urdf_dyn.io.bounded import InputError, read_numeric_csv
    try:
        return read_numeric_csv(path, min_rows=1)
    except InputError as e:
        raise ViewerError(str(e)) from None


def _on_motion(path, t_csv, values, t):
    """Values (rows, ...) sampled at t_csv, on the motion's times t (linear; the same samples pass through)."""
    if len(t_csv) == len(t) and np.allclose(t_csv, t, atol=1e-9):
        return values
    if np.any(np.diff(t_csv) <= 0):
        raise ViewerError(f"{path}: the t column is not increasing")
    flat = values.reshape(len(t_csv), -1)
    out = np.column_stack([np.interp(t, t_csv, flat[:, k]) for k in range(flat.shape[1])])
    return out.reshape((len(t),) + values.shape[1:])


_COL = re.compile(r"^\s*(\w+)\[(.+?)\]\s*\[(.+?)\]\s*$")


def _actuators(path, t):
    header, data = read_csv_columns(path)
    acts, units = {}, {}
    for k, h in enumerate(header):
        m = _COL.match(h)
        if m and m.group(1) == "u":
            unit = m.group(3).strip()
            if unit not in UNIT_SCALE:
                raise ViewerError(f"{path}: column {h!r}: unknown unit {unit!r}")
            acts[m.group(2)] = data[:, k] * UNIT_SCALE[unit]
            units[m.group(2)] = "N m" if "m" in unit.replace("kN", "").replace("MN", "") else "N"
    if not acts:
        raise ViewerError(f"{path}: no u[name] [unit] columns of actuator forces")
    vals = _on_motion(path, data[:, 0], np.column_stack(list(acts.values())), t)
    return {n: vals[:, i] for i, n in enumerate(acts)}, units


def _pins(path, t):
    header, data = read_csv_columns(path)
    out = {}
    for k, h in enumerate(header):
        m = _COL.match(h)
        if m and m.group(1) in ("force", "force_per_pin"):   # the sizing job: force_per_pin (a pin per side)
            unit = m.group(3).strip()
            out[m.group(2)] = data[:, k] * UNIT_SCALE.get(unit, 1.0)
    if not out:
        return {}
    vals = _on_motion(path, data[:, 0], np.column_stack(list(out.values())), t)
    return {n: vals[:, i] for i, n in enumerate(out)}


def soil_columns(header):
    """Indices {"force": [kx, ky, kz], "depth": k | None, "payload": k | None} of soil.csv's columns, matched
    by name (case-insensitive): force columns start with "F" or contain "force" (the first three, in x, y, z
    order); depth contains "depth"; payload contains "payload" or "mass". Raises ValueError without three
    force columns."""
    low = [h.strip().lower() for h in header]
    force = [k for k, h in enumerate(low) if h.startswith("f") or "force" in h]
    if len(force) < 3:
        raise ValueError(f"no three force columns (starting with 'F' or naming 'force') in {', '.join(header)}")
    pick = lambda *words: next((k for k, h in enumerate(low) if any(w in h for w in words)), None)  # noqa: E731
    return {"force": force[:3], "depth": pick("depth"), "payload": pick("payload", "mass")}


def _soil(path, t):
    header, data = read_csv_columns(path)
    try:
        cols = soil_columns(header)
    except ValueError as e:
        raise ViewerError(f"{path}: {e}") from None
    scale = [1e3 if "[kn]" in header[k].lower().replace(" ", "") else 1.0 for k in cols["force"]]
    f = _on_motion(path, data[:, 0], data[:, cols["force"]] * scale, t)
    depth = _on_motion(path, data[:, 0], data[:, cols["depth"]], t) if cols["depth"] is not None else None
    mass = _on_motion(path, data[:, 0], data[:, cols["payload"]], t) if cols["payload"] is not None else None
    return f, depth, mass


_FILES = ("motion.npz", "actuator_forces.csv", "pin_loads.csv", "soil.csv", "view.json", "f_ext.npz")
_last = {}                 # {(folder, id(model)): (files' stamps, model, RunData)}: the last folder read
_lock = threading.Lock()


def read_run(folder, model):
    """The RunData of a sizing job's output folder for ``model``. Raises ViewerError naming the file: no
    folder, no motion.npz, a motion of another robot (joints missing), an unreadable CSV.

    The last folder read is kept: asked again for the same model while its files are unchanged (size and
    modification time), the same RunData is returned — the sizing job's animation and recording read the
    run once, and compute its pin loads once (``pin_wrenches``). Treat it as read-only."""
    folder = Path(folder)
    try:
        stamp = tuple((n, st.st_mtime_ns, st.st_size) for n in _FILES
                      if (st := _stat(folder / n)) is not None)
        key = (str(folder.resolve()), id(model))
    except OSError:
        return _read_run(folder, model)
    with _lock:
        hit = _last.get(key)
        if hit is not None and hit[0] == stamp and hit[1] is model:
            return hit[2]
        run = _read_run(folder, model)
        _last.clear()
        _last[key] = (stamp, model, run)
        return run


def _stat(path):
    try:
        return path.stat()
    except FileNotFoundError:
        return None


def _read_run(folder, model):
    from urdf_dyn import Trajectory
    from urdf_dyn.errors import UrdfDynError

    from .playback import motion_from_trajectory
    folder = Path(folder)
    if not folder.is_dir():
        raise ViewerError(f"{folder}: not a folder")
    mpath = folder / "motion.npz"
    if not mpath.is_file():
        raise ViewerError(f"{mpath}: not found; a run folder is what `urdf-dyn run` writes for a sizing job "
                          "(motion.npz, actuator_forces.csv, ...)")
    try:
        traj = Trajectory.load(mpath)
    except (OSError, ValueError, KeyError) as e:
        raise ViewerError(f"{mpath}: cannot read ({e})") from None
    except UrdfDynError as e:
        raise ViewerError(str(e)) from None
    motion = motion_from_trajectory(model, traj, label=str(mpath))
    run = RunData(folder, motion)
    t = motion.t
    if (folder / "actuator_forces.csv").is_file():
        run.actuators, run.units = _actuators(folder / "actuator_forces.csv", t)
    if (folder / "pin_loads.csv").is_file():
        run.pin_force = _pins(folder / "pin_loads.csv", t)
    if (folder / "soil.csv").is_file():
        run.soil_force, run.soil_depth, run.payload_mass = _soil(folder / "soil.csv", t)
    if (folder / "f_ext.npz").is_file():
        run.f_ext = _f_ext(folder / "f_ext.npz", t, model)
    vpath = folder / "view.json"
    if vpath.is_file():
        run.view = read_view(vpath)
        for key in ("edge", "payload"):
            link = (run.view.get(key) or {}).get("link")
            if link is not None and link not in model.links:
                raise ViewerError(f"{vpath}: {key}.link {link!r} is not a link of {model.name!r}")
    return run


#: view.json's keys and what each holds (a run folder is input: a hand-edited or planted file is checked)
_VIEW_KEYS = {"robot": str, "package_dirs": (list, str, dict), "bench_height": float, "loop_tol": float,
              "edge": dict, "payload": dict}
_FRAME_KEYS = {"link": str, "xyz": list, "rpy": list, "com": list}


def read_view(path) -> dict:
    """A run folder's view.json (``urdf_dyn.io.bounded.read_json``: ≤ 1 MiB, ≤ 16 deep), each known key of
    the type it holds and each position three finite numbers. Raises ViewerError naming the file and key."""
    from urdf_dyn.io.bounded import InputError, expect, read_json
    try:
        view = expect(read_json(path, max_bytes=1 << 20, max_depth=16, what="view.json"), dict, f"{path}")
        for key, kinds in _VIEW_KEYS.items():
            if view.get(key) is not None:
                expect(view[key], kinds, f"{path}: {key}")
        for key in ("edge", "payload"):
            for k, v in (view.get(key) or {}).items():
                if k in _FRAME_KEYS:
                    expect(v, _FRAME_KEYS[k], f"{path}: {key}.{k}")
                if _FRAME_KEYS.get(k) is list:
                    if len(v) != 3:
                        raise InputError(f"{path}: {key}.{k}: expected 3 numbers, got {len(v)}")
                    for i, x in enumerate(v):
                        expect(x, float, f"{path}: {key}.{k}[{i}]")
    except InputError as e:
        raise ViewerError(str(e)) from None
    return view


def _f_ext(path, t, model):
    """{link: (N, 6)} of f_ext.npz (t, links, wrench), checked against the motion's samples and the model."""
    try:
        with np.load(path) as z:
            tt, links, W = z["t"], [str(x) for x in z["links"]], z["wrench"]
    except (OSError, ValueError, KeyError) as e:
        raise ViewerError(f"{path}: cannot read ({e})") from None
    if len(tt) != len(t) or not np.allclose(tt, t) or W.shape != (len(links), len(t), 6):
        raise ViewerError(f"{path}: its samples are not those of motion.npz ({len(tt)} against {len(t)})")
    for k in links:
        if k not in model.links:
            raise ViewerError(f"{path}: link {k!r} is not a link of {model.name!r}")
    return {k: W[i] for i, k in enumerate(links)}


def external_loads(model, run):
    """The external wrenches of the run {link: (N, 6)} [n; f] in the link frame about its origin (the
    convention of ``urdf_dyn.actuator_forces``' ``f_ext``): those the sizing job applied (f_ext.npz). For a run
    folder written before the job wrote them, the soil force at the cutting edge and the weight and inertia of
    the cut soil at its centroid, by the job's own function (``urdf_dyn.machines.loads.soil_wrench``) from
    soil.csv and view.json. {} when the run has neither."""
    if run.f_ext is not None:
        return run.f_ext
    from urdf_dyn.machines.loads import Frame, soil_wrench
    edge = run.view.get("edge")
    if run.soil_force is None or not edge:
        return {}
    mo = run.motion
    fr = Frame(edge["link"], tuple(edge.get("xyz", (0, 0, 0))), tuple(edge.get("rpy", (0, 0, 0))))
    pl = run.view.get("payload")
    out = soil_wrench(model, mo.q, mo.qd, mo.qdd, fr, run.soil_force)
    if pl and run.payload_mass is not None and mo.qd is not None and mo.qdd is not None:
        from urdf_dyn.machines.loads import add_wrenches, payload_wrench
        out = add_wrenches(out, {pl["link"]: payload_wrench(model, mo.q, mo.qd, mo.qdd, pl["link"], pl["com"],
                                                            run.payload_mass)})
    return out
