"""Simulation of kinematic trees: integrate H q̈ + C = τ + τ_passive with scipy's adaptive ODE solvers.

``simulate`` steps a scipy ``OdeSolver`` itself (rather than calling ``solve_ivp`` once) so that every
sample is kept as it is computed: a run that fails (a solver error, a non-finite state) raises
SimulationError carrying the Trajectory up to the failure, and the CLI saves it.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np

from urdf_dyn._checks import as_batch
from urdf_dyn.io.files import atomic_path
from urdf_dyn.constraints.passive import passive_forces
from urdf_dyn.model import Data
from urdf_dyn.simulation.controllers import ZeroTorque
from urdf_dyn.simulation.guards import check_floating_inertia, warn_variable_mobility
from urdf_dyn.simulation.limits import end_stops, next_event, stop_acceleration, stop_samples
from urdf_dyn.simulation.limits import restart as stop_restart
from urdf_dyn.simulation.options import MAX_STEPS, SimulateOptions
from urdf_dyn.algorithms.configuration import normalize, qdot
from urdf_dyn.algorithms.dynamics import forward_dynamics, kinetic_energy, potential_energy
from urdf_dyn.errors import SimulationError, StateError

__all__ = ["Trajectory", "simulate", "SimulateOptions", "MAX_SAMPLES", "MAX_STEPS"]


@dataclass
class Trajectory:
    """Sampled motion. t (N,) [s]; qd, qdd, tau (N, nv) in the order of ``joint_names``; q (N, nq) in the order
    of ``q_names`` (empty: the same as ``joint_names``, nq = nv); energy (N,) [J] = kinetic + gravitational
    potential; ``meta``: how it was made (solver, tolerances, status; ``quaternion_drift``: the largest
    |‖quat‖ − 1| of a floating joint before the samples were normalised; ``impacts``: the end-stop impacts).

    End stops (``SimulateOptions(limits=True)``, ``simulation.limits``): ``stop_active`` (N, nv) int8 per joint in
    the order of ``joint_names``: −1 while the joint sits on its lower stop, +1 on its upper stop, 0 free (the
    field a viewer reads to colour an active stop); ``stop_force`` (N, nv) [N | N m]: the stop's generalised
    force on the joint, positive along +q. Both None when the run had no end stops."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    energy: np.ndarray
    joint_names: tuple
    meta: dict = field(default_factory=dict)
    residuals: np.ndarray = None   # (N, n_loops) ‖δ_k‖ per loop joint [m, rad], closed loops only
    loop_names: tuple = ()
    q_names: tuple = ()
    stop_active: np.ndarray = None
    stop_force: np.ndarray = None

    @property
    def q_columns(self) -> tuple:
        """Names of the columns of q (``q_names``, or ``joint_names`` when nq = nv)."""
        return tuple(self.q_names) or tuple(self.joint_names)

    def __len__(self):
        return len(self.t)

    def save(self, path):
        """Write to ``.npz``, ``.csv`` or ``.mcap`` (a ROS 2 bag: ``urdf_dyn.io.mcap``), chosen by the suffix,
        atomically."""
        path = str(path)
        if path.endswith(".csv"):
            return self.save_csv(path)
        if path.endswith(".mcap"):
            from urdf_dyn.io.mcap import write_mcap
            return write_mcap(path, self)
        if not path.endswith(".npz"):
            raise ValueError(f"unknown trajectory format for {path!r}: use .npz, .csv or .mcap")
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                extra = {} if self.residuals is None else dict(residuals=self.residuals,
                                                                 loop_names=np.array(self.loop_names))
                if self.q_names:
                    extra["q_names"] = np.array(self.q_names)
                if self.stop_active is not None:
                    extra.update(stop_active=self.stop_active, stop_force=self.stop_force)
                np.savez(fh, t=self.t, q=self.q, qd=self.qd, qdd=self.qdd, tau=self.tau, energy=self.energy,
                         joint_names=np.array(self.joint_names), meta=np.array(repr(self.meta)), **extra)
        return path

    def save_csv(self, path):
        """CSV with a header row: t, q[<joint>]..., qd[...]..., qdd[...]..., tau[...]..., energy, then
        residual[<loop>]... (closed loops) and stop[<joint>]..., stop_force[<joint>]... (end stops)."""
        header = (["t"] + [f"q[{j}]" for j in self.q_columns]
                  + [f"{k}[{j}]" for k in ("qd", "qdd", "tau") for j in self.joint_names] + ["energy"])
        cols = [self.t, self.q, self.qd, self.qdd, self.tau, self.energy]
        if self.residuals is not None:
            header += [f"residual[{n}]" for n in self.loop_names]
            cols.append(self.residuals)
        if self.stop_active is not None:
            header += [f"{k}[{j}]" for k in ("stop", "stop_force") for j in self.joint_names]
            cols += [self.stop_active, self.stop_force]
        data = np.column_stack(cols)
        with atomic_path(path) as tmp:
            with open(tmp, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(header)
                w.writerows(data.tolist())
        return str(path)

    @classmethod
    def load(cls, path, max_samples=None):
        """Read a Trajectory written by ``save``: ``.npz`` (numpy's format, no pickles) or ``.csv`` (the header
        of ``save_csv``). Bounded: at most ``max_samples`` (default ``MAX_SAMPLES``) rows; each NPZ array's
        header is checked against its stored size before anything is allocated.

        Raises StateError naming the file and the array/column for a missing, malformed, truncated or
        inconsistent file (a header that lies about its shape, a non-finite time, mismatched lengths)."""
        from pathlib import Path
        p = Path(path)
        max_samples = MAX_SAMPLES if max_samples is None else max_samples
        if not p.is_file():
            raise StateError(f"{p}: trajectory file not found")
        if p.suffix.lower() == ".csv":
            arrays = _read_csv(p, max_samples)
        elif p.suffix.lower() == ".npz":
            arrays = _read_npz(p, max_samples)
        else:
            raise StateError(f"{p}: unknown trajectory format {p.suffix!r}: use .npz or .csv (written by urdf-dyn)")
        return _from_arrays(cls, p, arrays)


MAX_SAMPLES = 1_000_000
"""Largest number of output samples ``simulate`` makes and ``Trajectory.load`` reads (duration / dt_out + 1):
10⁶ samples of a 30-joint robot hold ~1 GB (t, q, q̇, q̈, τ)."""

_NPZ_KEYS = ("t", "q", "qd", "qdd", "tau", "energy", "joint_names")
MAX_TRAJ_BYTES = 1 << 29  # what a trajectory file's arrays hold together, counted before reading
_STOP_KEYS = ("stop_active", "stop_force")   # optional: runs with end stops (older files have none)


def _read_npz(p, max_samples):
    import zipfile

    from numpy.lib import format as npformat
    out = {}
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                key = info.filename.removesuffix(".npy")
                if key not in _NPZ_KEYS + ("residuals", "loop_names", "meta", "q_names") + _STOP_KEYS:
                    continue
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):  # bzip2: inflated whole
                    raise StateError(f"{p}: array {key!r}: zip method {info.compress_type} (numpy writes 0 or 8)")
                with zf.open(info) as fh:
                    version = npformat.read_magic(fh)
                    read_header = {(1, 0): npformat.read_array_header_1_0, (2, 0): npformat.read_array_header_2_0}
                    if version not in read_header:
                        raise StateError(f"{p}: array {key!r}: unsupported .npy format version {version}")
                    shape, fortran, dtype = read_header[version](fh, max_header_size=10000)
                    if dtype.hasobject:
                        raise StateError(f"{p}: array {key!r} holds Python objects (pickles are refused)")
                    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
                    if any(d > max_samples * 1000 for d in shape) or (shape and shape[0] > max_samples
                                                                        and key in ("t", "q", "qd", "qdd", "tau")):
                        raise StateError(f"{p}: array {key!r} declares shape {shape}: more than {max_samples} "
                                         "samples (Trajectory.load(max_samples=...))")
                    if sum(a.nbytes for a in out.values()) + n * dtype.itemsize > MAX_TRAJ_BYTES:
                        raise StateError(f"{p}: array {key!r} has shape {shape}: over {MAX_TRAJ_BYTES} bytes in all")
                    header_len = fh.tell()
                    if n * dtype.itemsize != info.file_size - header_len:
                        raise StateError(f"{p}: array {key!r} declares shape {shape} of {dtype} "
                                         f"({n * dtype.itemsize} bytes) but stores {info.file_size - header_len} "
                                         "bytes: the file is corrupt")
                    if key == "meta":
                        continue
                    buf = fh.read(n * dtype.itemsize)
                    out[key] = np.frombuffer(buf, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    except StateError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError, KeyError) as e:
        raise StateError(f"{p}: not a readable .npz trajectory ({type(e).__name__}: {e})") from None
    missing = [k for k in _NPZ_KEYS if k not in out]
    if missing:
        raise StateError(f"{p}: not a urdf-dyn trajectory: missing array(s) {', '.join(missing)} "
                         f"(it has {', '.join(out) or 'none'})")
    return out


def _read_csv(p, max_samples):
    import re
    size = p.stat().st_size
    if size > min(max_samples * 4096, MAX_TRAJ_BYTES // 4):  # ~10 bytes of text per number, 32 as a float
        raise StateError(f"{p}: {size} bytes is larger than a trajectory of {max_samples} samples")
    from urdf_dyn.io.bounded import InputError, read_csv_rows
    try:
        header, rows = read_csv_rows(p, max_rows=max_samples, what="trajectory CSV")   # bounded, located
    except InputError as e:
        raise StateError(str(e).replace(f"more than {max_samples} rows", f"more than {max_samples} samples")) from None
    if not header or header[0] != "t":
        raise StateError(f"{p}: not a urdf-dyn trajectory CSV: the first column must be 't' "
                         f"(got {(header or [''])[0]!r})")
    cols = {}
    for i, h in enumerate(header):
        m = re.fullmatch(r"\s*(q|qd|qdd|tau|residual|stop|stop_force)\[(.+)\]\s*(?:\[.*\])?\s*", h)
        if m:
            cols.setdefault(m[1], []).append((m[2], i))
        elif h.strip() in ("t", "energy"):
            cols[h.strip()] = i
        else:
            raise StateError(f"{p}: unknown column {h!r} (expected t, q[joint], qd[joint], qdd[joint], "
                             "tau[joint], energy, residual[loop], stop[joint], stop_force[joint])")
    data = []
    for r, row in rows:
        if len(row) != len(header):
            raise StateError(f"{p}:{r}: {len(row)} values for {len(header)} columns")
        try:
            data.append([float(x) for x in row])
        except ValueError as e:
            raise StateError(f"{p}:{r}: not a number ({e})") from None
    A = np.array(data, float).reshape(len(data), len(header))
    if "q" not in cols or "energy" not in cols:
        raise StateError(f"{p}: not a urdf-dyn trajectory CSV: needs columns t, q[joint]..., energy")
    qnames = tuple(n for n, _ in cols["q"])
    names = tuple(n for n, _ in cols.get("qd", cols["q"]))
    out = {"t": A[:, cols["t"]], "energy": A[:, cols["energy"]], "joint_names": np.array(names),
           "q": A[:, [i for _, i in cols["q"]]]}
    if qnames != names:
        if len(qnames) == len(names):  # nq = nv: the same joints in the same order
            raise StateError(f"{p}: the qd[...] columns must name the joints of q[...] in the same order")
        out["q_names"] = np.array(qnames)
    for k in ("qd", "qdd", "tau", "stop", "stop_force"):
        if k.startswith("stop") and k not in cols:
            continue
        got = cols.get(k, [])
        if [n for n, _ in got] != list(names):
            raise StateError(f"{p}: the {k}[...] columns must name the joints of qd[...] in the same order")
        out["stop_active" if k == "stop" else k] = A[:, [i for _, i in got]]
    if "residual" in cols:
        out["residuals"] = A[:, [i for _, i in cols["residual"]]]
        out["loop_names"] = np.array([n for n, _ in cols["residual"]])
    return out


def _from_arrays(cls, p, z):
    t = np.asarray(z["t"])
    if t.ndim != 1 or t.dtype.kind not in "fi":
        raise StateError(f"{p}: array 't' must be 1-D numbers, got shape {t.shape} of {t.dtype}")
    N = len(t)
    names = tuple(str(s) for s in np.atleast_1d(z["joint_names"]))
    qnames = tuple(str(s) for s in np.atleast_1d(z["q_names"])) if "q_names" in z else ()
    for k in ("q", "qd", "qdd", "tau"):
        a = np.asarray(z[k])
        n = len(qnames or names) if k == "q" else len(names)
        if a.shape != (N, n) or a.dtype.kind not in "fi":
            raise StateError(f"{p}: array {k!r} must be numbers of shape ({N}, {n}) (samples x joints), "
                             f"got {a.shape} of {a.dtype}")
    e = np.asarray(z["energy"])
    if e.shape != (N,):
        raise StateError(f"{p}: array 'energy' must have shape ({N},), got {e.shape}")
    if N == 0:
        raise StateError(f"{p}: the trajectory has no samples")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise StateError(f"{p}: array 't' must be finite and non-decreasing")
    if not np.all(np.isfinite(z["q"])):
        raise StateError(f"{p}: array 'q' holds a non-finite value")
    res, lnames = z.get("residuals"), tuple(str(s) for s in np.atleast_1d(z.get("loop_names", ())))
    if res is not None and np.asarray(res).shape != (N, len(lnames)):
        raise StateError(f"{p}: array 'residuals' must have shape ({N}, {len(lnames)}), got {np.shape(res)}")
    f = (lambda a: np.array(a, float))
    stops = {}
    if "stop_active" in z or "stop_force" in z:
        for k in ("stop_active", "stop_force"):
            a = np.asarray(z.get(k))
            if a.shape != (N, len(names)) or a.dtype.kind not in "fi":
                raise StateError(f"{p}: array {k!r} must be numbers of shape ({N}, {len(names)}), got {a.shape}")
        stops = dict(stop_active=np.asarray(z["stop_active"]).astype(np.int8), stop_force=f(z["stop_force"]))
    return cls(t=f(t), q=f(z["q"]), qd=f(z["qd"]), qdd=f(z["qdd"]), tau=f(z["tau"]), energy=f(e),
               joint_names=names, meta={"loaded_from": str(p)}, residuals=None if res is None else f(res),
               loop_names=lnames if res is not None else (), q_names=qnames, **stops)


def _trajectory(model, controller, t, X, passive, meta, data=None):
    nq, nv = model.nq, model.nv
    t = np.asarray(t, float)
    X = np.asarray(X, float).reshape(len(t), nq + nv)
    q, qd = X[:, :nq].copy(), X[:, nq:].copy()
    qn = () if model.is_fixed_base else model.q_names
    if len(t) == 0:
        z = np.zeros((0, nv))
        return Trajectory(t, np.zeros((0, nq)), z, z, z, np.zeros(0), model.joint_names, meta, q_names=qn)
    if not model.is_fixed_base:
        q0 = q
        q = normalize(model, q0)
        meta["quaternion_drift"] = float(np.linalg.norm(q0 - q, axis=1).max()) if len(q) else 0.0
    tau = np.array([controller(ti, qi, qdi) for ti, qi, qdi in zip(t, q, qd)]).reshape(len(t), nv)
    energy = np.atleast_1d(kinetic_energy(model, q, qd) + potential_energy(model, q))
    if model.has_constraints:
        return _closed_loop_samples(model, t, q, qd, tau, energy, passive, meta, data)
    applied = tau + (passive_forces(model, q, qd) if passive else 0.0)
    qdd = forward_dynamics(model, q, qd, applied)
    return Trajectory(t, q, qd, qdd, tau, energy, model.joint_names, meta, q_names=qn)


def simulate(model, q0, qd0=None, duration=1.0, controller=None, options=None, **former) -> Trajectory:
    """Integrate the tree's forward dynamics (ABA) from (q0, qd0) for ``duration`` seconds.

    Args:
        q0, qd0: (nq,), (nv,) initial state [rad | m, rad/s | m/s]; qd0 defaults to zero. With a floating or
            planar joint the state integrated is (q, v) with q̇ = ``configuration.qdot(q, v)``; the
            quaternion is normalised at every sample and its drift recorded in ``meta``.
        duration: [s]. controller: callable (t, q, qd) -> τ (nv,), e.g. ``controllers.ComputedTorque``;
            default passive (``ZeroTorque``).
        options: a ``SimulateOptions`` (``simulation.options``: output period, integrator and tolerances,
            passive forces, closed-loop solver and Baumgarte time constant, end stops, step bound); None: its
            defaults. The settings given one by one as keywords (``dt_out=0.01, rtol=...``), their former
            spelling, still work for one release with a FutureWarning (``_deprecated.options_from_keywords``).

    Returns:
        Trajectory sampled at t = 0, dt_out, ..., duration (qdd and tau recomputed at the samples).

    Raises:
        StateError for bad q0/qd0 (beyond a limit with ``limits``; a floating base whose H is singular at q0,
        naming the massless links); ValueError for bad durations or an unknown method; TypeError for
        ``options`` that is not a SimulateOptions or an unknown keyword; SimulationError if the solver fails,
        takes more than ``max_steps`` steps or the state becomes non-finite — its ``trajectory`` holds the
        samples before that.
    """
    if former or options is not None:
        from urdf_dyn._deprecated import options_from_keywords
        options = options_from_keywords("simulate", SimulateOptions, options, former)
    o = SimulateOptions() if options is None else options
    dt_out, integrator, rtol, atol, passive, max_step = o.dt_out, o.integrator, o.rtol, o.atol, o.passive, o.max_step
    progress, t_stab, loop_solver, residual_tol = o.progress, o.t_stab, o.loop_solver, o.residual_tol
    assemble_initial, limits, max_steps, compiled = o.assemble_initial, o.limits, o.max_steps, o.compiled
    from tqdm.auto import tqdm

    nq, nv = model.nq, model.nv
    q0 = as_batch(q0, "q0", nq)[0][0]
    qd0 = np.zeros(nv) if qd0 is None else as_batch(qd0, "qd0", nv)[0][0]
    fixed = model.is_fixed_base
    if not (np.isfinite(duration) and np.isfinite(dt_out) and duration > 0 and dt_out > 0):
        raise ValueError(f"duration and dt_out must be > 0 (got {duration}, {dt_out})")
    if loop_solver == "fast":
        import warnings
        warnings.warn('simulate(): loop_solver="fast" is now loop_solver="lambda" (compiled=True, the default)',
                      FutureWarning, stacklevel=2)
        loop_solver, compiled = "lambda", True
    fast = bool(compiled) and loop_solver == "lambda"
    controller = controller or ZeroTorque(model)
    meta = dict(compiled=bool(compiled), integrator=integrator, rtol=rtol, atol=atol, dt_out=dt_out, passive=passive,
                t_stab=t_stab, loop_solver=loop_solver, limits=bool(limits))
    if not fixed:
        check_floating_inertia(model, q0)
    loops = model.has_constraints
    data = Data(model)
    if loops and assemble_initial:
        from urdf_dyn.constraints.assembly import assemble, project_velocity
        q0 = assemble(model, q0)
        qd0 = project_velocity(model, q0, qd0)
    stops = end_stops(model) if limits else None
    stops = stops if stops is not None and len(stops) else None
    contact = None
    if stops is not None:
        stops.check_start(q0)
        contact, x0 = stop_restart(model, stops, np.concatenate([q0, qd0]), 0.0, data, meta)
        qd0 = x0[nq:]

    def rhs(t, x):
        q, qd = x[:nq], x[nq:]
        tau = np.asarray(controller(t, q, qd), float)
        dq = qd if fixed else qdot(model, q, qd)
        if contact is not None and contact.any():
            rows = list(np.flatnonzero(contact))
            return np.concatenate([dq, stop_acceleration(model, stops, rows, q, qd, tau, t_stab, passive, data)[0]])
        if loops:
            if fast:
                return np.concatenate([dq, fast_qdd(model, q, qd, tau, t_stab, passive=passive, data=data)])
            from urdf_dyn.constraints.forward import constrained_forward_dynamics
            return np.concatenate([dq, constrained_forward_dynamics(model, q, qd, tau, loop_solver=loop_solver,
                                                                    t_stab=t_stab, passive=passive).qdd])
        if passive:
            tau = tau + passive_forces(model, q, qd)
        return np.concatenate([dq, forward_dynamics(model, q, qd, tau)])

    from scipy import integrate    # here, not at import: reading a run (the viewer) needs no ODE solver
    from urdf_dyn.constraints.forward import fast_qdd   # likewise: scipy.linalg and the loop solvers
    try:
        solver_cls = integrate._ivp.ivp.METHODS[integrator] if isinstance(integrator, str) else integrator
    except KeyError:
        raise ValueError(f"unknown integrator {integrator!r}; use one of "
                         f"{', '.join(integrate._ivp.ivp.METHODS)}") from None
    if duration / dt_out + 1 > MAX_SAMPLES:
        raise ValueError(f"dt_out = {dt_out:g} s over {duration:g} s makes {duration / dt_out + 1:.3g} samples, more "
                         f"than the limit of {MAX_SAMPLES} (MAX_SAMPLES); choose a larger dt_out")
    n_out = int(np.floor(duration / dt_out + 1e-9)) + 1
    t_out = np.minimum(np.linspace(0.0, dt_out * (n_out - 1), n_out), duration)  # no 1e-16 overshoot
    solver = solver_cls(rhs, 0.0, np.concatenate([q0, qd0]), duration, rtol=rtol, atol=atol, max_step=max_step)
    xs, k, steps, contacts = [np.concatenate([q0, qd0])], 1, 0, [contact]
    failure = None
    with tqdm(total=duration, unit="s sim", disable=(False if progress else None) if progress is not False
              else True, leave=False, bar_format="{l_bar}{bar}| {n:.2f}/{total:.2f} s sim [{elapsed}<{remaining}]") as bar:
        while solver.status == "running" and k < n_out:
            t_prev = solver.t
            try:
                msg = solver.step()
            except (np.linalg.LinAlgError, StateError, FloatingPointError, ValueError) as e:
                failure = f"the solver failed at t = {solver.t:.6g} s: {e}"
                break
            if solver.status == "failed":
                failure = f"the solver failed at t = {solver.t:.6g} s: {msg}"
                break
            if not np.all(np.isfinite(solver.y)):
                failure = f"the state became non-finite at t = {solver.t:.6g} s (the motion diverged)"
                break
            steps += 1
            event = next_event(stops, contact, solver, t_prev) if stops is not None else None
            t_end = solver.t if event is None else event[1]
            if k < n_out and t_out[k] <= t_end + 1e-12:
                dense = solver.dense_output()
                while k < n_out and t_out[k] <= t_end + 1e-12:
                    xs.append(dense(t_out[k]))
                    contacts.append(contact)
                    k += 1
            if event is not None and k < n_out:
                x_e = solver.dense_output()(t_end) if event[0] == "impact" else solver.y
                contact, x_e = stop_restart(model, stops, x_e, t_end, data, meta)
                solver = solver_cls(rhs, t_end, x_e, duration, rtol=rtol, atol=atol, max_step=max_step)
            if steps >= max_steps and k < n_out:
                failure = (f"the integrator took max_steps = {max_steps} steps by t = {solver.t:.6g} s (step "
                           f"{solver.t - t_prev:.3g} s): the motion is stiff or singular (a massless link? a stop "
                           "chattering?); raise max_steps, or try integrator='Radau'")
                break
            if loops and residual_tol is not None:
                worst = _worst_residual(model, solver.y[:nq])
                if worst[1] > residual_tol:
                    failure = (f"loop {worst[0]!r} opened: residual {worst[1]:.3g} > {residual_tol:g} at "
                               f"t = {solver.t:.6g} s (stiff or singular mechanism? try a smaller t_stab or rtol)")
                    break
            bar.update(solver.t - t_prev)
    meta["status"] = "failed" if failure else "finished"
    if failure is None and k < n_out:
        failure = f"the solver stopped at t = {solver.t:.6g} s before the end"
    traj = _trajectory(model, controller, t_out[:len(xs)], np.array(xs), passive, meta, data)
    if stops is not None and len(traj):
        try:
            traj.stop_active, traj.stop_force, traj.qdd = stop_samples(
                model, stops, np.array(contacts[:len(traj)]), traj.q, traj.qd, traj.tau, traj.qdd, t_stab, passive, data)
        except (np.linalg.LinAlgError, ValueError) as e:   # keep the samples; say why the stop records are empty
            meta["stop_records"] = f"not computed: {e}"
    if failure:
        meta["message"] = failure
        raise SimulationError(failure + f"; {len(traj)} samples up to t = {traj.t[-1]:.6g} s are kept",
                              trajectory=traj)
    return traj


def _worst_residual(model, q):
    """(name, ‖δ_k‖) of the most open loop at q, from one evaluation of all loop errors."""
    from urdf_dyn.constraints.loops import LoopState
    d = LoopState(model, q).deltas()
    bounds = np.cumsum([0] + [lp.nc for lp in model.loops])
    vals = [(lp.name, float(np.linalg.norm(d[bounds[j]:bounds[j + 1]]))) for j, lp in enumerate(model.loops)]
    return max(vals, key=lambda x: x[1]) if vals else ("", 0.0)


def _closed_loop_samples(model, t, q, qd, tau, energy, passive, meta, data=None):
    """q̈, per-loop residuals ‖δ_k‖ and the rank of K at every output sample, from one evaluation of the
    loop terms per sample (the same K, k give q̈ as in the integration: RBDA §8.5 method 2 + Baumgarte)."""
    from urdf_dyn.constraints.forward import constrained_forward_dynamics, fast_qdd
    from urdf_dyn.constraints.loops import LoopState, numerical_rank
    N, L = len(t), len(model.loops)
    qdd, res, ranks = np.zeros_like(qd), np.zeros((N, L)), np.zeros(N, int)
    bounds = np.cumsum([0] + [lp.nc for lp in model.loops])
    t_stab = meta["t_stab"]
    for i in range(N):
        st = LoopState(model, q[i], qd[i])
        K = st.K_k()[0]
        d = st.deltas()
        if meta["loop_solver"] == "lambda" and meta.get("compiled", True):
            qdd[i] = fast_qdd(model, q[i], qd[i], tau[i], t_stab, passive=passive, data=data)
        else:
            qdd[i] = constrained_forward_dynamics(model, q[i], qd[i], tau[i], loop_solver=meta["loop_solver"],
                                                  t_stab=t_stab, passive=passive).qdd
        res[i] = [np.linalg.norm(d[bounds[j]:bounds[j + 1]]) for j in range(L)]
        ranks[i] = numerical_rank(K)[0]
    warn_variable_mobility(model, t, ranks, meta)
    return Trajectory(t, q, qd, qdd, tau, energy, model.joint_names, meta, res, tuple(lp.name for lp in model.loops),
                      q_names=() if model.is_fixed_base else model.q_names)
