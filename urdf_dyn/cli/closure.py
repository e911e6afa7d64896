"""``urdf-dyn check ROBOT``: per ``<loop>``, its residual at the initial configuration and after assembly
(position [m], angle [rad]), its name, its frames Fp and Fs (where they sit in their links) and its links;
then the loader's verdict (``constraints.assembly.check_assembly``): a loop that cannot be closed near the
initial configuration is an error (exit status 2) naming the nearest fix of its origins. Also the closure
summary line of ``urdf-dyn info``."""
from __future__ import annotations

import json

import numpy as np

from urdf_dyn.errors import UrdfDynError

__all__ = ["add_check_parser", "cmd_check", "closure_summary", "undetermined", "actuated_text"]


def add_check_parser(sub, model_args, loader):
    """Register ``check`` on the subparsers ``sub``; ``model_args`` adds the common model options, ``loader``
    (``cli.main.load_from_args``) loads the model from the parsed arguments."""
    s = sub.add_parser("check", help="loop closure: per loop the residual at the initial configuration and after "
                       "assembly, its frames and links; exit status 2 if a loop cannot close (with the nearest fix)")
    model_args(s)
    s.set_defaults(func=cmd_check, check_loops=False, loader=loader)


def _fmt(v):
    return " ".join(f"{x:.6g}" for x in v)


def _assembled(m):
    """(q assembled from the initial configuration or None, held joints, error text or None)."""
    from urdf_dyn.constraints.assembly import assemble
    from urdf_dyn.constraints.closure import declared_independent
    held = declared_independent(m)
    try:
        return assemble(m, m.q_initial(), branch_tol=None), held, None
    except UrdfDynError as e:
        return None, held, str(e)


def cmd_check(args):
    from urdf_dyn.constraints.assembly import check_assembly
    from urdf_dyn.constraints.closure import loop_gaps, loop_origins, mimic_duplicates
    m = args.loader(args)
    q0 = m.q_initial()
    qa, held, why = _assembled(m) if m.has_constraints else (q0, (), None)
    before = loop_gaps(m, q0)
    after = loop_gaps(m, qa) if qa is not None else [None] * len(before)
    dup = mimic_duplicates(m, qa if qa is not None else q0)
    rows = []
    for lp, g0, g1 in zip(m.loops, before, after):
        o = loop_origins(m, lp)
        rows.append({"name": lp.name, "type": lp.type, "predecessor": lp.predecessor, "successor": lp.successor,
                     "Fp": {"link": lp.predecessor, "xyz": o["predecessor"][0].tolist(),
                            "rpy": o["predecessor"][1].tolist()},
                     "Fs": {"link": lp.successor, "xyz": o["successor"][0].tolist(), "rpy": o["successor"][1].tolist()},
                     "initial": {"position_m": g0.position, "angle_rad": g0.angle},
                     "assembled": None if g1 is None else {"position_m": g1.position, "angle_rad": g1.angle},
                     "duplicates_mimic": list(dup.get(lp.name, ()))})
    moved = {} if qa is None else {m.q_names[k]: float(abs(qa[k] - q0[k])) for k in np.argsort(-np.abs(qa - q0))[:3]
                                   if abs(qa[k] - q0[k]) > 1e-9}
    if args.json:
        print(json.dumps({"robot": m.name, "source": m.source, "held": list(held), "loops": rows,
                          "assembly_error": why, "moved": moved}, indent=2))
    else:
        print(f"robot {m.name!r} from {m.source}: {len(m.loops)} loop(s), {len(m.mimic)} mimic; assembly holds "
              f"{', '.join(held) or 'nothing (no joint is declared independent)'}")
        for r in rows:
            a = r["assembled"]
            print(f"loop {r['name']} ({r['type']}): {r['predecessor']} -> {r['successor']}")
            print(f"  Fp in {r['predecessor']}: xyz ({_fmt(r['Fp']['xyz'])}) rpy ({_fmt(r['Fp']['rpy'])}); "
                  f"Fs in {r['successor']}: xyz ({_fmt(r['Fs']['xyz'])}) rpy ({_fmt(r['Fs']['rpy'])})")
            print(f"  residual at the initial configuration: position {r['initial']['position_m']:.3g} m, "
                  f"angle {r['initial']['angle_rad']:.3g} rad")
            print("  residual after assembly: " + ("none (the loops cannot be assembled)" if a is None else
                  f"position {a['position_m']:.3g} m, angle {a['angle_rad']:.3g} rad"))
            if r["duplicates_mimic"]:
                print(f"  its rows duplicate the <mimic> of {', '.join(r['duplicates_mimic'])}: its force is "
                      "undetermined")
        if moved:
            print("assembly moved " + ", ".join(f"{j} by {v:.3g}" for j, v in moved.items()))
    check_assembly(m)    # the loader's verdict: LoopClosureError (exit status 2) with the nearest fix
    return 0


def closure_summary(m):
    """``urdf-dyn info``'s line on a constrained model: mobility at the assembled initial configuration and
    the loop residual there (the loader refused the model already if a loop cannot close)."""
    from urdf_dyn.constraints.assembly import assemble
    from urdf_dyn.constraints.loops import loop_residuals, mobility
    q = m.q_initial()
    res = max(float(np.abs(v).max()) for v in loop_residuals(m, q).values())
    try:
        mb = mobility(m, assemble(m, q))
        return (f"  mobility at the initial configuration: n = {mb.n}, n^c = {mb.nc}, r = {mb.rank}, "
                f"dof = {mb.dof}; loop residual there {res:.2g}")
    except UrdfDynError as e:
        return f"  the loops cannot be assembled from the initial configuration: {e}"


def undetermined(m, q, loop_forces):
    """``loop_forces`` ({loop or "mimic:<joint>": wrench}) with the forces the model leaves undetermined (a
    loop whose rows duplicate ``<mimic>`` rows, and those mimics: ``closure.mimic_duplicates``) replaced by the
    reason, a str."""
    from urdf_dyn.constraints.closure import mimic_duplicates
    out = dict(loop_forces)
    for k, v in mimic_duplicates(m, q).items():
        out[k] = f"undetermined: its rows duplicate the <mimic> of {', '.join(v)}"
        out.update({f"mimic:{j}": f"undetermined: duplicated by loop {k}" for j in v})
    return out


def actuated_text(m):
    """``urdf-dyn info``'s actuated set: the joints, and without ``<transmission>`` the joints left out and
    why (``Model.undriven_joints``)."""
    text = ", ".join([*m.actuated_joints, *(f"{t.name} (fixed tendon)" for t in m.transmissions if t.coefficients)]) or "none"
    if m.transmissions or not m.undriven_joints:
        return text
    return text + " (no <transmission>; not driven: " + ", ".join(
        f"{j} ({why})" for j, why in m.undriven_joints.items()) + ")"
