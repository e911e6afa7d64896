"""Force elements between two pins of a tree: the gas-spring and coil-spring balancers of industrial arms.

A balancer acts along the line between pin a (a point fixed in link a) and pin b (a point fixed in link b),
of length L = |p_b − p_a| [m]. Its force F(L) [N] is counted positive when it pushes the pins apart; the
force on link b at p_b is F u, on link a at p_a it is −F u, with u = (p_b − p_a)/L. By virtual work the
generalised force it applies is

    τ = J_bᵀ (F u) − J_aᵀ (F u) = F ∂L/∂q                    (nv,) [N m | N]

(J_a, J_b: the pins' point Jacobians; RBDA §2.11 and §5.3 for applied forces), which equals −∂V/∂q for the
element's potential energy V(L) = −∫ F dL. The force laws:

- ``gas_spring`` (a nitrogen balancer; polytropic compression p Vⁿ = const, e.g. the SMC/Stabilus gas
  spring formula): precharge p0 [Pa] acting on the piston area A [m²], gas volume V0 [m³] at the reference
  pin length L_ref [m]. With the stroke x that compresses the gas (x = L_ref − L for ``action="push"``, a
  cylinder that pushes the pins apart; x = L − L_ref for ``"pull"``, a cylinder whose gas is compressed as it
  is drawn out and that pulls the pins together):  |F| = p0 A (V0 / (V0 − A x))ⁿ.
- ``coil_spring`` (a spring cartridge): rate k [N/m], free length L0 [m] = the pin length at which the
  cartridge carries only its preload P0 [N]:  |F| = P0 + k x with x = L0 − L (push) or L − L0 (pull).

``push`` gives F = +|F|, ``pull`` F = −|F|. The laws hold over the element's stroke; a gas spring
compressed to zero volume (V0 − A x ≤ 0) is an error naming the element.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urdf_dyn.errors import StateError

__all__ = ["Balancer", "BALANCER_TYPES", "make_balancer", "with_balancers", "balancers_from", "balancer_lengths", "balancer_generalized_forces"]

#: the force laws and the parameters each needs (module docstring)
BALANCER_TYPES = {"gas_spring": ("precharge", "area", "volume", "reference_length", "exponent"),
                  "coil_spring": ("rate", "free_length", "preload")}


@dataclass(frozen=True)
class Balancer:
    """A balancer between pin a (``point_a`` (3,) [m] in the frame of body ``body_a``, the body of URDF link
    ``link_a``) and pin b (likewise). ``type`` is a key of ``BALANCER_TYPES``, ``params`` its parameters
    {name: value} in SI units (module docstring), ``action`` "push" or "pull", ``line`` the source line."""
    name: str
    type: str
    link_a: str
    body_a: int
    point_a: tuple
    link_b: str
    body_b: int
    point_b: tuple
    action: str
    params: tuple
    line: int = 0

    def param(self, key):
        """The value of parameter ``key`` [SI]."""
        return dict(self.params)[key]

    def stroke(self, L):
        """The compression stroke x [m] (module docstring) at pin length(s) ``L`` [m]."""
        ref = self.param("reference_length" if self.type == "gas_spring" else "free_length")
        return (ref - np.asarray(L, float)) if self.action == "push" else (np.asarray(L, float) - ref)

    def force(self, L):
        """F(L) [N], positive pushing the pins apart, at pin length(s) ``L`` [m] (scalar or array). Raises
        StateError where a gas spring's volume would be compressed to zero or below."""
        x = self.stroke(L)
        p = dict(self.params)
        if self.type == "gas_spring":
            V = p["volume"] - p["area"] * x
            if np.any(V <= 0):
                bad = float(np.asarray(L, float).flat[int(np.argmin(np.atleast_1d(V)))])
                raise StateError(f"balancer {self.name!r}: the gas spring is compressed to zero volume at pin "
                                 f"length {bad:.4g} m (volume {p['volume']:.4g} m³, area {p['area']:.4g} m², "
                                 f"reference length {p['reference_length']:.4g} m): check its parameters")
            mag = p["precharge"] * p["area"] * (p["volume"] / V) ** p["exponent"]
        else:
            mag = p["preload"] + p["rate"] * x
        return mag if self.action == "push" else -mag


#: parameters that must be > 0 (the others ≥ 0); the exponent of a gas spring is in [1, 2]
_POSITIVE = {"precharge", "area", "volume", "reference_length", "free_length"}


def make_balancer(model, name, type, link_a, xyz_a, link_b, xyz_b, action="push", params=None, line=0):
    """A checked ``Balancer`` of ``model``: pins ``xyz_a`` (3,) [m] in the frame of URDF link ``link_a`` and
    ``xyz_b`` in ``link_b``; ``params`` {name: value} the parameters ``BALANCER_TYPES[type]`` names, no other.
    Raises ValueError saying what is wrong (an unknown type, link or action, a missing, unknown, non-finite
    or out-of-range parameter, both pins on one body); the readers add the file, line or key path."""
    if type not in BALANCER_TYPES:
        raise ValueError(f"unknown balancer type {type!r} (types: {', '.join(BALANCER_TYPES)})")
    if action not in ("push", "pull"):
        raise ValueError(f"action {action!r}: 'push' (pushes the pins apart) or 'pull' (pulls them together)")
    params = dict(params or {})
    need = BALANCER_TYPES[type]
    missing = [k for k in need if k not in params]
    if missing:
        raise ValueError(f"a {type} needs {', '.join(need)}; missing: {', '.join(missing)}")
    extra = [k for k in params if k not in need]
    if extra:
        raise ValueError(f"unknown parameter(s) {', '.join(extra)} of a {type} (it takes {', '.join(need)})")
    for k, v in params.items():
        v = float(v)
        if not np.isfinite(v) or v < 0 or (k in _POSITIVE and v == 0):
            raise ValueError(f"{k} = {v}: must be finite and {'> 0' if k in _POSITIVE else '≥ 0'}")
        params[k] = v
    if type == "gas_spring" and not 1.0 <= params["exponent"] <= 2.0:
        raise ValueError(f"exponent = {params['exponent']}: a polytropic exponent lies in [1, 2] (1 isothermal, "
                         "1.4 adiabatic for nitrogen)")
    pins = []
    for link, xyz in ((link_a, xyz_a), (link_b, xyz_b)):
        if link not in model.links:
            raise ValueError(f"unknown link {link!r}")
        xyz = np.asarray(xyz, float).reshape(-1)
        if xyz.shape != (3,) or not np.all(np.isfinite(xyz)):
            raise ValueError(f"the pin on {link!r} needs 3 finite coordinates [m], got {xyz.tolist()}")
        lf = model.links[link]
        T = np.asarray(lf.T_body_link)
        pins.append((lf.body, tuple(float(c) for c in T[:3, :3] @ xyz + T[:3, 3])))
    if pins[0][0] == pins[1][0]:
        raise ValueError(f"links {link_a!r} and {link_b!r} are one rigid body: a balancer between them does "
                         "nothing")
    return Balancer(name, type, link_a, pins[0][0], pins[0][1], link_b, pins[1][0], pins[1][1], action,
                    tuple(params.items()), int(line))


def with_balancers(model, balancers):
    """A new Model: ``model`` with ``balancers`` (``Balancer`` s, e.g. from ``make_balancer``) added to its own.
    Raises ValueError for a name used twice."""
    import dataclasses
    names = [b.name for b in (*model.balancers, *balancers)]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"balancer name(s) used twice: {', '.join(dup)}")
    return dataclasses.replace(model, balancers=tuple(model.balancers) + tuple(balancers))


_KEYS = ("name", "type", "action", "link_a", "xyz_a", "link_b", "xyz_b")


def balancers_from(model, specs):
    """A new Model: ``model`` with the balancers ``specs`` (mappings with the ``<balancer>`` keys: name, type,
    action, link_a, xyz_a, link_b, xyz_b and the type's parameters, ``BALANCER_TYPES``) added. Raises
    ValueError(where, message): ``where`` "[i]" for the entry at fault ("" for a name used twice)."""
    out = []
    for i, spec in enumerate(specs):
        spec = dict(spec)
        btype = spec.get("type")
        need = BALANCER_TYPES.get(btype, ())
        missing = [k for k in _KEYS if k not in spec and k != "action"]
        unknown = [k for k in spec if k not in _KEYS and k not in need]
        if btype in BALANCER_TYPES and unknown:
            raise ValueError(f"[{i}]", f"{', '.join(unknown)}: not a key of a {btype} balancer (it takes "
                             f"{', '.join(_KEYS)}, {', '.join(need)})")
        if missing:
            raise ValueError(f"[{i}]", f"missing {', '.join(missing)}")
        try:
            out.append(make_balancer(model, str(spec["name"]), btype, spec["link_a"], spec["xyz_a"], spec["link_b"],
                                     spec["xyz_b"], spec.get("action", "push"), {k: spec[k] for k in need if k in spec}))
        except (ValueError, TypeError) as e:
            raise ValueError(f"[{i}]", f"balancer {spec['name']!r}: {e}") from None
    try:
        return with_balancers(model, out)
    except ValueError as e:
        raise ValueError("", str(e)) from None


def _points(model, T, b):
    """Pins a and b in the base frame (N, 3) from body poses T (N, NB+1, 4, 4)."""
    pa = T[:, b.body_a, :3, :3] @ np.asarray(b.point_a) + T[:, b.body_a, :3, 3]
    pb = T[:, b.body_b, :3, :3] @ np.asarray(b.point_b) + T[:, b.body_b, :3, 3]
    return pa, pb


def balancer_lengths(model, q):
    """{balancer name: pin length L (N,) [m]} for q (N, nq) (or (nq,): then L is a scalar array)."""
    from urdf_dyn.algorithms.kinematics import body_poses
    Q = np.atleast_2d(np.asarray(q, float))
    T = body_poses(model, Q)
    out = {}
    for b in model.balancers:
        pa, pb = _points(model, T, b)
        L = np.linalg.norm(pb - pa, axis=1)
        out[b.name] = L if np.ndim(q) == 2 else L[0]
    return out


def _point_partials(model, T, body, p):
    """∂p/∂q (N, 3, nv) of a point p (N, 3) [base frame] fixed in ``body``: for each joint i on the body's
    support, R_i s_v + (R_i s_ω) × (p − o_i) with S_i = [s_ω; s_v] in body i's frame (RBDA §4.3, eq. 2.23)."""
    from urdf_dyn.algorithms.joints import motion_subspace
    N = p.shape[0]
    D = np.zeros((N, 3, model.nv))
    i = body
    while i > 0:
        S = motion_subspace(model.jtype[i], model.axis[i])
        R, o = T[:, i, :3, :3], T[:, i, :3, 3]
        w, v = R @ S[:3], R @ S[3:]
        D[:, :, i - 1] = v + np.cross(w, p - o)
        i = int(model.parent[i])
    return D


def balancer_generalized_forces(model, q, detail=False):
    """The balancers' generalised force τ = Σ F(L) ∂L/∂q (module docstring) for q (nq,) or (N, nq).

    Returns τ (nv,) or (N, nv) [N m | N]; with ``detail`` also {name: (L (N,) [m], F (N,) [N])}.
    Raises StateError where a gas spring bottoms out (``Balancer.force``)."""
    from urdf_dyn.algorithms.kinematics import body_poses
    Q = np.atleast_2d(np.asarray(q, float))
    tau = np.zeros((Q.shape[0], model.nv))
    info = {}
    if model.balancers:
        T = body_poses(model, Q)
        for b in model.balancers:
            pa, pb = _points(model, T, b)
            d = pb - pa
            L = np.linalg.norm(d, axis=1)
            if np.any(L <= 1e-12):
                raise StateError(f"balancer {b.name!r}: its pins coincide (length 0): its line of action is "
                                 "undefined")
            u = d / L[:, None]
            F = b.force(L)
            dL = (np.einsum("nk,nkj->nj", u, _point_partials(model, T, b.body_b, pb))
                  - np.einsum("nk,nkj->nj", u, _point_partials(model, T, b.body_a, pa)))
            tau += F[:, None] * dL
            info[b.name] = (L, F)
    tau = tau if np.ndim(q) == 2 else tau[0]
    return (tau, info) if detail else tau
