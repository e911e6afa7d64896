"""Forces to draw as arrows: actuator forces and loop-joint (pin) forces at one sample of a Motion.

Two sources, both from urdf_dyn:
- a trajectory that carries the applied joint forces τ (``urdf-dyn simulate``/``launch``): the actuators'
  values are τ of the actuated joints, and the loop-joint forces λ solve Kᵀλ = τ_ID − τ (RBDA eq. 8.61,
  τ_ID = ID(q, q̇, q̈) minus the passive forces);
- a sizing job's run folder (``rundata.RunData``): the actuator forces of actuator_forces.csv, and the pin
  loads of the same closed-loop inverse dynamics under the run's external loads (the soil force at the
  cutting edge, the cut soil's weight and inertia at its centroid: ``rundata.external_loads``), computed
  for the whole motion in one batch;
- otherwise (a sizing motion, a pose, a demo): ``urdf_dyn.actuators.actuator_forces`` — the actuator
  forces that produce (q, q̇, q̈) (RBDA eq. 8.63; at rest, the forces that hold the pose against gravity),
  with its pin loads.
Pin wrenches [n; f] act on the successor, in Fp coordinates; arrows show f, from Fp's origin. A run also
gives two external-load arrows: ``soil`` (the soil's force on the cutting edge, at the edge) and
``payload`` (the cut soil's weight m g, at its centroid).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["Arrow", "ForceSource"]


@dataclass
class Arrow:
    """An arrow to draw: ``origin`` (3,) and unit ``direction`` (3,) in the base frame, ``value`` (signed
    magnitude), ``unit`` ("N" or "N m"), ``label``, ``kind`` ("actuator", "pin", "soil" or "payload"),
    ``torque`` (True when the arrow is a moment vector, drawn with a double head)."""
    origin: np.ndarray
    direction: np.ndarray
    value: float
    unit: str
    label: str
    kind: str
    torque: bool = False


KINDS = ("actuator", "pin", "soil", "payload")


class ForceSource:
    """Actuator and pin forces of ``model`` along ``motion`` (per sample on demand, cached), or of a run
    folder's ``run`` (rundata.RunData: its motion, forces, soil and payload)."""

    def __init__(self, model, motion=None, run=None):
        from urdf_dyn import actuators_of
        self.model = model
        self.run = run
        self.motion = motion = run.motion if run is not None else motion
        try:
            self.actuators = actuators_of(model, list(run.actuators) if run is not None and run.actuators else None)
        except (KeyError, ValueError):
            self.actuators = ()
        tau = motion.tau
        self.from_tau = run is None and tau is not None and np.any(np.abs(tau) > 0)
        self._cache = {}
        self._pins = None  # a run's pin wrenches {loop: (N, 6)}, computed at the first request
        self.edge, self.payload, self.edge_frame = None, None, None
        if run is not None:
            from urdf_dyn.machines.loads import Frame
            e, p = run.view.get("edge"), run.view.get("payload")
            if e:
                self.edge_frame = Frame(e["link"], tuple(e.get("xyz", (0, 0, 0))), tuple(e.get("rpy", (0, 0, 0))))
                self.edge = self.edge_frame if run.soil_force is not None else None
            if p and run.payload_mass is not None:
                self.payload = (p["link"], np.asarray(p["com"], float))

    def _run_pins(self):
        """Pin wrenches {loop: (N, 6)} of the run's motion under its external loads (one batch)."""
        if self._pins is None:
            run = self.run
            with run.pin_lock:             # kept on the run: another viewer of the same run reuses them
                if run.pin_wrenches is None:
                    run.pin_wrenches = self._compute_run_pins()
                self._pins = run.pin_wrenches
        return self._pins

    def _compute_run_pins(self):
        from urdf_dyn import actuator_forces
        m, mo = self.model, self.motion
        from .rundata import external_loads
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = actuator_forces(m, mo.q, mo.qd, mo.qdd, actuated=[a.name for a in self.actuators] or None,
                                    check=False, warn=False, f_ext=external_loads(m, self.run) or None)
                return {n: np.asarray(w) for n, w in r.loop_forces.items() if not n.startswith("mimic:")}
            except (np.linalg.LinAlgError, ValueError) as e:
                warnings.warn(f"{self.run.folder}: pin loads not drawn ({e})", RuntimeWarning, stacklevel=3)
                return {}

    def pins_in_background(self, done=None):
        """Compute a run's pin wrenches in a thread (the browser viewer serves its page meanwhile: pin arrows
        appear when they are ready); ``done()`` is called then. Until then ``values`` gives no pins."""
        import threading
        self._pending = True

        def work():
            self._run_pins()
            self._pending = False
            if done is not None:
                done()
        threading.Thread(target=work, name="urdf-dyn-pin-loads", daemon=True).start()

    def maxima(self, samples=60, kinds=KINDS):
        """{(kind, unit): largest |value|} over the motion (a run: every sample; else ``samples`` of them),
        the scale of the arrows, for the ``kinds`` asked (a run's pin loads are computed only when "pin" is
        among them: the GIF draws none)."""
        out = {}
        n = len(self.motion)
        ks = range(n) if self.run is not None else np.unique(np.linspace(0, n - 1, min(n, samples)).astype(int))
        if self.run is not None:
            if "actuator" in kinds:
                for a in self.actuators:
                    if a.name in self.run.actuators:
                        out[("actuator", a.unit)] = max(out.get(("actuator", a.unit), 0.0),
                                                        float(np.abs(self.run.actuators[a.name]).max()))
            pins = (self._pins if getattr(self, "_pending", False) else self._run_pins()) if "pin" in kinds else None
            if pins:
                out[("pin", "N")] = max(float(np.linalg.norm(w[:, 3:], axis=1).max()) for w in pins.values())
            if self.edge is not None and "soil" in kinds:
                out[("soil", "N")] = float(np.linalg.norm(self.run.soil_force, axis=1).max())
            if self.payload is not None and "payload" in kinds:
                out[("payload", "N")] = float(np.abs(self.run.payload_mass).max() * np.linalg.norm(self.model.gravity))
            return out
        for k in ks:
            acts, pins = self.values(int(k))
            if "actuator" in kinds:
                for a in self.actuators:
                    if a.name in acts:
                        out[("actuator", a.unit)] = max(out.get(("actuator", a.unit), 0.0), abs(acts[a.name]))
            if "pin" in kinds:
                for w in pins.values():
                    out[("pin", "N")] = max(out.get(("pin", "N"), 0.0), float(np.linalg.norm(w[3:])))
        return out

    def values(self, k, pins=True):
        """({actuator name: u}, {loop name: wrench (6,)}) at sample k; ``pins=False``: a run's pin loads are
        not asked for (not computed if they are not yet: {} then)."""
        if k in self._cache:
            return self._cache[k]
        if self.run is not None:
            acts = {n: float(v[k]) for n, v in self.run.actuators.items()}
            if not pins:
                return acts, {}
            pins = (self._pins or {}) if getattr(self, "_pending", False) else self._run_pins()
            return acts, {n: w[k] for n, w in pins.items()}
        from urdf_dyn import actuator_forces, constrained_inverse_dynamics
        from urdf_dyn import loop_constraints
        m, mo = self.model, self.motion
        q = mo.q[k]
        qd = mo.qd[k] if mo.qd is not None else np.zeros(m.nv)
        qdd = mo.qdd[k] if mo.qdd is not None else np.zeros(m.nv)
        acts, pins = {}, {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if self.from_tau:
                    tau = mo.tau[k]
                    for a in self.actuators:
                        if a.kind == "joint":
                            acts[a.name] = float(tau[m.joint_index(a.joint)])
                    if m.loops:
                        tau_id, _ = constrained_inverse_dynamics(m, q, qd, qdd, check=False)
                        K, _ = loop_constraints(m, q, qd)
                        lam = np.linalg.lstsq(K.T, tau_id - tau, rcond=1e-6)[0]
                        i = 0
                        for lp in m.loops:
                            pins[lp.name] = np.asarray(lp.T) @ lam[i:i + lp.nc]
                            i += lp.nc
                else:
                    r = actuator_forces(m, q, qd, qdd, check=False, warn=False)
                    acts = {n: float(u) for n, u in zip(r.names, np.atleast_1d(r.u))}
                    pins = {n: np.asarray(w) for n, w in r.loop_forces.items() if not n.startswith("mimic:")}
            except (np.linalg.LinAlgError, ValueError) as e:  # a degenerate pose: draw no forces there
                warnings.warn(f"forces at sample {k}: {e}", RuntimeWarning, stacklevel=2)
        self._cache[k] = (acts, pins)
        return acts, pins

    def arrows(self, k, body_T, kinds=KINDS):
        """Arrows of ``kinds`` at sample k for the body poses ``body_T`` (NB+1, 4, 4) of the pose being drawn (a
        kind not asked for is not computed: the GIF draws neither actuator forces nor pin loads)."""
        m = self.model
        acts, pins = self.values(k, pins="pin" in kinds) if "actuator" in kinds or "pin" in kinds else ({}, {})
        out = []
        loops = {lp.name: lp for lp in m.loops}
        for a in self.actuators if "actuator" in kinds else ():
            if a.name not in acts:
                continue
            u = acts[a.name]
            if a.kind == "joint":
                i = m.joint_index(a.joint) + 1  # body i is moved by joint i-1 (q order = body order)
                Tj = body_T[m.parent[i]] @ np.asarray(m.T_tree[i])
                axis = Tj[:3, :3] @ np.asarray(m.axis[i])
                prismatic = m.joint_types[i - 1] == "prismatic"
                origin = body_T[i][:3, 3] if prismatic else Tj[:3, 3]
            else:
                lp = loops[a.joint]
                F = body_T[lp.p] @ lp.T_P
                axis = F[:3, :3] @ np.asarray(lp.S)[3:, 0] if lp.type == "prismatic" else F[:3, :3] @ np.asarray(lp.S)[:3, 0]
                prismatic = lp.type == "prismatic"
                origin = F[:3, 3]
            n = np.linalg.norm(axis)
            d = axis / n if n > 0 else np.array([0.0, 0.0, 1.0])
            out.append(Arrow(origin, d * np.sign(u) if u else d, float(u), a.unit, a.name, "actuator",
                             torque=not prismatic))
        for name, w in pins.items() if "pin" in kinds else ():
            lp = loops[name]
            F = body_T[lp.p] @ lp.T_P
            f = F[:3, :3] @ w[3:]
            mag = float(np.linalg.norm(f))
            d = f / mag if mag > 0 else np.array([0.0, 0.0, 1.0])
            out.append(Arrow(F[:3, 3], d, mag, "N", name, "pin"))
        out.extend(self.load_arrows(k, body_T, kinds))
        return out

    def load_arrows(self, k, body_T, kinds=KINDS):
        """The run's external loads at sample k: the soil's force on the cutting edge (at the edge) and the
        cut soil's weight (at its centroid, along gravity), those of ``kinds``. [] without a run, soil.csv or
        view.json."""
        out = []
        m = self.model
        if self.edge is not None and "soil" in kinds:
            lf = m.links[self.edge.link]
            p = (body_T[lf.body] @ np.asarray(lf.T_body_link) @ self.edge.pose())[:3, 3]
            f = np.asarray(self.run.soil_force[k], float)
            mag = float(np.linalg.norm(f))
            if mag > 0:
                out.append(Arrow(p, f / mag, mag, "N", "soil", "soil"))
        if self.payload is not None and "payload" in kinds:
            link, com = self.payload
            lf = m.links[link]
            T = body_T[lf.body] @ np.asarray(lf.T_body_link)
            c = T[:3, :3] @ com + T[:3, 3]
            g = np.asarray(m.gravity, float)
            w = float(self.run.payload_mass[k]) * float(np.linalg.norm(g))
            if w > 0:
                out.append(Arrow(c, g / np.linalg.norm(g), w, "N", "payload", "payload"))
        return out

    def edge_points_in_soil(self, every=5):
        """World positions (n, 3) of the cutting edge at every ``every``-th sample while it cuts (soil depth
        > 0, else a nonzero soil force, else below the bench), or None without a run's edge frame."""
        if self.edge_frame is None:
            return None
        from urdf_dyn.machines.loads import frame_poses
        run = self.run
        p = frame_poses(self.model, self.motion.q[::every], self.edge_frame)[:, :3, 3]
        if run.soil_depth is not None:
            cut = run.soil_depth[::every] > 0
        elif run.soil_force is not None:
            cut = np.linalg.norm(run.soil_force[::every], axis=1) > 0
        else:
            cut = p[:, 2] < (run.bench_height if run.bench_height is not None else -np.inf)
        return p[cut] if cut.any() else None

    def payload_point(self, body_T):
        """World position (3,) of the payload's centroid at the pose ``body_T``, or None."""
        if self.payload is None:
            return None
        link, com = self.payload
        lf = self.model.links[link]
        T = body_T[lf.body] @ np.asarray(lf.T_body_link)
        return T[:3, :3] @ com + T[:3, 3]
