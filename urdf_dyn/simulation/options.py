"""``SimulateOptions``: how ``simulation.simulate.simulate`` integrates (the integrator and its tolerances, the
output period, the closed-loop solver, the end stops), one frozen record passed as ``options=`` — as
``machines.lift_chart.LiftChartOptions`` is to ``lift_chart`` and Pinocchio's ``ProximalSettings`` to its
solvers — so that the function's signature holds what is simulated (the model, the start state, the duration,
the controller) and the settings travel together (a scenario's ``solver:`` section maps onto it key by key)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SimulateOptions", "MAX_STEPS"]

MAX_STEPS = 200_000
"""Default bound on ``simulate``'s integrator steps (``SimulateOptions.max_steps``: a smooth 10 s run of a
12-joint machine takes a few thousand; 2·10⁵ steps of a stiff run take minutes, not hours)."""


@dataclass(frozen=True)
class SimulateOptions:
    """How ``simulate`` integrates.

    dt_out: output sample period [s]. integrator: a scipy ``solve_ivp`` method name ("DOP853", "RK45", "Radau",
        "LSODA", ...); rtol, atol: its relative and absolute tolerances; max_step [s] its largest step.
    passive: add URDF ``<dynamics damping>`` (−b q̇), Gazebo joint springs (−k (q − q_ref)) and loop-joint
        damping (``constraints.passive.passive_forces``); the same switch and default as every function.
    progress: show a tqdm progress bar (None: only on a terminal).
    Closed loops (``<loop>``, ``<mimic>``): closed-loop FD by ``loop_solver``, one of
        ``constraints.forward.METHODS``; "lambda" (RBDA §8.5 method 2) runs compiled
        (``constraints.forward.fast_qdd``) unless ``compiled=False`` (the readable reference; "fast", the
        former name of the compiled λ method, still works with a FutureWarning), with Baumgarte stabilisation
        of time constant ``t_stab`` [s] (RBDA §8.3; None: none). If ``assemble_initial``, q0 is first
        assembled (least squares, nearest solution) and qd0 projected onto K q̇ = 0. The per-loop residual
        ‖δ_k‖ is recorded; past ``residual_tol`` [m, rad] the run stops.
    limits: the URDF ``<limit lower upper>`` of revolute and prismatic joints (cylinder strokes) act as
        inelastic end stops (``simulation.limits``: Gauss's principle with inequality rows, solved as a QP by
        ProxSuite, through the loops; an impact sets the velocity into a stop to zero); the Trajectory records
        ``stop_active`` and ``stop_force``, ``meta["impacts"]`` the impulses. False: joints pass their limits.
    max_steps: bound on the integrator's steps; past it the run stops with SimulationError keeping the samples
        computed so far (a stiff or singular motion would otherwise step at 1e-7 s for hours)."""
    dt_out: float = 0.01
    integrator: str = "DOP853"
    rtol: float = 1e-8
    atol: float = 1e-10
    passive: bool = True
    max_step: float = np.inf
    progress: object = None
    t_stab: float = 0.1
    loop_solver: str = "lambda"
    residual_tol: float = 1e-3
    assemble_initial: bool = True
    limits: bool = True
    max_steps: int = MAX_STEPS
    compiled: bool = True
