"""Compiled (numba) kernels of the tree algorithms, written to be read beside RBDA's tables.

Every kernel loops over a batch of N states (arrays (N, nv)); a single state is a batch of one, so one
code path serves both (docs/architecture.md, "Compiled kernels"). Public, checked wrappers are in ``dynamics.py`` (through the entry points
of ``_calls.py``); these kernels assume valid float64 inputs. Body arrays have NB+1 entries, index 0 = fixed
base.

The algorithms (``rnea_packed``, ``crba_packed``, ``_aba_p``) run on the packed model of ``pack``: every revolute or
prismatic body is expressed in a frame whose z axis is its joint axis, so that X_J is rotz(q) or xlt(q z)
and a product with S is one entry (RBDA §4.4; Pinocchio specialises its joints the same way); τ, H and q̈
do not depend on that choice of body frames. The loop-constraint kernels call them too, on the Model's cached
``kernel_pack`` (one RNEA and one CRBA in the package).

Speed: a Plücker transform ^iX_λ(i) is kept as (E, r) — rotation and translation — and applied with 3-D
operations (RBDA §2.8, Table 2.1's efficient forms) instead of 6×6 products:

    X v   = [E ω;  E (v − r × ω)]                 (motion)
    Xᵀ f  = [Eᵀ n + r × Eᵀ f;  Eᵀ f]               (force, from child to parent)

and a spatial inertia as (m, h = m c, Ī) with Ī the rotational inertia about the body origin:
I v = [Ī ω + h × v;  m v − h × ω]. Nothing is allocated inside the loops over bodies and states: each
kernel is a shell that allocates its work arrays once per call, as separate arrays, and a core ``<name>_w``
that runs the loops on them compiled with ``_nrt=False``, without numba's reference counting. With it, each
row view (``E[i]``, ``v[p]``) costs an atomic increment and decrement: measured ≈ 45 ns per body, one UR5
RNEA state 0.50 → 0.37 µs in the batch without it. (Views of one scratch array instead of separate arrays
measured slower again in the single CRBA call: 1.35 → 1.52 µs.)

Compile time (a first run compiles every kernel it calls: ``benchmarks/RESULTS_first_minute.md``): a kernel
that only other kernels call (``_rnea_p_w``, ``_crba_p_w``, ``_aba_p_w``, and their like in ``constraints``) is
compiled with ``no_cpython_wrapper=True, no_cfunc_wrapper=True``: numba makes no Python entry for it, whose
unboxing of every argument was compile time spent on a function Python never calls. Its callers reach it
as before; the code it runs is the same. The helpers of the algorithms read and write 3-vectors as
scalars, never through slices (``v[:3]``): each slice is an array view that numba types and lowers again
at every inlined call (18 of them in RNEA's core: its compile 4.2 → 3.5 CPU-s, the same arithmetic in the
same order, so the same bits). The products (``_xmv``, ``_xtf_add``, ``_Imul_rb``, ``_rot6``, ``_crf_mul``,
``_sdot``) are plain compiled functions, typed once and shared by the kernels, not ``inline="always"``
(numba's inlining typed them again in every caller); LLVM still inlines them: UR5 per call and per state in
a batch measured the same (±1 %), ABA 4 % faster, and rnea1 + aba1 compile 8.6 → 6.8 CPU-s.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nt
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from urdf_dyn.numba_cache import install as _portable_cache

from urdf_dyn.algorithms.joints import (BALL, FREE, PLANAR, PRIS_Z, PRISMATIC, REV_Z, REVOLUTE, is_sub, jcalc,
                                        multi_pose, pose_into, q_indices)
from urdf_dyn.algorithms.joints import write_subspace as _S
from urdf_dyn.algorithms.layout import TREE
from urdf_dyn.algorithms.spatial import crm


# ---------------------------------------------------------------------------------------------------------
# transforms and products (all write into `out`, which must not alias the inputs)
# ---------------------------------------------------------------------------------------------------------
_portable_cache()   # the kernels' numba cache, shared by checkouts of the same sources

@njit(cache=True, inline="always")
def xup(jtype, axis, q, iq, Et, rt, E, r):
    """^iX_λ(i) = X_J(q) X_tree as (E, r), by the composition rule plux(E1, r1)·plux(E2, r2) =
    plux(E1 E2, r2 + E2ᵀ r1) (RBDA §2.8), for every joint type code (a Model's own and the packed model's).
    q is the state's position row, iq this body's first coordinate in it (``joints.q_indices``)."""
    if jtype == REVOLUTE:
        qi = q[iq]
        c, s = np.cos(qi), np.sin(qi)
        x, y, z = axis[0], axis[1], axis[2]
        t = 1.0 - c
        # E_J = R(axis, q)ᵀ (Rodrigues), then E = E_J E_tree
        EJ00, EJ01, EJ02 = t * x * x + c, t * x * y + s * z, t * x * z - s * y
        EJ10, EJ11, EJ12 = t * x * y - s * z, t * y * y + c, t * y * z + s * x
        EJ20, EJ21, EJ22 = t * x * z + s * y, t * y * z - s * x, t * z * z + c
        for j in range(3):
            a0, a1, a2 = Et[0, j], Et[1, j], Et[2, j]
            E[0, j] = EJ00 * a0 + EJ01 * a1 + EJ02 * a2
            E[1, j] = EJ10 * a0 + EJ11 * a1 + EJ12 * a2
            E[2, j] = EJ20 * a0 + EJ21 * a1 + EJ22 * a2
        for j in range(3):
            r[j] = rt[j]
    elif jtype == PRISMATIC:  # X_J = xlt(axis q): E = E_tree, r = r_tree + E_treeᵀ axis q
        qi = q[iq]
        for i in range(3):
            for j in range(3):
                E[i, j] = Et[i, j]
        for j in range(3):
            r[j] = rt[j] + (Et[0, j] * axis[0] + Et[1, j] * axis[1] + Et[2, j] * axis[2]) * qi
    else:
        xup_packed(jtype, q, iq, Et, rt, E, r)


@njit(cache=True, inline="always")
def xup_packed(jtype, q, iq, Et, rt, E, r):
    """``xup`` for the codes a body of the packed model (``pack``) has: REV_Z, PRIS_Z, the heads of
    multi-dof joints and their sub-bodies (``pack`` rewrote every REVOLUTE and PRISMATIC body, so the
    algorithms on it compile neither branch)."""
    if jtype == REV_Z:  # E_J = rotz(q)ᵀ: E = [c E0 + s E1; c E1 − s E0; E2] by rows
        qi = q[iq]
        c, s = np.cos(qi), np.sin(qi)
        for j in range(3):
            e0, e1 = Et[0, j], Et[1, j]
            E[0, j] = c * e0 + s * e1
            E[1, j] = c * e1 - s * e0
            E[2, j] = Et[2, j]
            r[j] = rt[j]
    elif jtype == PRIS_Z:  # X_J = xlt(z q): E = E_tree, r = r_tree + q E_treeᵀ z
        qi = q[iq]
        for j in range(3):
            for k in range(3):
                E[k, j] = Et[k, j]
            r[j] = rt[j] + Et[2, j] * qi
    elif jtype == FREE or jtype == PLANAR or jtype == BALL:  # X_J = rot(Rᵀ) xlt(p): E = Rᵀ E_tree,
        # r = r_tree + E_treeᵀ p; (R, p) = ``joints.multi_pose``, in scalars
        R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2 = multi_pose(jtype, q, iq)
        for j in range(3):
            e0, e1, e2 = Et[0, j], Et[1, j], Et[2, j]
            E[0, j] = R00 * e0 + R10 * e1 + R20 * e2
            E[1, j] = R01 * e0 + R11 * e1 + R21 * e2
            E[2, j] = R02 * e0 + R12 * e1 + R22 * e2
            r[j] = rt[j] + e0 * p0 + e1 * p1 + e2 * p2
    else:  # sub-body of a multi-dof joint: X_J = 1
        for i in range(3):
            for j in range(3):
                E[i, j] = Et[i, j]
        for j in range(3):
            r[j] = rt[j]


@njit(cache=True)
def _xmv(E, r, v, out):
    """out = X v = [E ω; E (v − r × ω)] for X = (E, r). In scalars, not on slices: each slice (v[:3]) is an
    array view that numba types and lowers again at every inlined call (compile time of the kernels)."""
    w0, w1, w2 = v[0], v[1], v[2]
    u0 = v[3] - (r[1] * w2 - r[2] * w1)
    u1 = v[4] - (r[2] * w0 - r[0] * w2)
    u2 = v[5] - (r[0] * w1 - r[1] * w0)
    for i in range(3):
        out[i] = E[i, 0] * w0 + E[i, 1] * w1 + E[i, 2] * w2
    for i in range(3):
        out[3 + i] = E[i, 0] * u0 + E[i, 1] * u1 + E[i, 2] * u2


@njit(cache=True)
def _xtf_add(E, r, f, out):
    """out += Xᵀ f = [Eᵀ n + r × Eᵀ f; Eᵀ f] for X = (E, r), in scalars (``_xmv``)."""
    f0, f1, f2, n0, n1, n2 = f[3], f[4], f[5], f[0], f[1], f[2]
    a0 = E[0, 0] * f0 + E[1, 0] * f1 + E[2, 0] * f2      # Eᵀ f
    a1 = E[0, 1] * f0 + E[1, 1] * f1 + E[2, 1] * f2
    a2 = E[0, 2] * f0 + E[1, 2] * f1 + E[2, 2] * f2
    b0 = E[0, 0] * n0 + E[1, 0] * n1 + E[2, 0] * n2      # Eᵀ n
    b1 = E[0, 1] * n0 + E[1, 1] * n1 + E[2, 1] * n2
    b2 = E[0, 2] * n0 + E[1, 2] * n1 + E[2, 2] * n2
    out[3] += a0
    out[4] += a1
    out[5] += a2
    out[0] += b0 + (r[1] * a2 - r[2] * a1)
    out[1] += b1 + (r[2] * a0 - r[0] * a2)
    out[2] += b2 + (r[0] * a1 - r[1] * a0)


@njit(cache=True, inline="always")
def crm_mul(v, w, out):
    """out = v × w (spatial motion cross product, RBDA eq. 2.31)."""
    out[0] = v[1] * w[2] - v[2] * w[1]
    out[1] = v[2] * w[0] - v[0] * w[2]
    out[2] = v[0] * w[1] - v[1] * w[0]
    out[3] = v[1] * w[5] - v[2] * w[4] + v[4] * w[2] - v[5] * w[1]
    out[4] = v[2] * w[3] - v[0] * w[5] + v[5] * w[0] - v[3] * w[2]
    out[5] = v[0] * w[4] - v[1] * w[3] + v[3] * w[1] - v[4] * w[0]


@njit(cache=True)
def _crf_mul(v, f, out):
    """out = v ×* f (spatial force cross product, RBDA eq. 2.32)."""
    out[0] = v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] = v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] = v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] = v[1] * f[5] - v[2] * f[4]
    out[4] = v[2] * f[3] - v[0] * f[5]
    out[5] = v[0] * f[4] - v[1] * f[3]


@njit(cache=True, inline="always")
def _Imul(I, v, out):
    """out = I v for a 6×6 spatial inertia (36 multiply-adds; no allocation)."""
    for i in range(6):
        acc = 0.0
        for j in range(6):
            acc += I[i, j] * v[j]
        out[i] = acc


@njit(cache=True)
def _Imul_rb(m, h, J, v, out):
    """out = I v for a rigid-body inertia kept as (m, h = m c, Ī about the origin): [Ī ω + h × v; m v − h × ω]
    (RBDA eq. 2.63), 24 multiply-adds instead of 36; in scalars (``_xmv``); out must not be v."""
    w0, w1, w2, u0, u1, u2 = v[0], v[1], v[2], v[3], v[4], v[5]
    out[0] = J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2 + (h[1] * u2 - h[2] * u1)          # Ī ω + h × v
    out[1] = J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2 + (h[2] * u0 - h[0] * u2)
    out[2] = J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2 + (h[0] * u1 - h[1] * u0)
    out[3] = m * u0 - (h[1] * w2 - h[2] * w1)                                            # m v − h × ω
    out[4] = m * u1 - (h[2] * w0 - h[0] * w2)
    out[5] = m * u2 - (h[0] * w1 - h[1] * w0)


@njit(cache=True, inline="always")
def _rb_matrix(m, h, J, out):
    """out (6, 6) = [[Ī, h×], [h×ᵀ, m 1]], the spatial inertia of (m, h, Ī) (RBDA eq. 2.63)."""
    for a in range(3):
        for b in range(3):
            out[a, b] = J[a, b]
            out[3 + a, 3 + b] = m if a == b else 0.0
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h[2], h[1]
    out[1, 3], out[1, 4], out[1, 5] = h[2], 0.0, -h[0]
    out[2, 3], out[2, 4], out[2, 5] = -h[1], h[0], 0.0
    for a in range(3):
        for b in range(3):
            out[3 + a, b] = out[b, 3 + a]


@njit(cache=True)
def split_tree(X_tree):
    """(E, r) of every X_tree (NB+1, 6, 6)."""
    n = X_tree.shape[0]
    E = np.zeros((n, 3, 3))
    r = np.zeros((n, 3))
    for i in range(n):
        plux_er(X_tree[i], E[i], r[i])
    return E, r


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def plux_er(X, E, r):
    """(E, r) of a Plücker transform X = [[E, 0], [−E r×, E]] (RBDA eq. 2.24): X[3:, :3] = −E r× gives
    r× = −Eᵀ X[3:, :3], r = (r×[2, 1], r×[0, 2], r×[1, 0]). A plain compiled product (module docstring)."""
    for a_ in range(3):
        for b_ in range(3):
            E[a_, b_] = X[a_, b_]
    r[0] = -(E[0, 2] * X[3, 1] + E[1, 2] * X[4, 1] + E[2, 2] * X[5, 1])
    r[1] = -(E[0, 0] * X[3, 2] + E[1, 0] * X[4, 2] + E[2, 0] * X[5, 2])
    r[2] = -(E[0, 1] * X[3, 0] + E[1, 1] * X[4, 0] + E[2, 1] * X[5, 0])


@njit(cache=True, inline="always")
def group_base(jtype, xv, vb_parent, out):
    """The velocity the joint's velocity-product term is formed with (``joints`` module docstring): X v_λ
    (``xv``, before S q̇ is added) for a joint's first body, the same vector for its sub-bodies."""
    if is_sub(jtype):
        for k in range(6):
            out[k] = vb_parent[k]
    else:
        for k in range(6):
            out[k] = xv[k]


# ---------------------------------------------------------------------------------------------------------
# the packed model: the tree in the kernels' frames, in two flat arrays (``Model.kernel_pack``), laid out as
# ``layout.TREE`` declares: its offsets are c·n (n bodies), frozen here as compile-time constants (this module
# and ``layout`` are in the numba cache's key, ``urdf_dyn._KERNEL_MODULES``)
# ---------------------------------------------------------------------------------------------------------
NI = len(TREE.ints)                                    # int fields, each (n,): ib has NI · n entries
_PA, _JT, _IQ = TREE.index("parent"), TREE.index("jtype"), TREE.index("iq")
_C = TREE.coefficients("n")
_ET, _IB, _EC = _C["E_tree"] // 9, _C["I_bar"] // 9, _C["E_c"] // 9     # in rows of 3×3
_AX, _RT, _H = _C["axis"] // 3, _C["r_tree"] // 3, _C["h"] // 3        # in rows of 3
_SS = _C["S"] // 6                                                      # in rows of 6
_M, _ARM, _A0 = _C["m"], _C["armature"], _C["a0"]
_END, _FIXED = _C["end"]
_PAD = TREE.pad


@njit(cache=True, inline="always")
def _fb_len(n):
    """Length of the packed float array for n bodies (``layout.TREE``), rounded up to a multiple of its pad
    (18) so that it can be viewed as rows of 3, 6 and 3×3 (``_unpack``)."""
    return (_END * n + _FIXED + _PAD - 1) // _PAD * _PAD


@njit(cache=True, inline="always")
def _frame_z(a, Ec):
    """Ec (3, 3) ← the rotation with rows (b, c, â): â = a/|a|, b ⟂ â, c = â × b, so that Ec a ∥ z and
    (b, c, â) is right-handed; the identity when a is +z already."""
    n = np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    x, y, z = a[0] / n, a[1] / n, a[2] / n
    if x == 0.0 and y == 0.0 and z > 0.0:
        bx, by, bz = 1.0, 0.0, 0.0
    elif abs(x) < 0.9:  # b = â × e_x / |…|
        bx, by, bz = 0.0, z, -y
    else:               # b = â × e_y / |…|
        bx, by, bz = -z, 0.0, x
    nb = np.sqrt(bx * bx + by * by + bz * bz)
    bx, by, bz = bx / nb, by / nb, bz / nb
    Ec[0, 0], Ec[0, 1], Ec[0, 2] = bx, by, bz
    Ec[1, 0], Ec[1, 1], Ec[1, 2] = y * bz - z * by, z * bx - x * bz, x * by - y * bx
    Ec[2, 0], Ec[2, 1], Ec[2, 2] = x, y, z


def pack(parent, jtype, axis, X_tree, I, a0, armature):
    """The tree in the kernels' frames (RBDA §4.4), packed into two flat arrays (n = NB+1 bodies) as
    ``layout.TREE`` declares them: ib int64 = [parent | jtype | q index] and fb float64 = [E_tree (n, 3, 3) |
    Ī about the origin (n, 3, 3) | E_c (n, 3, 3) | axis (n, 3) | S (n, 6) | r_tree (n, 3) | h = m c (n, 3) |
    m (n,) | armature (n,) | a0 (6,) | padding] (viewed by ``_unpack``); armature holds 0 for the base, then
    the Model's (nv,).

    Every revolute (prismatic) body i is expressed in the frame F'_i = rot(E_c,i) F_i whose z axis is its
    joint axis (``_frame_z``; E_c = 1 for the other bodies and the base), with the code REV_Z (PRIS_Z):
    X'_tree,i = rot(E_c,i) X_tree,i rot(E_c,λ(i))ᵀ, i.e. E' = E_c,i E E_c,λᵀ, r' = E_c,λ r; I'_i = rot(E_c,i) I_i
    rot(E_c,i)ᵀ, i.e. h' = E_c h, Ī' = E_c Ī E_cᵀ; S'_i = [z; 0] ([0; z]). X_J becomes rotz(q) (xlt(q z)) and a
    product with S one entry, as in Pinocchio's axis-specialised joints. τ, H and q̈ do not change
    (τ_i = S_iᵀ f_i = S'_iᵀ f'_i); body velocities and forces inside the kernels are in the F' frames, and
    external forces, given in the F frames, are rotated by E_c on entry. X_tree (n, 6, 6) Plücker transforms,
    I (n, 6, 6) spatial inertias [[Ī, h×], [h×ᵀ, m 1]], a0 (6,) = −a_grav, armature (n − 1,) [kg m² | kg].

    Plain Python, once per Model (≈ 1 ms for the excavator): compiled, it cost 1.5 s of a first run. Its helpers run
    as the Python functions their kernels compile (``py_func``), each operation on float64 scalars as the
    compiled code does it (no fused multiply-add without fastmath), so the packed numbers are the same."""
    n = parent.shape[0]
    ib = np.empty(NI * n, np.int64)
    fb = np.zeros(_fb_len.py_func(n))
    iq = q_indices(jtype)
    par, jt, iqv, ax, Et, rt, S, m, h, J, Ec, a0v, arm = _unpack_py(ib, fb)
    E0, r0, T = np.empty((3, 3)), np.empty(3), np.empty((3, 3))
    for k in range(6):
        a0v[k] = a0[k]
    arm[0] = 0.0
    for i in range(1, n):
        arm[i] = armature[i - 1]
    for i in range(n):
        par[i], iqv[i] = parent[i], iq[i]
        t = jtype[i]
        if i > 0 and (t == REVOLUTE or t == PRISMATIC):
            _frame_z.py_func(axis[i], Ec[i])
            jt[i] = REV_Z if t == REVOLUTE else PRIS_Z
            ax[i, 2] = 1.0
        else:
            for k in range(3):
                Ec[i, k, k] = 1.0
                ax[i, k] = axis[i, k]
            jt[i] = t
        if i == 0:
            continue
        _S.py_func(jt[i], ax[i], S[i])
        Ei, Ep = Ec[i], Ec[parent[i]]
        plux_er.py_func(X_tree[i], E0, r0)      # (E, r) of X_tree
        for a in range(3):              # T = E_tree E_c,λᵀ, E' = E_c,i T, r' = E_c,λ r
            for b in range(3):
                T[a, b] = E0[a, 0] * Ep[b, 0] + E0[a, 1] * Ep[b, 1] + E0[a, 2] * Ep[b, 2]
        for a in range(3):
            for b in range(3):
                Et[i, a, b] = Ei[a, 0] * T[0, b] + Ei[a, 1] * T[1, b] + Ei[a, 2] * T[2, b]
            rt[i, a] = Ep[a, 0] * r0[0] + Ep[a, 1] * r0[1] + Ep[a, 2] * r0[2]
        Ii = I[i]                       # m, h = E_c h, Ī' = E_c Ī E_cᵀ
        m[i] = Ii[3, 3]
        r0[0], r0[1], r0[2] = Ii[2, 4], Ii[0, 5], Ii[1, 3]
        for a in range(3):
            h[i, a] = Ei[a, 0] * r0[0] + Ei[a, 1] * r0[1] + Ei[a, 2] * r0[2]
            for b in range(3):
                T[a, b] = Ii[a, 0] * Ei[b, 0] + Ii[a, 1] * Ei[b, 1] + Ii[a, 2] * Ei[b, 2]
        for a in range(3):
            for b in range(3):
                J[i, a, b] = Ei[a, 0] * T[0, b] + Ei[a, 1] * T[1, b] + Ei[a, 2] * T[2, b]
    return ib, fb


def _c_strides(builder, dims, itemsize):
    """The byte strides (LLVM intp values) of a C-contiguous array of ``dims`` (intp values) and ``itemsize``
    (an intp value), for the intrinsics that lay an array over memory they are given (``_field``;
    ``_calls._stack``)."""
    strides, step = [], itemsize
    for d in reversed(dims):
        strides.insert(0, step)
        step = builder.mul(step, d)
    return strides


@intrinsic
def _field(typingctx, a, start, shape):
    """The view a[start : start + prod(shape)] of a 1-D C-contiguous array as a C-contiguous array of ``shape``
    (a tuple of ints), sharing a's memory and reference count: what ``a[start:stop].reshape(shape)`` gives,
    without the checks that numba types and lowers for every reshape and slice (≈ 0.3 CPU-s of compile per
    kernel that views the packed model). The caller guarantees the bounds (``_unpack``)."""
    if not (isinstance(a, nt.Array) and a.ndim == 1 and a.layout == "C" and isinstance(start, nt.Integer)
            and isinstance(shape, nt.UniTuple) and isinstance(shape.dtype, nt.Integer)):
        return None
    resty = a.copy(ndim=shape.count, layout="C")

    def codegen(context, builder, sig, args):
        src = make_array(sig.args[0])(context, builder, args[0])
        dims = [context.cast(builder, d, sig.args[2].dtype, nt.intp) for d in cgutils.unpack_tuple(builder, args[2])]
        out = make_array(resty)(context, builder)
        populate_array(out, data=builder.gep(src.data, [context.cast(builder, args[1], sig.args[1], nt.intp)]),
                       shape=dims, strides=_c_strides(builder, dims, src.itemsize), itemsize=src.itemsize,
                       meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, resty, out._getvalue())
    return resty(a, start, shape), codegen


@njit(cache=True, inline="always")
def _unpack(ib, fb):
    """Views of ``pack``'s arrays: parent, jtype, iq, axis, E_tree, r_tree, S, m, h, Ī, E_c, a0, armature,
    at the offsets ``layout.TREE`` declares (``_field``: fb holds ``_fb_len(n)`` entries, ib NI · n)."""
    n = ib.shape[0] // NI
    return (_field(ib, _PA * n, (n,)), _field(ib, _JT * n, (n,)), _field(ib, _IQ * n, (n,)),
            _field(fb, _AX * 3 * n, (n, 3)), _field(fb, _ET * 9 * n, (n, 3, 3)), _field(fb, _RT * 3 * n, (n, 3)),
            _field(fb, _SS * 6 * n, (n, 6)), _field(fb, _M * n, (n,)), _field(fb, _H * 3 * n, (n, 3)),
            _field(fb, _IB * 9 * n, (n, 3, 3)), _field(fb, _EC * 9 * n, (n, 3, 3)), _field(fb, _A0 * n, (6,)),
            _field(fb, _ARM * n, (n,)))


def _unpack_py(ib, fb):
    """``_unpack`` in Python, on writable arrays (``pack`` fills them): the same offsets, by numpy slices."""
    n = ib.shape[0] // NI
    f3, f6, f33 = fb.reshape(-1, 3), fb.reshape(-1, 6), fb.reshape(-1, 3, 3)
    return (ib[_PA * n:(_PA + 1) * n], ib[_JT * n:(_JT + 1) * n], ib[_IQ * n:(_IQ + 1) * n],
            f3[_AX * n:(_AX + 1) * n], f33[_ET * n:(_ET + 1) * n], f3[_RT * n:(_RT + 1) * n],
            f6[_SS * n:(_SS + 1) * n], fb[_M * n:(_M + 1) * n], f3[_H * n:(_H + 1) * n], f33[_IB * n:(_IB + 1) * n],
            f33[_EC * n:(_EC + 1) * n], fb[_A0 * n:_A0 * n + 6], fb[_ARM * n:(_ARM + 1) * n])


@njit(cache=True)
def _sdot(jtype, S, f):
    """S_iᵀ f for a body of the packed model: one entry for REV_Z / PRIS_Z."""
    if jtype == REV_Z:
        return f[2]
    if jtype == PRIS_Z:
        return f[5]
    return S[0] * f[0] + S[1] * f[1] + S[2] * f[2] + S[3] * f[3] + S[4] * f[4] + S[5] * f[5]


@njit(cache=True)
def _rot6(E, f, out):
    """out = rot(E) f = [E n; E f] (a force or motion vector seen in a frame turned by E), in scalars
    (``_xmv``)."""
    n0, n1, n2, f0, f1, f2 = f[0], f[1], f[2], f[3], f[4], f[5]
    for i in range(3):
        out[i] = E[i, 0] * n0 + E[i, 1] * n1 + E[i, 2] * n2
    for i in range(3):
        out[3 + i] = E[i, 0] * f0 + E[i, 1] * f1 + E[i, 2] * f2


# ---------------------------------------------------------------------------------------------------------
# the algorithms, on the packed model
# ---------------------------------------------------------------------------------------------------------
@njit(cache=True)
def rnea_packed(ib, fb, q, qd, qdd, f_ext, tau, n0, n1):
    """Recursive Newton-Euler inverse dynamics, RBDA Table 5.1, on the packed model (``pack``) for states
    n0 ≤ n < n1. q (N, nq), qd, qdd (N, nv); f_ext (Nf, NB+1, 6) external forces
    in the link-frame body coordinates (Nf = 1 or N; 0 for none). Writes tau (N, nv)."""
    n_ = ib.shape[0] // NI   # bodies (``pack``)
    _rnea_p_w(ib, fb, q, qd, qdd, f_ext, tau, n0, n1, np.empty((n_, 3, 3)), np.empty((n_, 3)), np.empty((n_, 6)),
              np.empty((n_, 6)), np.empty((n_, 6)), np.empty((n_, 6)), np.empty(6), np.empty(6), np.empty(6))


@njit(cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _rnea_p_w(ib, fb, q, qd, qdd, f_ext, tau, n0, n1, E, r, v, a, f, vb, w1, w2, fx):
    """``rnea_packed``'s loops on its work arrays, without numba's reference counting (each row view such as E[i]
    would cost an atomic increment and decrement per body)."""
    parent, jtype, iq, axis, Et, rt, S, mI, hI, JI, Ec, a0, arm = _unpack(ib, fb)
    NB = parent.shape[0] - 1
    nfx = f_ext.shape[0]  # 0: no external forces
    for k in range(6):
        v[0, k] = 0.0
        vb[0, k] = 0.0
    for n in range(n0, n1):
        nf = n if nfx > 1 else 0
        qn = q[n]
        for k in range(6):
            a[0, k] = a0[k]
        for i in range(1, NB + 1):
            p = parent[i]
            ji = jtype[i]
            vi, ai = v[i], a[i]
            xup_packed(ji, qn, iq[i], Et[i], rt[i], E[i], r[i])
            _xmv(E[i], r[i], v[p], vi)                              # v_i = X v_λ + S q̇
            _xmv(E[i], r[i], a[p], ai)                              # a_i = X a_λ + S q̈ + (X v_λ) × S q̇
            qdi, qddi = qd[n, i - 1], qdd[n, i - 1]
            if ji == REV_Z:                                         # S = [z; 0]
                ai[0] += qdi * vi[1]
                ai[1] -= qdi * vi[0]
                ai[2] += qddi
                ai[3] += qdi * vi[4]
                ai[4] -= qdi * vi[3]
                vi[2] += qdi
            elif ji == PRIS_Z:                                      # S = [0; z]
                ai[3] += qdi * vi[1]
                ai[4] -= qdi * vi[0]
                ai[5] += qddi
                vi[5] += qdi
            else:
                for k in range(6):
                    w1[k] = S[i, k] * qdi
                group_base(ji, vi, vb[p], vb[i])                    # the joint's X v_λ (``joints``)
                crm_mul(vb[i], w1, w2)
                for k in range(6):
                    vi[k] += w1[k]
                    ai[k] += S[i, k] * qddi + w2[k]
            _Imul_rb(mI[i], hI[i], JI[i], ai, f[i])                 # f_i = I a + v ×* I v − f_ext
            _Imul_rb(mI[i], hI[i], JI[i], vi, w1)
            _crf_mul(vi, w1, w2)
            if nfx:
                _rot6(Ec[i], f_ext[nf, i], fx)
                for k in range(6):
                    f[i, k] += w2[k] - fx[k]
            else:
                for k in range(6):
                    f[i, k] += w2[k]
        for i in range(NB, 0, -1):
            tau[n, i - 1] = _sdot(jtype[i], S[i], f[i]) + arm[i] * qdd[n, i - 1]   # τ_i = Sᵀ f_i + armature q̈_i
            if parent[i] != 0:
                _xtf_add(E[i], r[i], f[i], f[parent[i]])            # f_λ += Xᵀ f_i


@njit(cache=True, inline="always")
def _xt_I_x(E, r, IA, out, X, M):
    """out += Xᵀ IA X for X = (E, r) = [[E, 0], [−E r×, E]] and a symmetric IA = [[A, B], [Bᵀ, C]] (RBDA
    eq. 2.66's transform of an inertia, in 3×3 blocks): with A' = EᵀAE, B' = EᵀBE, C' = EᵀCE,
    out += [[A' − B' r× + r× B'ᵀ − r× C' r×, B' + r× C'], [(B' + r× C')ᵀ, C']].
    X and M are (6, 6) scratch arrays, so nothing is allocated."""
    # M = IA-block congruences: M[:3,:3] = A', M[:3,3:] = B', M[3:,3:] = C' (via X as 3×3 scratch rows)
    for blk in range(3):
        ro = 0 if blk < 2 else 3
        co = 0 if blk == 0 else 3
        for i in range(3):              # X[i, j] = (block E)_ij
            for j in range(3):
                X[i, j] = IA[ro + i, co + 0] * E[0, j] + IA[ro + i, co + 1] * E[1, j] + IA[ro + i, co + 2] * E[2, j]
        for i in range(3):
            for j in range(3):
                M[ro + i, co + j] = E[0, i] * X[0, j] + E[1, i] * X[1, j] + E[2, i] * X[2, j]
    # P = r× C' (rows of X[3:, 3:]), Q = r× B'ᵀ (X[3:, :3])
    for j in range(3):
        c0, c1, c2 = M[3, 3 + j], M[4, 3 + j], M[5, 3 + j]
        X[3, 3 + j] = r[1] * c2 - r[2] * c1
        X[4, 3 + j] = r[2] * c0 - r[0] * c2
        X[5, 3 + j] = r[0] * c1 - r[1] * c0
        b0, b1, b2 = M[j, 3], M[j, 4], M[j, 5]  # column j of B'ᵀ = row j of B'
        X[3, j] = r[1] * b2 - r[2] * b1
        X[4, j] = r[2] * b0 - r[0] * b2
        X[5, j] = r[0] * b1 - r[1] * b0
    for i in range(3):
        for j in range(3):
            # (B' r×)_ij = Σ_k B'_ik (r×)_kj
            br = M[i, 3 + (j + 1) % 3] * r[(j + 2) % 3] - M[i, 3 + (j + 2) % 3] * r[(j + 1) % 3]
            # (r× C' r×)_ij = (P r×)_ij with P = r× C'
            pr = X[3 + i, 3 + (j + 1) % 3] * r[(j + 2) % 3] - X[3 + i, 3 + (j + 2) % 3] * r[(j + 1) % 3]
            out[i, j] += M[i, j] - br + X[3 + i, j] - pr
            v = M[i, 3 + j] + X[3 + i, 3 + j]
            out[i, 3 + j] += v
            out[3 + j, i] += v
            out[3 + i, 3 + j] += M[3 + i, 3 + j]


@njit(cache=True)
def crba_packed(ib, fb, q, H, n0, n1):
    """Composite-rigid-body algorithm, RBDA Table 6.2, on the packed model for states n0 ≤ n < n1.
    Writes the joint-space inertia H (N, nv, nv) on and below the branches (the other
    entries are zero and left as they are). Composite inertias are rigid-body inertias, so they are kept as
    (m, h = m c, Ī about the body origin) and moved to the parent by RBDA eq. 2.66 in that form (Table 2.5):
    with g = Eᵀh, h_λ = g + m r, Ī_λ = EᵀĪE − (r gᵀ + g rᵀ) − m r rᵀ + (2 g·r + m r·r) 1."""
    n_ = ib.shape[0] // NI   # bodies (``pack``)
    _crba_p_w(ib, fb, q, H, n0, n1, np.empty((2 * n_, 3, 3)), np.empty((2 * n_, 3)), np.empty(n_))


@njit(cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _crba_p_w(ib, fb, q, H, n0, n1, W33, W3, mC):
    """``crba_packed``'s loops on its work arrays, without numba's reference counting (each row view such as
    E[i] would cost an atomic increment and decrement per body). Three allocations (W33 = [E | Ī^c],
    W3 = [r | h^c], m^c) and the per-body temporaries (g, F = I^c S, Xᵀ F) in scalars: each allocation costs
    ≈ 20–30 ns, a third of a UR5 call when there were eleven."""
    parent, jtype, iq, axis, Et, rt, S, mI, hI, JI, Ec, a0, arm = _unpack(ib, fb)
    NB = parent.shape[0] - 1
    E, JC, r, hC = W33[:NB + 1], W33[NB + 1:], W3[:NB + 1], W3[NB + 1:]
    for n in range(n0, n1):
        qn = q[n]
        for i in range(1, NB + 1):
            xup_packed(jtype[i], qn, iq[i], Et[i], rt[i], E[i], r[i])
            mC[i] = mI[i]
            for a_ in range(3):
                hC[i, a_] = hI[i, a_]
                for b_ in range(3):
                    JC[i, a_, b_] = JI[i, a_, b_]
        for i in range(NB, 0, -1):
            p = parent[i]
            if p == 0:
                continue
            Ei, ri, m, hi, Ji, Jp = E[i], r[i], mC[i], hC[i], JC[i], JC[p]   # I^c_λ += Xᵀ I^c_i X
            g0 = Ei[0, 0] * hi[0] + Ei[1, 0] * hi[1] + Ei[2, 0] * hi[2]     # g = Eᵀ h
            g1 = Ei[0, 1] * hi[0] + Ei[1, 1] * hi[1] + Ei[2, 1] * hi[2]
            g2 = Ei[0, 2] * hi[0] + Ei[1, 2] * hi[1] + Ei[2, 2] * hi[2]
            r0, r1, r2 = ri[0], ri[1], ri[2]
            diag = 2.0 * (g0 * r0 + g1 * r1 + g2 * r2) + m * (r0 * r0 + r1 * r1 + r2 * r2)
            mr0, mr1, mr2 = m * r0 + g0, m * r1 + g1, m * r2 + g2           # g + m r
            for b_ in range(3):                                             # column b of Eᵀ (Ī E)
                M0 = Ji[0, 0] * Ei[0, b_] + Ji[0, 1] * Ei[1, b_] + Ji[0, 2] * Ei[2, b_]
                M1 = Ji[1, 0] * Ei[0, b_] + Ji[1, 1] * Ei[1, b_] + Ji[1, 2] * Ei[2, b_]
                M2 = Ji[2, 0] * Ei[0, b_] + Ji[2, 1] * Ei[1, b_] + Ji[2, 2] * Ei[2, b_]
                rb = ri[b_]
                gb = Ei[0, b_] * hi[0] + Ei[1, b_] * hi[1] + Ei[2, b_] * hi[2]
                # − (r gᵀ + g rᵀ + m r rᵀ)_ab = −(r_a g_b + g_a r_b + m r_a r_b) = −(r_a (g_b + m r_b) + g_a r_b)
                gmb = gb + m * rb
                Jp[0, b_] += Ei[0, 0] * M0 + Ei[1, 0] * M1 + Ei[2, 0] * M2 - r0 * gmb - g0 * rb
                Jp[1, b_] += Ei[0, 1] * M0 + Ei[1, 1] * M1 + Ei[2, 1] * M2 - r1 * gmb - g1 * rb
                Jp[2, b_] += Ei[0, 2] * M0 + Ei[1, 2] * M1 + Ei[2, 2] * M2 - r2 * gmb - g2 * rb
                Jp[b_, b_] += diag
            hC[p, 0] += mr0
            hC[p, 1] += mr1
            hC[p, 2] += mr2
            mC[p] += m
        for i in range(1, NB + 1):
            Si, h, J, m, ji = S[i], hC[i], JC[i], mC[i], jtype[i]            # F = I^c_i S_i
            if ji == REV_Z:                                                  # [Ī z; −h × z]
                F0, F1, F2, F3, F4, F5 = J[0, 2], J[1, 2], J[2, 2], -h[1], h[0], 0.0
                H[n, i - 1, i - 1] = F2 + arm[i]                            # H_ii = Sᵀ I^c S + armature
            elif ji == PRIS_Z:                                               # [h × z; m z]
                F0, F1, F2, F3, F4, F5 = h[1], -h[0], 0.0, 0.0, 0.0, m
                H[n, i - 1, i - 1] = F5 + arm[i]
            else:                                                            # [Ī ω + h × v; m v − h × ω]
                w0, w1, w2, u0, u1, u2 = Si[0], Si[1], Si[2], Si[3], Si[4], Si[5]
                F0 = J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2 + h[1] * u2 - h[2] * u1
                F1 = J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2 + h[2] * u0 - h[0] * u2
                F2 = J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2 + h[0] * u1 - h[1] * u0
                F3 = m * u0 - (h[1] * w2 - h[2] * w1)
                F4 = m * u1 - (h[2] * w0 - h[0] * w2)
                F5 = m * u2 - (h[0] * w1 - h[1] * w0)
                H[n, i - 1, i - 1] = w0 * F0 + w1 * F1 + w2 * F2 + u0 * F3 + u1 * F4 + u2 * F5 + arm[i]
            j = i
            while parent[j] > 0:                                             # F = Xᵀ_j F = [Eᵀ n + r × Eᵀ f; Eᵀ f]
                Ej, rj = E[j], r[j]
                f0 = Ej[0, 0] * F3 + Ej[1, 0] * F4 + Ej[2, 0] * F5
                f1 = Ej[0, 1] * F3 + Ej[1, 1] * F4 + Ej[2, 1] * F5
                f2 = Ej[0, 2] * F3 + Ej[1, 2] * F4 + Ej[2, 2] * F5
                n0_ = Ej[0, 0] * F0 + Ej[1, 0] * F1 + Ej[2, 0] * F2 + rj[1] * f2 - rj[2] * f1
                n1_ = Ej[0, 1] * F0 + Ej[1, 1] * F1 + Ej[2, 1] * F2 + rj[2] * f0 - rj[0] * f2
                n2_ = Ej[0, 2] * F0 + Ej[1, 2] * F1 + Ej[2, 2] * F2 + rj[0] * f1 - rj[1] * f0
                F0, F1, F2, F3, F4, F5 = n0_, n1_, n2_, f0, f1, f2
                j = parent[j]
                jj = jtype[j]
                if jj == REV_Z:
                    acc = F2
                elif jj == PRIS_Z:
                    acc = F5
                else:
                    Sj = S[j]
                    acc = Sj[0] * F0 + Sj[1] * F1 + Sj[2] * F2 + Sj[3] * F3 + Sj[4] * F4 + Sj[5] * F5
                H[n, i - 1, j - 1] = acc
                H[n, j - 1, i - 1] = acc


@njit(cache=True)
def _aba_p(ib, fb, q, qd, tau, f_ext, qdd, n0, n1):
    """Articulated-body forward dynamics, RBDA Table 7.1, on the packed model for states n0 ≤ n < n1;
    f_ext as in ``rnea_packed``. Writes qdd (N, nv). Raises ZeroDivisionError for a
    zero articulated inertia d_i."""
    n_ = ib.shape[0] // NI   # bodies (``pack``)
    _aba_p_w(ib, fb, q, qd, tau, f_ext, qdd, n0, n1,
        np.empty((n_, 3, 3)), np.empty((n_, 3)), np.empty((n_, 6)), np.empty((n_, 6)), np.empty((n_, 6, 6)),
        np.empty((n_, 6)), np.empty((n_, 6)), np.empty(n_), np.empty(n_), np.empty((n_, 6)), np.empty((n_, 6)),
        np.empty((6, 6)), np.empty(6), np.empty(6), np.empty(6), np.empty(6), np.empty((6, 6)), np.empty((6, 6)))


@njit(cache=True, _nrt=False, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _aba_p_w(ib, fb, q, qd, tau, f_ext, qdd, n0, n1, E, r, v, c, IA, pA, U, d, u, a, vb, Ia, pa, w1, w2, fx, Xs, Ms):
    """``_aba_p``'s loops on its work arrays, without numba's reference counting (each row view such as
    E[i] would cost an atomic increment and decrement per body)."""
    parent, jtype, iq, axis, Et, rt, S, mI, hI, JI, Ec, a0, arm = _unpack(ib, fb)
    NB = parent.shape[0] - 1
    nfx = f_ext.shape[0]  # 0: no external forces
    for k in range(6):
        v[0, k] = 0.0
        vb[0, k] = 0.0
    for n in range(n0, n1):
        nf = n if nfx > 1 else 0
        qn = q[n]
        for i in range(1, NB + 1):
            p = parent[i]
            ji = jtype[i]
            vi, ci = v[i], c[i]
            xup_packed(ji, qn, iq[i], Et[i], rt[i], E[i], r[i])
            _xmv(E[i], r[i], v[p], vi)
            qdi = qd[n, i - 1]
            if ji == REV_Z:                                       # c_i = (X v_λ) × S q̇, S = [z; 0]
                ci[0], ci[1], ci[2], ci[3], ci[4], ci[5] = qdi * vi[1], -qdi * vi[0], 0.0, qdi * vi[4], -qdi * vi[3], 0.0
                vi[2] += qdi
            elif ji == PRIS_Z:                                    # S = [0; z]
                ci[0], ci[1], ci[2], ci[3], ci[4], ci[5] = 0.0, 0.0, 0.0, qdi * vi[1], -qdi * vi[0], 0.0
                vi[5] += qdi
            else:
                group_base(ji, vi, vb[p], vb[i])
                for k in range(6):
                    w1[k] = S[i, k] * qdi
                    vi[k] += w1[k]
                crm_mul(vb[i], w1, ci)
            _rb_matrix(mI[i], hI[i], JI[i], IA[i])                # I^A_i = I_i
            _Imul_rb(mI[i], hI[i], JI[i], vi, w1)
            _crf_mul(vi, w1, pA[i])                               # p^A_i = v ×* I v − f_ext
            if nfx:
                _rot6(Ec[i], f_ext[nf, i], fx)
                for k in range(6):
                    pA[i, k] -= fx[k]
        for i in range(NB, 0, -1):
            ji, IAi, Ui = jtype[i], IA[i], U[i]
            if ji == REV_Z:                                       # U = I^A S, d = Sᵀ U, u = τ − Sᵀ p^A
                for k in range(6):
                    Ui[k] = IAi[k, 2]
            elif ji == PRIS_Z:
                for k in range(6):
                    Ui[k] = IAi[k, 5]
            else:
                _Imul(IAi, S[i], Ui)
            d[i] = _sdot(ji, S[i], Ui) + arm[i]                     # D_i = Sᵀ U + armature (RBDA Table 7.1)
            u[i] = tau[n, i - 1] - _sdot(ji, S[i], pA[i])
            p = parent[i]
            if p != 0:
                for k in range(6):
                    for l in range(6):
                        Ia[k, l] = IAi[k, l] - Ui[k] * Ui[l] / d[i]
                _Imul(Ia, c[i], w1)
                for k in range(6):
                    pa[k] = pA[i, k] + w1[k] + Ui[k] * (u[i] / d[i])
                _xt_I_x(E[i], r[i], Ia, IA[p], Xs, Ms)            # I^A_λ += Xᵀ I^a X
                _xtf_add(E[i], r[i], pa, pA[p])                   # p^A_λ += Xᵀ p^a
        for k in range(6):
            a[0, k] = a0[k]
        for i in range(1, NB + 1):
            ji = jtype[i]
            _xmv(E[i], r[i], a[parent[i]], w1)
            acc = 0.0
            for k in range(6):
                w1[k] += c[i, k]
                acc += U[i, k] * w1[k]
            qddi = (u[i] - acc) / d[i]
            qdd[n, i - 1] = qddi
            for k in range(6):
                a[i, k] = w1[k]
            if ji == REV_Z:
                a[i, 2] += qddi
            elif ji == PRIS_Z:
                a[i, 5] += qddi
            else:
                for k in range(6):
                    a[i, k] += S[i, k] * qddi


@njit(cache=True)
def ltl_solve(lam, H, b, x):
    """Solve H x = b for each of N systems by the LᵀL factorisation that exploits branch-induced sparsity
    (RBDA §6.5, Tables 6.3 and 6.4). ``lam`` (NB,) is the 0-based parent of each coordinate, −1 at a root.
    H (N, n, n) is overwritten with L. Returns False if an H is not positive definite."""
    N, nv = H.shape[0], H.shape[1]
    ok = True
    y = np.zeros(nv)
    for n in range(N):
        A = H[n]
        for k in range(nv - 1, -1, -1):  # Table 6.3: factorisation, in place
            if A[k, k] <= 0.0:
                ok = False
                A[k, k] = np.nan
            A[k, k] = np.sqrt(A[k, k])
            i = lam[k]
            while i >= 0:
                A[k, i] = A[k, i] / A[k, k]
                i = lam[i]
            i = lam[k]
            while i >= 0:
                j = i
                while j >= 0:
                    A[i, j] = A[i, j] - A[k, i] * A[k, j]
                    j = lam[j]
                i = lam[i]
        for i in range(nv):
            y[i] = b[n, i]
        for i in range(nv - 1, -1, -1):  # Table 6.4: back-substitution with Lᵀ, then L
            y[i] = y[i] / A[i, i]
            j = lam[i]
            while j >= 0:
                y[j] = y[j] - A[i, j] * y[i]
                j = lam[j]
        for i in range(nv):
            j = lam[i]
            while j >= 0:
                y[i] = y[i] - A[i, j] * y[j]
                j = lam[j]
            y[i] = y[i] / A[i, i]
        for i in range(nv):
            x[n, i] = y[i]
    return ok


@njit(cache=True)
def body_poses(parent, jtype, axis, T_tree, q, T):
    """Forward kinematics: writes T (N, NB+1, 4, 4), the pose of every body frame in the base frame."""
    N, NB = q.shape[0], parent.shape[0] - 1
    iq = q_indices(jtype)
    A, J = np.empty((4, 4)), np.empty((4, 4))
    for n in range(N):
        for a in range(4):
            for b in range(4):
                T[n, 0, a, b] = 1.0 if a == b else 0.0
        for i in range(1, NB + 1):      # T_i = (T_λ(i) T_tree,i) X_J(q): 4×4 products written out (numba's @
            P = T[n, parent[i]]         # calls BLAS and allocates for each, ≈ 20× the arithmetic here)
            Tt = T_tree[i]
            for a in range(4):
                for b in range(4):
                    A[a, b] = P[a, 0] * Tt[0, b] + P[a, 1] * Tt[1, b] + P[a, 2] * Tt[2, b] + P[a, 3] * Tt[3, b]
            pose_into(jtype[i], axis[i], q[n], iq[i], J)
            for a in range(4):
                for b in range(4):
                    T[n, i, a, b] = A[a, 0] * J[0, b] + A[a, 1] * J[1, b] + A[a, 2] * J[2, b] + A[a, 3] * J[3, b]


@njit(cache=True)
def tree_motion(parent, jtype, axis, X_tree, q, qd, X0, v, avp, S):
    """For one state: ^iX_0 (NB+1, 6, 6) base-to-body transforms, body velocities v and velocity-product
    accelerations a^vp (RBDA eq. 8.13; q̈ = 0, no gravity), both in body coordinates, and motion subspaces
    S (NB+1, 6) in body coordinates."""
    NB = parent.shape[0] - 1
    iq = q_indices(jtype)
    vb = np.zeros((NB + 1, 6))
    X0[0] = np.eye(6)
    v[0] = 0.0
    avp[0] = 0.0
    for i in range(1, NB + 1):
        XJ, S[i] = jcalc(jtype[i], axis[i], q, iq[i])
        Xup = XJ @ X_tree[i]
        X0[i] = Xup @ X0[parent[i]]
        vJ = S[i] * qd[i - 1]
        xv = Xup @ v[parent[i]]
        group_base(jtype[i], xv, vb[parent[i]], vb[i])
        v[i] = xv + vJ
        avp[i] = Xup @ avp[parent[i]] + crm(vb[i]) @ vJ
