"""``urdf-dyn excavator PINS.yaml --calibrate SCENARIO -o OUT.yaml``: a pin table's estimated geometry
calibrated (``machines.calibration``) within the table's mechanism limits to the published figures of a sizing
scenario's ``reference`` block,
with the scenario's ISO 6015 settings (relief, holding relief, lip, weights, tipping polygon) and its working
range tip; the calibrated table is written as YAML with the before/after report in its header comment."""
from __future__ import annotations

import numpy as np
import yaml

from urdf_dyn.errors import ModelError
from urdf_dyn.launch.document import read_scenario, validate

__all__ = ["checks_from_scenario", "calibrate_from_scenario"]


def checks_from_scenario(launch, table):
    """(Checks, targets {key: value}) from a validated sizing scenario (``launch.doc``) for ``table``.
    Raises ScenarioError naming the key when a section the calibration needs is missing or names a frame
    off the bucket, or when the scenario's tip is not the table's."""
    from urdf_dyn.jobs.sizing_checks import tipping_polygon_of
    from urdf_dyn.machines.calibration import TARGET_KEYS, Checks
    from urdf_dyn.machines.sizing import Cylinder
    doc = launch.doc
    if doc.iso6015 is None or doc.working_range is None:
        raise launch.err("iso6015" if doc.iso6015 is None else "working_range",
                         "required for --calibrate (the figures compared with the reference)")

    def frame(key, name):
        fr = doc.frames.get(name)
        if fr is None:
            raise launch.err(key, f"unknown frame {name!r} (frames: {', '.join(doc.frames) or 'none'})")
        if fr.link != "bucket":
            raise launch.err(key, f"frame {name!r} is on {fr.link!r}: the calibration needs a point of the bucket")
        return np.asarray(fr.xyz, float)

    tip = frame("working_range.tip", doc.working_range.tip)
    lip = frame("iso6015.lip", doc.iso6015.lip)
    r = float(np.linalg.norm(table.pin("tip") - table.pin("bucket_pivot")))
    if np.linalg.norm(tip - [r, 0.0, 0.0]) > 1e-3:
        raise launch.err("working_range.tip", f"{tip.tolist()} m in the bucket frame is not the table's tip "
                                              f"[{r:.4f}, 0, 0] (its distance from bucket_pivot)")
    cyl = {n: Cylinder(c.bore, c.rod, c.count) for n, c in doc.actuators.cylinders.items()}
    targets = {k: float(v.value) for k, v in doc.reference.items() if k in TARGET_KEYS}
    if not targets:
        raise launch.err("reference", f"no figure to calibrate to (keys: {', '.join(TARGET_KEYS)})")
    checks = Checks(cylinders=cyl, relief=doc.iso6015.relief, holding_relief=doc.iso6015.holding_relief,
                    footprint=tipping_polygon_of(launch), include_weight=doc.iso6015.include_weight,
                    lip_offset=tuple(lip - tip))
    return checks, targets


def calibrate_from_scenario(pins, scenario, output, parameters=None, max_evaluations=200, echo=print) -> int:
    """Calibrate the pin table file ``pins`` to the sizing scenario file ``scenario`` and write the
    calibrated table to ``output`` (YAML). ``parameters``: "NAME=LOW:HIGH,..." (default
    ``calibration.DEFAULT_PARAMETERS``). Returns 0. Raises ScenarioError / ModelError / ValueError for bad
    input (one line each)."""
    from urdf_dyn.io.files import atomic_path
    from urdf_dyn.jobs.sizing_schema import SizeDocument
    from urdf_dyn.machines.calibration import DEFAULT_PARAMETERS, calibrate, parse_parameters
    from urdf_dyn.errors import UrdfDynError
    from urdf_dyn.machines.pin_table import load_pin_table
    if isinstance(max_evaluations, bool) or not isinstance(max_evaluations, (int, np.integer)) or max_evaluations < 3:
        raise UrdfDynError(f"--max-evaluations {max_evaluations!r}: expected a whole number >= 3 (every evaluation "
                           "counts: the search's, its Jacobians', and two at full resolution)")
    table = load_pin_table(pins)
    launch = read_scenario(scenario)
    validate(launch, SizeDocument, "size")
    checks, targets = checks_from_scenario(launch, table)
    bounds = parse_parameters(parameters) if parameters else dict(DEFAULT_PARAMETERS)
    try:
        cal = calibrate(table, targets, list(bounds), bounds, checks, max_evaluations=max_evaluations)
    except KeyError as e:
        raise ModelError(e.args[0], file=str(pins)) from None
    except ValueError as e:
        where = "--parameters" if str(e).startswith("parameter ") else str(scenario)
        raise UrdfDynError(f"{where}: {e}") from None
    report = cal.report()
    echo(report)
    ok = cal.within()
    if cal.message:
        echo(f"warning: {cal.message}")
    echo(f"{sum(ok.values())} of {len(ok)} figures within tolerance after {cal.evaluations} evaluations"
         + ("" if all(ok.values()) else f"; outside: {', '.join(k for k, v in ok.items() if not v)}"))
    if not cal.feasible:
        echo("no point met every mechanism limit (the table's limits section): the start is written back unchanged")
    data = cal.table.model_dump(mode="json", exclude_none=True)
    head = (f"# {table.name}: calibrated by urdf-dyn excavator {pins} --calibrate {scenario}\n"
            + "".join(f"# {line}\n" for line in report.splitlines()))
    with atomic_path(output, inputs=(pins, scenario)) as tmp:
        tmp.write_text(head + yaml.safe_dump(data, sort_keys=False, width=120))
    echo(f"wrote {output}")
    return 0
