"""From ``<mimic>`` to loops: the closed chains that ROS-Industrial arm descriptions fake with mimic joints,
written as ``<loop>`` closures with the actuator on the real motor shaft.

Two patterns are recognised, per mimic leader M (parent link P, child link C, unit axis a_M), at the home pose
(every independent joint 0, each follower at its offset), from the followers' joint origins O and axes:

- **parallelogram** (a crank and a tie rod): a follower on P that turns with C (multiplier ±1, m·a_F = a_M:
  the crank) and a follower on C that does not turn relative to P (m·a_F = −a_M: the tie rod). The rod closes
  on the crank at the pin x = O_rod + (O_crank − O_M)⊥, the component ⊥ a_M (a revolute pin; along the axis
  the rod's own plane is kept). The crank's rod end then moves as the rod's for every q_M (checked on the
  mimic model at several angles; a follower pair that fails it is "cannot decide": give ``--pin``). If the
  crank turns about the axis of P's own joint J_P (coaxial), the real motor sits on J_P's parent (the
  turret): the crank joint is moved there and driven, M becomes passive, and the crank's angle
  q_crank = q_M + s·q_JP is the leader's angle measured from J_P's parent (FANUC's and ABB's J3 "to the
  horizontal", s = ±1 from the axes' directions).
- **balancer** (a cylinder): a follower on P and a follower on C that turn at the same rate seen from P
  (the mimic multipliers are a linearisation of the pin triangle): a prismatic loop between the two pins,
  along the line joining them. The followers become passive joints set by the loop.

Anything else among the followers is reported in one line naming the links, with ``--pin LINK_A:LINK_B=x,y,z``
as the way out: a revolute loop between LINK_A and LINK_B at (x, y, z) in LINK_A's frame (also used to
override the pin found for a parallelogram). Mimics are dropped, a ``<transmission>`` is written per motor
when the file has none, and efforts are kept as written (``effort="0"`` in a ROS-Industrial file means
unknown). The loop element is the one of ``docs/manual.md`` ("Closed loops")."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
from lxml import etree

from urdf_dyn.errors import ModelError
from urdf_dyn.io._urdf_text import fmt

__all__ = ["Closure", "MimicLoops", "close_mimic_loops", "parse_pin"]

_TOL = 1e-9          # m: a pin that moves apart by more than this on the mimic model is not a pin
_PIN = re.compile(r"^\s*([^:=\s]+)\s*:\s*([^:=\s]+)\s*=\s*([^,]+),([^,]+),([^,]+)\s*$")


@dataclass(frozen=True)
class Closure:
    """One closed chain found: ``kind`` parallelogram | balancer | pin; ``leader`` the mimic leader joint;
    ``loop`` the ``<loop>`` name; ``links`` (predecessor, successor); ``pin`` (3,) world position [m] of the
    pin at the home pose (the predecessor's pin of a balancer); ``text`` one line for the user."""
    kind: str
    leader: str
    loop: str
    links: tuple
    pin: np.ndarray
    text: str
    spec: tuple = field(default=(), repr=False)   # (type, pred, T_P, succ, T_S, axis in Fp) of the <loop>


@dataclass(frozen=True)
class MimicLoops:
    """The converted description. ``urdf``: its text; ``closures``: the loops written; ``motors``: the
    driven joints of the new model in order; ``mapping``: {new joint: {old joint: coefficient}} giving each
    new motor angle as a linear combination of the old file's independent joints (q_new = C q_old, no offset:
    the home poses coincide); ``passive``: joints now set by the loops; ``dropped``: the ``<mimic>`` elements
    removed, as (follower, leader, multiplier, offset); ``lines``: the report printed by the CLI."""
    urdf: str
    closures: tuple
    motors: tuple
    mapping: dict
    passive: tuple
    dropped: tuple
    lines: tuple = field(default=())

    def to_new(self, q_old: dict) -> dict:
        """New motor angles {joint: rad or m} from the old file's independent joint angles {joint: value}."""
        return {j: sum(c * float(q_old[o]) for o, c in row.items()) for j, row in self.mapping.items()}

    def to_old(self, q_new: dict) -> dict:
        """The old file's independent joint angles from the new motor angles (the inverse of ``to_new``)."""
        old = sorted({o for row in self.mapping.values() for o in row})
        C = np.array([[self.mapping[j].get(o, 0.0) for o in old] for j in self.motors])
        x = np.linalg.solve(C, np.array([float(q_new[j]) for j in self.motors]))
        return dict(zip(old, x))


def parse_pin(text: str):
    """``LINK_A:LINK_B=x,y,z`` → ((LINK_A, LINK_B), (3,) point [m] in LINK_A's frame). Raises ModelError."""
    m = _PIN.match(str(text))
    try:
        xyz = np.array([float(v) for v in m.groups()[2:]]) if m else None
    except ValueError:
        xyz = None
    if xyz is None or not np.all(np.isfinite(xyz)):
        raise ModelError(f"--pin {text!r}: expected LINK_A:LINK_B=x,y,z (the pin in LINK_A's frame, metres)")
    return (m.group(1), m.group(2)), xyz


def _unit(v):
    return np.asarray(v, float) / np.linalg.norm(v)


def _perp(v, a):
    return v - a * (a @ v)


class _Arm:
    """The old model, its XML, and home-pose kinematics of the mimic model."""

    def __init__(self, model):
        from urdf_dyn.algorithms.kinematics import forward_kinematics
        self.model, self._fk = model, forward_kinematics
        self.root = etree.fromstring(model.urdf_xml.encode())
        self.joint_el = {j.get("name"): j for j in self.root.findall("joint")}
        self.parent = {n: j.find("parent").get("link") for n, j in self.joint_el.items()}
        self.child = {n: j.find("child").get("link") for n, j in self.joint_el.items()}
        self.by_child = {c: n for n, c in self.child.items()}
        self.mimic = {mm.joint: mm for mm in model.mimic}
        self.T = self.poses({})

    def where(self, joint):
        """(file, line, element) naming ``joint`` in the user's file (the line where it is plain URDF)."""
        src = self.model.source
        line = None
        if src and src != "<string>" and not src.endswith(".xacro"):
            try:
                el = etree.parse(src).getroot().find(f"joint[@name='{joint}']")
                line = el.sourceline if el is not None else None
            except (OSError, etree.XMLSyntaxError):
                line = None
        return dict(file=src, line=line, element=f"joint {joint}")

    def poses(self, q_leaders: dict):
        """World poses {link: (4, 4)} of the mimic model with the given leader angles (others 0)."""
        m = self.model
        q = m.neutral()
        for j, v in q_leaders.items():
            q[m.q_index(j)] = v
        for f, mm in self.mimic.items():
            q[m.q_index(f)] = mm.multiplier * q_leaders.get(mm.leader, 0.0) + mm.offset
        return self._fk(m, q)

    def axis_world(self, joint, T=None):
        """Unit axis of ``joint`` in the world at the home pose (or the poses T)."""
        T = self.T if T is None else T
        ax = self.joint_el[joint].find("axis")
        a = np.array([float(v) for v in ax.get("xyz").split()]) if ax is not None else np.array([1.0, 0, 0])
        return _unit(T[self.child[joint]][:3, :3] @ a)

    def origin_world(self, joint):
        return self.T[self.child[joint]][:3, 3]


def close_mimic_loops(source, pins=None, package_dirs=None, xacro_args=None, trust_xacro=False) -> MimicLoops:
    """Turn the ``<mimic>``-faked parallelograms and balancers of an arm description into ``<loop>``s.

    Args:
        source: path of a URDF/xacro file, URDF text, or a Model (``Model.urdf_xml`` is converted).
        pins: {(LINK_A, LINK_B): (x, y, z)} or a list of ``"LINK_A:LINK_B=x,y,z"`` — a revolute pin between
            the two links at (x, y, z) [m] in LINK_A's frame, where the converter cannot decide or to override
            the pin it finds.
        package_dirs, xacro_args, trust_xacro: as for ``urdf_dyn.load``.

    Returns:
        ``MimicLoops``: the new URDF text (loops, transmissions, no mimics) and the angle mapping.

    Raises:
        ModelError naming the file and joint: no mimic to convert, a follower that fits no pattern (with the
        ``--pin`` to give), a pin that does not close, a ``--pin`` naming an unknown link.
    """
    from urdf_dyn.io.urdf import parse_urdf
    model = source if hasattr(source, "urdf_xml") else parse_urdf(source, package_dirs=package_dirs,
                                                                    xacro_args=xacro_args, trust_xacro=trust_xacro)
    arm = _Arm(model)
    pins = dict(parse_pin(p) for p in pins) if isinstance(pins, (list, tuple)) else dict(pins or {})
    for (a, b) in pins:
        for ln in (a, b):
            if ln not in model.links:
                raise ModelError(f"--pin {a}:{b}: no link {ln!r} in the robot", file=model.source)
    if not arm.mimic:
        raise ModelError("no <mimic> joint: nothing to convert (the file has no mimic-faked loop)",
                         file=model.source)
    closures, passive, driven, mapping, used = [], [], {}, {}, set()
    leaders = sorted({mm.leader for mm in arm.mimic.values()}, key=list(model.joint_names).index)
    for M in leaders:
        _leader(arm, M, pins, closures, passive, driven, mapping, used)
    for (a, b) in pins:
        if (a, b) not in used:
            raise ModelError(f"--pin {a}:{b}: these links are not a mimic-faked closed chain (no follower of "
                             "a common leader joins them)", file=model.source)
    return _write(arm, closures, passive, driven, mapping)


def _leader(arm, M, pins, closures, passive, driven, mapping, used):
    """Classify the followers of the leader joint M and record the closures they form."""
    P, C = arm.parent[M], arm.child[M]
    aM = arm.axis_world(M)
    followers = [f for f, mm in arm.mimic.items() if mm.leader == M]
    rate = {}
    for f in followers:
        if arm.parent[f] not in (P, C):
            rate[f] = None
            continue
        w = arm.mimic[f].multiplier * arm.axis_world(f) + (aM if arm.parent[f] == C else 0.0)
        rate[f] = w if abs(abs(arm.axis_world(f) @ aM) - 1) < 1e-9 else None
    cranks = [f for f in followers if arm.parent[f] == P and rate[f] is not None and np.allclose(rate[f], aM)]
    rods = [f for f in followers if arm.parent[f] == C and rate[f] is not None and np.allclose(rate[f], 0)]
    left = [f for f in followers if f not in cranks + rods]
    if len(cranks) == 1 and len(rods) == 1:
        _parallelogram(arm, M, cranks[0], rods[0], pins, closures, passive, driven, mapping, used)
    else:
        left += cranks + rods
    on_p = [f for f in left if arm.parent[f] == P and rate[f] is not None]
    on_c = [f for f in left if arm.parent[f] == C and rate[f] is not None]
    for fp in on_p:
        match = [fc for fc in on_c if np.allclose(rate[fc], rate[fp], atol=1e-9)
                 and np.linalg.norm(arm.origin_world(fc) - arm.origin_world(fp)) > 1e-6]
        # several: the one whose link name ends as this one's (piston_left ↔ balancer_left); equal
        # endings are only taken where the candidates are the same geometry (twin balancers)
        match.sort(key=lambda fc: -_common_end(arm.child[fc], arm.child[fp]))
        if len(match) > 1 and _common_end(arm.child[match[0]], arm.child[fp]) == _common_end(
                arm.child[match[1]], arm.child[fp]) and not np.allclose(arm.origin_world(match[0]),
                                                                       arm.origin_world(match[1])):
            continue
        if match:
            on_c.remove(match[0])
            left = [f for f in left if f not in (fp, match[0])]
            _balancer(arm, M, fp, match[0], closures, passive)
    for f in left:
        other = [k for k in pins if arm.child[f] in k]
        if not other:
            others = sorted({arm.child[g] for g in followers if g != f} | {P, C})
            raise ModelError(f"cannot decide where mimic follower link {arm.child[f]!r} (of {M}) closes: it is "
                             "neither a parallelogram's crank or tie rod nor a balancer's end; give "
                             f"--pin {arm.child[f]}:LINK=x,y,z (LINK one of {', '.join(others)})", **arm.where(f))
        (a, b), xyz = other[0], pins[other[0]]
        used.add((a, b))
        _pin_loop(arm, M, f, a, b, xyz, closures, passive)


def _common_end(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _closes(arm, M, a, pa, b, pb):
    """Largest distance [m] between the point pa of link a and pb of link b on the mimic model over q_M."""
    gap = 0.0
    lo, hi = arm.model.lower[arm.model.joint_names.index(M)], arm.model.upper[arm.model.joint_names.index(M)]
    lo, hi = (max(lo, -np.pi), min(hi, np.pi)) if np.isfinite(lo) and np.isfinite(hi) else (-np.pi, np.pi)
    for t in np.linspace(lo, hi, 7):
        T = arm.poses({M: t})
        xa = T[a][:3, :3] @ pa + T[a][:3, 3]
        xb = T[b][:3, :3] @ pb + T[b][:3, 3]
        gap = max(gap, float(np.linalg.norm(xa - xb)))
    return gap


def _local(arm, link, x):
    T = arm.T[link]
    return T[:3, :3].T @ (x - T[:3, 3])


def _parallelogram(arm, M, crank, rod, pins, closures, passive, driven, mapping, used):
    aM = arm.axis_world(M)
    lc, lr = arm.child[crank], arm.child[rod]
    given = [k for k in pins if set(k) == {lc, lr}]
    if given:
        used.add(given[0])
        a, b = given[0]
        x = arm.T[a][:3, :3] @ pins[given[0]] + arm.T[a][:3, 3]
    else:
        x = arm.origin_world(rod) + _perp(arm.origin_world(crank) - arm.origin_world(M), aM)
    gap = _closes(arm, M, lr, _local(arm, lr, x), lc, _local(arm, lc, x))
    if gap > _TOL * max(1.0, np.linalg.norm(x)):
        raise ModelError(f"cannot decide the pin between tie rod {lr!r} and crank {lc!r} (of {M}): the point "
                         f"{fmt(np.round(x, 6))} (world, home pose) moves apart by {gap:.3g} m as {M} turns; "
                         f"give --pin {lr}:{lc}=x,y,z", **arm.where(rod))
    name = f"{lr}_{lc}_pin"
    T_P = np.eye(4)
    T_P[:3, 3] = _local(arm, lr, x)
    T_S = np.linalg.inv(arm.T[lc]) @ arm.T[lr] @ T_P
    ax = arm.T[lr][:3, :3].T @ aM
    closures.append(Closure("parallelogram", M, name, (lr, lc), x, f"parallelogram of {M}: tie rod {lr} "
                            f"({rod}) closes on crank {lc} ({crank}) at the pin {fmt(np.round(x, 6))} m "
                            f"(world, home pose): revolute loop {name}", ("revolute", lr, T_P, lc, T_S, ax)))
    # the motor: on the turret when the crank is coaxial with the joint J_P that carries P
    P = arm.parent[M]
    JP = arm.by_child.get(P)
    mm = arm.mimic[crank]
    kappa = float(np.sign(mm.multiplier))
    coaxial = False
    if JP is not None and arm.model.joint_types[arm.model.joint_names.index(JP)] in ("revolute", "continuous"):
        aP = arm.axis_world(JP)
        off = arm.origin_world(crank) - arm.origin_world(JP)
        coaxial = abs(abs(aP @ aM) - 1) < 1e-9 and np.linalg.norm(_perp(off, aP)) < 1e-9
    row = {M: abs(mm.multiplier)}
    if coaxial:
        s = kappa * float(np.sign(arm.axis_world(JP) @ arm.axis_world(crank)))
        row[JP] = s
    driven[crank] = dict(kappa=kappa, turret=arm.parent[JP] if coaxial else None, leader=M)
    mapping[crank] = row
    passive.extend([M, rod])


def _balancer(arm, M, fp, fc, closures, passive):
    lp, lc = arm.child[fp], arm.child[fc]
    A, B = arm.origin_world(fp), arm.origin_world(fc)
    d = _unit(B - A)
    name = f"{lp}_{lc}_slide"
    T_P = np.eye(4)
    T_S = np.linalg.inv(arm.T[lc]) @ arm.T[lp] @ T_P
    # the exact rate of the pin line seen from P at q_M = 0, against the mimic's linearisation
    aM, h = arm.axis_world(M), 1e-6
    ang = []
    for t in (-h, h):
        T = arm.poses({M: t})
        r = T[lc][:3, 3] - T[lp][:3, 3]
        ang.append(np.arctan2(np.cross(d, r) @ aM, d @ r))
    exact = (ang[1] - ang[0]) / (2 * h)
    mlt = arm.mimic[fp].multiplier * float(arm.axis_world(fp) @ aM)
    closures.append(Closure("balancer", M, name, (lp, lc), A, f"balancer of {M}: {lp} ({fp}) and {lc} ({fc}) "
                            f"become a cylinder, the prismatic loop {name} between the pins "
                            f"{fmt(np.round(A, 6))} and {fmt(np.round(B, 6))} m ({np.linalg.norm(B - A):.4g} m "
                            f"apart at the home pose); the mimic's rate {mlt:.4g}·{M} is a linearisation, the "
                            f"pin line's exact rate at {M} = 0 is {exact:.4g}",
                            ("prismatic", lp, T_P, lc, T_S, arm.T[lp][:3, :3].T @ d)))
    passive.extend([fp, fc])


def _pin_loop(arm, M, f, a, b, xyz, closures, passive):
    x = arm.T[a][:3, :3] @ np.asarray(xyz, float) + arm.T[a][:3, 3]
    gap = _closes(arm, M, a, np.asarray(xyz, float), b, _local(arm, b, x))
    if gap > _TOL * max(1.0, np.linalg.norm(x)):
        raise ModelError(f"--pin {a}:{b}={fmt(xyz)}: the two links move apart there by {gap:.3g} m as {M} "
                         "turns on the mimic model: not a pin of this chain", **arm.where(f))
    name = f"{a}_{b}_pin"
    T_P = np.eye(4)
    T_P[:3, 3] = xyz
    T_S = np.linalg.inv(arm.T[b]) @ arm.T[a] @ T_P
    closures.append(Closure("pin", M, name, (a, b), x, f"pin given for {M}: {a} closes on {b} at "
                            f"{fmt(np.round(x, 6))} m (world, home pose): revolute loop {name}",
                            ("revolute", a, T_P, b, T_S, arm.T[a][:3, :3].T @ arm.axis_world(M))))
    passive.append(f)


def _write(arm, closures, passive, driven, mapping):
    from urdf_dyn.io.mimic_loops_write import write_converted
    return write_converted(arm, closures, passive, driven, mapping, MimicLoops)
