"""Example systems: seed 001's crank-slider (section 4) and the Chaplygin sleigh (a non-holonomic knife edge)."""
from __future__ import annotations

from urdf_dyn.errors import ModelError
from urdf_dyn.gauss.system import PlanarSystem, _sympy

__all__ = ["crank_slider", "chaplygin_sleigh"]


def crank_slider(m1=0.37, m2=0.77, m3=0.1, l1=0.15, l2=0.56, tau=-0.5, k=5.0, c=1.0, g=9.81,
                 constraints="joints", spring_anchor=1.0, I1=None, I2=None) -> PlanarSystem:
    """Seed 001's crank-slider (its Fig. 1, eqs. (17)–(21)) in q = [x1, y1, θ1, x2, y2, θ2, x3]: crank
    (body 1, pivot at the origin, centroid at l1/2), connecting rod (body 2), slider (body 3, x only, on
    y = 0); paper plane x-y, gravity g along −y; θ absolute, counter-clockwise; torque τ on the crank;
    a spring-damper from the slider to a wall anchor at (``spring_anchor``, 0) [m], relaxed at
    x3 = l1 + l2, so Q7 = k (l1 + l2 − x3) − c ẋ3 as in the paper's eq. (19).

    constraints: ``"joints"`` — three pin joints (O: ground–crank, A: crank–rod, B: rod–slider; their
    multipliers are pin forces); ``"paper"`` — the paper's six φ rows (eq. (21)) typed as written.
    Both describe the same constraint manifold and give the same accelerations.
    I1, I2: centroidal inertias [kg m²] (default: slender rods, m l² / 12, as in the paper)."""
    sp = _sympy()
    s = PlanarSystem(gravity=(0.0, -g), name="crank_slider (seed 001)")
    crank = s.add_body("crank", m1, m1 * l1 ** 2 / 12 if I1 is None else I1)
    rod = s.add_body("rod", m2, m2 * l2 ** 2 / 12 if I2 is None else I2)
    slider = s.add_body("slider", m3, 0.0, coords=("x",))
    if constraints == "joints":
        s.revolute(crank, (-l1 / 2, 0.0), None, (0.0, 0.0), name="O")
        s.revolute(crank, (l1 / 2, 0.0), rod, (-l2 / 2, 0.0), name="A")
        s.revolute(rod, (l2 / 2, 0.0), slider, (0.0, 0.0), name="B")
    elif constraints == "paper":
        x1, y1, t1, x2, y2, t2, x3 = s.q
        for i, e in enumerate([x1 - l1 / 2 * sp.cos(t1), y1 - l1 / 2 * sp.sin(t1),
                               l1 * sp.cos(t1) - x2 + l2 / 2 * sp.cos(t2), l1 * sp.sin(t1) - y2 + l2 / 2 * sp.sin(t2),
                               x2 + l2 / 2 * sp.cos(t2) - x3, y2 + l2 / 2 * sp.sin(t2)]):
            s.constraint(e, f"phi{i + 1}")
    else:
        raise ValueError(f"constraints must be 'joints' or 'paper', got {constraints!r}")
    s.torque(crank, tau)
    if not spring_anchor > l1 + l2:
        raise ModelError(f"crank_slider: spring_anchor must lie beyond the slider's reach l1 + l2 = {l1 + l2} m")
    s.spring_damper(slider, (0.0, 0.0), None, (spring_anchor, 0.0), k=k, length0=spring_anchor - (l1 + l2), c=c)
    return s


def chaplygin_sleigh(m=1.0, inertia=0.05, a=0.3, gravity=(0.0, 0.0)) -> PlanarSystem:
    """Chaplygin's sleigh: one body on a horizontal plane, a knife edge at distance ``a`` [m] behind the
    centroid along the body x axis (q = [x, y, θ] of the centroid). Energy is conserved (the knife
    edge does no work); with v the contact point's speed along the blade and ω = θ̇ (Bloch,
    *Nonholonomic Mechanics and Control* §1.7): v̇ = a ω², ω̇ = −m a v ω / (I + m a²)."""
    s = PlanarSystem(gravity=gravity, name="chaplygin_sleigh")
    b = s.add_body("sleigh", m, inertia)
    s.knife_edge(b, (-a, 0.0), (1.0, 0.0), name="blade")
    return s
