"""ISO 6015 tool (digging) forces of a hydraulic excavator from its closed-loop model.

**The standard's wording** (ISO 6015:2006, adopted identically as AS ISO 6015:2021; the clauses were read in
the stored public excerpts of the AS text, §3 and §4; §5 "Calculation methods" was not retrievable):

- §3.1 *tool force*: "force generated at the bucket lip or cutting edge, but not at the tips of the teeth,
  when operating the bucket or arm cylinders independently" — so the force acts at the **lip** (a point the
  caller gives: ``tip=(link, point)``), not at the tooth tip.
- §3.2 *arm cylinder tool force*: "force generated at the bucket lip with the arm cylinder positioned to
  provide a rotating moment around the arm pivot"; §4.8.2.1: "measure this tool force tangential to the arc
  described by the bucket lip about the arm pivot"; the bucket cylinder tool force likewise about the
  bucket pivot (§4.8.3.1, whose text was not in the stored excerpts; SAE J1179 §3.3.1 words it as the
  tangent to the arc of the tip radius about the bucket pivot).
- §3.16 *maximum relief circuit hydraulic pressure*: "maximum static pressure in a specific circuit limited
  by a relief valve"; §3.17 *hydraulic limit*: "condition when the tool forces are limited by maximum relief
  circuit pressure"; §4.5: "If the hydraulic limit condition is reached, the report should note the system
  or circuit in which the maximum relief circuit hydraulic pressure was exceeded." — the working cylinder
  is at its relief (``relief``) and **every holding cylinder at most at its own port relief**
  (``holding_relief``); the tool force is the largest at which no cylinder exceeds its limit, and
  ``limited_by`` names the circuit that binds.
- §3.18 *tipping limit*: "condition when the tool forces are limited by the onset of tipping of the
  machine"; §3.19 *slipping limit* (the machine slides): §4.5 has the machine anchored then, so slipping is
  not a limit of the figure here. Tipping is checked when a tipping polygon (``footprint``, the same one as
  the lift chart and the ZMP check: ``stability.tipping_polygon``) is given: the centre of pressure of the
  ground reaction under the machine's weight plus the tool force must stay inside it; ``limited_by`` is then
  ``"tipping"``.
- §4.4: "A series of preliminary tests shall be conducted with the equipment boom arm and bucket at
  different angles in relation to each other (i.e. by varying the cylinder stroke), in order to obtain the
  optimum position giving the maximum force. The position (angle) of the boom, arm and bucket at the optimum
  position shall be recorded." — ``digging_forces`` searches the stroke space for it, **for each tool force
  itself**, never inheriting the other case's position. The arm force's bucket stroke (``arm_bucket``):
  by default (``"max_moment"``) the stroke at which the bucket cylinder and its linkage give the largest
  output moment about the bucket pivot, SAE J1179 §3.3.1's position for the arm (dipper) force, which
  depends on the linkage alone and on no relief; ``"maximum"`` the stroke of the largest arm force (§4.4
  read literally: the bucket then leans on its own holding relief, §4.8.2.1's sentence on the bucket's
  position was cut off in the stored text); ``"bucket_force"`` the bucket force's stroke, the makers'
  convention ("with the bucket in a position calculated for max. breakout force", Liebherr, "Calculation of
  bucket forces"), to compare with a data sheet.

- **Component weights**: SAE J1179 §3.3 (which ISO 6015 superseded) excludes the weights of the
  attachment from the calculated forces; the stored ISO text does not say (its §5 was not retrievable). We
  leave them out by default (``include_weight=False``, the cylinders balance the tool force alone) and
  include them on request (the cylinder forces then add those that hold the machine's own weight,
  ``actuator_forces`` at rest). Tipping always counts the machine's weight (it is what resists tipping).

**Positions and ties.** A tool force is often flat along a locked stroke (without weights and tipping, the
boom stroke changes neither force), so many poses hold the same largest force. The tie-break is explicit
(``_pick``): among the poses within 1e-9 (relative) of the largest force, the one whose holding cylinders
need the least pressure — the largest holding pressure first, equal ones (to 0.01 bar) by the next largest —
and among those still equal, the smallest boom, then stick, then bucket stroke. The pose never depends on
the other case's search.

**Method.** At an assembled pose q with the actuated joints y as independent coordinates, the lip moves
along J_y[:, c] = J_lip G[:, c] (RBDA eq. 8.42) when cylinder c strokes with every other actuator locked:
that is the tangent to the arc about the bucket pivot (bucket cylinder) or the arm pivot (stick cylinder).
Cylinder extension digs (the cap side pushes, as Cat computes it: Performance Handbook ed. 47, p. 7-185).
The soil's reaction on the lip is f = −F d, d = J_y[:, c] / |J_y[:, c]|; the cylinder forces are linear in F,
u(F) = u_g + F a (u_g the weight share when included, 0 otherwise). ``digging_forces_at`` computes a with
closed-loop inverse dynamics under the external force (``actuator_forces``, RBDA eq. 8.63); the sweep of
``digging_forces`` with the same virtual-work identity a_k = J_y[:, k] · d (u + J_yᵀ f = 0), batched. Each
cylinder's limit is p_k,head A_cap (push) or −p_k,rod A_annulus (pull): ``relief`` for the working cylinder,
the line relief of the loaded side (``holding_relief``, one per cylinder
side as the machine's valve has them: ``reliefs``) for the others, so F is the smallest of the per-cylinder
bounds (and the tipping bound).
Pressures are positive on the cap side, negative on the rod side [bar].
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn._checks import renamed_keywords
from urdf_dyn.algorithms.kinematics import body_poses, link_pose
from urdf_dyn.machines.reliefs import plain_reliefs, pressure_limits, relief_text
from urdf_dyn.machines.stroke_map import StrokeMap, TipLever, tip_lever, tip_levers

__all__ = ["TipLever", "tip_lever", "StrokeMap", "DiggingForces", "digging_forces", "digging_forces_at", "ARM_BUCKET"]

#: how ``digging_forces`` positions the bucket for the arm force (module docstring, "Positions and ties")
ARM_BUCKET = ("max_moment", "maximum", "bucket_force")

_CASES = (("bucket", "bucket"), ("arm", "stick"))   # (ISO name, working-cylinder role)


def _pressure_limits(cylinders, relief, holding_relief):
    """{cylinder: (working head, working rod, holding head, holding rod)} [Pa] (``reliefs.pressure_limits``)."""
    return pressure_limits(cylinders, relief, holding_relief)


def _bounds(a, g, names, cylinders, limits, working):
    """Largest tool force F (N,) with g + F a within every cylinder's limit, and the index (N,) of the
    binding one. a, g (N, k) [N/N, N] per actuator ``names``; actuators not in ``cylinders`` are unlimited;
    ``limits`` as ``reliefs.pressure_limits``: a cylinder pushing (u > 0) is held to its head-end limit times
    the cap area, pulling to its rod-end limit times the annulus."""
    N, k = a.shape
    B = np.full((N, k), np.inf)
    for j, nm in enumerate(names):
        cyl = cylinders.get(nm)
        if cyl is None:
            continue
        Ph, Pr = limits[nm][:2] if nm == working else limits[nm][2:]
        with np.errstate(divide="ignore", invalid="ignore"):
            B[:, j] = np.where(a[:, j] > 1e-12, (Ph * cyl.cap_area - g[:, j]) / a[:, j],
                               np.where(a[:, j] < -1e-12, (-Pr * cyl.annulus_area - g[:, j]) / a[:, j], np.inf))
    i = np.argmin(B, axis=1)
    return B[np.arange(N), i], i


def _tipping_bound(model, Q, link, point, D, footprint, z_ground=0.0):
    """Largest tool force (N,) before the centre of pressure leaves ``footprint`` (``stability.tipping_load``)
    with the machine's weight and the force −F d at the lip (D (N, 3) unit directions in root axes)."""
    from urdf_dyn.machines.stability import base_reaction, tipping_load
    lf = model.link(link)
    Rs = (body_poses(model, Q)[:, lf.body] @ np.asarray(lf.T_body_link))[:, :3, :3]
    f = -np.einsum("nji,nj->ni", Rs, D)                     # Rᵀ (−d), in the link frame
    w = np.concatenate([np.cross(np.asarray(point, float), f), f], axis=1)
    W0 = np.atleast_2d(base_reaction(model, Q))
    W1 = np.atleast_2d(base_reaction(model, Q, f_ext={link: w})) - W0
    return tipping_load(W0, W1, footprint, z_ground)[0]


def _limit(limits, nm, working, bar):
    """The limit [Pa] of cylinder ``nm`` on the side its pressure ``bar`` (+ cap, − rod) loads."""
    lim = limits[nm][:2] if nm == working else limits[nm][2:]
    return lim[0] if bar > 0 else lim[1]


def _bar(u, cyl):
    return (u / cyl.cap_area if u > 0 else u / cyl.annulus_area) / 1e5


def digging_forces_at(model, q, cylinders, relief, holding_relief, tip, include_weight=False, footprint=None,
                      bucket="bucket_cyl", stick="stick_cyl") -> dict:
    """ISO 6015 bucket and arm tool forces at one assembled pose (module docstring).

    Args:
        model: an excavator Model whose actuators (URDF <transmission>s) include the cylinders.
        q: (nv,) assembled pose (loops closed).
        cylinders: {actuator: ``sizing.Cylinder``} [m]; ``bucket`` and ``stick`` name the working cylinders.
        relief: working relief [Pa] (e.g. the main relief, or a heavy-lift mode's); holding_relief: the holding cylinders' line (port) reliefs
            [Pa]: a number, {cylinder: Pa} or {cylinder: {"head": Pa, "rod": Pa}} per side
            (``reliefs.pressure_limits``; None: unlimited).
        tip: (link, point (3,) [m] in the link frame): the bucket lip (ISO 6015 §3.1).
        include_weight: add the cylinder forces that hold the machine's own weight (default: left out).
        footprint: tipping polygon (k, 2) [m] in root x–y; None: tipping not checked.
    Returns {"bucket"|"arm": {"force_N": F, "pressures_bar": {cylinder: bar (+ cap side, − rod side)},
    "limited_by": a cylinder name or "tipping", "at_limit": every cylinder within 0.1 % of its limit there
    (more than one where the optimum sits where two limits meet), "direction": (3,) unit vector of the lip's
    motion (the force on the lip is −F·direction), "lip": (3,) [m]}} in root coordinates.
    Raises KeyError for a missing cylinder, ValueError for a relief ≤ 0 or a pose whose loops are open."""
    from urdf_dyn.constraints.inverse import actuator_forces
    from urdf_dyn.constraints.loops import LoopState
    for c in (bucket, stick):
        if c not in cylinders:
            raise KeyError(f"digging_forces_at needs the {c!r} cylinder in cylinders (got {', '.join(cylinders)})")
    limits = _pressure_limits(cylinders, relief, holding_relief)
    q = np.asarray(q, float)
    if model.has_constraints and np.max(np.abs(LoopState(model, q).deltas()), initial=0.0) > 1e-8:
        raise ValueError("q is not assembled (loop residual > 1e-8): assemble it first (ud.assemble)")
    z = np.zeros(model.nv)
    # f_ext={}: the same (batch) path as the loaded call below, so that their difference holds no rounding
    # of two paths (the single-state path answers equally to 1e-12, but not bit for bit)
    a0 = actuator_forces(model, q, z, z, warn=False, f_ext={})
    names = tuple(a0.names)
    link, p = tip[0], np.asarray(tip[1], float)
    lv = tip_lever(model, q, names, (link, p))
    R = link_pose(model, q, link)[:3, :3]
    g = np.asarray(a0.u, float) if include_weight else np.zeros(len(names))
    out = {}
    for case, role in _CASES:
        c = bucket if role == "bucket" else stick
        d = lv.J[:, names.index(c)] / np.linalg.norm(lv.J[:, names.index(c)])
        f = R.T @ -d
        a1 = actuator_forces(model, q, z, z, warn=False, f_ext={link: np.r_[np.cross(p, f), f]})
        a = np.asarray(a1.u, float) - np.asarray(a0.u, float)
        F, i = _bounds(a[None], g[None], names, cylinders, limits, c)
        F, lim = float(F[0]), names[int(i[0])]
        if footprint is not None:
            Ft = float(_tipping_bound(model, q[None], link, p, d[None], footprint)[0])
            if Ft < F:
                F, lim = Ft, "tipping"
        F = max(F, 0.0)
        bars = {nm: _bar(g[k] + F * a[k], cylinders[nm]) for k, nm in enumerate(names) if nm in cylinders}
        at = [nm for nm, b in bars.items() if abs(b) >= (1 - 1e-3) * _limit(limits, nm, c, b) / 1e5]
        out[case] = dict(force_N=F, limited_by=lim, direction=d, lip=lv.tip, pressures_bar=bars,
                         at_limit=sorted(set(at) | ({lim} if lim != "tipping" else set())))
    return out


@dataclass
class DiggingForces:
    """ISO 6015 tool forces of a model (module docstring). Forces [N], positions [m], pressures [bar].

    bucket_N, arm_N: the ISO figures (the largest holdable force over the stroke space); bucket_pose,
    arm_pose: q (nv,) there; bucket_tip, arm_tip (3,): lip position there; limited_by: {"bucket"|"arm":
    cylinder name or "tipping"}; at_limit: {"bucket"|"arm": [every cylinder within 0.1 % of its limit]}; pressures_bar: {"bucket"|"arm": {cylinder: bar}} of every cylinder there
    (positive cap side, negative rod side); holding_bar: the same without the working cylinder;
    grid_tip (M, 3) lip positions of the envelope grid, grid_bucket_N, grid_arm_N (M,) the holdable forces
    there; relief, holding_relief [Pa]; include_weight; tipping_checked: a footprint was given; reference:
    {"bucket_N"|"arm_N": N, "source": text} published figures for comparison (empty: none printed);
    pivots: {link: (3,)} pivot positions at the arm pose; arm_bucket: how the arm force's bucket stroke was
    chosen ("max_moment" | "maximum" | "bucket_force", ``digging_forces``)."""
    bucket_N: float
    arm_N: float
    bucket_pose: np.ndarray
    arm_pose: np.ndarray
    bucket_tip: np.ndarray
    arm_tip: np.ndarray
    limited_by: dict
    at_limit: dict
    pressures_bar: dict
    holding_bar: dict
    grid_tip: np.ndarray
    grid_bucket_N: np.ndarray
    grid_arm_N: np.ndarray
    relief: float
    holding_relief: object
    include_weight: bool = False
    tipping_checked: bool = False
    reference: dict = field(default_factory=dict)
    pivots: dict = field(default_factory=dict)
    arm_bucket: str = "max_moment"

    def table(self) -> str:
        """Markdown: our figures with their binding limit and every cylinder's pressure, beside the reference
        figures when given."""
        ref = bool(self.reference.get("bucket_N") or self.reference.get("arm_N"))
        names = sorted({n for v in self.pressures_bar.values() for n in v})
        rows = ["| ISO 6015 force | this model | limited by | " + " | ".join(f"{n} [bar]" for n in names) + " |"
                + (" published | difference |" if ref else ""),
                "|---|---:|---|" + "---:|" * len(names) + ("---:|---:|" if ref else "")]
        for key, case, label in (("bucket_N", "bucket", "bucket digging force"),
                                 ("arm_N", "arm", "arm (stick) digging force")):
            ours, r = getattr(self, key), self.reference.get(key)
            also = [n for n in self.at_limit.get(case, ()) if n != self.limited_by[case]]
            lim = self.limited_by[case] + (f" ({', '.join(also)} also at its limit)" if also else "")
            row = (f"| {label} | {ours / 1e3:.1f} kN | {lim} | "
                   + " | ".join(f"{self.pressures_bar[case].get(n, float('nan')):+.0f}" for n in names) + " |")
            if ref:
                row += f" {r / 1e3:.1f} kN | {100 * (ours - r) / r:+.1f} % |" if r else " – | – |"
            rows.append(row)
        return "\n".join(rows)

    def conditions(self) -> str:
        """One paragraph: the limits and options the figures were computed under."""
        h = self.holding_relief
        hs = "no holding limit" if h is None else f"holding (line) reliefs {relief_text(h)}"
        return (f"Working cylinder at its relief {self.relief / 1e5:.0f} bar; {hs}; force at the bucket lip "
                f"(ISO 6015 §3.1), tangent to the arc about the bucket / arm pivot (§4.8.2.1, §4.8.3.1). "
                + ("Component weights included (cylinder forces at rest added). " if self.include_weight else
                   "Component weights left out of the calculated forces (SAE J1179 §3.3; ISO 6015 §5 not "
                   "retrieved). ")
                + ("Tipping checked against the tipping polygon (§3.18). " if self.tipping_checked else
                   "Tipping not checked (no tipping polygon). ")
                + "Slipping: the machine is taken as anchored (§4.5)."
                + (f" Published figures: {self.reference['source']}." if self.reference.get("source") else ""))


def _grid_forces(model, Q, cylinders, limits, acts, tip, working, include_weight, footprint, G0=None, lvs=None):
    """Holdable forces (N,) and binding names at assembled poses Q (N, nv) for working cylinder
    ``working``, with the lip levers (``tip_levers``; ``lvs`` when already computed at Q), batched; also
    returns the levers."""
    lvs = tip_levers(model, Q, acts, tip) if lvs is None else lvs
    J = np.array([lv.J for lv in lvs]).reshape(len(lvs), 3, len(acts))
    ci = acts.index(working)
    D = J[:, :, ci] / np.linalg.norm(J[:, :, ci], axis=1)[:, None]
    a = np.einsum("mik,mi->mk", J, D)                       # a_k = J_y[:, k] · d (virtual work)
    g = G0 if (include_weight and G0 is not None) else np.zeros_like(a)
    F, i = _bounds(a, g, acts, cylinders, limits, working)
    lim = np.array(acts, dtype=object)[i]
    if footprint is not None:
        Ft = _tipping_bound(model, np.array([lv.q for lv in lvs]), tip[0], tip[1], D, footprint)
        lim = np.where(Ft < F, "tipping", lim)
        F = np.minimum(F, Ft)
    F = np.maximum(F, 0.0)
    u = g + F[:, None] * a
    P = np.zeros_like(u)                                     # |holding pressure| [Pa], for ``_pick``
    for k, nm in enumerate(acts):
        if nm in cylinders and nm != working:
            P[:, k] = np.abs(u[:, k]) / np.where(u[:, k] > 0, cylinders[nm].cap_area, cylinders[nm].annulus_area)
    return F, lim, lvs, P


def _max_moment_stroke(model, smap, acts, tip, bucket, lo, hi, n=33, zoom=30):
    """The bucket stroke [m] at which the bucket cylinder and its linkage give the largest output moment
    about the bucket pivot (SAE J1179 §3.3.1): the smallest lip travel per metre of bucket stroke,
    |J_y[:, bucket]| (the lip's radius about the bucket pivot is fixed, so the moment per unit cylinder
    force is |lip − pivot| / |J_y[:, bucket]|). It depends on the bucket linkage alone (not on the boom and
    stick strokes, which stay at the start pose's), and not on any relief. A grid of ``n`` strokes, then
    ``zoom`` passes of 5 strokes at a third of the spacing around the best."""
    ci = acts.index(bucket)

    def lever(xs):
        Q = smap.compose([{bucket: float(x)} for x in xs])
        return np.array([np.linalg.norm(lv.J[:, ci]) for lv in tip_levers(model, Q, acts, tip)])
    xs = np.linspace(lo, hi, n)
    h = xs[1] - xs[0]
    x = xs[int(np.argmin(lever(xs)))]
    for _ in range(zoom):
        h /= 3
        xs = np.clip(x + h * np.arange(-2, 3), lo, hi)
        x = xs[int(np.argmin(lever(xs)))]
    return float(x)


def _pick(F, P, mask=None):
    """Index of the largest force; among poses within 1e-9 of it (the force often does not depend on a
    locked stroke, e.g. the boom's for the bucket force) the one whose holding cylinders need the least
    pressure: the largest first, ties (to 0.01 bar) broken by the next largest."""
    idx = np.arange(len(F)) if mask is None else np.flatnonzero(mask)
    Fm = F[idx].max()
    tied = idx[F[idx] >= Fm - 1e-9 * abs(Fm)]
    S = np.round(-np.sort(-P[tied], axis=1) / 1e3)
    return int(tied[np.lexsort(S.T[::-1])[0]]) if S.shape[1] else int(tied[0])


@renamed_keywords(relief_pressure="relief", holding_pressure="holding_relief")
def digging_forces(model, cylinders, relief, tip, holding_relief=None, include_weight=False, footprint=None,
                   actuators=("swing", "boom_cyl", "stick_cyl", "bucket_cyl"), boom="boom_cyl",
                   stick="stick_cyl", bucket="bucket_cyl", n=(9, 13, 17), zoom=5, q0=None, margin=1e-3,
                   reference=None, arm_bucket="max_moment") -> DiggingForces:
    """ISO 6015 bucket and arm tool forces (the largest holdable force over the stroke space, §4.4) and
    their envelope over the working range.

    Args:
        model: an excavator Model with cylinders as prismatic tree joints (robots/excavator.urdf).
        cylinders: {actuator: ``sizing.Cylinder``} [m]; the bucket and stick cylinders are required.
        relief: working relief [Pa]; holding_relief: holding cylinders' line (port) reliefs [Pa] (number,
            {cylinder: Pa} or {cylinder: {"head": Pa, "rod": Pa}}, as ``digging_forces_at``; None: unlimited,
            the forces are then the working cylinder's alone).
        tip: (link, point (3,) [m] in its frame): the bucket lip.
        include_weight, footprint: as ``digging_forces_at``.
        actuators: the independent coordinates (swing and the strokes), in the model's joint names.
        n: stroke samples (boom, stick, bucket) of the envelope grid; zoom: refinement passes (each a
            5 × 5 × 5 grid around the best pose, half the spacing of the one before). Both forces are the
            largest over all three strokes, each case searched for itself (``arm_bucket``; module docstring
            "Positions and ties").
        arm_bucket: the arm force's bucket stroke (``ARM_BUCKET``): "max_moment" (default) the bucket
            linkage's largest output moment (SAE J1179 §3.3.1); "maximum" the stroke of the largest arm force
            (ISO 6015 §4.4 literally); "bucket_force" the bucket force's stroke, the makers' convention (e.g.
            Liebherr's "Calculation of bucket forces"), kept to compare with a data sheet.
        q0: start pose (default the URDF initial configuration); margin [m] inside the stroke limits;
            reference: published figures {"bucket_N", "arm_N", "source"} for the table (none: no column).
    Returns DiggingForces; the figures at the ISO positions are ``digging_forces_at``'s (closed-loop
    inverse dynamics), the grid's the batched virtual-work twin. Raises KeyError for unknown actuator or
    cylinder names, ValueError for a relief ≤ 0, ModelError if a pose cannot be assembled."""
    for c in (bucket, stick):
        if c not in cylinders:
            raise KeyError(f"digging_forces needs the {c!r} cylinder in cylinders (got {', '.join(cylinders)})")
    limits = _pressure_limits(cylinders, relief, holding_relief)
    if arm_bucket not in ARM_BUCKET:
        raise ValueError(f"arm_bucket must be one of {', '.join(ARM_BUCKET)}, got {arm_bucket!r}")
    acts = tuple(actuators)
    tip = (tip[0], np.asarray(tip[1], float))
    q0 = model.q_initial() if q0 is None else np.asarray(q0, float)
    strokes = (boom, stick, bucket)
    smap = StrokeMap(model, q0, strokes, acts, margin=margin)
    lo = np.array([smap.limits(c)[0] for c in strokes])
    hi = np.array([smap.limits(c)[1] for c in strokes])

    done = {}        # the envelope grid's poses, weight forces and levers: the same for both cases

    def evaluate(values, working):
        key = values.tobytes()
        if key not in done:
            for k, c in enumerate(strokes):
                for x in np.unique(values[:, k]):
                    smap.pose({c: float(x)})                 # each stroke assembled once, then composed
            Q = smap.compose([dict(zip(strokes, map(float, v))) for v in values])
            G0 = None
            if include_weight:
                from urdf_dyn.constraints.inverse import actuator_forces
                z = np.zeros_like(Q)
                af = actuator_forces(model, Q, z, z, warn=False)
                G0 = np.asarray(af.u, float)[:, [list(af.names).index(a) for a in acts]]
            done[key] = (Q, G0, tip_levers(model, Q, acts, tip))
        Q, G0, lvs = done[key]
        return _grid_forces(model, Q, cylinders, limits, acts, tip, working, include_weight, footprint, G0, lvs)

    axes = [np.linspace(lo[k], hi[k], n[k]) for k in range(3)]
    grid = np.array(np.meshgrid(*axes, indexing="ij")).reshape(3, -1).T
    best, gridF = {}, {}
    for case, role in _CASES:
        c = bucket if role == "bucket" else stick
        F, lim, lvs, Pr = evaluate(grid, c)
        gridF[case] = (F, lvs)
        inherit = case == "arm" and arm_bucket != "maximum"
        if inherit and arm_bucket == "max_moment":          # the arm case's own bucket stroke (docstring)
            xb = _max_moment_stroke(model, smap, acts, tip, bucket, lo[2], hi[2])
        cand = np.isclose(grid[:, 2], grid[np.argmin(np.abs(grid[:, 2] - xb)), 2]) if inherit else None
        k = _pick(F, Pr, cand)
        x, h, best[case] = grid[k].copy(), (hi - lo) / (np.array(n) - 1), lvs[k].q
        if inherit:
            x[2], h[2] = xb, 0.0
        for _ in range(zoom):                               # §4.4: the optimum position, refined
            h = h / 2
            loc = np.unique(np.array(np.meshgrid(*[np.clip(x[j] + h[j] * np.arange(-2, 3), lo[j], hi[j])
                                                   for j in range(3)], indexing="ij")).reshape(3, -1).T, axis=0)
            Fl, _, lvl, Pl = evaluate(loc, c)               # the centre x is among them: never worse
            kk = _pick(Fl, Pl)
            x, best[case] = loc[kk], lvl[kk].q
        if case == "bucket":
            xb = float(x[2])                                # used by arm_bucket="bucket_force" only
    res = {case: digging_forces_at(model, best[case], cylinders, relief, holding_relief, tip, include_weight,
                                   footprint, bucket, stick)[case] for case, _ in _CASES}
    pivots = {nm: link_pose(model, best["arm"], nm)[:3, 3] for nm in ("boom", "stick", "bucket") if nm in model.links}
    working = {"bucket": bucket, "arm": stick}
    return DiggingForces(
        bucket_N=res["bucket"]["force_N"], arm_N=res["arm"]["force_N"], bucket_pose=best["bucket"],
        arm_pose=best["arm"], bucket_tip=res["bucket"]["lip"], arm_tip=res["arm"]["lip"],
        limited_by={k: v["limited_by"] for k, v in res.items()}, at_limit={k: v["at_limit"] for k, v in res.items()},
        pressures_bar={k: v["pressures_bar"] for k, v in res.items()},
        holding_bar={k: {o: b for o, b in v["pressures_bar"].items() if o != working[k]} for k, v in res.items()},
        grid_tip=np.array([lv.tip for lv in gridF["bucket"][1]]), grid_bucket_N=gridF["bucket"][0],
        grid_arm_N=gridF["arm"][0], relief=float(relief), holding_relief=plain_reliefs(holding_relief),
        include_weight=bool(include_weight), tipping_checked=footprint is not None,
        reference=dict(reference or {}), pivots=pivots, arm_bucket=arm_bucket)
