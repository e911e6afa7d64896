"""Assembled poses of a closed-loop machine over its actuator strokes, and the tip's velocity ratios there.

``StrokeMap`` sweeps each cylinder stroke with the compiled trajectory path (``consistent_motion``) and
composes grids of poses from the sweeps; ``tip_levers`` gives, for a batch of assembled poses, the tip
position and J_y = J_tip G (RBDA eq. 8.42: the tip velocity per unit actuator velocity, every other actuator
locked). Used by the ISO 6015 digging forces, the ISO 10567 lift chart and the ISO 7135 working ranges.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.algorithms.kinematics import body_poses, link_jacobian, link_pose, support_path
from urdf_dyn.algorithms.spatial_rows import cross3
from urdf_dyn.constraints.assembly import assemble
from urdf_dyn.constraints.explicit import explicit_constraint
from urdf_dyn.constraints.loops import LoopState

__all__ = ["TipLever", "tip_lever", "close_loops", "tip_jacobian", "point_jacobian", "tip_levers", "StrokeMap"]

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


def tip_lever(model, q, actuators, tip) -> TipLever:
    """TipLever at an assembled pose q (nv,): J_y = J_tip G (module docstring). ``tip`` = (link, point (3,)
    [m] in the link frame); ``actuators`` = the independent coordinates (joint names)."""
    link, p = tip[0], np.asarray(tip[1], float)
    T = link_pose(model, q, link)
    J6 = link_jacobian(model, q, link, frame="local_world_aligned")
    r = T[:3, :3] @ p
    Jt = J6[3:] + np.cross(J6[:3].T, r).T          # v_tip = v_origin + ω × r
    G = explicit_constraint(model, q, np.zeros(model.nv), independent=tuple(actuators)).G
    return TipLever(np.asarray(q, float).copy(), T[:3, 3] + r, tuple(actuators), Jt @ G)


def close_loops(model, q, hold, free, rank_rtol=1e-8, maxit=25):
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
        dx = np.linalg.lstsq(st.K_k()[0][:, free], -d, rcond=rank_rtol)[0]
        x[free] += dx
        if np.max(np.abs(dx), initial=0.0) <= 1e-13 * (1.0 + np.max(np.abs(x[free]), initial=0.0)):
            if np.max(np.abs(LoopState(model, x).deltas()), initial=0.0) <= 1e-9:
                return x
            break
    return assemble(model, q, hold=hold)


def tip_jacobian(model, Q, tip):
    """Tip positions P (N, 3) [m] and linear Jacobians J_tip (N, 3, nv) in root coordinates at poses Q (N, nv),
    from the body poses of the whole batch (v_tip = Σ_j S_j q̇_j along the tip's support path: ω × r for
    revolute, the axis for prismatic joints); None for other joint types on the path or nq ≠ nv."""
    if support_path(model, tip[0]) is None:
        return None
    return point_jacobian(model, body_poses(model, Q), tip)


def point_jacobian(model, T, tip):
    """``tip_jacobian`` from body poses T (N, NB+1, 4, 4) already computed (``body_poses``): several points
    at the same poses then share one forward-kinematics pass. Returns (P (N, 3), J_tip (N, 3, nv)); None
    for other joint types than revolute and prismatic on the tip's support path."""
    link, p = tip[0], np.asarray(tip[1], float)
    lf = model.link(link)
    path = support_path(model, link)
    if path is None:
        return None
    TL = T[:, lf.body] @ np.asarray(lf.T_body_link)
    P = TL[:, :3, :3] @ p + TL[:, :3, 3]
    Jt = np.zeros((len(T), 3, model.nv))
    for i in path:
        a = T[:, i, :3, :3] @ np.asarray(model.axis[i], float)
        Jt[:, :, i - 1] = cross3(a, P - T[:, i, :3, 3]) if model.jtype[i] == 0 else a
    return P, Jt


def tip_levers(model, Q, actuators, tip, rank_rtol=1e-8, hold=None) -> list:
    """TipLever at each assembled pose of Q (N, nv), batched: the same J_y = J_tip G as ``tip_lever``, with
    J_tip from the body poses of the whole batch (v_tip = Σ_j S_j q̇_j along the tip's support path: ω × r
    for revolute, the axis for prismatic joints) and G from the free columns of K (G_y = I, G_free =
    −K_free⁺ K_y, which is eq. 8.42's G wherever the actuators are a valid independent set; the
    pseudo-inverses of the whole batch in one call). One loop evaluation per pose gives K and δ: with
    ``hold`` (the held joints), a pose whose loops are open by more than 1e-12 is first closed (``close_loops``)
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
                Q[k] = close_loops(model, Q[k], hold, free)
                st = LoopState(model, Q[k])
            Ks.append(st.K_k()[0])
    PJ = tip_jacobian(model, Q, tip)
    if PJ is None:
        return [tip_lever(model, q, acts, tip) for q in Q]
    P, Jt = PJ
    G = np.zeros((len(Q), model.nv, len(yi)))
    G[:, yi, range(len(yi))] = 1.0
    if model.has_constraints and len(Q):
        K = np.array(Ks)                                     # (N, rows, nv)
        G[:, free] = -np.linalg.pinv(K[:, :, free], rcond=rank_rtol) @ K[:, :, yi]
    J = Jt @ G
    return [TipLever(Q[k].copy(), P[k], acts, J[k]) for k in range(len(Q))]




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

    def assembled(self, cylinder: str, stroke: float) -> bool:
        """Whether the group of ``cylinder`` was assembled at ``stroke`` [m] and is remembered (``pose`` then
        reuses it instead of closing it again, which would move it by round-off)."""
        return (cylinder, float(stroke)) in self._done

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
        q = close_loops(self.model, q, self.hold, self._free)
        if len(self._done) < 100_000:
            for c, x in values.items():
                self._done[(c, float(x))] = q[self.groups[c]]
        return q

    def _hermite(self, c, x):
        """Cubic Hermite interpolation of cylinder c's sweep at stroke x [m] from the poses and their
        derivatives at the two nearest samples: (q (nv,), dq/dx (nv,)), within ~h⁴ (h ≤ ``step``) of the
        assembled pose; q is only read on c's group."""
        v, P, D = self.values[c], self.poses[c], self.slopes[c]
        j = min(max(int(np.searchsorted(v, x)), 1), len(v) - 1)   # = np.clip(..., 1, len(v) - 1), without its overhead
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
        loops close within each group, so it is closed to rounding); give the result to ``tip_levers`` with
        ``hold`` to have any pose that is not closed closed there. The others go through ``pose``."""
        base = (self.q0 if q is None else np.asarray(q, float))
        out = self._compose_known(grid, base)
        if out is not None:
            return out
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

    def _compose_known(self, grid, base):
        """``compose`` of a grid whose dicts all name the same strokes, every value of which was assembled
        before: the same copies, a column block at a time (one group value lookup per distinct stroke value
        instead of one per pose). None when that does not apply (``compose`` then goes pose by pose)."""
        if not len(grid):
            return None
        keys = list(grid[0])
        if any(len(g) != len(keys) for g in grid):
            return None
        try:
            vals = np.array([[float(g[c]) for c in keys] for g in grid])
        except KeyError:
            return None
        tables = []
        for j, c in enumerate(keys):
            uniq, inv = np.unique(vals[:, j], return_inverse=True)
            known = [self._done.get((c, float(x))) for x in uniq]
            if any(v is None for v in known):
                return None
            tables.append((np.array(known).reshape(len(uniq), -1), inv.reshape(-1)))
        out = np.empty((len(grid), self.model.nv))
        out[:] = base
        for j, (c, (table, inv)) in enumerate(zip(keys, tables)):
            out[:, self.groups[c]] = table[inv]
            out[:, self.idx[c]] = vals[:, j]
        return out
