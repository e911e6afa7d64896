"""Compiled (numba) kernels of the tree algorithms, written to be read beside RBDA's tables.

Every kernel loops over a batch of N states (arrays (N, nv)); a single state is a batch of one, so one
code path serves both (DESIGN §5). Public, checked wrappers are in ``dynamics.py``; these kernels assume
valid, C-contiguous float64 inputs. Body arrays have NB+1 entries, index 0 = fixed base.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .joints import jcalc, joint_pose
from .spatial import crf, crm


@njit(cache=True)
def rnea(parent, jtype, axis, X_tree, I, a0, q, qd, qdd, f_ext, tau):
    """Recursive Newton-Euler inverse dynamics, RBDA Table 5.1.

    a0 (6,) is the base acceleration −a_grav; f_ext (Nf, NB+1, 6) external forces in body coordinates
    (Nf = 1 or N). Writes tau (N, NB)."""
    N, NB = q.shape[0], parent.shape[0] - 1
    Xup = np.zeros((NB + 1, 6, 6))
    S = np.zeros((NB + 1, 6))
    v = np.zeros((NB + 1, 6))
    a = np.zeros((NB + 1, 6))
    f = np.zeros((NB + 1, 6))
    for n in range(N):
        nf = n if f_ext.shape[0] > 1 else 0
        a[0] = a0
        for i in range(1, NB + 1):
            XJ, S[i] = jcalc(jtype[i], axis[i], q[n, i - 1])
            Xup[i] = XJ @ X_tree[i]
            vJ = S[i] * qd[n, i - 1]
            v[i] = Xup[i] @ v[parent[i]] + vJ
            a[i] = Xup[i] @ a[parent[i]] + S[i] * qdd[n, i - 1] + crm(v[i]) @ vJ
            f[i] = I[i] @ a[i] + crf(v[i]) @ (I[i] @ v[i]) - f_ext[nf, i]
        for i in range(NB, 0, -1):
            tau[n, i - 1] = S[i] @ f[i]
            if parent[i] != 0:
                f[parent[i]] += Xup[i].T @ f[i]


@njit(cache=True)
def crba(parent, jtype, axis, X_tree, I, q, H):
    """Composite-rigid-body algorithm, RBDA Table 6.2. Writes the joint-space inertia H (N, NB, NB)."""
    N, NB = q.shape[0], parent.shape[0] - 1
    Xup = np.zeros((NB + 1, 6, 6))
    S = np.zeros((NB + 1, 6))
    IC = np.zeros((NB + 1, 6, 6))
    for n in range(N):
        for i in range(1, NB + 1):
            XJ, S[i] = jcalc(jtype[i], axis[i], q[n, i - 1])
            Xup[i] = XJ @ X_tree[i]
            IC[i] = I[i]
        for i in range(NB, 0, -1):
            if parent[i] != 0:
                IC[parent[i]] += Xup[i].T @ IC[i] @ Xup[i]
        for i in range(1, NB + 1):
            F = IC[i] @ S[i]
            H[n, i - 1, i - 1] = S[i] @ F
            j = i
            while parent[j] > 0:
                F = Xup[j].T @ F
                j = parent[j]
                H[n, i - 1, j - 1] = F @ S[j]
                H[n, j - 1, i - 1] = H[n, i - 1, j - 1]


@njit(cache=True)
def aba(parent, jtype, axis, X_tree, I, a0, q, qd, tau, f_ext, qdd):
    """Articulated-body forward dynamics, RBDA Table 7.1. Writes qdd (N, NB)."""
    N, NB = q.shape[0], parent.shape[0] - 1
    Xup = np.zeros((NB + 1, 6, 6))
    S = np.zeros((NB + 1, 6))
    v = np.zeros((NB + 1, 6))
    c = np.zeros((NB + 1, 6))
    IA = np.zeros((NB + 1, 6, 6))
    pA = np.zeros((NB + 1, 6))
    U = np.zeros((NB + 1, 6))
    d = np.zeros(NB + 1)
    u = np.zeros(NB + 1)
    a = np.zeros((NB + 1, 6))
    for n in range(N):
        nf = n if f_ext.shape[0] > 1 else 0
        for i in range(1, NB + 1):
            XJ, S[i] = jcalc(jtype[i], axis[i], q[n, i - 1])
            Xup[i] = XJ @ X_tree[i]
            vJ = S[i] * qd[n, i - 1]
            v[i] = Xup[i] @ v[parent[i]] + vJ
            c[i] = crm(v[i]) @ vJ
            IA[i] = I[i]
            pA[i] = crf(v[i]) @ (I[i] @ v[i]) - f_ext[nf, i]
        for i in range(NB, 0, -1):
            U[i] = IA[i] @ S[i]
            d[i] = S[i] @ U[i]
            u[i] = tau[n, i - 1] - S[i] @ pA[i]
            if parent[i] != 0:
                Ia = IA[i] - np.outer(U[i], U[i]) / d[i]
                pa = pA[i] + Ia @ c[i] + U[i] * (u[i] / d[i])
                IA[parent[i]] += Xup[i].T @ Ia @ Xup[i]
                pA[parent[i]] += Xup[i].T @ pa
        a[0] = a0
        for i in range(1, NB + 1):
            ai = Xup[i] @ a[parent[i]] + c[i]
            qdd[n, i - 1] = (u[i] - U[i] @ ai) / d[i]
            a[i] = ai + S[i] * qdd[n, i - 1]


@njit(cache=True)
def ltl_solve(lam, H, b, x):
    """Solve H x = b for each of N systems by the LᵀL factorisation that exploits branch-induced sparsity
    (RBDA §6.5, Tables 6.3 and 6.4). ``lam`` (NB,) is the 0-based parent of each coordinate, −1 at a root.
    H (N, n, n) is overwritten with L. Returns False in ok[n] if H is not positive definite."""
    N, nv = H.shape[0], H.shape[1]
    ok = True
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
        y = b[n].copy()
        for i in range(nv - 1, -1, -1):  # Table 6.4: back-substitution with L^T, then L
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
        x[n] = y
    return ok


@njit(cache=True)
def body_poses(parent, jtype, axis, T_tree, q, T):
    """Forward kinematics: writes T (N, NB+1, 4, 4), the pose of every body frame in the base frame."""
    N, NB = q.shape[0], parent.shape[0] - 1
    for n in range(N):
        T[n, 0] = np.eye(4)
        for i in range(1, NB + 1):
            T[n, i] = T[n, parent[i]] @ T_tree[i] @ joint_pose(jtype[i], axis[i], q[n, i - 1])


@njit(cache=True)
def tree_motion(parent, jtype, axis, X_tree, q, qd, X0, v, avp, S):
    """For one state: ^iX_0 (NB+1, 6, 6) base-to-body transforms, body velocities v and velocity-product
    accelerations a^vp (RBDA eq. 8.13; q̈ = 0, no gravity), both in body coordinates, and motion subspaces
    S (NB+1, 6) in body coordinates."""
    NB = parent.shape[0] - 1
    X0[0] = np.eye(6)
    v[0] = 0.0
    avp[0] = 0.0
    for i in range(1, NB + 1):
        XJ, S[i] = jcalc(jtype[i], axis[i], q[i - 1])
        Xup = XJ @ X_tree[i]
        X0[i] = Xup @ X0[parent[i]]
        vJ = S[i] * qd[i - 1]
        v[i] = Xup @ v[parent[i]] + vJ
        avp[i] = Xup @ avp[parent[i]] + crm(v[i]) @ vJ
