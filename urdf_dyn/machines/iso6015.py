"""ISO 6015 digging (tool) forces of a hydraulic excavator from its closed-loop model.

Definitions (ISO 6015:2006 §3, adopted as AS ISO 6015:2021; SAE J1179 §3.3, which ISO 6015 superseded):

- **bucket digging force** — the force at the bucket's cutting edge produced by the bucket cylinder(s) at
  working (relief) pressure, tangent to the arc of the bucket tip radius about the bucket pivot, the bucket
  positioned for the maximum output moment of its cylinder and linkage (SAE J1179 §3.3.1);
- **arm (stick) crowding force** — the force at the cutting edge produced by the stick cylinder(s) at relief
  pressure, tangent to the arc about the stick pivot, the bucket positioned as for the bucket force and the
  stick for the maximum output moment of its cylinder (SAE J1179 §3.3.2, as we read it: the stored
  excerpt stops after §3.3.1);
- weights and friction are excluded (SAE J1179 §3.3); the other circuits must hold the reaction without
  exceeding their holding pressure (reported here: ``holding_bar``, and applied when ``holding_pressure``
  is given).

**Method (virtual work through the loop constraints, no hand geometry).** Take the actuated joints
y = (swing, boom, stick and bucket cylinder strokes) as independent coordinates. At an assembled pose q,
the explicit constraint q̇ = G ẏ (RBDA eq. 8.42, ``explicit_constraint(..., independent=y)``) and the
tip's linear Jacobian J_tip (3 × nv) give the tip velocity per actuator velocity, J_y = J_tip G (3 × 4).
With every other actuator locked, the tip moves along J_y[:, c] when cylinder c strokes; its path is the
arc about the bucket pivot (bucket cylinder) or the stick pivot (stick cylinder). Virtual work of a static
tip force f against the cylinder forces u (weights excluded) gives u + J_yᵀ f = 0, so the tangential tip
force a cylinder force u_c balances is

    F_c = u_c / |J_y[:, c]|,      u_c = p_relief · A_cap · count,

and the holding cylinders carry u_o = F_c · J_y[:, o] · d, d = J_y[:, c] / |J_y[:, c]| (positive: push,
cap side; negative: pull, rod side).  Cylinder extension digs (the cap side pushes, as Cat computes it:
Caterpillar Performance Handbook ed. 47, p. 7-185 "Curl and Crowd Forces", cylinder force = working
relief pressure × head-end area).

Poses: the strokes are swept over their URDF joint limits (the cylinder strokes); every pose is assembled
holding the strokes by Gauss–Newton on the loop residuals (K's free columns; ``assemble`` if it fails),
warm-started from the neighbouring pose so that the assembly branch is tracked continuously; the levers of
a whole sweep or grid are computed as one batch (``_levers``). The envelope is the grid boom × stick × bucket stroke; the plot
shows, per tip position cell of the side view, the largest force any pose reaching it can exert.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.algorithms.kinematics import body_poses, link_jacobian, link_pose, support_path
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.constraints.explicit import explicit_constraint
from urdf_dyn.constraints.loops import LoopState

__all__ = ["TipLever", "tip_lever", "StrokeMap", "DiggingForces", "digging_forces", "CAT320_ISO6015"]

#: CAT 320 data sheet ISO 6015 digging forces [N] (Reach boom 5.7 m, R2.9 stick, HD bucket tip radius
#: 1470 mm): bucket 140.5 kN (31 586 lbf), stick 106.7 kN (23 987 lbf) — robots/excavator.urdf header [1].
CAT320_ISO6015 = {"bucket_N": 140.5e3, "arm_N": 106.7e3}


@dataclass
class TipLever:
    """Velocity ratios at one assembled pose. q (nv,); tip (3,) [m] tip position in root coordinates;
    names: the independent coordinates y; J (3, k) [m/m or m/rad] tip velocity per unit ẏ."""
    q: np.ndarray
    tip: np.ndarray
    names: tuple
    J: np.ndarray

    def ratio(self, name) -> float:
        """|d tip / d y_name| [m/m]: the tip's arc length per metre of stroke."""
        return float(np.linalg.norm(self.J[:, self.names.index(name)]))

    def tip_force(self, name, u) -> float:
        """Tangential tip force [N] balanced by actuator force u [N] of ``name`` (others locked)."""
        return float(u) / self.ratio(name)

    def holding_forces(self, name, F) -> dict:
        """Forces [N] the other actuators carry when the tip resists ``name``'s motion with force F [N]."""
        c = self.names.index(name)
        d = self.J[:, c] / np.linalg.norm(self.J[:, c])
        return {o: float(F * self.J[:, k] @ d) for k, o in enumerate(self.names) if k != c}


def tip_lever(model, q, actuators, tip=("bucket", (1.47, 0.0, 0.0))) -> TipLever:
    """TipLever at an assembled pose q (nv,): J_y = J_tip G (module docstring). ``tip`` = (link, point (3,)
    [m] in the link frame); ``actuators`` = the independent coordinates (joint names)."""
    link, p = tip[0], np.asarray(tip[1], float)
    T = link_pose(model, q, link)
    J6 = link_jacobian(model, q, link, frame="local_world_aligned")
    r = T[:3, :3] @ p
    Jt = J6[3:] + np.cross(J6[:3].T, r).T          # v_tip = v_origin + ω × r
    G = explicit_constraint(model, q, np.zeros(model.nv), independent=tuple(actuators)).G
    return TipLever(np.asarray(q, float).copy(), T[:3, 3] + r, tuple(actuators), Jt @ G)


def _close(model, q, hold, free, rcond=1e-8, maxit=25):
    """Assembled q (nv,) near the guess q holding the joints ``hold``: Gauss–Newton on the loop residuals
    δ(q) = 0 over the ``free`` columns of K (RBDA §8.3; K = ∂δ/∂q, eq. 8.14), steps by least squares
    (overconstrained planar loops have dependent rows). From a neighbouring assembled pose it converges in
    two or three steps to the pose ``assemble`` finds (same branch, same solution to rounding); if it does
    not converge, ``assemble`` (scipy least squares) decides."""
    x = np.array(q, float)
    for _ in range(maxit):
        st = LoopState(model, x)
        d = st.deltas()
        if np.max(np.abs(d), initial=0.0) <= 1e-14:     # closed to rounding (e.g. composed group poses)
            return x
        dx = np.linalg.lstsq(st.K_k()[0][:, free], -d, rcond=rcond)[0]
        x[free] += dx
        if np.max(np.abs(dx), initial=0.0) <= 1e-13 * (1.0 + np.max(np.abs(x[free]), initial=0.0)):
            if np.max(np.abs(LoopState(model, x).deltas()), initial=0.0) <= 1e-9:
                return x
            break
    return assemble(model, q, hold=hold)


def _cross(a, b):
    """Row-wise a × b of (N, 3) arrays (np.cross costs ~10 µs a call in argument handling alone)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1], a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


def _tip_jacobian(model, Q, tip):
    """Tip positions P (N, 3) [m] and linear Jacobians J_tip (N, 3, nv) in root coordinates at poses Q (N, nv),
    from the body poses of the whole batch (v_tip = Σ_j S_j q̇_j along the tip's support path: ω × r for
    revolute, the axis for prismatic joints); None for other joint types on the path or nq ≠ nv."""
    link, p = tip[0], np.asarray(tip[1], float)
    lf = model.link(link)
    path = support_path(model, link)
    if path is None:
        return None
    T = body_poses(model, Q)                                 # (N, NB+1, 4, 4)
    TL = T[:, lf.body] @ np.asarray(lf.T_body_link)
    P = TL[:, :3, :3] @ p + TL[:, :3, 3]
    Jt = np.zeros((len(Q), 3, model.nv))
    for i in path:
        a = T[:, i, :3, :3] @ np.asarray(model.axis[i], float)
        Jt[:, :, i - 1] = _cross(a, P - T[:, i, :3, 3]) if model.jtype[i] == 0 else a
    return P, Jt


def _levers(model, Q, actuators, tip, rcond=1e-8, hold=None) -> list:
    """TipLever at each assembled pose of Q (N, nv), batched: the same J_y = J_tip G as ``tip_lever``, with
    J_tip from the body poses of the whole batch (v_tip = Σ_j S_j q̇_j along the tip's support path: ω × r
    for revolute, the axis for prismatic joints) and G from the free columns of K (G_y = I, G_free =
    −K_free⁺ K_y, which is eq. 8.42's G wherever the actuators are a valid independent set; the
    pseudo-inverses of the whole batch in one call). One loop evaluation per pose gives K and δ: with
    ``hold`` (the held joints), a pose whose loops are open by more than 1e-12 is first closed (``_close``)
    — so that composed poses (``StrokeMap.compose``) need no separate check. Falls back to ``tip_lever`` for
    joint types other than revolute and prismatic."""
    Q = np.array(np.atleast_2d(np.asarray(Q, float)))
    acts = tuple(actuators)
    yi = [model.joint_index(a) for a in acts]
    free = [j for j in range(model.nv) if j not in yi]
    if model.has_constraints:
        Ks = []
        for k in range(len(Q)):
            st = LoopState(model, Q[k])
            if hold is not None and np.max(np.abs(st.deltas()), initial=0.0) > 1e-12:
                Q[k] = _close(model, Q[k], hold, free)
                st = LoopState(model, Q[k])
            Ks.append(st.K_k()[0])
    PJ = _tip_jacobian(model, Q, tip)
    if PJ is None:
        return [tip_lever(model, q, acts, tip) for q in Q]
    P, Jt = PJ
    G = np.zeros((len(Q), model.nv, len(yi)))
    G[:, yi, range(len(yi))] = 1.0
    if model.has_constraints and len(Q):
        K = np.array(Ks)                                     # (N, rows, nv)
        G[:, free] = -np.linalg.pinv(K[:, :, free], rcond=rcond) @ K[:, :, yi]
    J = Jt @ G
    return [TipLever(Q[k].copy(), P[k], acts, J[k]) for k in range(len(Q))]


@dataclass
class DiggingForces:
    """ISO 6015 digging forces of a model (module docstring). Forces [N], positions [m], pressures [bar].

    bucket_N, arm_N: the ISO figures (maximum at the ISO positions); bucket_pose, arm_pose: q (nv,) there;
    bucket_tip, arm_tip (3,): tip position there; holding_bar: {"bucket"|"arm": {actuator: pressure}} in
    the holding cylinders at those positions (positive cap side, negative rod side);
    strokes: {actuator: (n,)} sweep values [m]; bucket_curve (n_bucket,), arm_curve (n_stick,): force
    along each 1-D sweep at the ISO positions; grid_tip (M, 3) tip positions of the envelope grid,
    grid_bucket_N, grid_arm_N (M,) the forces there; reference: data-sheet figures for comparison."""
    bucket_N: float
    arm_N: float
    bucket_pose: np.ndarray
    arm_pose: np.ndarray
    bucket_tip: np.ndarray
    arm_tip: np.ndarray
    holding_bar: dict
    strokes: dict
    bucket_curve: np.ndarray
    arm_curve: np.ndarray
    grid_tip: np.ndarray
    grid_bucket_N: np.ndarray
    grid_arm_N: np.ndarray
    relief_pressure: float
    reference: dict = field(default_factory=lambda: dict(CAT320_ISO6015))
    pivots: dict = field(default_factory=dict)

    def table(self) -> str:
        """Markdown: ours vs the reference figures."""
        rows = ["| ISO 6015 force | this model | data sheet | difference |", "|---|---:|---:|---:|"]
        for key, label in (("bucket_N", "bucket digging force"), ("arm_N", "arm (stick) crowding force")):
            ours, ref = getattr(self, key), self.reference.get(key)
            rows.append(f"| {label} | {ours / 1e3:.1f} kN | "
                        + (f"{ref / 1e3:.1f} kN | {100 * (ours - ref) / ref:+.1f} % |" if ref else "– | – |"))
        return "\n".join(rows)

    def plot_envelope(self, path, title=None):
        """PNG: digging force over the side-view reach envelope (bucket left, stick right): each cell shows
        the largest force of the poses whose tip lies in it; the ISO positions are marked. Returns path."""
        from urdf_dyn.reports.plotting import figure, save_figure
        x, z = self.grid_tip[:, 0], self.grid_tip[:, 2]
        fig, axes = figure((11, 5.6), 1, 2, sharey=True, left=0.7, right=0.1, top=0.65, bottom=0.55, wspace=0.5)
        axes = axes[0]
        for ax, F, iso, tipiso, lab in ((axes[0], self.grid_bucket_N, self.bucket_N, self.bucket_tip, "bucket"),
                                        (axes[1], self.grid_arm_N, self.arm_N, self.arm_tip, "arm (stick)")):
            hb = ax.hexbin(x, z, C=F / 1e3, reduce_C_function=np.max, gridsize=28, cmap="viridis", mincnt=1)
            fig.colorbar(hb, ax=ax, label=f"{lab} digging force [kN]", shrink=0.85)
            ax.plot(tipiso[0], tipiso[2], "r*", ms=14, label=f"ISO position: {iso / 1e3:.1f} kN")
            ref = self.reference.get("bucket_N" if lab == "bucket" else "arm_N")
            if ref:
                ax.plot([], [], " ", label=f"data sheet: {ref / 1e3:.1f} kN")
            for nm, P in self.pivots.items():
                ax.plot(P[0], P[2], "ko", ms=4)
            ax.axhline(0, color="0.3", lw=1)
            ax.axvline(0, color="0.6", lw=0.8, ls=":")
            ax.set_aspect("equal")
            ax.set_xlabel("tip reach from swing axis x [m]")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, loc="upper right")
            ax.set_title(f"{lab} cylinder at {self.relief_pressure / 1e6:.0f} MPa", fontsize=9)
        axes[0].set_ylabel("tip height above ground z [m]")
        fig.suptitle(title or "ISO 6015 digging forces over the working range (max per cell)", fontsize=10)
        return save_figure(fig, path)


class StrokeMap:
    """Assembled poses as a function of the cylinder strokes, on one assembly branch.

    Each cylinder in ``strokes`` (one of ``hold``) is swept alone from q0 over its URDF limits (less
    ``margin``) in steps of at most ``step`` [m], up and down from q0's stroke, each sweep one call of the
    compiled trajectory path (``_sweep``: Newton from the previous poses), so the branch of q0 is tracked
    continuously. The joints each sweep moves form that cylinder's group
    (an excavator's loops close within the boom, stick or bucket linkage, so the groups are disjoint).
    ``pose(values)`` starts from the group values of the nearest sweep samples and re-assembles, which
    stays on the branch; the assembled group values are remembered per (cylinder, stroke), so that a grid
    over the strokes assembles each group once per stroke value and composes the rest. Raises ModelError if a pose cannot be assembled."""

    def __init__(self, model, q0, strokes, hold, step=0.01, margin=1e-3):
        self.model, self.q0, self.hold = model, np.asarray(q0, float).copy(), tuple(hold)
        self.idx, self.values, self.poses, self.groups, self.slopes = {}, {}, {}, {}, {}
        held = [model.joint_index(j) for j in self.hold]
        self._free = [i for i in range(model.nv) if i not in held]
        self._done = {}                                   # (cylinder, stroke) -> assembled group values
        for c in strokes:
            i = model.joint_index(c)
            lo, hi = model.lower[i] + margin, model.upper[i] - margin
            k = max(2, int(np.ceil((hi - lo) / step)) + 1)
            v = np.linspace(lo, hi, k)
            k0 = int(np.argmin(np.abs(v - self.q0[i])))
            P, D = np.empty((k, model.nv)), np.empty((k, model.nv))
            for rng in (np.arange(k0, k), np.arange(k0, -1, -1)):
                P[rng], D[rng] = self._sweep(c, v[rng])
            self.idx[c], self.values[c], self.poses[c], self.slopes[c] = i, v, P, D
            self.groups[c] = np.flatnonzero(np.ptp(P, axis=0) > 1e-12)

    def _sweep(self, c, x):
        """Assembled poses (len(x), nv) along strokes x of cylinder c from q0, the others held, and their
        derivatives dq/dx (len(x), nv) (G's column of c, RBDA eq. 8.42): one call of the compiled trajectory
        path (``consistent_motion``: the first pose by ``assemble``, then Newton from the previous poses
        extrapolated with q̇ = G ẏ, q̈ = g, ẏ = ±1 m/m), which tracks q0's branch."""
        from urdf_dyn.constraints.motion import CoordinateMotion, consistent_motion
        col = self.hold.index(c)
        Y = np.tile(self.q0[[self.model.joint_index(j) for j in self.hold]], (len(x), 1))
        Y[:, col] = x
        YD = np.zeros_like(Y)
        YD[:, col] = 1.0 if len(x) < 2 or x[1] > x[0] else -1.0
        Q, QD, _ = consistent_motion(self.model, CoordinateMotion(self.hold, np.abs(x - x[0]), Y, YD,
                                                                  np.zeros_like(Y)), q_start=self.q0)
        return Q, QD * YD[0, col]

    def limits(self, c):
        """(lower, upper) stroke [m] swept for cylinder c."""
        return float(self.values[c][0]), float(self.values[c][-1])

    def pose(self, values: dict, q=None):
        """Assembled q (nv,) with the given strokes {cylinder: value [m]} (others as in ``q`` or q0)."""
        q = (self.q0 if q is None else np.asarray(q, float)).copy()
        for c, x in values.items():
            g, known = self.groups[c], self._done.get((c, float(x)))
            if known is not None:
                q[g] = known
            else:
                q[g] = self._hermite(c, x)[0][g]
            q[self.idx[c]] = x
        q = _close(self.model, q, self.hold, self._free)
        if len(self._done) < 100_000:
            for c, x in values.items():
                self._done[(c, float(x))] = q[self.groups[c]]
        return q

    def _hermite(self, c, x):
        """Cubic Hermite interpolation of cylinder c's sweep at stroke x [m] from the poses and their
        derivatives at the two nearest samples: (q (nv,), dq/dx (nv,)), within ~h⁴ (h ≤ ``step``) of the
        assembled pose; q is only read on c's group."""
        v, P, D = self.values[c], self.poses[c], self.slopes[c]
        j = int(np.clip(np.searchsorted(v, x), 1, len(v) - 1))
        h = v[j] - v[j - 1]
        t = (x - v[j - 1]) / h
        t2, t3 = t * t, t * t * t
        q = (2 * t3 - 3 * t2 + 1) * P[j - 1] + (t3 - 2 * t2 + t) * h * D[j - 1] + (3 * t2 - 2 * t3) * P[j] \
            + (t3 - t2) * h * D[j]
        dq = ((6 * t2 - 6 * t) * (P[j - 1] - P[j]) / h + (3 * t2 - 4 * t + 1) * D[j - 1] + (3 * t2 - 2 * t) * D[j])
        return q, dq

    def interpolate(self, values: dict, q=None):
        """A pose (nv,) with the given strokes {cylinder: value [m]} by cubic Hermite interpolation of the
        sweeps (``_hermite``: not closed; measured within 5e-10 rad | m of ``pose``'s at a 1 mm step, 4e-6 at
        1 cm near the stroke ends) and the columns
        of G {cylinder: dq/dx (nv,)} there: cheap evaluations for the solvers, whose results are then
        assembled with ``pose``."""
        q = (self.q0 if q is None else np.asarray(q, float)).copy()
        cols = {}
        for c, x in values.items():
            g = self.groups[c]
            qc, dq = self._hermite(c, float(x))
            q[g] = qc[g]
            q[self.idx[c]] = x
            cols[c] = np.zeros(self.model.nv)
            cols[c][g] = dq[g]
            cols[c][self.idx[c]] = 1.0
        return q, cols

    def compose(self, grid, q=None):
        """Poses (M, nv) for a list of stroke dicts (``pose``'s argument): a pose whose every stroke value
        was assembled before is composed from the remembered group values without a closing pass (the
        loops close within each group, so it is closed to rounding); give the result to ``_levers`` with
        ``hold`` to have any pose that is not closed closed there. The others go through ``pose``."""
        base = (self.q0 if q is None else np.asarray(q, float))
        out = np.empty((len(grid), self.model.nv))
        for k, values in enumerate(grid):
            known = [self._done.get((c, float(x))) for c, x in values.items()]
            if all(v is not None for v in known):
                out[k] = base
                for (c, x), v in zip(values.items(), known):
                    out[k, self.groups[c]] = v
                    out[k, self.idx[c]] = x
            else:
                out[k] = self.pose(values, q)
        return out


def digging_forces(model, cylinders, relief_pressure=35e6, tip=("bucket", (1.47, 0.0, 0.0)),
                   actuators=("swing", "boom_cyl", "stick_cyl", "bucket_cyl"), boom="boom_cyl",
                   stick="stick_cyl", bucket="bucket_cyl", n=(9, 13, 17), holding_pressure=None, q0=None,
                   margin=1e-3, reference=None) -> DiggingForces:
    """ISO 6015 bucket and arm digging forces and their envelope over the working range.

    Args:
        model: a loaded excavator Model with cylinders as prismatic tree joints (robots/excavator.urdf).
        cylinders: {actuator name: urdf_dyn.machines.sizing.Cylinder(bore, rod, count)} [m]; the
            bucket and stick cylinders are required.
        relief_pressure: working relief pressure [Pa] (CAT 320: 35 MPa).
        tip: (link, point (3,) [m] in its frame) of the cutting edge; default the model's bucket tip
            radius 1.47 m along the bucket link's x axis (CAT 320 HD bucket).
        actuators: the independent coordinates (swing and the three strokes), in the model's joint names.
        n: number of stroke samples (boom, stick, bucket) for the envelope grid; the 1-D sweeps that find
            the ISO positions use 4× as many.
        holding_pressure: if given [Pa], the forces are limited so that no holding cylinder exceeds it
            (SAE J1179 §3.3); otherwise the holding pressures are only reported.
        q0: start pose (default the URDF initial configuration); margin [m]: stay this far inside the
            stroke limits.
    Returns DiggingForces. Raises KeyError for unknown actuator or cylinder names, ModelError if a pose
    cannot be assembled."""
    for c in (bucket, stick):
        if c not in cylinders:
            raise KeyError(f"digging_forces needs the {c!r} cylinder in cylinders (got {', '.join(cylinders)})")
    acts = tuple(actuators)
    q0 = model.q_initial() if q0 is None else np.asarray(q0, float)
    u = {c: relief_pressure * cylinders[c].cap_area for c in (bucket, stick)}

    def capacity(o, f):  # holding capacity [N] of actuator o carrying force f
        cyl = cylinders.get(o)
        if cyl is None or holding_pressure is None:
            return np.inf
        return holding_pressure * (cyl.cap_area if f > 0 else cyl.annulus_area)

    def force(lv, c):
        F = lv.tip_force(c, u[c])
        for o, f in lv.holding_forces(c, F).items():
            if f != 0 and np.isfinite(capacity(o, f)):
                F = min(F, F * capacity(o, f) / abs(f))
        return F

    def forces(lvs, c):  # force() of many levers at once
        J = np.array([lv.J for lv in lvs]).reshape(len(lvs), 3, len(acts))
        ci = acts.index(c)
        n = np.linalg.norm(J[:, :, ci], axis=1)
        F = u[c] / n
        if holding_pressure is None:
            return F
        f_all = F[:, None] * np.einsum("mik,mi->mk", J, J[:, :, ci] / n[:, None])   # holding_forces
        for k, o in enumerate(acts):
            if k == ci or o not in cylinders:
                continue
            f = f_all[:, k]
            cap = holding_pressure * np.where(f > 0, cylinders[o].cap_area, cylinders[o].annulus_area)
            nz = f != 0
            F = np.where(nz, np.minimum(F, F * cap / np.where(nz, np.abs(f), 1.0)), F)
        return F

    smap = StrokeMap(model, q0, (boom, stick, bucket), acts, margin=margin)
    # 1-D sweeps for the ISO positions: bucket stroke first (stick, boom as in q0), then the stick stroke
    fine = {c: np.linspace(*smap.limits(c), 4 * k) for c, k in zip((boom, stick, bucket), n)}
    qs_b = [smap.pose({bucket: x}) for x in fine[bucket]]
    lv_b = _levers(model, qs_b, acts, tip)
    Fb = forces(lv_b, bucket)
    kb = int(np.argmax(Fb))

    def bar(lv, c, F):
        return {o: f / (cylinders[o].cap_area if f > 0 else cylinders[o].annulus_area) / 1e5
                for o, f in lv.holding_forces(c, F).items() if o in cylinders}

    def least_holding(lvs, c):
        # the lever whose holding cylinders need the least pressure: smallest maximum, ties (within 1e-9,
        # e.g. boom strokes that do not change the largest holding pressure) broken by the next largest
        P = [sorted((abs(v) for v in bar(lv, c, lv.tip_force(c, u[c])).values()), reverse=True) or [0.0]
             for lv in lvs]
        top = min(x[0] for x in P)
        tied = [k for k in range(len(lvs)) if P[k][0] <= top * (1 + 1e-9)]
        return lvs[min(tied, key=lambda k: P[k][1:])]

    coarse = {c: np.linspace(*smap.limits(c), k) for c, k in zip((boom, stick, bucket), n)}
    # the bucket force does not depend on the (locked) boom and stick strokes: among them take the pose
    # whose holding cylinders need the least pressure (SAE J1179 §3.3: no holding circuit over its limit)
    for x in coarse[boom]:                 # each stroke of the grids assembled once, then composed
        smap.pose({boom: x})
    for x in coarse[stick]:
        smap.pose({stick: x})
    for x in coarse[bucket]:
        smap.pose({bucket: x})
    cands = smap.compose([{boom: xb, stick: xs, bucket: fine[bucket][kb]} for xb in coarse[boom] for xs in coarse[stick]])
    lvs = _levers(model, cands, acts, tip, hold=acts)
    lv_bk = least_holding(lvs, bucket)
    # the arm force: stick stroke swept with the bucket at its ISO position; the boom stroke (the arm force
    # does not depend on it) chosen for the least holding pressure
    qs_s = [smap.pose({stick: x}, q=lv_bk.q) for x in fine[stick]]
    lv_s = _levers(model, qs_s, acts, tip)
    Fs = forces(lv_s, stick)
    ks = int(np.argmax(Fs))
    cands = [smap.pose({boom: xb}, q=qs_s[ks]) for xb in coarse[boom]]
    lvs = _levers(model, cands, acts, tip)
    lv_sk = least_holding(lvs, stick)
    Fb_iso, Fs_iso = force(lv_bk, bucket), force(lv_sk, stick)

    # envelope grid over the three strokes
    grid = smap.compose([{boom: xb, stick: xs, bucket: xk}
                         for xb in coarse[boom] for xs in coarse[stick] for xk in coarse[bucket]])
    lvs = _levers(model, grid, acts, tip, hold=acts)
    tips, GB, GS = [lv.tip for lv in lvs], forces(lvs, bucket), forces(lvs, stick)
    pivots = {}
    for nm in ("boom", "stick", "bucket"):
        if nm in model.links:
            pivots[nm] = link_pose(model, lv_sk.q, nm)[:3, 3]
    return DiggingForces(
        bucket_N=float(Fb_iso), arm_N=float(Fs_iso), bucket_pose=lv_bk.q, arm_pose=lv_sk.q,
        bucket_tip=lv_bk.tip, arm_tip=lv_sk.tip,
        holding_bar={"bucket": bar(lv_bk, bucket, Fb_iso), "arm": bar(lv_sk, stick, Fs_iso)},
        strokes={bucket: fine[bucket], stick: fine[stick]}, bucket_curve=Fb, arm_curve=Fs,
        grid_tip=np.array(tips), grid_bucket_N=np.array(GB), grid_arm_N=np.array(GS),
        relief_pressure=float(relief_pressure), reference=dict(CAT320_ISO6015 if reference is None else reference),
        pivots=pivots)
