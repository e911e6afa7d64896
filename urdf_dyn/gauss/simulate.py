"""Projection onto the constraints and integration of a PlanarSystem (Baumgarte or projection
stabilisation), with GaussTrajectory as the result.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.errors import SimulationError
from urdf_dyn.io.files import atomic_path

from urdf_dyn.gauss.solvers import accelerations, solve_accelerations, stabilised_gamma
from urdf_dyn.gauss.system import METHODS
from urdf_dyn._checks import renamed_keywords

__all__ = ["project", "GaussTrajectory", "simulate"]


@renamed_keywords(tol="residual_tol")
def project(system, q, qd=None, t=0.0, residual_tol=1e-12, max_iter=50):
    """Project (q, q̇) onto the constraints: q by M-weighted Gauss–Newton steps on φ(q, t) = 0, then q̇
    by the M-weighted minimum-norm correction that makes [φ̇; ψ] = 0. Returns (q, q̇).
    Raises SimulationError if φ cannot be brought below ``residual_tol`` (e.g. a configuration out of reach)."""
    q, qd, t = system._state(q, qd, t)
    num = system._numeric()
    Minv = num["Minv"]
    q = q.copy()
    for _ in range(max_iter):
        phi, Jp = num["pos"](q, qd, t)
        if phi.size == 0 or np.linalg.norm(phi) <= residual_tol:
            break
        A = Jp @ Minv @ Jp.T
        q = q - Minv @ Jp.T @ np.linalg.lstsq(A, phi, rcond=1e-12)[0]
    else:
        raise SimulationError(f"{system.name}: could not assemble: ‖φ‖ = {np.linalg.norm(phi):.3g} after "
                              f"{max_iter} iterations")
    qd = qd.copy()
    for _ in range(max_iter):
        v = system.velocity_residual(q, qd, t)
        if v.size == 0 or np.linalg.norm(v) <= residual_tol * max(1.0, np.linalg.norm(qd)):
            break
        J = num["con"](q, qd, t)[0]
        qd = qd - Minv @ J.T @ np.linalg.lstsq(J @ Minv @ J.T, v, rcond=1e-12)[0]
    return q, qd


@dataclass
class GaussTrajectory:
    """Sampled motion of a PlanarSystem. t (N,) [s]; q, qd, qdd (N, n) in the order of ``names``;
    lam (N, m) constraint multipliers (Q_c = Jᵀλ); energy (N,) kinetic + potential [J]; work (N,) work of
    the non-conservative applied forces since t = 0 [J] (energy − energy[0] − work = 0 up to drift when
    the constraints are ideal and scleronomic); phi (N, nh) holonomic residuals; psi (N, m) [φ̇; ψ]."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    phi: np.ndarray
    psi: np.ndarray
    names: tuple
    constraint_names: tuple = ()
    meta: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.t)

    def coordinate(self, name, kind="q"):
        """One column of q, qd or qdd by coordinate name ("crank.theta")."""
        return getattr(self, kind)[:, list(self.names).index(name)]

    @property
    def energy_balance(self):
        """E(t) − E(0) − W_nc(t) [J]: zero for exact motion under ideal scleronomic constraints."""
        return self.energy - self.energy[0] - self.work

    def save(self, path):
        """Write ``.npz`` or ``.csv`` (by the suffix), atomically. Returns the path as a string."""
        path = str(path)
        cols = {"t": self.t}
        for k in ("q", "qd", "qdd"):
            for i, nm in enumerate(self.names):
                cols[f"{k}[{nm}]"] = getattr(self, k)[:, i]
        for i, nm in enumerate(self.constraint_names):
            cols[f"lambda[{nm}]"] = self.lam[:, i]
        cols["energy"], cols["work_nc"] = self.energy, self.work
        if path.endswith(".csv"):
            with atomic_path(path) as tmp:
                with open(tmp, "w", newline="") as fh:
                    w = csv.writer(fh)
                    w.writerow(list(cols))
                    w.writerows(np.column_stack(list(cols.values())).tolist())
            return path
        if not path.endswith(".npz"):
            raise ValueError(f"unknown trajectory format for {path!r}: use .npz or .csv")
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, t=self.t, q=self.q, qd=self.qd, qdd=self.qdd, lam=self.lam, energy=self.energy,
                         work=self.work, phi=self.phi, psi=self.psi, names=np.array(self.names),
                         constraint_names=np.array(self.constraint_names), meta=np.array(repr(self.meta)))
        return path


def _samples(system, t, X, accel, t_stab, rtol, meta):
    n = system.n
    num = system._numeric()
    q, qd, work = X[:, :n], X[:, n:2 * n], X[:, 2 * n]
    res = [accelerations(system, qi, qdi, ti, solver=accel, t_stab=t_stab, rank_rtol=rtol)
           for ti, qi, qdi in zip(t, q, qd)]
    m = num["m"]
    qdd = np.array([r.qdd for r in res]).reshape(len(t), n)
    lam = np.array([r.lam for r in res]).reshape(len(t), m)
    energy = np.array([system.energy(qi, qdi, ti) for ti, qi, qdi in zip(t, q, qd)])
    phi = np.array([system.phi(qi, ti) for ti, qi in zip(t, q)]).reshape(len(t), num["nh"])
    psi = np.array([system.velocity_residual(qi, qdi, ti) for ti, qi, qdi in zip(t, q, qd)]).reshape(len(t), m)
    names = tuple(nm for nm, _ in system.holonomic) + tuple(nm for nm, _ in system.nonholonomic_rows)
    return GaussTrajectory(np.asarray(t, float), q.copy(), qd.copy(), qdd, lam, energy, work.copy(), phi, psi,
                           tuple(system.names), names, meta)


@renamed_keywords(pinv_rtol="rank_rtol")
def simulate(system, q0, qd0=None, duration=1.0, dt_out=0.01, integrator="DOP853", rtol=1e-10, atol=1e-12,
             solver="gauss", stabilisation="baumgarte", t_stab=0.1, rank_rtol=1e-10, max_step=np.inf,
             project_initial=True) -> GaussTrajectory:
    """Integrate M q̈ = Q + Q_c with scipy.integrate.solve_ivp from (q0, q̇0).

    solver: ``"gauss"`` | ``"kkt"`` | ``"paper16"`` (see ``accelerations``). stabilisation: ``"baumgarte"``
    (time constant ``t_stab`` [s]), ``"projection"`` (integrate each output interval, then ``project``)
    or None. The work of the non-conservative forces is integrated alongside (``GaussTrajectory.work``).
    Raises SimulationError (with ``.trajectory`` up to the failure) if the solver fails."""
    from scipy.integrate import solve_ivp
    n = system.n
    q0, qd0, _ = system._state(q0, qd0, 0.0)
    if not (duration > 0 and dt_out > 0):
        raise ValueError(f"duration and dt_out must be > 0 (got {duration}, {dt_out})")
    if stabilisation not in ("baumgarte", "projection", None, "none"):
        raise ValueError(f"unknown stabilisation {stabilisation!r} (baumgarte, projection, none)")
    if solver not in METHODS:
        raise ValueError(f"unknown Gauss solver {solver!r} (choose from {', '.join(METHODS)})")
    stab = None if stabilisation in (None, "none") else stabilisation
    ts = t_stab if stab == "baumgarte" else None
    num = system._numeric()
    if project_initial:
        q0, qd0 = project(system, q0, qd0, 0.0)

    def rhs(t, x):
        q, qd = x[:n], x[n:2 * n]
        Q, Qnc, Vt, J, gamma, phid, psi, phi = num["all"](q, qd, t)
        qdd = solve_accelerations(num, Q, J, stabilised_gamma(gamma, phid, psi, phi, ts), solver, rank_rtol)[0]
        return np.concatenate([qd, qdd, [Qnc @ qd + float(Vt)]])

    n_out = int(np.floor(duration / dt_out + 1e-9)) + 1
    t_out = np.minimum(np.linspace(0.0, dt_out * (n_out - 1), n_out), duration)
    meta = dict(system=system.name, integrator=integrator, rtol=rtol, atol=atol, dt_out=dt_out, solver=solver,
                stabilisation=stab, t_stab=ts, nfev=0)
    x0 = np.concatenate([q0, qd0, [0.0]])
    failure = None
    if stab == "projection":
        xs = [x0]
        for k in range(1, n_out):
            sol = solve_ivp(rhs, (t_out[k - 1], t_out[k]), xs[-1], method=integrator, rtol=rtol, atol=atol,
                            max_step=max_step)
            meta["nfev"] += sol.nfev
            if not sol.success or not np.all(np.isfinite(sol.y[:, -1])):
                failure = f"the solver failed at t = {sol.t[-1]:.6g} s: {sol.message}"
                break
            x = sol.y[:, -1].copy()
            try:
                x[:n], x[n:2 * n] = project(system, x[:n], x[n:2 * n], t_out[k])
            except SimulationError as e:
                failure = str(e)
                break
            xs.append(x)
        X, tt = np.array(xs), t_out[:len(xs)]
    else:
        sol = solve_ivp(rhs, (0.0, t_out[-1]), x0, method=integrator, t_eval=t_out, rtol=rtol, atol=atol,
                        max_step=max_step)
        meta["nfev"] = sol.nfev
        X, tt = sol.y.T, sol.t
        if not sol.success or len(tt) < n_out or not np.all(np.isfinite(X)):
            good = np.all(np.isfinite(X), axis=1) if len(X) else np.zeros(0, bool)
            stop = int(np.argmin(good)) if not good.all() else len(X)
            X, tt = X[:stop], tt[:stop]
            failure = f"the solver stopped at t = {sol.t[-1] if len(sol.t) else 0:.6g} s: {sol.message}"
    meta["status"] = "failed" if failure else "finished"
    traj = _samples(system, tt, X, solver, ts, rank_rtol, meta)
    if failure:
        meta["message"] = failure
        raise SimulationError(f"{system.name}: {failure}; {len(traj)} samples kept", trajectory=traj)
    return traj
