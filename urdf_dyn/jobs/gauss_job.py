"""The launch job ``job: gauss``: seed 001's crank-slider by Gauss's principle, the paper's figures 2–9,
and the comparison with the tree + ``<loop>`` model.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import numpy as np
from pydantic import Field

from urdf_dyn.errors import SimulationError, StateError
from urdf_dyn.io.files import atomic_path

from urdf_dyn.gauss.examples import crank_slider
from urdf_dyn.gauss.simulate import simulate
from urdf_dyn.gauss.solvers import accelerations, eq16_gap
from urdf_dyn.gauss.system import CRANK_SLIDER_PAPER, METHODS, PAPER_Q0
from urdf_dyn.launch.document import (LaunchDocument, NonNegativeFloat, PositiveFloat, Section, build_model, number,
                                      output_dir)
from urdf_dyn.launch.registry import Job

__all__ = ["GaussSolver", "GaussOutputs", "GaussDocument", "run_launch_job", "JOB"]



class GaussSolver(Section):
    integrator: str = Field("DOP853", description="scipy solve_ivp method")
    rtol: PositiveFloat = 1e-10
    atol: PositiveFloat = 1e-12
    dt_out: PositiveFloat = 0.01
    t_stab: Optional[PositiveFloat] = 0.1
    max_step: Optional[PositiveFloat] = None
    loop_solver: Literal["direct", "lambda", "nullspace", "sparse", "gauss"] = Field(
        "nullspace", description="closed-loop solver of the tree + <loop> comparison")


class GaussOutputs(Section):
    directory: Optional[str] = None
    trajectory: Optional[str] = None
    report: Optional[str] = None
    animation: Optional[str] = None  # not drawn by this job; accepted so that the common helpers apply
    animation_fps: NonNegativeFloat = 30.0
    animation_size: str = "640x480"


class GaussDocument(LaunchDocument):
    """``job: gauss``: seed 001's crank-slider by Gauss's principle (``gauss`` keys: mechanism, parameters,
    q0, qd0, accelerations, stabilisation, constraints, compare_tree, compare_paper16, figures; checked by
    the job, docs/gauss.md)."""
    duration: PositiveFloat = 10.0
    solver: GaussSolver = Field(default_factory=GaussSolver)
    outputs: GaussOutputs = Field(default_factory=GaussOutputs)
    gauss: Optional[dict] = None


_GAUSS_KEYS = {"mechanism", "parameters", "q0", "qd0", "accelerations", "stabilisation", "constraints",
               "compare_tree", "compare_paper16", "figures"}
_FIGURES = [  # (file, paper figure, title, quantity, unit)
    ("fig2_crank_x.png", 2, "crank centroid x displacement", "x1", "m"),
    ("fig3_crank_vx.png", 3, "crank centroid x velocity", "vx1", "m/s"),
    ("fig4_crank_y.png", 4, "crank centroid y displacement", "y1", "m"),
    ("fig5_crank_vy.png", 5, "crank centroid y velocity", "vy1", "m/s"),
    ("fig6_crank_angle.png", 6, "crank angle θ1", "th1", "rad"),
    ("fig7_crank_rate.png", 7, "crank angular velocity dθ1/dt", "w1", "rad/s"),
    ("fig8_slider_x.png", 8, "slider x displacement", "x3", "m"),
    ("fig9_slider_vx.png", 9, "slider x velocity", "vx3", "m/s"),
]
_LABELS = dict(x1="x1", vx1="dx1/dt", y1="y1", vy1="dy1/dt", th1="θ1", w1="dθ1/dt", x3="x3", vx3="dx3/dt")


def _series_descriptor(tr):
    c = tr.coordinate
    return dict(x1=c("crank.x"), vx1=c("crank.x", "qd"), y1=c("crank.y"), vy1=c("crank.y", "qd"),
                th1=c("crank.theta"), w1=c("crank.theta", "qd"), x3=c("slider.x"), vx3=c("slider.x", "qd"))


def _series_tree(tr, l1):
    """The same quantities from the tree + loop trajectory (x-z plane: our z is the paper's y)."""
    th, w = tr.q[:, 0], tr.qd[:, 0]
    return dict(x1=l1 / 2 * np.cos(th), vx1=-l1 / 2 * np.sin(th) * w, y1=l1 / 2 * np.sin(th),
                vy1=l1 / 2 * np.cos(th) * w, th1=th, w1=w, x3=tr.q[:, 2], vx3=tr.qd[:, 2])


def _tidy(x, tol=1e-12):
    return 0.0 if abs(x) < tol else float(x)


def _num(launch, v, key, positive=False):
    x = number(launch, v, key)
    if positive and not x > 0:
        raise launch.err(key, f"must be > 0, got {x}")
    return x


def _vector(launch, v, key, n):
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise launch.err(key, f"expected a list of {n} numbers (x1, y1, θ1, x2, y2, θ2, x3), got {v!r}")
    return np.array([_num(launch, x, f"{key}[{i}]") for i, x in enumerate(v)])


def _read_gauss_section(launch):
    g = launch.data.get("gauss") or {}
    if not isinstance(g, dict):
        raise launch.err("gauss", f"expected a mapping, got {type(g).__name__}")
    for k in g:
        if k not in _GAUSS_KEYS:
            raise launch.err(f"gauss.{k}", f"unknown key (known: {', '.join(sorted(_GAUSS_KEYS))})")
    mech = g.get("mechanism", "crank_slider")
    if mech != "crank_slider":
        raise launch.err("gauss.mechanism", f"unknown mechanism {mech!r} (built in: crank_slider)")
    params = dict(CRANK_SLIDER_PAPER)
    p = g.get("parameters") or {}
    if not isinstance(p, dict):
        raise launch.err("gauss.parameters", "expected a mapping such as {m1: 0.37, tau: -0.5}")
    for k, v in p.items():
        if k not in params:
            raise launch.err(f"gauss.parameters.{k}", f"unknown parameter (known: {', '.join(params)})")
        params[k] = _num(launch, v, f"gauss.parameters.{k}", positive=k in ("m1", "m2", "m3", "l1", "l2"))
        if k in ("k", "c", "g") and params[k] < 0:
            raise launch.err(f"gauss.parameters.{k}", f"must be >= 0, got {params[k]}")
    if params["l2"] <= params["l1"]:
        raise launch.err("gauss.parameters", f"need l2 > l1 for a crank that turns (l1 = {params['l1']}, l2 = {params['l2']})")
    opts = dict(
        params=params,
        q0=_vector(launch, g.get("q0", list(PAPER_Q0)), "gauss.q0", 7),
        qd0=_vector(launch, g.get("qd0", [0.0] * 7), "gauss.qd0", 7),
        accel=g.get("accelerations", "gauss"), stab=g.get("stabilisation", "baumgarte"),
        constraints=g.get("constraints", "joints"), compare_tree=g.get("compare_tree", True),
        compare_paper16=g.get("compare_paper16", True), figures=g.get("figures", True))
    if opts["accel"] not in METHODS:
        raise launch.err("gauss.accelerations", f"unknown method {opts['accel']!r} ({', '.join(METHODS)})")
    if opts["stab"] not in ("baumgarte", "projection", "none", None):
        raise launch.err("gauss.stabilisation", f"unknown stabilisation {opts['stab']!r} (baumgarte, projection, none)")
    if opts["constraints"] not in ("joints", "paper"):
        raise launch.err("gauss.constraints", f"{opts['constraints']!r}: use joints or paper")
    for k in ("compare_tree", "figures"):
        if not isinstance(opts[k], bool):
            raise launch.err(f"gauss.{k}", f"expected true or false, got {opts[k]!r}")
    c16 = opts["compare_paper16"]
    if isinstance(c16, bool):
        opts["compare_paper16"] = 2.0 if c16 else None
    else:
        opts["compare_paper16"] = _num(launch, c16, "gauss.compare_paper16", positive=True)
    return opts


def _plot_figures(outdir, tr, tree, p16, params, written):
    from urdf_dyn.reports.plotting import pyplot, save_figure
    plt = pyplot()
    S = _series_descriptor(tr)
    T = _series_tree(tree, params["l1"]) if tree is not None else None
    P = _series_descriptor(p16) if p16 is not None else None
    for fname, fig_no, title, key, unit in _FIGURES:
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        ax.plot(tr.t, S[key], lw=1.6, color="C0", label="descriptor coordinates, Gauss minimiser")
        if T is not None:
            ax.plot(tree.t, T[key], lw=1.0, ls="--", color="C1", label="tree + <loop> (urdf_dyn.simulate)")
        ax.set_xlabel("t [s]")
        ax.set_ylabel(f"{_LABELS[key]} [{unit}]")
        ax.set_title(f"seed 001 Fig. {fig_no}: {title}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        written[fname.removesuffix(".png")] = save_figure(fig, outdir / fname)
    # overview: figs 2-9 on one page, the whole run and its first 2 s
    for key_out, fname, t_max in (("overview", "crank_slider_gauss.png", None),
                                  ("overview_2s", "crank_slider_gauss_2s.png", 2.0)):
        if t_max is not None and tr.t[-1] <= t_max:
            continue
        k = len(tr) if t_max is None else int(np.searchsorted(tr.t, t_max, side="right"))
        kt = None if T is None else (len(tree) if t_max is None else int(np.searchsorted(tree.t, t_max, side="right")))
        fig, axes = plt.subplots(4, 2, figsize=(11, 11), sharex=True)
        for ax, (_, fig_no, title, key, unit) in zip(axes.ravel(), _FIGURES):
            ax.plot(tr.t[:k], S[key][:k], lw=1.4, color="C0", label="Gauss (descriptor)")
            if T is not None:
                ax.plot(tree.t[:kt], T[key][:kt], lw=0.9, ls="--", color="C1", label="tree + loop")
            ax.set_title(f"Fig. {fig_no}: {title}", fontsize=9)
            ax.set_ylabel(f"{_LABELS[key]} [{unit}]")
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=7)
        for ax in axes[-1]:
            ax.set_xlabel("t [s]")
        fig.suptitle("Crank-slider of seed 001 by Gauss's principle (τ = %g N m, k = %g N/m, c = %g N s/m)%s"
                     % (params["tau"], params["k"], params["c"], "" if t_max is None else f", first {t_max:g} s"),
                     fontsize=11)
        fig.tight_layout()
        written[key_out] = save_figure(fig, outdir / fname)
    # diagnostics: constraint residuals, energy balance, and (if run) the gap to the tree solution
    rows = 3 if T is not None else 2
    fig, axes = plt.subplots(rows, 1, figsize=(8, 2.8 * rows + 0.4), sharex=True)
    ax = axes[0]
    ax.semilogy(tr.t, np.maximum(np.abs(tr.phi).max(axis=1), 1e-18), label="max |φ| [m]")
    ax.semilogy(tr.t, np.maximum(np.abs(tr.psi).max(axis=1), 1e-18), label="max |dφ/dt| [m/s]")
    ax.set_ylabel("constraint residual")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    ax.plot(tr.t, tr.energy - tr.energy[0], label="E(t) − E(0)")
    ax.plot(tr.t, tr.work, ls="--", label="work of τ and the damper")
    ax.plot(tr.t, tr.energy_balance, label="E − E(0) − W (should be 0; max |·| = %.1e J)"
            % np.abs(tr.energy_balance).max())
    ax.set_ylabel("[J]")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    if T is not None:
        ax = axes[2]
        ax.semilogy(tr.t, np.maximum(np.abs(S["th1"] - T["th1"]), 1e-18), label="|Δθ1| [rad]")
        ax.semilogy(tr.t, np.maximum(np.abs(S["x3"] - T["x3"]), 1e-18), label="|Δx3| [m]")
        ax.set_ylabel("descriptor − tree")
        ax.set_title("difference to the tree + <loop> model (its URDF rounds the rod inertia to 7 digits)",
                     fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, which="both")
    axes[-1].set_xlabel("t [s]")
    fig.tight_layout()
    written["diagnostics"] = save_figure(fig, outdir / "gauss_diagnostics.png")
    if P is not None:
        fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True)
        for ax, key, title, unit in ((axes[0, 0], "th1", "crank angle θ1", "rad"),
                                     (axes[0, 1], "w1", "crank angular velocity dθ1/dt", "rad/s"),
                                     (axes[1, 0], "x3", "slider x", "m"),
                                     (axes[1, 1], "vx3", "slider velocity", "m/s")):
            k = len(p16)
            ax.plot(tr.t[:k], S[key][:k], lw=1.4, label="Gauss minimiser (= KKT = tree + loop)")
            ax.plot(p16.t, P[key], lw=1.2, ls="--", color="C3", label="seed 001 eq. (16)")
            ax.set_title(title, fontsize=9)
            ax.set_ylabel(f"[{unit}]")
            ax.grid(alpha=0.3)
        axes[0, 0].legend(fontsize=7)
        for ax in axes[-1]:
            ax.set_xlabel("t [s]")
        fig.suptitle("The paper's closed form (16) integrated beside the true minimiser", fontsize=11)
        fig.tight_layout()
        written["paper16"] = save_figure(fig, outdir / "paper16_vs_gauss.png")


def run_launch_job(launch, out_dir=None, progress=None, echo=print):
    """``job: gauss``: seed 001's crank-slider by Gauss's principle in descriptor coordinates, compared
    with the tree + ``<loop>`` model of ``robot.file`` and with the paper's eq. (16); writes the trajectory,
    the PNGs of the paper's figures 2–9, diagnostics and a Markdown report. Returns (GaussTrajectory,
    {name: path written})."""
    opts = _read_gauss_section(launch)
    params = opts["params"]
    duration = launch.doc.duration
    s = launch.data.get("solver") or {}
    kw = dict(integrator=s.get("integrator", "DOP853"), rtol=number(launch, s.get("rtol", 1e-10), "solver.rtol"),
              atol=number(launch, s.get("atol", 1e-12), "solver.atol"),
              dt_out=number(launch, s.get("dt_out", 0.01), "solver.dt_out"))
    if "max_step" in s:
        kw["max_step"] = number(launch, s["max_step"], "solver.max_step")
    t_stab = s.get("t_stab", 0.1)
    t_stab = None if t_stab is None else number(launch, t_stab, "solver.t_stab")
    if t_stab is not None and t_stab <= 0:
        raise launch.err("solver.t_stab", "must be > 0 s")
    o = launch.data.get("outputs") or {}
    outdir = output_dir(launch, out_dir)

    system = crank_slider(**params, constraints=opts["constraints"])
    q0, qd0 = opts["q0"], opts["qd0"]
    if np.linalg.norm(system.phi(q0)) > 1e-6:
        raise launch.err("gauss.q0", f"not an assembled configuration: ‖φ(q0)‖ = {np.linalg.norm(system.phi(q0)):.3g} "
                                     "(the paper's is [0.075, 0, 0, 0.43, 0, 0, 0.71])")
    echo(f"{system!r}; {duration:g} s, accelerations {opts['accel']}, stabilisation {opts['stab']}"
         f" (t_stab {t_stab} s), {kw['integrator']} rtol={kw['rtol']:g}")
    try:
        tr = simulate(system, q0, qd0, duration, solver=opts["accel"], stabilisation=opts["stab"], t_stab=t_stab, **kw)
    except (ValueError, StateError) as e:
        raise launch.err("solver", str(e)) from None
    written = {}
    lines = []
    trajs = o.get("trajectory", ["gauss_trajectory.npz", "gauss_trajectory.csv"])
    for name in [trajs] if isinstance(trajs, str) else trajs:
        written[name] = tr.save(outdir / name)

    # the paper's formula against the miniser: at q0 and at a generic state of the run
    k_mid = len(tr) // 3
    rel0, ratio0, g0, p0 = eq16_gap(system, tr.q[0], tr.qd[0], 0.0)
    relm, ratiom, _, _ = eq16_gap(system, tr.q[k_mid], tr.qd[k_mid], tr.t[k_mid])
    kkt0 = accelerations(system, tr.q[0], tr.qd[0], 0.0, solver="kkt")
    lines.append(f"at q0: θ̈1 = {g0.qdd[2]:.6g} rad/s² (Gauss minimiser; KKT {kkt0.qdd[2]:.6g}, "
                 f"|Δ| = {np.max(np.abs(kkt0.qdd - g0.qdd)):.1e}); eq. (16) gives {p0.qdd[2]:.6g} "
                 f"({ratio0:.3g}×), ‖Δq̈‖/‖q̈‖ = {rel0:.3g}")
    lines.append(f"at t = {tr.t[k_mid]:g} s: eq. (16) / minimiser crank acceleration {ratiom:.3g}×, "
                 f"‖Δq̈‖/‖q̈‖ = {relm:.3g}")
    lines.append(f"max constraint residual |φ| = {np.abs(tr.phi).max():.2e} m, |φ̇| = {np.abs(tr.psi).max():.2e} m/s; "
                 f"energy balance max |E − E(0) − W| = {np.abs(tr.energy_balance).max():.2e} J "
                 f"(E(0) = {_tidy(tr.energy[0]):.4g} J, W(end) = {tr.work[-1]:.4g} J)")
    th, x3 = tr.coordinate("crank.theta"), tr.coordinate("slider.x")
    last = tr.t >= tr.t[-1] - min(1.0, tr.t[-1] / 2)
    w_mean = float(np.mean(tr.coordinate("crank.theta", "qd")[last]))
    lines.append(f"end state: θ1 = {th[-1]:.5g} rad, θ̇1 = {tr.coordinate('crank.theta', 'qd')[-1]:.3g} rad/s, "
                 f"x3 = {x3[-1]:.5g} m; mean crank rate over the last {tr.t[-1] - tr.t[last][0]:.3g} s "
                 f"{w_mean:.3g} rad/s (" + ("at rest" if abs(w_mean) < 1e-2 else
                                             "still turning: the paper's text says the mechanism comes to rest") + ")")

    tree = None
    if opts["compare_tree"]:
        from urdf_dyn.simulation.controllers import Constant
        from urdf_dyn.simulation.options import SimulateOptions
        from urdf_dyn.simulation.simulate import simulate as tree_simulate
        model = build_model(launch)
        if model.nv != 3 or not model.has_constraints:
            raise launch.err("robot.file", f"the comparison needs the tree + <loop> crank-slider "
                                           f"(robots/crank_slider.urdf), got {model.name!r} with {model.nv} joints")
        dm = model.total_mass - (params["m1"] + params["m2"] + params["m3"])
        if abs(dm) > 1e-9:
            echo(f"WARNING: robot.file's mass differs from m1 + m2 + m3 by {dm:.3g} kg: the comparison is not like for like")
        tau = np.zeros(model.nv)
        tau[0] = params["tau"]
        th2 = q0[5]
        qt0 = np.array([q0[2], th2 - q0[2], q0[6]])
        qtd0 = np.array([qd0[2], qd0[5] - qd0[2], qd0[6]])
        tree = tree_simulate(model, qt0, qtd0, duration, controller=Constant(model, tau),
                             options=SimulateOptions(dt_out=kw["dt_out"], rtol=min(kw["rtol"], 1e-9),
                                                     atol=min(kw["atol"], 1e-11), t_stab=t_stab, progress=progress,
                                                     loop_solver=s.get("loop_solver", "nullspace")))
        S, T = _series_descriptor(tr), _series_tree(tree, params["l1"])
        n2 = min(len(tr), len(tree), int(round(2.0 / kw["dt_out"])) + 1)
        d_th, d_x3 = np.abs(S["th1"] - T["th1"]), np.abs(S["x3"] - T["x3"])
        lines.append(f"descriptor (Gauss) vs tree + loop: max |Δθ1| = {d_th[:n2].max():.2e} rad, max |Δx3| = "
                     f"{d_x3[:n2].max():.2e} m over the first {tr.t[n2 - 1]:g} s; over {tr.t[-1]:g} s: "
                     f"{d_th.max():.2e} rad, {d_x3.max():.2e} m")
        written["tree_trajectory"] = tree.save(outdir / "tree_trajectory.npz")
    p16 = None
    if opts["compare_paper16"] and opts["accel"] != "paper16":
        d16 = min(duration, opts["compare_paper16"])
        try:
            p16 = simulate(system, q0, qd0, d16, solver="paper16", stabilisation=opts["stab"], t_stab=t_stab, **kw)
        except SimulationError as e:
            p16 = e.trajectory
            lines.append(f"eq. (16) run stopped early: {e}")
        d = np.abs(p16.coordinate("crank.theta") - th[:len(p16)])
        lines.append(f"integrated with eq. (16) for {p16.t[-1]:g} s: max |Δθ1| from the minimiser {d.max():.3g} rad "
                     f"(θ1 = {p16.coordinate('crank.theta')[-1]:.4g} instead of {th[len(p16) - 1]:.4g} rad); "
                     f"energy balance error max |E − E(0) − W| = {np.abs(p16.energy_balance).max():.3g} J")
    if opts["figures"]:
        _plot_figures(outdir, tr, tree, p16, params, written)
    rep = outdir / o.get("report", "gauss_report.md")
    text = (f"# {system.name}: Gauss's principle in descriptor coordinates\n\nlaunch: `{launch.path}`; "
            f"{len(tr)} samples over {tr.t[-1]:g} s; parameters {params}\n\n"
            + "\n".join(f"- {ln}" for ln in lines) + "\n")
    with atomic_path(rep) as tmp:
        Path(tmp).write_text(text)
    written["report"] = str(rep)
    for ln in lines:
        echo(ln)
    echo("wrote: " + ", ".join(str(v) for v in written.values()))
    return tr, written


JOB = Job("gauss", GaussDocument, run_launch_job, "seed 001's crank-slider by Gauss's principle")
