"""Guards of ``simulate``: states it refuses up front and changes along a run it warns about."""
from __future__ import annotations

import numpy as np

from urdf_dyn.errors import StateError

__all__ = ["check_floating_inertia", "warn_variable_mobility"]


def check_floating_inertia(model, q0):
    """Raise StateError if the joint-space inertia H of a floating-base model is singular at q0 (a massless
    floating body, or massless links whose joints move the same bodies as the base's six coordinates): the
    integrator would otherwise crawl at ~1e-7 s steps through near-infinite accelerations."""
    from urdf_dyn.algorithms.dynamics import mass_matrix
    H = mass_matrix(model, q0)
    w = np.linalg.eigvalsh(0.5 * (H + H.T))
    if not (w[0] > 1e-10 * max(w[-1], 1e-300)):
        massless = [name for name, m in model.link_masses.items() if not m > 0]
        raise StateError(f"{model.name}: the joint-space inertia H is singular at q0 (smallest eigenvalue {w[0]:.3g} "
                         f"of largest {w[-1]:.3g}): a floating base cannot be simulated with massless links "
                         f"{', '.join(massless) or '(none: the masses are degenerate)'}; give them mass and inertia")


def warn_variable_mobility(model, t, ranks, meta):
    """Warn (ConstraintWarning) if the rank of K changes along the trajectory (RBDA §8.10)."""
    import warnings

    from urdf_dyn.constraints.loops import ConstraintWarning
    meta["rank_min"], meta["rank_max"] = int(ranks.min()), int(ranks.max())
    if ranks.min() != ranks.max():
        i = int(np.argmax(ranks != ranks[0]))
        warnings.warn(f"{model.name}: the loop constraints' rank changes from {ranks[0]} to {ranks[i]} at t = "
                      f"{t[i]:.4g} s: variable mobility (RBDA §8.10), the mechanism passed a singular pose",
                      ConstraintWarning, stacklevel=3)
