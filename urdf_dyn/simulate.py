"""Simulation of kinematic trees: integrate H q̈ + C = τ + τ_passive with scipy's adaptive ODE solvers.

``simulate`` steps a scipy ``OdeSolver`` itself (rather than calling ``solve_ivp`` once) so that every
sample is kept as it is computed: a run that fails (a solver error, a non-finite state) raises
SimulationError carrying the Trajectory up to the failure, and the CLI saves it.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate

from ._checks import as_batch
from ._io import atomic_path
from .controllers import Passive
from .dynamics import forward_dynamics, kinetic_energy, potential_energy
from .errors import SimulationError, StateError

__all__ = ["Trajectory", "simulate", "passive_torques"]


@dataclass
class Trajectory:
    """Sampled motion. t (N,) [s]; q, qd, qdd, tau (N, nv) in the order of ``joint_names``; energy (N,) [J]
    = kinetic + gravitational potential; ``meta``: how it was made (solver, tolerances, status)."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    energy: np.ndarray
    joint_names: tuple
    meta: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.t)

    def save(self, path):
        """Write to ``.npz`` or ``.csv`` (chosen by the suffix), atomically."""
        path = str(path)
        if path.endswith(".csv"):
            return self.save_csv(path)
        if not path.endswith(".npz"):
            raise ValueError(f"unknown trajectory format for {path!r}: use .npz or .csv")
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, t=self.t, q=self.q, qd=self.qd, qdd=self.qdd, tau=self.tau, energy=self.energy,
                         joint_names=np.array(self.joint_names), meta=np.array(repr(self.meta)))
        return path

    def save_csv(self, path):
        """CSV with a header row: t, q[<joint>]..., qd[...]..., qdd[...]..., tau[...]..., energy."""
        header = ["t"] + [f"{k}[{j}]" for k in ("q", "qd", "qdd", "tau") for j in self.joint_names] + ["energy"]
        data = np.column_stack([self.t, self.q, self.qd, self.qdd, self.tau, self.energy])
        with atomic_path(path) as tmp:
            with open(tmp, "w", newline="") as fh:
                w = csv.writer(fh)
                w.writerow(header)
                w.writerows(data.tolist())
        return str(path)

    @classmethod
    def load(cls, path):
        """Read a Trajectory written by ``save`` (``.npz``)."""
        with np.load(path, allow_pickle=False) as z:
            return cls(t=z["t"], q=z["q"], qd=z["qd"], qdd=z["qdd"], tau=z["tau"], energy=z["energy"],
                       joint_names=tuple(str(s) for s in z["joint_names"]), meta={"loaded_from": str(path)})


def passive_torques(model, qd):
    """Joint damping forces −b q̇ from URDF ``<dynamics damping>`` (nv,) or (N, nv) [N m | N]."""
    return -np.asarray(model.damping) * np.asarray(qd)


def _trajectory(model, controller, t, X, include_damping, meta):
    nv = model.nv
    t = np.asarray(t, float)
    X = np.asarray(X, float).reshape(len(t), 2 * nv)
    q, qd = X[:, :nv].copy(), X[:, nv:].copy()
    if len(t) == 0:
        z = np.zeros((0, nv))
        return Trajectory(t, z, z, z, z, np.zeros(0), model.joint_names, meta)
    tau = np.array([controller(ti, qi, qdi) for ti, qi, qdi in zip(t, q, qd)]).reshape(len(t), nv)
    applied = tau + (passive_torques(model, qd) if include_damping else 0.0)
    qdd = forward_dynamics(model, q, qd, applied)
    energy = kinetic_energy(model, q, qd) + potential_energy(model, q)
    return Trajectory(t, q, qd, qdd, tau, np.atleast_1d(energy), model.joint_names, meta)


def simulate(model, q0, qd0=None, duration=1.0, controller=None, dt_out=0.01, method="DOP853", rtol=1e-8,
             atol=1e-10, include_damping=True, max_step=np.inf, progress=None) -> Trajectory:
    """Integrate the tree's forward dynamics (ABA) from (q0, qd0) for ``duration`` seconds.

    Args:
        q0, qd0: (nv,) initial state [rad | m, rad/s | m/s]; qd0 defaults to zero.
        controller: callable (t, q, qd) -> τ (nv,), e.g. ``controllers.ComputedTorque``; default passive.
        dt_out: output sample period [s]. method: a scipy ``solve_ivp`` method name ("DOP853", "RK45",
            "Radau", "LSODA", ...); rtol, atol: its tolerances; max_step [s].
        include_damping: add URDF ``<dynamics damping>`` as passive joint forces −b q̇.
        progress: show a tqdm progress bar (None: only on a terminal).

    Returns:
        Trajectory sampled at t = 0, dt_out, ..., duration (qdd and tau recomputed at the samples).

    Raises:
        StateError for bad q0/qd0; ValueError for bad durations or an unknown method; SimulationError if the
        solver fails or the state becomes non-finite — its ``trajectory`` holds the samples before that.
    """
    from tqdm.auto import tqdm

    nv = model.nv
    q0 = as_batch(q0, "q0", nv)[0][0]
    qd0 = np.zeros(nv) if qd0 is None else as_batch(qd0, "qd0", nv)[0][0]
    if not (duration > 0 and dt_out > 0):
        raise ValueError(f"duration and dt_out must be > 0 (got {duration}, {dt_out})")
    controller = controller or Passive(model)
    meta = dict(method=method, rtol=rtol, atol=atol, dt_out=dt_out, include_damping=include_damping)
    damping = np.asarray(model.damping)

    def rhs(t, x):
        q, qd = x[:nv], x[nv:]
        tau = np.asarray(controller(t, q, qd), float)
        if include_damping:
            tau = tau - damping * qd
        return np.concatenate([qd, forward_dynamics(model, q, qd, tau)])

    try:
        solver_cls = integrate._ivp.ivp.METHODS[method] if isinstance(method, str) else method
    except KeyError:
        raise ValueError(f"unknown integration method {method!r}; use one of "
                         f"{', '.join(integrate._ivp.ivp.METHODS)}") from None
    n_out = int(np.floor(duration / dt_out + 1e-9)) + 1
    t_out = np.linspace(0.0, dt_out * (n_out - 1), n_out)
    solver = solver_cls(rhs, 0.0, np.concatenate([q0, qd0]), duration, rtol=rtol, atol=atol, max_step=max_step)
    xs, k = [np.concatenate([q0, qd0])], 1
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
            if k < n_out and t_out[k] <= solver.t:
                dense = solver.dense_output()
                while k < n_out and t_out[k] <= solver.t + 1e-12:
                    xs.append(dense(t_out[k]))
                    k += 1
            bar.update(solver.t - t_prev)
    meta["status"] = "failed" if failure else "finished"
    if failure is None and k < n_out:
        failure = f"the solver stopped at t = {solver.t:.6g} s before the end"
    traj = _trajectory(model, controller, t_out[:len(xs)], np.array(xs), include_damping, meta)
    if failure:
        meta["message"] = failure
        raise SimulationError(failure + f"; {len(traj)} samples up to t = {traj.t[-1]:.6g} s are kept",
                              trajectory=traj)
    return traj
