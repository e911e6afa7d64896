"""Stall envelopes of a hydraulic excavator and the design load of every pin.

**The case.** A cylinder stalls when the operator drives it at its working relief against a locked bucket
(an obstacle, a stump, the ground): the machine then holds the largest tip force it can, with

- the working cylinder at most at its working relief ``relief`` (cap side pushing, rod side pulling),
- every other cylinder at most at its holding (port) relief ``holding_relief`` — the same limits and the same
  statics as ISO 6015's tool forces (``iso6015``: §3.16–3.17, quoted there; its bound function is reused),
- the machine not tipping: the centre of pressure of the ground reaction inside the one tipping polygon of
  the ZMP check, the lift chart and ISO 6015 (``stability.tipping_load``; the main job: ``stability.track``),
- **anchored by default** (``friction=None``): the structure's design loads are those of ISO 6015 §4.5 ("If
  the slipping limit condition is reached, the machine shall be anchored"): sliding must not cap a load the
  machine can meet against a wall, a stump or its own dug-in tracks. **The sliding case** is a separate,
  named case (``friction=μ``): the ground's horizontal reaction within Coulomb's cone, |f_xy| ≤ μ f_z
  (ISO 6015 §3.19's *slipping limit*). μ is a scenario key (``design.friction``); ``DEFAULT_FRICTION`` 0.5
  is the order of the track traction factors of the Caterpillar Performance Handbook's "Traction factors" table (tracks:
  about 0.45 on concrete up to 0.9 on dry clay loam; the table was not retrievable here, so the value is an
  estimate to be replaced by the site's).

The largest tip force is found at every pose of a grid over the three cylinder strokes (``StrokeMap``:
assembled on the initial configuration's branch, ``margin`` inside every stroke end) and for two kinds of
direction:

- ``tangent``: the force opposes the lip's motion when the working cylinder extends alone (every other
  actuator locked): the ISO 6015 tangent to the arc about the bucket pivot (bucket cylinder, §4.8.3.1), the
  arm pivot (stick cylinder, §4.8.2.1) and, by the same rule, the boom foot (boom cylinder). It is the
  direction in which a unit tip force loads the working cylinder most: d = J_y[:, c] / |J_y[:, c]|.
- ``fan``: ``n_fan`` directions of the force on the lip in the boom plane (angle θ from the machine's
  forward axis towards up, every 360°/n_fan) and the tangent one: the worst is the one in which the machine
  holds the largest force. The tangent is among them, so the fan's worst never understates the tangent case.

**The worst direction, exact.** The held forces of a pose fill a convex polygon in the boom plane (every
limit is linear in the lip force); a pin's force is convex in it, so its largest is at a corner, where two
limits bind (``stall_corners``). The envelopes carry those corner states beside the fan's, and the design
loads, the ring's loads and the reachable compressions are taken over all of them (``states``).

**Statics, batched.** At rest the cylinder forces, the loop (pin) forces and the ground reaction are affine
in the force f (3,) on the lip: u(f) = u_g + U f (RBDA eq. 8.63 with f as an external wrench). u_g and the
three columns of U come from four calls of the compiled closed-loop inverse dynamics on the whole grid
(``actuator_forces`` → ``constraints._path.actuation_path``), the ground reaction's from
``stability.base_reaction``, the pins' from ``pins.pin_loads`` with the same loop forces. The tangent is
read off U: with every other actuator locked, u_c = −J_y[:, c] · f (virtual work), so d_c = −U[c] / |U[c]|.
For a direction with force f = −F d: the cylinder bound (``iso6015``'s ``_bounds``: each cylinder's
p_k·A_cap pushing or p_k·A_annulus pulling), the tipping bound (``stability.tipping_load``), the sliding bound
(``sliding_load``); F is the smallest and ``limited_by`` names it: a cylinder's actuator name, "tipping" or
"sliding".

Weights: included by default (``include_weight``): a stall is a real static state, and the design loads of
the pins carry the machine's own weight (ISO 6015's figures leave the weights out of the cylinder forces,
SAE J1179 §3.3; the tipping and sliding limits always count them).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from urdf_dyn.algorithms.kinematics import body_poses
from urdf_dyn.machines.iso6015 import _pressure_limits
from urdf_dyn.machines.reliefs import plain_reliefs
from urdf_dyn.machines.stability import base_reaction
from urdf_dyn.machines.stall_corners import corner_states, ground_bounds, held_forces, sliding_load
from urdf_dyn.machines.stroke_map import StrokeMap

__all__ = ["sliding_load", "StallEnvelopes", "stall_envelopes", "stroke_range", "stroke_map", "DEFAULT_FRICTION"]

#: track–ground friction coefficient when none is given (module docstring: an estimate)
DEFAULT_FRICTION = 0.5


def _fan(n_fan, swing, fan_deg=None):
    """Angles θ (K,) [rad] and unit force directions e(θ) (K, 3) in the boom plane (swing angle ``swing``):
    e = cos θ x_b + sin θ z, x_b the boom's forward axis; ``fan_deg`` [deg] replaces the n_fan even ones."""
    th = 2 * np.pi * np.arange(n_fan) / n_fan if fan_deg is None else np.radians(np.asarray(fan_deg, float))
    xb = np.array([np.cos(swing), np.sin(swing), 0.0])
    return th, np.cos(th)[:, None] * xb + np.sin(th)[:, None] * np.array([0.0, 0.0, 1.0])


@dataclass
class StallEnvelopes:
    """Stall envelopes over a stroke grid (module docstring). Forces [N], positions [m], angles [deg].

    strokes: the grid's cylinders (boom, stick, bucket); X (M, 3) their strokes [m]; Q (M, nv) the poses;
    lip (M, 3) the force point in root coordinates; names: the actuators (``actuator_forces`` order);
    u_g (M, p) [N] cylinder forces at rest (zero when weights are left out); U (M, p, 3) [N/N] per unit
    force on the lip along root x, y, z; W0 (M, 6), W1 (M, 6, 3) ground reactions at rest and per unit force;
    fan_deg (K,): the fan's angles; working: the working cylinders;
    per working cylinder c: ``tangent[c]`` and ``fan[c]`` dicts with force_N (M,), limited_by (M,), force
    (M, 3) the force on the lip at the limit [N] (root coordinates), angle_deg (M,) its angle in the boom
    plane; ``fan[c]`` also all_N (M, K+1) (the K fan directions, then the tangent) and all_limited_by;
    ``corner[c]``: the held states at the corners of each pose's held-force polygon (``stall_corners``: the
    worst direction of every pin and of the ring), force_N (M, V), force (M, V, 3), angle_deg, limited_by,
    binding (M, V, 2) the two limits, rows; ``states(c)`` all of them in one table.
    relief, holding_relief [Pa], friction μ (None: not checked), tipping_checked, include_weight; unit_wrenches:
    3 (M, 6) link-frame wrenches [n; f] of a unit force along root x, y, z at the lip; push: the largest
    actuator force (p,) [N] over every state, kept by ``slim``."""
    strokes: tuple
    X: np.ndarray
    Q: np.ndarray
    lip: np.ndarray
    names: tuple
    u_g: np.ndarray
    U: np.ndarray
    W0: np.ndarray
    W1: np.ndarray
    fan_deg: np.ndarray
    working: tuple
    tangent: dict
    fan: dict
    relief: float
    holding_relief: object
    friction: object
    tipping_checked: bool
    include_weight: bool
    tip: tuple = None
    loop_forces: dict = field(default_factory=dict, repr=False)
    unit_wrenches: list = field(default_factory=list, repr=False)
    corner: dict = field(default_factory=dict, repr=False)
    push: object = field(default=None, repr=False)
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _shared: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __setattr__(self, name, value):        # a field set anew: what was remembered from it is forgotten
        object.__setattr__(self, name, value)
        if name in ("_memo", "_shared") or "_shared" not in self.__dict__:
            return
        self.__dict__["_memo"] = {}
        if name in ("Q", "loop_forces", "unit_wrenches", "tip"):
            self.__dict__["_shared"] = {}

    def __getstate__(self):                     # the memos (``_remember``) are not part of the envelopes
        return {k: v for k, v in self.__dict__.items() if k not in ("_memo", "_shared")}

    def __setstate__(self, state):
        self.__dict__.update(state, _memo={}, _shared={})

    def _remember(self, what, model, args, compute):
        """``compute()`` once per (what, model, args) (args may hold a pin table): the search, the case matrix and
        the report ask for the same states, maps and pose loads; callers only read the result. ``replace``
        starts afresh; the pin and ring maps depend on the statics alone, shared by envelopes built ``like``."""
        args = tuple(tuple(a.items()) if isinstance(a, dict) else a for a in args)
        key, memo = (what, id(model), args), self._shared if what in ("pin_maps", "ring_maps") else self._memo
        try:
            hit = memo.get(key)
        except TypeError:                           # unhashable arguments (a pin given as a list): no memo
            return compute()
        if hit is None or hit[0] is not model:
            hit = memo[key] = (model, compute())
        return hit[1]

    def pose(self, k) -> dict:
        """{cylinder: stroke [m]} of grid pose k."""
        return {c: float(x) for c, x in zip(self.strokes, self.X[k])}

    def summary(self) -> dict:
        """JSON-ready: per working cylinder and kind, the largest and smallest held force over the grid, the
        pose of the largest and how often each limit binds."""
        out = dict(poses=int(len(self.X)), fan_directions=int(len(self.fan_deg)), relief_Pa=self.relief,
                   holding_relief_Pa=self.holding_relief, friction=self.friction,
                   tipping_checked=self.tipping_checked, include_weight=self.include_weight, cylinders={})
        for c in self.working:
            d = {}
            for kind, r in (("tangent", self.tangent[c]), ("fan", self.fan[c])):
                k = int(np.argmax(r["force_N"]))
                lims, cnt = np.unique(r["limited_by"].astype(str), return_counts=True)
                d[kind] = dict(max_N=float(r["force_N"][k]), min_N=float(np.min(r["force_N"])),
                               max_pose=self.pose(k), max_angle_deg=float(r["angle_deg"][k]),
                               max_limited_by=str(r["limited_by"][k]),
                               limited_by_share={str(n): float(m / len(self.X)) for n, m in zip(lims, cnt)})
            out["cylinders"][c] = d
        return out

    def states(self, c):
        """Every stall state of working cylinder c at each pose: (F (M, S, 3) the held forces on the lip [N]
        (root coordinates), limited_by (M, S), angle_deg (M, S), binding (M, S, 2), kinds (S,)): the fan's
        K directions, the tangent, then the corners of the held-force polygon (``stall_corners``; kind
        "corner"), where every pin's largest force and the ring's largest tilting moment of the pose lie."""
        return self._remember("states", None, (c,), lambda: self._states(c))

    def _states(self, c):
        fan, t, cr = self.fan[c], self.tangent[c], self.corner.get(c)
        M, K = len(self.X), len(self.fan_deg)
        F, lim = fan["all_force"], fan["all_limited_by"]
        ang = np.concatenate([np.broadcast_to(self.fan_deg, (M, K)), t["angle_deg"][:, None]], axis=1)
        kinds = ["fan"] * K + ["tangent"]
        if cr is not None:
            F, lim = np.concatenate([F, cr["force"]], axis=1), np.concatenate([lim, cr["limited_by"]], axis=1)
            ang = np.concatenate([ang, cr["angle_deg"]], axis=1)
            kinds += ["corner"] * cr["force_N"].shape[1]
        binding = np.repeat(lim[..., None], 2, axis=2)
        if cr is not None:
            binding[:, K + 1:] = cr["binding"]
        return F, lim, ang, binding, np.array(kinds)

    def pose_loads(self, model, pins, swing=None) -> dict:
        """The largest force of every pin at every pose, per working cylinder, over that pose's stall states
        (``states``). pins as ``design_loads``. Returns {"names": pins (P,), "load_N" (W, P, M) [N],
        "state" (W, P, M) the index of the state in ``states``, "components_N" (W, P, M, 3) in the pin frame}.
        The pin forces come from ``pins.pin_loads`` on the poses (the design branch's RNEA backward pass with
        the loop forces of the same compiled statics), at rest and per unit lip force, combined linearly (the
        statics are linear in the lip force)."""
        return self._remember("pose_loads", model, (pins, swing), lambda: self._pose_loads(model, pins, swing))

    def _pose_loads(self, model, pins, swing):
        names, w0, Wf = self.pin_maps(model, pins, swing)
        M, P = len(self.X), len(names)
        W = len(self.working)
        load, state, comp = np.zeros((W, P, M)), np.zeros((W, P, M), int), np.zeros((W, P, M, 3))
        for w, c in enumerate(self.working):
            F = self.states(c)[0]                                                           # (M, S, 3)
            for a in range(0, M, 256):                         # a block of poses at a time: in cache, and no
                m = slice(a, a + 256)                          # large temporaries
                f = (w0[m, None, :] + F[m] @ Wf[m]).reshape(-1, F.shape[1], P, 3)           # (m, S, P, 3)
                mag = np.sqrt(np.einsum("mspi,mspi->pms", f, f))                          # (P, m, S)
                k = np.argmax(mag, axis=2)
                load[w, :, m], state[w, :, m] = np.take_along_axis(mag, k[..., None], axis=2)[..., 0], k
                for j in range(P):
                    comp[w, j, m] = f[np.arange(len(f)), k[j], j]
        return dict(names=tuple(names), load_N=load, state=state, components_N=comp)

    def pin_maps(self, model, pins, swing=None):
        """(names (P,), w0 (M, 3P), Wf (M, 3, 3P)): every pin's force [N] in its pin frame at rest and per unit
        lip force along root x, y, z, so that a held force f (3,) gives w0 + f @ Wf (``pins.pin_loads`` with
        the envelopes' loop forces)."""
        return self._remember("pin_maps", model, (pins, swing), lambda: self._pin_maps(model, pins, swing))

    def _pin_maps(self, model, pins, swing):
        names, w = self.unit_load_wrenches(model, pins, swing)
        w = np.concatenate([w[n][..., 3:] for n in names], axis=-1)          # (4, M, 3P)
        return tuple(names), w[0], np.moveaxis(w[1:] - w[0], 0, 1)          # (M, 3P), (M, 3, 3P) per unit f

    def unit_load_wrenches(self, model, pins, swing=None):
        """(names, {pin: (4, M, 6)}): every pin's wrench [n; f] in its frame (``pins.pin_loads``: per pin of a
        count) on the grid at rest, then under a unit lip force along root x, y and z, the envelopes' loop
        forces and unit wrenches stacked set after set in one ``pins.pin_loads_repeated`` call (the poses and
        transforms once; the statics are linear in the lip force)."""
        from urdf_dyn.machines.pins import pin_loads_repeated
        M, nv = self.Q.shape
        z = np.zeros((4 * M, nv))
        lf = {lp: np.concatenate([np.asarray(self.loop_forces[k][lp], float) for k in ("g", 0, 1, 2)])
              for lp in self.loop_forces["g"]}
        f = np.concatenate([np.zeros((M, 6))] + [np.asarray(self.unit_wrenches[i], float) for i in range(3)])
        pl = pin_loads_repeated(model, np.zeros(4 * M), self.Q, z, z, pins, loop_forces=lf,
                                f_ext={self.tip[0]: f}, swing=swing)
        return pl.names, {n: pl.wrench[n].reshape(4, M, 6) for n in pl.names}

    def case(self, c, m, k) -> dict:
        """The design case dict of state k (``states``) of working cylinder c at pose m (``design_loads``)."""
        F, lim, ang, binding, kinds = self.states(c)
        return dict(cylinder=c, direction=str(kinds[k]), angle_deg=float(ang[m, k]),
                    tip_force_N=float(np.linalg.norm(F[m, k])), limited_by=str(lim[m, k]),
                    binding=[str(b) for b in binding[m, k]], pose=self.pose(m))

    def design_loads(self, model, pins, swing=None, working=None) -> dict:
        """The design load of every pin: its largest force over every stall state of the envelopes (each
        working cylinder; the tangent, every fan direction and every corner of the held-force polygon, each
        at its held force), with the state that gives it (``pose_loads``).

        pins: {name: PinSpec | joint} as ``pins.pin_loads`` (the pin table's names). Returns {name:
        {"design_load_N": |f| per pin [N], "components_N": (3,) in the pin frame, "design_case": {"cylinder",
        "direction" ("tangent" | "fan" | "corner"), "angle_deg", "tip_force_N", "limited_by", "binding" (the
        limits at the state: two at a corner), "pose": {cylinder: stroke [m]}}}}. working: the stalling
        cylinders to take the largest over (default ``self.working``): the case matrix's one case per cylinder."""
        pl = self.pose_loads(model, pins, swing)
        out = {}
        for j, n in enumerate(pl["names"]):
            best = None
            for w, c in enumerate(self.working):
                if working is not None and c not in working:
                    continue
                m = int(np.argmax(pl["load_N"][w, j]))
                v = float(pl["load_N"][w, j, m])
                case = self.case(c, m, int(pl["state"][w, j, m]))
                # a tie (the same state: equal reliefs make the states alike for every working cylinder) goes
                # to the case whose working cylinder is one of the limits that bind
                tie = best is not None and abs(v - best[0]) <= 1e-9 * v and \
                    best[1]["cylinder"] not in best[1]["binding"] and c in case["binding"]
                if best is None or v > best[0] and not abs(v - best[0]) <= 1e-9 * v or tie:
                    best = (v, case, pl["components_N"][w, j, m].copy())
            out[n] = dict(design_load_N=best[0], design_case=best[1], components_N=best[2])
        return out

    def ring_loads(self, model, swing="swing", working=None) -> dict:
        """The slewing ring (the swing joint ``swing``, a revolute tree joint about z) over every stall state
        (``states``): {"tilting_moment_Nm", "axial_N", "radial_N", "torque_Nm"}: the largest of each (axial:
        the largest compression) with the state of the largest tilting moment ("case": cylinder, direction,
        tip force, pose). The joint wrench in the joint frame, linear in the lip force as the pins'. working:
        the stalling cylinders (default ``self.working``)."""
        w0, Wf = self._remember("ring_maps", model, (swing,), lambda: self._ring_maps(model, swing))
        best = dict(tilting_moment_Nm=0.0, axial_N=0.0, radial_N=0.0, torque_Nm=0.0, case=None)
        for c in self.working if working is None else [c for c in self.working if c in working]:
            F, lim, _, _, kinds = self.states(c)
            w = w0[:, None, :] + F @ Wf                                          # (M, S, 6)
            tilt, axial = np.hypot(w[..., 0], w[..., 1]), w[..., 5]
            radial, torque = np.hypot(w[..., 3], w[..., 4]), np.abs(w[..., 2])
            m, k = np.unravel_index(int(np.argmax(tilt)), tilt.shape)
            if tilt[m, k] > best["tilting_moment_Nm"]:
                best.update(tilting_moment_Nm=float(tilt[m, k]), case=dict(
                    cylinder=c, direction=str(kinds[k]), tip_force_N=float(np.linalg.norm(F[m, k])),
                    pose=self.pose(m), limited_by=str(lim[m, k])))
            best.update(axial_N=max(best["axial_N"], float(axial.max())), radial_N=max(best["radial_N"], float(radial.max())),
                        torque_Nm=max(best["torque_Nm"], float(torque.max())))
        return best

    def _ring_maps(self, model, swing):
        """(w0 (M, 6), Wf (M, 3, 6)): the ring's wrench at rest and per unit lip force along root x, y, z."""
        w = self.unit_load_wrenches(model, {"ring": swing})[1]["ring"]
        return w[0], np.moveaxis(w[1:] - w[0], 0, 1)

    def slim(self) -> "StallEnvelopes":
        """A copy with only what the report, the plots and ``push_forces`` read: the grid's strokes and lip
        positions, each pose's tangent and worst fan state, and the largest compression per actuator
        (``push``); without the statics per pose (Q, u_g, U, W0, W1, loop forces) and per state (every fan
        direction, every corner), which ``design_loads``, ``pose_loads`` and ``ring_loads`` need. What the
        geometry cache keeps."""
        keep = ("force_N", "limited_by", "force", "angle_deg")
        return replace(self, Q=None, u_g=None, U=None, W0=None, W1=None, loop_forces={}, unit_wrenches=[],
                       corner={}, fan={c: {k: f[k] for k in keep} for c, f in self.fan.items()}, push=self._push())

    def _push(self):
        """The largest actuator force (p,) [N] over every stall state (u = u_g + U f), or the kept one."""
        if self.U is None:
            return self.push
        best = np.full(len(self.names), -np.inf)
        for c in self.working:
            u = self.u_g[:, None, :] + np.einsum("mpj,mkj->mkp", self.U, self.states(c)[0])
            best = np.maximum(best, u.reshape(-1, len(self.names)).max(axis=0))
        return best

    def push_forces(self, counts=None) -> dict:
        """{cylinder: the largest compression [N] per cylinder (pushing, cap side) over every stall state of
        the envelopes (``states``: each working cylinder, the tangent, every fan direction and every corner,
        each at its held force)}; 0 where a cylinder never pushes. counts: {cylinder: cylinders in parallel}
        (default 1): the actuator force is shared. u = u_g + U f (module docstring), f the held force on the
        lip."""
        counts, best = counts or {}, self._push()
        return {n: float(max(best[k], 0.0)) / counts.get(n, 1) for k, n in enumerate(self.names)}


def _grid(model, q0, strokes, acts, n, margin, axes=None, points=None, smap=None):
    """Stroke values X (M, 3) and assembled poses Q (M, nv) of the grid, on q0's branch; ``axes`` (3 arrays of
    strokes [m]) replace the ``n`` evenly spaced samples, ``points`` (M, 3) [m] the whole grid (each clipped to
    the same margins)."""
    rel = margin is None
    smap = smap or stroke_map(model, strokes, q0, margin)
    grid_axes = []
    for k, c in enumerate(strokes):
        lo, hi = smap.limits(c)
        if rel:                                    # 1 % of the stroke inside each end: no state on a limit
            d = 0.01 * (hi - lo)
            lo, hi = lo + d, hi - d
        if points is not None:
            grid_axes.append((lo, hi))
        else:
            grid_axes.append(np.linspace(lo, hi, n[k]) if axes is None else np.unique(np.clip(axes[k], lo, hi)))
    if points is not None:
        X = np.clip(np.asarray(points, float).reshape(-1, len(strokes)), *np.array(grid_axes).T)
        grid_axes = [np.unique(X[:, k]) for k in range(len(strokes))]
    else:
        X = np.array(np.meshgrid(*grid_axes, indexing="ij")).reshape(len(strokes), -1).T
    for k, c in enumerate(strokes):                # each stroke assembled once, then composed: a value the
        for x in grid_axes[k]:                     # shared ``smap`` holds is not closed again (a second Newton
            if not smap.assembled(c, x):           # pass moves it by round-off, so a pose would depend on the
                smap.pose({c: float(x)})           # calls before it)
    Q = smap.compose([dict(zip(strokes, map(float, v))) for v in X])
    return X, Q


def stroke_map(model, strokes=("boom_cyl", "stick_cyl", "bucket_cyl"), q0=None, margin=None) -> StrokeMap:
    """The ``StrokeMap`` ``stall_envelopes`` assembles its poses with (``margin`` as there)."""
    q0 = model.q_initial() if q0 is None else np.asarray(q0, float)
    return StrokeMap(model, q0, tuple(strokes), _actuator_names(model), margin=1e-3 if margin is None else margin)


def stroke_range(model, strokes=("boom_cyl", "stick_cyl", "bucket_cyl"), q0=None, margin=None, smap=None):
    """{cylinder: (lo, hi)} [m]: the strokes ``stall_envelopes`` spans (``margin`` as there; ``smap`` the
    ``stroke_map`` to read them from)."""
    smap = smap or stroke_map(model, strokes, q0, margin)
    out = {}
    for c in strokes:
        lo, hi = smap.limits(c)
        d = 0.01 * (hi - lo) if margin is None else 0.0
        out[c] = (lo + d, hi - d)
    return out


def stall_envelopes(model, cylinders, relief, tip, holding_relief=None, footprint=None, friction=None,
                    strokes=("boom_cyl", "stick_cyl", "bucket_cyl"), n=(13, 13, 13), n_fan=36,
                    include_weight=True, q0=None, margin=None, working=None, axes=None,
                    fan_deg=None, points=None, smap=None, corners=True, like=None) -> StallEnvelopes:
    """Stall envelopes of every working cylinder over a grid of poses (module docstring).

    Args:
        model: a machine Model whose actuators (URDF <transmission>s) include the cylinders.
        cylinders: {actuator: ``sizing.Cylinder``} [m].
        relief: working relief [Pa]; holding_relief: the holding cylinders' line (port) reliefs [Pa], a number,
            {cylinder: Pa} or {cylinder: {"head": Pa, "rod": Pa}} (``reliefs.pressure_limits``; None: unlimited).
        tip: (link, point (3,) [m] in the link frame): where the force acts (the bucket lip).
        footprint: the tipping polygon (k, 2) [m] (``stability.tipping_polygon``); None: tipping not checked.
        friction: μ ≥ 0 of the ground (None, the default: the machine anchored, as ISO 6015 §4.5 takes it;
            a number gives the sliding case, ``DEFAULT_FRICTION`` the estimate).
        strokes: the cylinders whose strokes span the grid; n: samples per stroke (M = n₀ n₁ n₂ poses);
            n_fan: directions of the fan; margin [m] inside each stroke end (default 1 % of the stroke).
        working: the cylinders that stall in turn (default: ``strokes``).
        axes: 3 arrays of stroke values [m] instead of ``n`` (a local grid); points: (M, 3) strokes [m], any
            set of poses (``stall_refine``'s search); fan_deg: the fan's angles [deg] instead of ``n_fan``
            evenly spaced ones; smap: the ``stroke_map`` of the same model, strokes, q0 and margin, to reuse
            across calls (the strokes' sweeps are most of a small call's time); corners: False leaves out the
            corner states (a caller that only needs the statics); like: envelopes of the same model, tip, grid
            (strokes, n, axes, points, margin, q0) and include_weight whose statics (poses, cylinder forces, loop
            forces, ground reactions, pin and ring maps) are reused: only the limits differ (the sliding case
            beside the anchored one).
        q0: start pose (default the URDF initial configuration; its branch is followed).
    Returns StallEnvelopes. Raises KeyError for a cylinder that is not an actuator, ValueError for a relief
    ≤ 0 or μ < 0, ModelError if a pose cannot be assembled."""
    working = tuple(strokes if working is None else working)
    limits = _pressure_limits(cylinders, relief, holding_relief)
    if friction is not None and not (np.isfinite(friction) and friction >= 0):
        raise ValueError(f"friction coefficient must be >= 0, got {friction!r}")
    names = _actuator_names(model)
    for c in set(working) | set(strokes) | set(cylinders):
        if c not in names:
            raise KeyError(f"cylinder {c!r} is not an actuator of {model.name} ({', '.join(names)})")
    q0 = model.q_initial() if q0 is None else np.asarray(q0, float)
    link, p = tip[0], np.asarray(tip[1], float)
    if like is not None:
        if like.strokes != tuple(strokes) or like.tip[0] != link or not np.array_equal(like.tip[1], p) \
                or like.include_weight != bool(include_weight) or like.Q is None:
            raise ValueError("like: envelopes with other strokes, tip or weights, or slim ones, cannot lend their statics")
        X, Q, lip, wr, LF, U, u0, W0, W1 = (like.X, like.Q, like.lip, like.unit_wrenches, like.loop_forces, like.U,
                                            like.u_g, like.W0, like.W1)
    else:
        X, Q, lip, wr, LF, U, u0, W0, W1 = _statics(model, q0, tuple(strokes), names, n, margin, axes, points, smap,
                                                    link, p)
    M = len(Q)
    g = u0 if include_weight else np.zeros((M, len(names)))
    swing = float(q0[model.joint_index("swing")]) if "swing" in model.joint_names else 0.0
    th, E = _fan(n_fan, swing, fan_deg)
    n_fan = len(th)
    tangent, fan, corner = {}, {}, {}
    xb = np.array([np.cos(swing), np.sin(swing), 0.0])
    Efan = np.broadcast_to(E[None], (M, n_fan, 3))
    gfan = ground_bounds(W0, W1, Efan, footprint, friction)               # the same for every working cylinder
    for c in working:
        ci = names.index(c)
        d = -U[:, ci, :] / np.linalg.norm(U[:, ci, :], axis=1)[:, None]   # lip motion per extension (unit)
        # directions of the force on the lip: the K fan ones, then the tangent's (−d)
        Fd = np.concatenate([Efan, -d[:, None, :]], axis=1)                  # (M, K+1, 3)
        gt = ground_bounds(W0, W1, -d[:, None, :], footprint, friction)
        ground = tuple(np.concatenate([a, b], axis=1) for a, b in zip(gfan, gt))
        F, lim = held_forces(U, g, Fd, names, cylinders, limits, c, ground)
        k = np.argmax(F, axis=1)
        rows = np.arange(M)
        ang_t = np.degrees(np.arctan2(-d @ np.array([0, 0, 1.0]), -d @ xb)) % 360
        tangent[c] = dict(force_N=F[:, -1], limited_by=lim[:, -1], force=F[:, -1, None] * Fd[:, -1],
                          angle_deg=ang_t, direction=d)
        fan[c] = dict(force_N=F[rows, k], limited_by=lim[rows, k], force=F[rows, k, None] * Fd[rows, k],
                      angle_deg=np.where(k == n_fan, ang_t, np.degrees(th)[np.minimum(k, n_fan - 1)]),
                      all_N=F, all_limited_by=lim, all_force=F[:, :, None] * Fd)
        if corners:
            corner[c] = corner_states(U, g, W0, W1, xb, names, cylinders, limits, c, footprint, friction)
    env = StallEnvelopes(tuple(strokes), X, Q, lip, names, g, U, W0, W1, np.degrees(th), working, tangent, fan,
                         float(relief), plain_reliefs(holding_relief), None if friction is None else float(friction),
                         footprint is not None, bool(include_weight), (link, p), LF, wr, corner)
    if like is not None:
        env._shared = like._shared
    return env


def _statics(model, q0, strokes, names, n, margin, axes, points, smap, link, p):
    """The grid (``_grid``) and its statics (``StallEnvelopes``): X, Q, lip, unit wrenches, loop forces, U,
    the cylinder forces at rest u0 (M, p), W0, W1."""
    from urdf_dyn.constraints.inverse import actuator_forces
    X, Q = _grid(model, q0, strokes, names, n, margin, axes, points, smap)
    M = len(Q)
    lf = model.link(link)
    T = body_poses(model, Q)[:, lf.body] @ np.asarray(lf.T_body_link)
    R = T[:, :3, :3]
    lip = np.einsum("mij,j->mi", R, p) + T[:, :3, 3]
    wr = [np.concatenate([np.cross(p, R[:, i, :]), R[:, i, :]], axis=1) for i in range(3)]   # Rᵀ e_i at the lip
    Q4, z4 = np.concatenate([Q] * 4), np.zeros((4 * M, Q.shape[1]))     # at rest and per unit force: one call
    a = actuator_forces(model, Q4, z4, z4, warn=False, f_ext={link: np.concatenate([np.zeros((M, 6)), *wr])})
    u = np.asarray(a.u, float).reshape(4, M, len(names))
    U = np.moveaxis(u[1:] - u[0], 0, 2)                                  # (M, p, 3)
    LF = {key: {lp: np.asarray(v)[k * M:(k + 1) * M] for lp, v in a.loop_forces.items()}
          for k, key in enumerate(("g", 0, 1, 2))}
    W0 = base_reaction(model, Q)
    W1 = np.zeros((M, 6, 3))                 # ground reaction per unit lip force: −[lip × e_i; e_i] (at rest the
    for i in range(3):                       # applied wrench is balanced by the ground alone, RBDA eq. 2.77 summed)
        e = np.zeros(3)
        e[i] = 1.0
        W1[:, :3, i] = -np.cross(lip, e)
        W1[:, 3 + i, i] = -1.0
    return X, Q, lip, wr, LF, U, u[0], W0, W1


def _actuator_names(model):
    from urdf_dyn.constraints.inverse import actuators_of
    return tuple(a.name for a in actuators_of(model))
