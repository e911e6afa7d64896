"""Out-of-plane load cases of an excavator's front: corner-tooth digging, swing stall against a wall at the
swing relief and the eccentric tooth load; per pin the force, the pin moment, the side force along the pin
and the lug forces, the torsion of boom and stick, and the slewing ring's loads per case.

**Load path: a statically determinate idealisation.** The closed-loop inverse dynamics (RBDA §8.12) takes
the loop-closure wrenches from Kᵀλ = τ_ID − B u, minimum norm where the loops are redundant. A planar
linkage closed by revolute loops is redundant out of its plane: the out-of-plane rows of K (the loop frames'
offset along the pin axis and their tilt about the two axes across it) vanish for every motion of the tree,
so the minimum-norm λ has no out-of-plane part. Every force out of the boom plane and every moment about an
axis in it then goes through the spanning tree's joints from the tool to the ring — the bucket pivot, the
boom nose (stick pin), the boom foot and the slewing ring — and the cylinders and the bucket linkage (side
links, H-link) carry only their in-plane forces. That is the cylinders as built (spherical plain bearings
in their eyes: no moment, no side force beyond their weight) and, for the bucket linkage, conservative for
the bucket pivot (a real H-link pin shares the bucket's lateral couple in proportion to its stiffness) and
not a check of the links' own out-of-plane strength. ``tests/machines/test_lateral_cases.py`` holds the
pin loads to a hand-written 3-D free-body statics of the same idealisation.

**Per pin** (a revolute pin with unit axis a in its frame, wrench [n; f] about the pin centre, per pin of a
``count``): the force |f|; the pin moment |n_⊥|, n_⊥ = n − (n·a) a (the couple across the pin, carried by
its two lugs); the side force |f·a| (thrust on the lug faces); with the lug spacing s (the pin's length
between the lug mid-planes), the two lugs' radial forces F₁,₂ = f_⊥/2 ± (n_⊥ × a)/s (their sum f_⊥, their
moment about the centre (s/2) a × (F₁ − F₂) = n_⊥). **Torsion** of a body (boom, stick): the moment
component along its chord (proximal pin → distal pin) of the proximal joint's wrench; in-plane loads give
moments along the pin axis, normal to the chord, so the torsion is that of the out-of-plane loads and is
constant along the chord.

**Cases** (the machine anchored, ISO 6015 §4.5; weights included; the tipping polygon of ``stability``):

- *corner tooth*: each stall state of ``stall.stall_envelopes`` with the force at the bucket's corner tooth
  (the lip point moved by half the bucket width along the pin axis): the held in-plane force is the planar
  one unless tipping binds sooner (the corner adds a roll moment), and the pins gain moments and torsion.
- *swing stall against a wall*: the swing motor at its relief torque T = D·p_swing against a wall at the
  bucket's side, the front held in each pose of the grid: a force F = T / r across the boom plane at the
  corner (r its distance from the swing axis in the boom plane), towards either side, capped by tipping.
- *eccentric tooth load*: each corner-tooth stall state plus the side force at the tooth that brings the
  torque about the swing axis to the swing relief's, either way, capped by tipping: the swing circuit's
  crossover relief is what limits a side load on a held upper structure (S11: swing relief right/left).

With a swing relief given, every case holds the torque about the swing axis to the relief's: a corner-tooth
force whose own torque would pass it is scaled down (the upper structure slews instead). This takes the
upper structure held hydraulically while the front works (the swing motor's ports closed, its crossover
reliefs open at the relief); a spring-applied swing parking brake holding at the same time would hold more
(its torque is not published here): then call ``corner_tooth_cases`` without ``torque`` for the bound.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from urdf_dyn.machines.pins import PinSpec
from urdf_dyn.machines.poses import body_poses
from urdf_dyn.machines.stability import tipping_load

__all__ = ["LateralCase", "pin_axes", "wrench_field", "case_field", "pin_values", "lug_forces", "chord_axes",
           "swing_torque", "corner_point", "corner_tooth_cases", "swing_stall_case", "eccentric_tooth_case"]


@dataclass
class LateralCase:
    """One out-of-plane case (module docstring). ``case`` its name; ``relief`` [Pa] the working relief;
    ``holding`` the holding reliefs; ``swing_torque`` [N m] (None: not involved); ``pins`` {pin: {"force_N",
    "moment_Nm", "side_N", "lug_N" (None without a lug spacing), "state" (where the moment governs)}};
    ``torsion`` {body: largest |torsion| [N m]}; ``ring`` {"tilting_moment_Nm", "axial_N", "radial_N",
    "torque_Nm" (each the largest), "at_largest_tilting": {the four at that state}}; ``states``: the
    governing states [{"name", "q" (nv,), "force" (3,) root coordinates [N], "point" (3,) in ``link``}]
    for the FE export; ``link`` the tool's link; ``note``."""
    case: str
    relief: float
    holding: object
    swing_torque: object
    pins: dict
    torsion: dict
    ring: dict
    states: list = field(default_factory=list, repr=False)
    link: str = "bucket"
    note: str = ""


def pin_axes(model, specs) -> dict:
    """{pin: unit axis (3,) in the pin's frame} of revolute tree joints and loop joints (``specs`` as
    ``pins.pin_loads``). Raises KeyError for an unknown joint."""
    loops = {lp.name: lp for lp in model.loops}
    out = {}
    for name, p in specs.items():
        j = p.joint if isinstance(p, PinSpec) else p
        a = np.asarray(loops[j].axis if j in loops else model.axis[model.joint_index(j) + 1], float)
        out[name] = a / np.linalg.norm(a)
    return out


def wrench_field(model, env, specs):
    """(names, w0 (M, P, 6), W (M, 3, P, 6)): every pin's wrench [n; f] in its frame (per pin of a count) at
    rest on the grid of ``env`` (a ``stall.StallEnvelopes``), and per unit force along root x, y, z at the
    envelope's tip point: wrench = w0 + Σᵢ fᵢ W[:, i] (the statics are linear in the tip force; the loop
    forces are the envelope's own: ``StallEnvelopes.unit_load_wrenches``, the four load sets in one call)."""
    names, per = env.unit_load_wrenches(model, specs)
    w = np.stack([per[n] for n in names], axis=2)                               # (4, M, P, 6)
    return names, w[0], np.moveaxis(w[1:] - w[0], 0, 1)


def lug_forces(wrench, axis, spacing):
    """The two lugs' radial forces (…, 2, 3) [N] of a pin wrench (…, 6) [n; f] about its centre, axis a
    (3,), lug spacing s [m] (module docstring): f_⊥/2 ± (n_⊥ × a)/s."""
    return np.stack(_lugs(wrench, np.asarray(axis, float), spacing), axis=-2)


def _lugs(wrench, a, spacing):
    n, f = wrench[..., :3], wrench[..., 3:]
    n_perp = n - (n @ a)[..., None] * a
    f_perp = f - (f @ a)[..., None] * a
    d = np.cross(n_perp, a) / spacing
    half = f_perp / 2
    return half + d, half - d


def _norm3(x):
    """|x| (…) of vectors x (…, 3): √((x₀² + x₁²) + x₂²), the sum in ``np.linalg.norm``'s order, without its
    reduction over a 3-long axis (tens of times slower on large batches)."""
    return np.sqrt((x[..., 0] * x[..., 0] + x[..., 1] * x[..., 1]) + x[..., 2] * x[..., 2])


def pin_values(wrench, axis, spacing=None) -> dict:
    """{"force_N", "moment_Nm", "side_N", "lug_N"} (…) of pin wrenches (…, 6) about a pin with axis (3,):
    |f|, |n_⊥|, |f·a| and the larger lug force (None without ``spacing``)."""
    a = np.asarray(axis, float)
    n, f = wrench[..., :3], wrench[..., 3:]
    k = _coordinate_axis(a)
    if k is not None:
        return _pin_values_on([n[..., m] for m in range(3)], [f[..., m] for m in range(3)], *k, spacing)
    out = dict(force_N=_norm3(f), moment_Nm=_norm3(n - (n @ a)[..., None] * a), side_N=np.abs(f @ a), lug_N=None)
    if spacing:
        l1, l2 = _lugs(wrench, a, spacing)
        out["lug_N"] = np.maximum(_norm3(l1), _norm3(l2))
    return out


def _coordinate_axis(a):
    """(k, σ) when a = σ e_k (σ = ±1), else None."""
    nz = np.flatnonzero(a)
    return (int(nz[0]), float(a[nz[0]])) if len(nz) == 1 and abs(a[nz[0]]) == 1.0 else None


def _pin_values_on(n, f, k, sigma, spacing):
    """``pin_values`` for the axis σ e_k from the components n, f (3 arrays each), term by term the same
    floating-point operations as the general formulas (the products with a's zeros are exact zeros, adding
    them changes nothing): n_⊥ and f_⊥ are n and f without component k, n_⊥ × a = σ ε_{m o k} n_o e_m
    (m, o the other two components)."""
    i, j = (m for m in range(3) if m != k)
    out = dict(force_N=np.sqrt((f[0] * f[0] + f[1] * f[1]) + f[2] * f[2]),
               moment_Nm=np.sqrt(n[i] * n[i] + n[j] * n[j]), side_N=np.abs(f[k]), lug_N=None)
    if spacing:
        eps = 1.0 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1.0     # ε_{ijk}
        d_i = (sigma * eps * n[j]) / spacing
        d_j = (-sigma * eps * n[i]) / spacing
        h_i, h_j = f[i] / 2, f[j] / 2
        l1 = np.sqrt((h_i + d_i) * (h_i + d_i) + (h_j + d_j) * (h_j + d_j))
        l2 = np.sqrt((h_i - d_i) * (h_i - d_i) + (h_j - d_j) * (h_j - d_j))
        out["lug_N"] = np.maximum(l1, l2)
    return out


def chord_axes(model, q, bodies) -> dict:
    """{body: unit chord (3,) in the body's frame from its joint to its child ``bodies[body]``'s joint}
    (e.g. {"boom": "stick", "stick": "bucket"}) at pose q (nv,) — rigid, so any pose gives the same."""
    T = body_poses(model, np.asarray(q, float)[None])[0]
    out = {}
    for b, child in bodies.items():
        i, j = model.body_names.index(b), model.body_names.index(child)
        u = T[i, :3, :3].T @ (T[j, :3, 3] - T[i, :3, 3])
        out[b] = u / np.linalg.norm(u)
    return out


def swing_torque(displacement, relief) -> float:
    """The swing drive's torque at the slewing ring [N m] at its relief: D·p (D [m³/rad] the motor's
    displacement times the reduction, p [Pa]). Raises ValueError for D or p not > 0."""
    for k, v in (("displacement", displacement), ("relief", relief)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"swing {k} must be > 0, got {v!r}")
    return float(displacement) * float(relief)


def corner_point(lip, half_width, axis=(0.0, 1.0, 0.0)) -> np.ndarray:
    """The corner tooth (3,) [m] in the bucket's frame: the lip point moved by ``half_width`` along the pin
    axis (+: the machine's left at swing 0). Raises ValueError for half_width ≤ 0."""
    if not (np.isfinite(half_width) and half_width > 0):
        raise ValueError(f"half_width must be > 0 [m], got {half_width!r}")
    return np.asarray(lip, float) + half_width * np.asarray(axis, float)


def _evaluate(case, env, field, F, axes, spacing, chords, swing, relief, holding, T, note, labels):
    """A LateralCase from the tip forces F (M, K, 3) [N] (root coordinates) on the envelope's grid; labels
    (M, K) (an array, or anything indexed by (m, k)) name each state's limit."""
    names, w0, W = field
    M, K = F.shape[:2]

    # pins that carry the same wrench (a torsion body's joint is also a pin) are computed once
    key = [w0[:, j].tobytes() + W[:, :, j].tobytes() for j in range(len(names))]
    same = [key.index(k) for k in key]
    kept, Fc = {}, np.ascontiguousarray(np.moveaxis(F, 2, 0))                # (3, M, K)

    def wrench(j):
        """Pin j's wrench components (6, M, K) at every state, w0 + Σᵢ Fᵢ W[:, i] summed over i in order (as
        ``np.einsum`` does): one pin at a time (all P at once would be M·K·P·6 floats, hundreds of MB on a
        fine grid), each component contiguous."""
        j = same[j]
        if j in kept:
            return kept[j]
        out, t = np.empty((6, M, K)), np.empty((M, K))
        for c in range(6):
            np.multiply(Fc[0], W[:, 0, j, c, None], out=out[c])
            out[c] += np.multiply(Fc[1], W[:, 1, j, c, None], out=t)
            out[c] += np.multiply(Fc[2], W[:, 2, j, c, None], out=t)
            out[c] += w0[:, j, c, None]
        if same.count(j) > 1:
            kept[j] = out
        return out

    def values(j, n):
        a, s = axes[n], (spacing or {}).get(n)
        k = _coordinate_axis(a)
        C = wrench(j)
        if k is not None:
            return _pin_values_on(C[:3], C[3:], *k, s)
        return pin_values(np.moveaxis(C, 0, -1).copy(), a, s)
    pins, states, seen = {}, [], {}

    def state(m, k, why):
        key = (int(m), int(k))
        if key not in seen:
            seen[key] = len(states)
            states.append(dict(name=f"{case}: {why}", q=env.Q[m].copy(), force=F[m, k].copy(),
                               point=np.asarray(env.tip[1], float).copy(), pose=env.pose(m),
                               limited_by=str(labels[m, k])))
        else:
            states[seen[key]]["name"] += f", {why}"
        return states[seen[key]]["name"]
    for j, n in enumerate(names):
        if n.startswith("_") or n == swing:
            continue
        v = values(j, n)
        mf = np.unravel_index(int(np.argmax(v["force_N"])), (M, K))
        mm = np.unravel_index(int(np.argmax(v["moment_Nm"])), (M, K))
        pins[n] = dict(force_N=float(v["force_N"][mf]), moment_Nm=float(v["moment_Nm"][mm]),
                       side_N=float(v["side_N"].max()),
                       lug_N=None if v["lug_N"] is None else float(v["lug_N"].max()),
                       moment_state=dict(pose=env.pose(mm[0]), tip_force_N=F[mm].tolist(),
                                         limited_by=str(labels[mm])))
        if v["moment_Nm"][mm] > 1e-6 * max(v["force_N"][mf], 1.0):
            state(*mm, f"{n} moment")
    torsion = {}
    for b, u in chords.items():
        w = np.moveaxis(wrench(names.index("_torsion:" + b)), 0, -1).copy()           # (M, K, 6)
        tq = np.abs(w[..., :3] @ u)
        mt = np.unravel_index(int(np.argmax(tq)), (M, K))
        torsion[b] = float(tq[mt])
        if tq[mt] > 0:
            state(*mt, f"{b} torsion")
    ring = {}
    if swing is not None:
        r = wrench(names.index(swing))
        tilt, axial = np.hypot(r[0], r[1]), r[5]
        radial, torque = np.hypot(r[3], r[4]), np.abs(r[2])
        mt = np.unravel_index(int(np.argmax(tilt)), (M, K))
        ring = dict(tilting_moment_Nm=float(tilt.max()), axial_N=float(axial.max()), radial_N=float(radial.max()),
                    torque_Nm=float(torque.max()), at_largest_tilting=dict(
                        tilting_moment_Nm=float(tilt[mt]), axial_N=float(axial[mt]), radial_N=float(radial[mt]),
                        torque_Nm=float(torque[mt]), pose=env.pose(mt[0]), limited_by=str(labels[mt])))
        state(*mt, "ring tilting")
    return LateralCase(case, relief, holding, T, pins, torsion, ring, states, env.tip[0], note)


def case_field(model, env, pins, swing="swing", torsion_of=None):
    """``wrench_field`` of ``env`` for the pins, the torsion bodies and the ring of the lateral cases (their
    arguments of the same names): computed once, given to each case as ``pin_field``."""
    return wrench_field(model, env, _specs(pins, swing, _torsion_default(model, torsion_of)))


def _field(model, env, specs, pin_field):
    if pin_field is None:
        return wrench_field(model, env, specs)
    if tuple(pin_field[0]) != tuple(specs) or len(pin_field[1]) != len(env.Q):
        raise ValueError(f"pin_field is not this case's: its pins {list(pin_field[0])} on {len(pin_field[1])} "
                         f"poses, the case's {list(specs)} on {len(env.Q)} (case_field with the same arguments)")
    return pin_field


def _specs(pins, swing, torsion_of):
    specs = {n: (p if isinstance(p, PinSpec) else PinSpec(p)) for n, p in pins.items()}
    for b in torsion_of:
        specs["_torsion:" + b] = PinSpec(b)
    if swing is not None:
        specs[swing] = PinSpec(swing)
    return specs


def _lateral_dir(model, env, swing):
    """Unit vector (3,) across the boom plane (root coordinates): ẑ × x_b, x_b the boom plane's forward
    axis at the envelope's swing angle (+y at swing 0)."""
    psi = float(env.Q[0, model.joint_index(swing)]) if swing in model.joint_names else 0.0
    return np.array([-np.sin(psi), np.cos(psi), 0.0])


def _tip_cap(env, W0, dirn, footprint):
    """Largest multiple (N,) of unit forces dirn (N, 3) at the tip before tipping, from ground reactions
    W0 (N, 6) on the grid's poses (repeated to N); inf without a footprint."""
    if footprint is None:
        return np.full(len(W0), np.inf)
    reps = len(W0) // len(env.Q)
    W1 = np.repeat(env.W1, reps, axis=0)
    return tipping_load(W0, np.einsum("nrj,nj->nr", W1, dirn), footprint)[0]


def _corner_forces(env, c, torque):
    """(F (M, K, 3), labels (M, K)) of working cylinder c's stall states, each scaled down where the torque
    of the tooth force about the swing axis, τ = p_x F_y − p_y F_x (root coordinates; the axis is the root's
    z), would exceed ``torque`` (None: not limited): the swing circuit's relief lets the upper structure slew
    beyond it."""
    F, lab = env.fan[c]["all_force"], env.fan[c]["all_limited_by"]
    if torque is None:
        return F, lab
    tau = np.abs(env.lip[:, None, 0] * F[..., 1] - env.lip[:, None, 1] * F[..., 0])
    with np.errstate(divide="ignore"):
        k = np.where(tau > torque, torque / np.where(tau > 0, tau, 1.0), 1.0)
    return F * k[..., None], np.where(k < 1, "swing relief", lab).astype(object)


def corner_tooth_cases(model, env, pins, swing="swing", spacing=None, torsion_of=None, torque=None,
                       pin_field=None) -> list:
    """One LateralCase per working cylinder of ``env`` (``stall.stall_envelopes`` with its tip at the
    corner tooth, ``corner_point``): every stall state (the fan and the tangent, each at its held force),
    scaled down where the tooth force's torque about the swing axis exceeds ``torque`` [N m] (the swing
    relief's, ``swing_torque``; None: not limited). pins: {name: PinSpec | joint}; swing: the ring's joint
    (None: no ring); spacing: {pin: lug spacing [m]}; torsion_of: {body: child body} (default boom → stick,
    stick → bucket when those exist); pin_field: ``case_field`` of the same arguments when already computed
    (the three cases of one envelope share it)."""
    torsion_of = _torsion_default(model, torsion_of)
    specs = _specs(pins, swing, torsion_of)
    field_ = _field(model, env, specs, pin_field)
    axes, chords = pin_axes(model, specs), chord_axes(model, env.Q[0], torsion_of)
    out = []
    for c in env.working:
        F, lab = _corner_forces(env, c, torque)
        out.append(_evaluate(f"corner tooth, {c} stall", env, field_, F, axes, spacing, chords, swing,
                             env.relief, env.holding_relief, None if torque is None else float(torque),
                             f"force at the corner tooth, {len(env.X)} poses x {len(env.fan_deg) + 1} directions; "
                             + ("the swing torque not limited" if torque is None else
                                f"held where its torque about the swing axis passes the swing relief's: "
                                f"{int(np.sum(lab == 'swing relief'))} states"), lab))
    return out


def swing_stall_case(model, env, pins, torque, footprint=None, swing="swing", spacing=None,
                     torsion_of=None, min_reach=None, pin_field=None) -> LateralCase:
    """The swing stall against a wall (module docstring) on the poses of ``env`` (its tip: the corner tooth
    where the wall touches): a force T / r across the boom plane, towards either side, capped by tipping
    (``footprint``). torque T [N m] (``swing_torque``). Poses with the tooth nearer the swing axis than
    ``min_reach`` [m] (default: the footprint's front edge, else 0) are left out: a wall there would stand
    over the tracks, and T / r grows without bound as r → 0. pin_field: as ``corner_tooth_cases``. Raises
    ValueError when no pose is left."""
    torsion_of = _torsion_default(model, torsion_of)
    specs = _specs(pins, swing, torsion_of)
    e = _lateral_dir(model, env, swing or "swing")
    xb = np.cross(e, [0.0, 0.0, 1.0])
    f, far, r_min = _side_force(torque, env.lip @ xb, footprint, min_reach)
    F = np.stack([-np.outer(f, e), np.outer(f, e)], axis=1)                                      # (M, 2, 3)
    dirs = np.stack([-np.broadcast_to(e, (len(f), 3)), np.broadcast_to(e, (len(f), 3))], axis=1)
    cap = _tip_cap(env, np.repeat(env.W0, 2, axis=0), dirs.reshape(-1, 3), footprint).reshape(-1, 2)
    mag = np.linalg.norm(F, axis=2)
    lim = np.where(cap < mag, "tipping", np.where(far[:, None], "swing relief", "not reached")).astype(object)
    F = dirs * np.minimum(mag, cap)[..., None]
    field_ = _field(model, env, specs, pin_field)
    return _evaluate("swing stall against a wall", env, field_, F, pin_axes(model, specs),
                     spacing, chord_axes(model, env.Q[0], torsion_of), swing, env.relief, env.holding_relief,
                     float(torque), f"wall at the corner tooth, either side, {int(far.sum())} poses with the tooth beyond "
                     f"{r_min:g} m; force T/r", lim)


def _side_force(torque, r, footprint, min_reach):
    """(f (M,) [N], far (M,) bool, r_min [m]): the side force T / r that stalls the swing at torque T [N m]
    with the tooth at r (M,) [m] from the swing axis, 0 where r ≤ r_min (``swing_stall_case``)."""
    r_min = (float(np.max(np.asarray(footprint)[:, 0])) if footprint is not None else 0.0) if min_reach is None \
        else float(min_reach)
    far = r > max(r_min, 0.0)
    if not far.any():
        raise ValueError(f"no pose has the tooth beyond {r_min:g} m from the swing axis: no side force T/r")
    return np.where(far, float(torque) / np.where(far, r, 1.0), 0.0), far, r_min


def eccentric_tooth_case(model, env, pins, torque, footprint=None, swing="swing", spacing=None,
                         torsion_of=None, min_reach=None, pin_field=None) -> LateralCase:
    """The eccentric tooth load (module docstring): every corner-tooth stall state of ``env`` (each working
    cylinder, fan and tangent; ``corner_tooth_cases``'s, held to the swing relief) plus the side force across
    the boom plane that brings the torque about the swing axis to the relief's, ±T: s = (±T − τ)/r at the
    tooth (τ the corner force's own torque, r the tooth's distance from the axis in the boom plane), capped
    so that the machine does not tip (``footprint``); no side force with the tooth nearer the swing axis than
    ``min_reach`` (as ``swing_stall_case``). pin_field: as ``corner_tooth_cases``."""
    torsion_of = _torsion_default(model, torsion_of)
    specs = _specs(pins, swing, torsion_of)
    e = _lateral_dir(model, env, swing or "swing")
    r = env.lip @ np.cross(e, [0.0, 0.0, 1.0])
    _, far, r_min = _side_force(torque, r, footprint, min_reach)
    Fs, base, tipped = [], [], []
    for c in env.working:
        Fp, lp = _corner_forces(env, c, torque)                                      # (M, K, 3)
        M, K = Fp.shape[:2]
        tau = env.lip[:, None, 0] * Fp[..., 1] - env.lip[:, None, 1] * Fp[..., 0]
        W0 = (env.W0[:, None] + np.einsum("mrj,mkj->mkr", env.W1, Fp)).reshape(M * K, 6)
        for sgn in (-1.0, 1.0):
            want = np.where(far[:, None], np.abs(sgn * torque - tau) / np.where(far, r, 1.0)[:, None], 0.0)
            d = np.broadcast_to(sgn * e, (M * K, 3))
            cap = _tip_cap(env, W0, d, footprint).reshape(M, K)
            Fs.append(Fp + np.minimum(want, cap)[..., None] * sgn * e)
            base.append(lp)
            tipped.append(cap < want)
    F = np.concatenate(Fs, axis=1)
    labels = _SideLabels(np.concatenate(base, axis=1), np.concatenate(tipped, axis=1))
    field_ = _field(model, env, specs, pin_field)
    return _evaluate("eccentric tooth load", env, field_, F, pin_axes(model, specs), spacing,
                     chord_axes(model, env.Q[0], torsion_of), swing, env.relief, env.holding_relief, float(torque),
                     f"corner-tooth stall states ({', '.join(env.working)}) + a side force at the tooth to the "
                     f"swing relief's torque, either side ({int(far.sum())} poses with the tooth beyond {r_min:g} m)",
                     labels)


class _SideLabels:
    """The eccentric states' labels (M, K) ``base[m, k]`` + " + side force (tipping | swing relief)", spelt
    only for the few states ``_evaluate`` reads (hundreds of thousands of strings otherwise)."""

    def __init__(self, base, tipped):
        self.base, self.tipped = base, tipped

    def __getitem__(self, idx):
        return self.base[idx] + (" + side force (tipping)" if self.tipped[idx] else " + side force (swing relief)")


def _torsion_default(model, torsion_of):
    if torsion_of is not None:
        return dict(torsion_of)
    names = model.body_names
    return {b: c for b, c in (("boom", "stick"), ("stick", "bucket")) if b in names and c in names}
