"""``urdf-dyn loops ROBOT -o OUT.urdf``: an arm's mimic-faked parallelograms and balancers rewritten as
``<loop>``s (``urdf_dyn.io.mimic_loops``), optionally with inertials estimated from its meshes
(``urdf_dyn.io.mesh_inertials``) and its meshes copied beside the output."""
from __future__ import annotations

import dataclasses
import os

from urdf_dyn.errors import UrdfDynError

__all__ = ["add_loops_parser"]


def add_loops_parser(sub, model_args, load_from_args):
    """Add the ``loops`` subcommand to the argparse subparsers ``sub``; ``model_args`` adds the robot-file
    options, ``load_from_args`` loads the Model they name (both from ``cli.main``)."""
    # -- urdf-dyn loops: mimic-faked parallelograms and balancers of an arm as <loop>s ------------------------
    s = sub.add_parser("loops", help="rewrite an arm's mimic-faked parallelograms and balancers as <loop>s, the "
                       "crank driven by its real motor; prints the joint-angle mapping")
    model_args(s)
    s.add_argument("-o", "--output", required=True, metavar="OUT.urdf", help="URDF file to write (never the input)")
    s.add_argument("--pin", action="append", default=[], metavar="LINK_A:LINK_B=x,y,z",
                   help="a pin the converter cannot decide: LINK_A closes on LINK_B at (x, y, z) m in LINK_A's frame")
    s.add_argument("--total-mass", type=float, metavar="KG", help="estimate every link's inertial from its collision "
                   "mesh, one density making the links weigh KG in all (the maker's mechanical mass)")
    s.add_argument("--mesh-dir", metavar="DIR", help="copy the meshes into DIR beside OUT and name them relatively")

    def cmd_loops(args):
        from urdf_dyn.io.mesh_inertials import add_estimated_inertials, estimate_inertials
        from urdf_dyn.io.mimic_loops import close_mimic_loops, parse_pin
        from urdf_dyn.io.mimic_loops_write import save_converted
        out = os.path.abspath(args.output)
        if os.path.exists(args.file) and os.path.exists(out) and os.path.samefile(args.file, out):
            raise UrdfDynError(f"{args.output}: -o is the input file; refused (write the converted robot elsewhere)")
        pins = dict(parse_pin(p) for p in args.pin)
        model = load_from_args(args)
        res = close_mimic_loops(model, pins=pins)
        dirs = (dict(d.split("=", 1) for d in args.package_dir) if any("=" in d for d in args.package_dir)
                else args.package_dir or None)
        if args.total_mass is not None:
            est, rho = estimate_inertials(res.urdf, args.total_mass, package_dirs=dirs, source=args.file,
                                          base_dir=os.path.dirname(os.path.abspath(args.file)))
            res = dataclasses.replace(res, urdf=add_estimated_inertials(res.urdf, est))
            print(f"inertials estimated from the collision meshes: density {rho:.1f} kg/m^3, "
                  + ", ".join(f"{k} {v.mass:.1f} kg" for k, v in est.items()))
        save_converted(res, args.output, source=args.file, mesh_dir=args.mesh_dir, package_dirs=dirs)
        print("\n".join(res.lines))
        print(f"wrote {args.output}: {len(res.closures)} loops, motors {', '.join(res.motors)}")
        return 0
    s.set_defaults(func=cmd_loops)
