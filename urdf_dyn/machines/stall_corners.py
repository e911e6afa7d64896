"""The held-force polygon of a stall in the boom plane, and its corners: the worst direction at a pose in
closed form.

At a pose, a force f on the lip in the boom plane, f = s x_b + t z (x_b the boom's forward axis, z up), is
held while every limit of ``stall`` holds, each linear in f:

- each cylinder k between its rod-side and head-side limits: −p_rod A_annulus ≤ u_g,k + U_k f ≤ p_head A_cap
  (``iso6015._bounds``; the working cylinder at the working relief, the others at their holding reliefs);
- the centre of pressure of the ground reaction W0 + W1 f inside the tipping polygon: C (W0 + W1 f) ≥ 0
  (``stability.tipping_rows``, one row per edge);
- sliding, with a friction coefficient μ: |h| ≤ μ f_z for the ground's horizontal reaction h. At rest the
  ground reaction is vertical (the weights), and a lip force in the boom plane adds a horizontal part along
  x_b only, so the cone is the two half-planes ±x_b·h ≤ μ f_z.

These half-planes bound a convex polygon P that contains the origin (the machine at rest). The held state
in a direction (the fan's, the ISO tangent) is where that ray leaves P, so the stall states of a pose are
P's boundary. A pin's force |w_g + W f|, the slewing ring's tilting moment and every force component are
convex in f, so their largest over P is at a corner of P (a convex function on a polytope takes its
maximum at an extreme point: Rockafellar, *Convex Analysis*, 1970, Cor. 32.3.2): a state where two limits
bind at once. ``corners`` enumerates them: every pair of boundary lines intersected, the points that
satisfy every other half-plane kept. A fan of directions only approaches the corners (its largest pin load
sits on the nearest fan angle; the ridges of the old refinement), the corners are exact.

The held state along a given direction (where the ray leaves P: the fan's, the tangent's, each corner's) is
``held_forces`` with the ground's bounds of ``ground_bounds``; ``corner_states`` gives the corners as held
states (``stall.StallEnvelopes.corner``).
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from urdf_dyn.machines.iso6015 import _bounds
from urdf_dyn.machines.stability import tipping_load, tipping_rows

__all__ = ["half_planes", "corners", "sliding_load", "ground_bounds", "held_forces", "corner_states"]


def half_planes(U, u_g, W0, W1, xb, names, cylinders, limits, working, footprint=None, friction=None):
    """The polygon P of held lip forces (module docstring) as half-planes A y ≤ b in boom-plane coordinates
    y = (s, t), f = s x_b + t z.

    U (M, p, 3) [N/N] cylinder forces per unit lip force (root axes), u_g (M, p) [N] at rest; W0 (M, 6),
    W1 (M, 6, 3) ground reactions at rest and per unit lip force (``stall.StallEnvelopes``); xb (3,) the boom
    plane's forward unit vector; names: the actuators of U's columns; cylinders, limits, working as
    ``iso6015._bounds``; footprint: the tipping polygon (k, 2) or None; friction: μ or None.
    Returns A (M, n, 2), b (M, n) [N or N m] and labels (n,): the limit each row is (an actuator's name,
    "tipping", "sliding")."""
    B = np.stack([np.asarray(xb, float), [0.0, 0.0, 1.0]], axis=1)               # (3, 2): y -> f
    A, b, labels = [], [], []
    for j, nm in enumerate(names):
        cyl = cylinders.get(nm)
        if cyl is None:
            continue
        Ph, Pr = limits[nm][:2] if nm == working else limits[nm][2:]
        a = U[:, j, :] @ B
        A += [a, -a]
        b += [Ph * cyl.cap_area - u_g[:, j], Pr * cyl.annulus_area + u_g[:, j]]
        labels += [nm, nm]
    W1B = W1 @ B                                                                   # (M, 6, 2)
    rows = []
    if footprint is not None:
        rows += [(-r, "tipping") for r in tipping_rows(footprint)]                 # −C W ≤ 0
    if friction is not None:
        u = np.asarray(xb, float)[:2] / np.linalg.norm(np.asarray(xb, float)[:2])
        for sgn in (1.0, -1.0):
            r = np.zeros(6)
            r[3:5], r[5] = sgn * u, -friction                                      # ±u·h − μ f_z ≤ 0
            rows.append((r, "sliding"))
    for r, lab in rows:                                                            # r·(W0 + W1 B y) ≤ 0
        A.append(np.einsum("r,mrk->mk", r, W1B))
        b.append(-(W0 @ r))
        labels.append(lab)
    return np.stack(A, axis=1), np.stack(b, axis=1), np.array(labels, dtype=object)


def corners(A, b, labels, rtol=1e-9):
    """The corners of the polygons A y ≤ b (``half_planes``), pose by pose.

    Every pair of rows with independent normals is intersected; a point is a corner when it satisfies every
    row within ``rtol`` of that row's scale (|b_i| + |A_i| |y|). Returns Y (M, V, 2) the corners (V the most
    any pose has; a pose with fewer repeats its first, a pose with none holds NaN), valid (M, V) bool and
    binding (M, V, 2) the labels of the two rows through each corner, rows (M, V, 2) their indices."""
    M, n, _ = A.shape
    I, J = (np.array(p) for p in zip(*combinations(range(n), 2)))
    a1, a2 = A[:, I], A[:, J]
    det = a1[..., 0] * a2[..., 1] - a1[..., 1] * a2[..., 0]
    indep = np.abs(det) > 1e-12 * np.linalg.norm(a1, axis=-1) * np.linalg.norm(a2, axis=-1)
    d = np.where(indep, det, 1.0)
    Y = np.stack([(b[:, I] * a2[..., 1] - b[:, J] * a1[..., 1]) / d,
                  (a1[..., 0] * b[:, J] - a2[..., 0] * b[:, I]) / d], axis=-1)   # Cramer's rule, (M, pairs, 2)
    viol = np.einsum("mpk,mnk->mpn", Y, A) - b[:, None, :]
    scale = np.abs(b)[:, None, :] + np.linalg.norm(A, axis=-1)[:, None, :] * np.linalg.norm(Y, axis=-1)[..., None]
    ok = indep & np.all(viol <= rtol * scale, axis=2) & np.all(np.isfinite(Y), axis=-1)
    V = max(int(ok.sum(axis=1).max()), 1)
    order = np.argsort(~ok, axis=1, kind="stable")[:, :V]                        # the valid pairs first
    first = np.where(ok.any(axis=1), order[:, 0], -1)
    order = np.where(np.take_along_axis(ok, order, axis=1), order, first[:, None])
    rows = np.arange(M)[:, None]
    Yv = np.where((order >= 0)[..., None], Y[rows, np.maximum(order, 0)], np.nan)
    valid = (order >= 0) & ok[rows, np.maximum(order, 0)]
    rows = np.stack([I[np.maximum(order, 0)], J[np.maximum(order, 0)]], axis=-1)
    return Yv, valid, labels[rows], rows


def sliding_load(W0, W1, mu):
    """Largest L ≥ 0 (N,) for which the ground reaction W0 + L·W1 stays inside Coulomb's cone
    |f_xy| ≤ μ f_z (f in root coordinates, z up, the ground level); inf where it never leaves it, 0 where
    W0 is already outside.

    W0, W1: (N, 6) or (6,) [n; f] (N m, N) ground reactions without the load and per unit load
    (``stability.base_reaction``); mu ≥ 0. The boundary is the smallest positive root of the quadratic
    μ²(c + L e)² − |a + L b|² = 0 (a, b the horizontal parts, c, e the normal ones); lift-off (c + L e = 0)
    lies on or beyond it. Raises ValueError for μ < 0 or not finite."""
    if not (np.isfinite(mu) and mu >= 0):
        raise ValueError(f"friction coefficient must be >= 0, got {mu!r}")
    W0, W1 = np.atleast_2d(np.asarray(W0, float)), np.atleast_2d(np.asarray(W1, float))
    a, b, c, e = W0[:, 3:5], W1[:, 3:5], W0[:, 5], W1[:, 5]
    m2 = mu * mu
    A2 = m2 * e * e - np.sum(b * b, axis=1)
    A1 = 2 * (m2 * c * e - np.sum(a * b, axis=1))
    A0 = m2 * c * c - np.sum(a * a, axis=1)
    L = np.full(len(W0), np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        disc = A1 * A1 - 4 * A2 * A0
        s = np.sqrt(np.maximum(disc, 0.0))
        quad = np.abs(A2) > 1e-12 * (np.abs(A1) + np.abs(A0) + 1e-300)
        r1 = np.where(quad, (-A1 - s) / (2 * A2), np.where(A1 != 0, -A0 / A1, np.inf))
        r2 = np.where(quad, (-A1 + s) / (2 * A2), np.inf)
    for r in (r1, r2):
        ok = (disc >= 0) | ~quad
        L = np.where(ok & np.isfinite(r) & (r > 0), np.minimum(L, r), L)
    return np.where((A0 < 0) | (c <= 0), 0.0, L)


def ground_bounds(W0, W1, Fd, footprint, friction):
    """Tipping and sliding bounds (M, K) [N] (inf where not checked) for unit force directions Fd (M, K, 3) on
    the lip: the ground reaction is W0 + F·(W1 Fd) (W0 (M, 6), W1 (M, 6, 3) as ``half_planes``)."""
    M, K, _ = Fd.shape
    W0r = np.repeat(W0, K, axis=0)
    W1d = np.einsum("mrj,mkj->mkr", W1, Fd).reshape(M * K, 6)
    Ft = tipping_load(W0r, W1d, footprint)[0] if footprint is not None else np.full(M * K, np.inf)
    Fs = sliding_load(W0r, W1d, friction) if friction is not None else np.full(M * K, np.inf)
    return Ft.reshape(M, K), Fs.reshape(M, K)


def held_forces(U, g, Fd, names, cylinders, limits, working, ground):
    """Held force F (M, K) [N] and binding limit (M, K) (a name as ``half_planes``' labels) for unit force
    directions Fd (M, K, 3) on the lip, with the ground's bounds ``ground`` = (tipping, sliding) (M, K) of
    ``ground_bounds``; U, g, names, cylinders, limits, working as ``half_planes`` (``iso6015._bounds``)."""
    M, K, _ = Fd.shape
    a = (Fd @ np.swapaxes(U, 1, 2)).reshape(M * K, -1)                # cylinder force per unit F
    F, i = _bounds(a, np.repeat(g, K, axis=0), names, cylinders, limits, working)
    F, lim = F.reshape(M, K), np.array(names, dtype=object)[i].reshape(M, K)
    for bound, name in zip(ground, ("tipping", "sliding")):
        lim = np.where(bound < F, name, lim)
        F = np.minimum(F, bound)
    return np.maximum(F, 0.0), lim


def corner_states(U, g, W0, W1, xb, names, cylinders, limits, working, footprint, friction):
    """The held states at the corners of each pose's held-force polygon (``stall_corners``): a dict with
    force_N (M, V), force (M, V, 3) [N] (root coordinates), angle_deg (M, V), limited_by (M, V) and binding
    (M, V, 2) (the two limits of the corner). The force is the held force along the corner's direction
    (``held_forces``, the same bounds as the fan's), so every corner state is one the fan would reach with that
    angle; where it falls short of the corner (the origin outside the polygon: 0 N) both names are the
    binding one. ``limited_by`` names the working cylinder when it is one of the two, else the first of the
    two in the order cylinders (the actuators' order), tipping, sliding: a rule, not round-off."""
    Y, valid, binding, pair = corners(*half_planes(U, g, W0, W1, xb, names, cylinders, limits, working, footprint,
                                                  friction))
    ez = np.array([0.0, 0.0, 1.0])
    Fc = np.nan_to_num(Y[..., :1]) * xb + np.nan_to_num(Y[..., 1:]) * ez              # (M, V, 3)
    r = np.linalg.norm(Fc, axis=-1)
    use = valid & (r > 0)
    D = np.where(use[..., None], Fc / np.where(use, r, 1.0)[..., None], xb)
    F, lim = held_forces(U, g, D, names, cylinders, limits, working, ground_bounds(W0, W1, D, footprint, friction))
    F = np.where(use, F, 0.0)
    at = use & (F >= r * (1 - 1e-9))
    binding = np.where(at[..., None], binding, lim[..., None])
    first = np.where(binding[..., 1] == working, binding[..., 1], binding[..., 0])
    return dict(force_N=F, force=F[..., None] * D, angle_deg=np.degrees(np.arctan2(D @ ez, D @ xb)) % 360,
                limited_by=first, binding=binding, rows=np.where(at[..., None], pair, -1))
